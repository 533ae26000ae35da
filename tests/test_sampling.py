"""model.edit.sampling against transformers' sampler and stopper: the entropy, acceptance, and the left-to-right
bias."""

from __future__ import annotations

import math

import pytest
import torch
from transformers.models.diffusion_gemma.generation_diffusion_gemma import (
    EntropyBoundSampler,
    EntropyBoundSamplerConfig,
    LinearTemperatureScheduleLogitsProcessor,
    StableAndConfidentStoppingCriteria,
)

from model.edit.bans import RULED_OUT
from model.edit.sampling import (
    InPlaceLinearTemperature,
    LeftToRightEntropyBoundSampler,
    StableAndConfident,
    block_entropy_bound,
    slot_statistics,
    token_entropy,
    top_and_argmax,
)

VOCAB = 50


def _logits(confidence: list[float]) -> torch.Tensor:
    """One canvas whose slot i puts ``confidence[i]`` logits of margin on token i (lower: more entropy)."""
    logits = torch.zeros(1, len(confidence), VOCAB)
    for slot, margin in enumerate(confidence):
        logits[0, slot, slot] = margin
    return logits


def _accepted(sampler: EntropyBoundSampler, logits: torch.Tensor) -> list[bool]:
    slots = logits.shape[1]
    current = torch.full((1, slots), VOCAB - 1)
    proposed = torch.arange(slots)[None]
    canvas = sampler.accept_canvas(current, proposed, logits, 5)
    mask = sampler.accepted_token_mask
    assert mask is not None
    # Accepted slots take the proposal, the others keep the current canvas.
    assert torch.equal(canvas, torch.where(mask, proposed, current))
    return [bool(x) for x in mask[0]]


@pytest.mark.parametrize("bound", [0.05, 1.0, 4.0, 30.0])
def test_without_bias_it_is_transformers_sampler(bound: float) -> None:
    torch.manual_seed(0)
    logits = torch.randn(3, 12, VOCAB) * 4
    config = EntropyBoundSamplerConfig(entropy_bound=bound)
    ours = LeftToRightEntropyBoundSampler(config, 12, VOCAB, 8, left_to_right_bias=0.0)
    theirs = EntropyBoundSampler(config, 12, VOCAB, 8)
    current, proposed = torch.randint(0, VOCAB, (3, 12)), torch.randint(0, VOCAB, (3, 12))
    ours_canvas = ours.accept_canvas(current, proposed, logits, 3)
    assert torch.equal(ours_canvas, theirs.accept_canvas(current, proposed, logits, 3))
    assert torch.equal(ours.accepted_token_mask, theirs.accepted_token_mask)


def test_bias_prefers_early_slots_over_slightly_more_certain_late_ones() -> None:
    # Slots get more certain towards the right; the bound admits about two tokens.
    logits = _logits([6.0, 7.0, 8.0, 9.0, 10.0, 11.0])
    config = EntropyBoundSamplerConfig(entropy_bound=0.01)
    plain = _accepted(LeftToRightEntropyBoundSampler(config, 6, VOCAB, 8), logits)
    biased = _accepted(LeftToRightEntropyBoundSampler(config, 6, VOCAB, 8, left_to_right_bias=1.0), logits)
    assert plain[-1] and not plain[0]  # by entropy alone: the rightmost, most certain slots
    assert biased[0] and not biased[-1]  # with the bias: from the left


def test_a_very_certain_late_token_still_beats_a_doubtful_early_one() -> None:
    # Slot 0 is nearly uniform; slot 3 is certain. A mild bias does not force slot 0 first (and the
    # tiny bound admits one token only: the first ranked one is always accepted).
    logits = _logits([0.1, 0.1, 0.1, 20.0])
    config = EntropyBoundSamplerConfig(entropy_bound=1e-9)
    accepted = _accepted(LeftToRightEntropyBoundSampler(config, 4, VOCAB, 8, left_to_right_bias=0.5), logits)
    assert accepted == [False, False, False, True]


def test_the_bound_still_counts_true_entropies() -> None:
    # Equal entropies: the bound admits the same number of tokens with or without the bias.
    logits = _logits([9.0] * 8)  # 0.06 nats each: a bound of 0.2 admits four
    config = EntropyBoundSamplerConfig(entropy_bound=0.2)
    plain = _accepted(LeftToRightEntropyBoundSampler(config, 8, VOCAB, 8), logits)
    biased = _accepted(LeftToRightEntropyBoundSampler(config, 8, VOCAB, 8, left_to_right_bias=2.0), logits)
    assert sum(plain) == sum(biased) == 4
    assert biased == [True] * 4 + [False] * 4


def test_negative_bias_is_refused() -> None:
    with pytest.raises(ValueError, match="left_to_right_bias"):
        LeftToRightEntropyBoundSampler(EntropyBoundSamplerConfig(entropy_bound=1.0), 4, VOCAB, 8, -0.5)


def test_the_entropy_is_categoricals_bit_for_bit() -> None:
    torch.manual_seed(4)
    logits = torch.randn(3, 40, 700) * 5
    logits[0, :, :300] = RULED_OUT  # banned tokens
    logits[1, 3, 10:] = float("-inf")  # a row certain of a few tokens
    logits[2, 7] = 30.0  # a flat row
    expected = torch.distributions.Categorical(logits=logits).entropy()
    assert torch.equal(token_entropy(logits), expected)


@pytest.mark.parametrize("vocab", [700, 1024])  # torch's max (no tile of 32 or more divides 700); by tiles
def test_the_everyday_statistics_are_argmax_entropy_and_softmax(vocab: int) -> None:
    # slot_statistics does in fewer sweeps what argmax, token_entropy and softmax do: the same argmax, the
    # probabilities and entropies within float32 rounding, over banned, certain, flat and peaked rows.
    torch.manual_seed(4)
    logits = torch.tanh(torch.randn(3, 40, vocab)) * 30  # softcapped, as a pass's logits are
    logits[0, :, :300] = RULED_OUT  # banned tokens
    logits[1, 3, 10:] = float("-inf")  # a row certain of a few tokens
    logits[1, 5, 42] = 60.0  # nearly one-hot
    logits[2, 7] = 30.0  # a flat row
    argmax, entropy, probs = slot_statistics(logits)
    reference = logits.double()
    expected = -(torch.softmax(reference, -1) * torch.log_softmax(reference, -1).nan_to_num(neginf=0)).sum(-1)
    assert torch.equal(argmax, torch.argmax(logits, dim=-1))
    assert torch.allclose(probs, torch.softmax(logits, dim=-1), rtol=1e-5, atol=1e-9)
    assert (entropy - expected).abs().max() < 5e-5
    assert (entropy >= 0).all() and entropy[2, 7] == pytest.approx(math.log(vocab), abs=1e-4)
    assert (token_entropy(logits) - expected).abs().max() < 5e-5  # the exact path is no closer than this


@pytest.mark.parametrize("vocab", [8192, 1024 + 64, 96])
def test_the_tiled_maximum_is_torchs_max_with_the_first_of_equal_positions(vocab: int) -> None:
    torch.manual_seed(6)
    values = torch.randn(2, 9, vocab)
    values[0, 0] = 1.0  # all equal: position 0
    values[0, 1, [5, vocab - 3]] = 50.0  # equal maxima in different tiles: the first
    values[0, 2, [vocab - 2, vocab - 1]] = 50.0  # in the last tile
    values[0, 3, 70] = float("nan")  # torch's argmax and max take the first nan
    values[0, 3, vocab - 1] = float("nan")
    values[1, 4] = float("-inf")
    values[1, 4, vocab // 2] = -1e4  # a row ruled out but for one token
    top, argmax = top_and_argmax(values)
    expected_top, expected_argmax = values.max(dim=-1)
    assert torch.equal(argmax, expected_argmax)
    assert torch.allclose(top, expected_top, rtol=0, atol=0, equal_nan=True)


def test_the_in_place_temperature_divides_as_transformers_does() -> None:
    steps = 48
    theirs = LinearTemperatureScheduleLogitsProcessor(0.2, 0.8, steps)
    ours = InPlaceLinearTemperature(0.2, 0.8, steps)
    torch.manual_seed(6)
    for step in (48, 31, 7, 0):
        logits = torch.randn(2, 16, 500) * 9
        expected = theirs(None, logits, cur_step=torch.tensor(step, dtype=torch.int32))
        result = ours(None, logits, cur_step=torch.tensor(step, dtype=torch.int32))
        assert result is logits  # no copy
        assert torch.equal(result, expected)


@pytest.mark.parametrize(("stability", "confidence"), [(0, 0.5), (1, 0.5), (2, 0.3), (3, 10.0)])
def test_the_stopper_decides_as_transformers_does(stability: int, confidence: float) -> None:
    ours = StableAndConfident(stability, confidence)
    theirs = StableAndConfidentStoppingCriteria(stability, confidence)
    generator = torch.Generator().manual_seed(stability)
    argmax = torch.randint(0, 3, (4, 5), generator=generator)
    decisions = []
    for step in range(14):
        # Canvases that sometimes repeat, sometimes change in one candidate; confidence rising.
        if step % 4 == 3:
            argmax = argmax.clone()
            argmax[(step // 4) % 4, 0] += 1
        logits = torch.randn(4, 5, 9, generator=generator) * (1 + step)
        expected = theirs(argmax, logits)
        got = ours(argmax, token_entropy(logits))
        assert torch.equal(got, expected), step
        decisions.append(got)
    assert any(bool(d.any()) for d in decisions) and not all(bool(d.all()) for d in decisions)
    ours.reset()
    theirs.reset()  # a new block: nothing is stable yet
    certain = torch.zeros(4, 5, 9).index_fill(-1, torch.tensor([0]), 50.0)
    assert torch.equal(ours(argmax, token_entropy(certain)), theirs(argmax, certain))


def test_the_built_in_models_drafts_stop_once_settled() -> None:
    """The built-in model's early stop (confidence threshold 0.05 in its redraft_sampler.json, issue #49) ends a
    sentence's four drafts well before the pass limit. At DiffusionGemma's 0.005, which this small model's mean
    entropy seldom reaches, the same request ran 40 of its 48 passes; it stops at 15."""
    from model import DenoiseOptions, EditRequest, Engine, load

    engine = Engine(load(None, device="cpu"))
    request = EditRequest(
        prefix="The rain had stopped by the time they reached the village. The children ran ahead to the square, "
        "where the old fountain stood. ",
        span="Their mother followed slowly, carrying the basket of bread.",
        suffix=" Nobody in the village had seen them for years.",
        mode="rewrite", strength=0.7, candidates=4, seed=0, options=DenoiseOptions(polish_rounds=0),
    )  # fmt: skip
    assert engine.loaded.generation_defaults["max_denoising_steps"] == 48
    assert engine.run(request).passes <= 24


@pytest.mark.parametrize("slots", [1, 16, 32])
def test_blocks_up_to_half_the_canvas_keep_the_bound_exactly(slots: int) -> None:
    assert block_entropy_bound(1.0, 8.0, slots, 64) == 1.0


def test_the_bound_rises_linearly_to_the_wide_one_over_the_second_half_of_the_canvas() -> None:
    assert block_entropy_bound(1.0, 8.0, 64, 64) == 8.0
    assert block_entropy_bound(1.0, 8.0, 48, 64) == pytest.approx(4.5)
    assert block_entropy_bound(1.0, 8.0, 40, 64) == pytest.approx(2.75)
    assert block_entropy_bound(0.5, 4.5, 192, 256) == pytest.approx(2.5)  # a 256-slot canvas, three quarters free


@pytest.mark.parametrize("bias", [0.0, 1.0])
def test_row_bounds_accept_each_row_as_its_own_bound_would(bias: float) -> None:
    """Drafts of different widths in one batch each get their own bound (the engine's wide-canvas bounds)."""
    torch.manual_seed(1)
    entropy = token_entropy(torch.randn(3, 16, VOCAB) * 2)
    bounds = [1.0, 4.5, 8.0]
    mixed = LeftToRightEntropyBoundSampler(EntropyBoundSamplerConfig(entropy_bound=1.0), 16, VOCAB, 8, bias)
    together = mixed.acceptance(entropy, torch.tensor(bounds))
    for row, bound in enumerate(bounds):
        alone = LeftToRightEntropyBoundSampler(EntropyBoundSamplerConfig(entropy_bound=bound), 16, VOCAB, 8, bias)
        assert torch.equal(together[row], alone.acceptance(entropy[row : row + 1])[0])
    assert together[2].sum() > together[0].sum()  # the wider bound accepts more of the same entropies


@pytest.mark.parametrize("wide", [0.0, 0.5, 1.0])
def test_a_wide_bound_at_or_below_the_bound_changes_nothing(wide: float) -> None:
    """0 is the published sampler; a wide bound below the writer's own never narrows it."""
    assert all(block_entropy_bound(1.0, wide, slots, 64) == 1.0 for slots in range(1, 65))


def test_a_wide_gap_of_the_built_in_model_develops_in_fewer_passes() -> None:
    """A 64-slot gap (issue #49): with one bound for every width the built-in model accepts a token or two a pass
    and runs to its step cap; the wider bound its redraft_sampler.json sets for wide blocks ends it sooner."""
    from model import DenoiseOptions, EditRequest, Engine, load

    engine = Engine(load(None, device="cpu"))
    assert engine.loaded.generation_defaults["wide_entropy_bound"] > engine.loaded.generation_defaults["entropy_bound"]

    def passes(**options: float) -> int:
        request = EditRequest(
            prefix="The keeper climbed the stairs every evening and lit the lamp before the light was gone. ",
            suffix=" By morning the storm had passed, and the boats went out again.",
            mode="fill", max_new_tokens=64, candidates=1, seed=0,
            options=DenoiseOptions(polish_rounds=0, **options),  # type: ignore[arg-type]
        )  # fmt: skip
        return engine.run(request).passes

    one_bound = passes(wide_entropy_bound=0.0)
    assert one_bound == 48  # the step cap
    assert passes() <= 0.8 * one_bound
