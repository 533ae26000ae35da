"""The sampler loop on a tiny random-weight DiffusionGemma (real transformers classes, CPU)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch

from model import DenoiseOptions, EditCancelled, EditRequest, Engine, Pass, RequestError, split_document
from model.edit.passes import without_doubled_mark
from model.runtime.conditioning import self_conditioning_block

FAST = DenoiseOptions(max_denoising_steps=6)


@contextmanager
def recorded_inputs(module: torch.nn.Module, name: str) -> Iterator[list[torch.Tensor]]:
    """The keyword input ``name`` of every call to ``module``, in order."""
    seen: list[torch.Tensor] = []

    def record(_module: Any, _args: Any, kwargs: dict[str, Any]) -> None:
        seen.append(kwargs[name].clone())

    handle = module.register_forward_pre_hook(record, with_kwargs=True)
    try:
        yield seen
    finally:
        handle.remove()


def recorded_canvases(engine: Engine) -> AbstractContextManager[list[torch.Tensor]]:
    """Every canvas the decoder is given, in order."""
    return recorded_inputs(engine.model, "decoder_input_ids")


def recorded_prompts(engine: Engine) -> AbstractContextManager[list[torch.Tensor]]:
    """Every chunk the encoder is given (the prompt first, then finished blocks), in order."""
    return recorded_inputs(engine.model.model.encoder, "input_ids")


@contextmanager
def recorded_self_conditioning(engine: Engine) -> Iterator[list[torch.Tensor]]:
    """The self-conditioning signal as the decoder's self-conditioning block receives it."""
    seen: list[torch.Tensor] = []

    def record(_module: Any, args: tuple[Any, ...], _output: Any) -> None:
        seen.append(args[1].clone())

    handle = self_conditioning_block(engine.model).register_forward_hook(record)
    try:
        yield seen
    finally:
        handle.remove()


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_continuation_matches_transformers_generate(engine: Engine, seed: int) -> None:
    engine = Engine(engine.loaded, library_exact=True)
    canvas = engine.canvas_length
    request = EditRequest(prefix="The lighthouse keeper climbed", mode="fill", max_new_tokens=2 * canvas,
                          seed=seed, candidates=2, options=DenoiseOptions(max_denoising_steps=12))
    result = engine.run(request)

    prompt = engine._prefix_ids(request.prefix, request.context_budget)
    torch.manual_seed(seed)
    reference = engine.model.generate(
        torch.tensor([prompt] * 2), max_new_tokens=2 * canvas, max_denoising_steps=12,
    ).sequences[:, len(prompt):].tolist()

    for ours, theirs in zip(result.raw_tokens, reference, strict=True):
        assert len(ours) == len(theirs)
        # generate() pads everything after the first end-of-text; the engine stops reading there.
        end = ours.index(engine.eos_id) + 1 if engine.eos_id in ours else len(ours)
        assert ours[:end] == theirs[:end]
        assert all(token == engine.pad_id for token in theirs[end:])


def test_pinned_suffix_holds_its_tokens_and_gets_no_self_conditioning(engine: Engine) -> None:
    suffix = " the stairs every evening."
    request = EditRequest(prefix="The keeper", suffix=suffix, mode="fill", max_new_tokens=10, seed=3,
                          options=FAST)
    with recorded_canvases(engine) as canvases, recorded_self_conditioning(engine) as signals:
        result = engine.run(request)

    suffix_ids = engine.encode(suffix)
    assert len(canvases) == result.passes >= 2
    for canvas in canvases:
        assert canvas.shape[1] == engine.canvas_length
        tail = canvas[0, 10:].tolist()
        assert tail[: len(suffix_ids)] == suffix_ids
        assert tail[len(suffix_ids)] == engine.eos_id  # the document ends inside the canvas
        assert set(tail[len(suffix_ids) + 1 :]) <= {engine.pad_id}
    # The first pass has no signal at all; later ones have it in the free slots only.
    assert torch.count_nonzero(signals[0]) == 0
    for signal in signals[1:]:
        assert torch.count_nonzero(signal[:, 10:]) == 0
        assert torch.count_nonzero(signal[:, :10]) > 0


def test_slots_change_while_pinned_context_does_not(engine: Engine) -> None:
    request = EditRequest(prefix="Rain fell", span="on the market", suffix=" square.", mode="rewrite", seed=5,
                          options=FAST)
    passes = list(_passes(engine, request))
    assert len(passes) >= 2
    assert passes[0].tokens != passes[-1].tokens  # noise is re-drawn for slots not accepted


def _passes(engine: Engine, request: EditRequest) -> Iterator[Any]:
    generator = engine.edit(request)
    while True:
        try:
            yield next(generator)
        except StopIteration:
            return


@pytest.mark.parametrize(
    "document, start, end",
    [
        ("Line one.\r\nLine two — naïve café ☕.\r\n  indented\ttab", 11, 20),
        ("🙂 emoji first, then text that goes on.", 2, 7),
        ("   leading spaces and trailing   ", 3, 10),
    ],
)
def test_context_round_trips_byte_for_byte(engine: Engine, document: str, start: int, end: int) -> None:
    prefix, span, suffix = split_document(document, start, end)
    result = engine.run(EditRequest(prefix=prefix, span=span, suffix=suffix, mode="rewrite", seed=1,
                                    options=FAST))
    rebuilt = prefix + result.text + suffix
    assert rebuilt.startswith(prefix) and rebuilt.endswith(suffix)
    assert rebuilt.encode()[: len(prefix.encode())] == document.encode()[: len(prefix.encode())]
    assert rebuilt.encode()[len(rebuilt.encode()) - len(suffix.encode()):] == suffix.encode()


def test_cancel_stops_within_one_pass(engine: Engine) -> None:
    request = EditRequest(prefix="The keeper", mode="fill", max_new_tokens=8, seed=2,
                          options=DenoiseOptions(max_denoising_steps=40, confidence_threshold=1e-9))
    seen: list[int] = []
    with recorded_canvases(engine) as canvases, pytest.raises(EditCancelled):
        engine.run(request, cancel=lambda: len(seen) >= 3, on_pass=lambda p: seen.append(p.step))
    assert seen == [0, 1, 2]
    assert len(canvases) == 3  # no forward pass ran after the cancel


def test_same_seed_same_result_other_seed_other_result(engine: Engine) -> None:
    def run(seed: int) -> list[int]:
        request = EditRequest(prefix="She wrote", suffix=" twice.", mode="fill", max_new_tokens=12, seed=seed,
                              options=FAST)
        return engine.run(request).raw_tokens[0]

    assert run(11) == run(11)
    assert run(11) != run(12)


def test_multi_block_span_commits_blocks_and_pins_the_suffix_in_the_last_only(engine: Engine) -> None:
    canvas = engine.canvas_length
    suffix = " and that was the end of it."
    request = EditRequest(prefix="Once", suffix=suffix, mode="fill", max_new_tokens=canvas + 10, seed=4,
                          options=FAST)
    with recorded_canvases(engine) as canvases:
        passes = list(_passes(engine, request))
    blocks = sorted({p.block for p in passes})
    assert blocks == [0, 1]
    first = [p for p in passes if p.block == 0]
    second = [p for p in passes if p.block == 1]
    assert all(len(p.tokens[0]) == canvas for p in first)
    assert all(len(p.tokens[0]) == 10 for p in second)
    assert all(p.committed[0] == "" for p in first)
    assert second[0].committed[0] != ""  # the first block's text is shown before the second's slots
    suffix_ids = engine.encode(suffix)
    assert canvases[-1][0, 10 : 10 + len(suffix_ids)].tolist() == suffix_ids
    # The first block has no pinned positions: the canvas tail is noise that changes between passes.
    assert not torch.equal(canvases[0][0, -4:], canvases[1][0, -4:])


def test_candidates_run_as_one_batch_with_different_noise(engine: Engine) -> None:
    request = EditRequest(prefix="The boy", suffix=" the woods.", mode="fill", max_new_tokens=12, seed=9,
                          candidates=3, options=FAST)
    with recorded_canvases(engine) as canvases:
        result = engine.run(request)
    assert all(canvas.shape[0] == 3 for canvas in canvases)
    assert len(result.texts) == 3
    assert len({tuple(ids) for ids in result.raw_tokens}) == 3


def test_result_drops_pad_and_end_markers(engine: Engine) -> None:
    request = EditRequest(prefix="The boy", suffix=" the woods.", mode="fill", max_new_tokens=24, seed=1,
                          options=FAST)
    result = engine.run(request)
    raw = result.raw_tokens[0][:24]
    expected = [t for t in raw if t not in (engine.pad_id, engine.eos_id)]
    assert result.token_ids[0] == expected
    # Line breaks as the document holds them, and no byte of a character without the rest of it (U+FFFD).
    decoded = engine.tokenizer.decode(expected).replace("\r\n", "\n").replace("\r", "\n")
    assert result.text == decoded.replace("\ufffd", "")


def test_carriage_returns_become_the_documents_line_breaks(engine: Engine) -> None:
    (carriage_return,) = engine.encode("\r")
    request = EditRequest(prefix="The boy\n", suffix=" the woods.", mode="fill", max_new_tokens=4, seed=1,
                          options=FAST)  # at a line's start, where line breaks are allowed
    with favouring(engine, [carriage_return]):
        result = engine.run(request)
    assert result.token_ids[0] == [carriage_return] * 4
    assert result.text == "\n\n\n\n"


def test_a_byte_without_the_rest_of_its_character_never_reaches_the_text(engine: Engine) -> None:
    lead_byte = engine.encode("é")[0]  # alone, it decodes as U+FFFD, the replacement character
    assert engine.tokenizer.decode([lead_byte]) == "\ufffd"
    request = EditRequest(prefix="She met ", span="Pierre", suffix=" at the door.", mode="rewrite", seed=1,
                          options=FAST)  # fmt: skip
    with favouring(engine, [lead_byte]):
        result = engine.run(request)
    assert lead_byte in result.token_ids[0]
    assert all("\ufffd" not in text for text in result.texts)
    whole = engine.encode("é")  # the whole character is kept
    assert engine.span_text(whole + whole) == "éé" and engine.span_text([lead_byte, *whole]) == "é"


@pytest.mark.parametrize(
    ("mode", "prefix", "span", "suffix", "may_break"),
    [
        ("fill", "The boy", None, " the woods.", False),  # the cursor inside a line
        ("fill", "The boy\n", None, "The woods.", True),  # ... at the start of one
        ("fill", "The boy", None, "\nThe woods.", True),  # ... at the end of one
        ("fill", "The boy", None, "", True),  # continuing the document
        ("rewrite", "The boy ", "ran into", " the woods.", False),  # a span inside a line
        ("rewrite", "The boy ", "ran into\n", "The woods.", False),  # ... its line break is put back after
        ("rewrite", "The boy ", "ran\ninto", " the woods.", True),  # a span across lines
    ],
)
def test_a_span_inside_a_line_gets_no_line_breaks(
    engine: Engine, mode: str, prefix: str, span: str | None, suffix: str, may_break: bool
) -> None:
    line_breaks = [engine.encode("\n")[0], engine.encode("\r")[0]]
    request = EditRequest(prefix=prefix, span=span, suffix=suffix, mode=mode, max_new_tokens=6, seed=2,  # type: ignore[arg-type]
                          candidates=2, options=dataclasses.replace(FAST, polish_rounds=2))
    with favouring(engine, line_breaks):
        result = engine.run(request)
    wrote_breaks = [any(token in line_breaks for token in ids) for ids in result.token_ids]
    assert wrote_breaks == [may_break] * 2
    if span == "ran into\n":
        assert all(text.endswith("\n") and "\n" not in text[:-1] for text in result.texts)


@contextmanager
def boosted(engine: Engine, boost: Callable[[torch.Tensor], None]) -> Iterator[None]:
    """Every forward's logits changed in place by ``boost`` while the block runs."""
    handle = engine.model.register_forward_hook(lambda _module, _args, output: boost(output.logits))
    try:
        yield
    finally:
        handle.remove()


def favouring(engine: Engine, token_ids: list[int]) -> AbstractContextManager[None]:
    """Make the model predict ``token_ids`` in every slot, by a wide margin."""

    def boost(logits: torch.Tensor) -> None:
        logits[..., token_ids] += 50.0

    return boosted(engine, boost)


@pytest.mark.parametrize("mode", ["fill", "rewrite"])
def test_gap_edits_write_at_least_one_token(engine: Engine, mode: str) -> None:
    # Training always starts the free slots of a gap with a real token; a model that still says
    # "nothing here" must not hand the writer an empty fill.
    request = EditRequest(prefix="The boy", suffix=" the woods.", span="ran into" if mode == "rewrite" else None,
                          mode=mode, max_new_tokens=8, seed=1, options=FAST)  # type: ignore[arg-type]
    with favouring(engine, [engine.pad_id, engine.eos_id]):
        result = engine.run(request)
    assert result.raw_tokens[0][0] not in (engine.pad_id, engine.eos_id)
    assert all(token in (engine.pad_id, engine.eos_id) for token in result.raw_tokens[0][1:])  # still free
    assert len(result.token_ids[0]) == 1


def test_candidates_are_ranked_by_the_models_own_confidence(engine: Engine) -> None:
    favoured = engine.encode(" river")[0]

    def make_row_two_sure(_module: Any, _args: Any, output: Any) -> None:
        # Only candidate 2 is certain of its tokens. It settles first, and the passes after that run the other
        # two alone (model.edit.live_rows): a batch of three holds every candidate in order.
        if output.logits.shape[0] == 3:
            output.logits[2, :, favoured] += 50.0

    request = EditRequest(prefix="The boy", mode="fill", max_new_tokens=6, seed=3, candidates=3, options=FAST)
    handle = engine.model.register_forward_hook(make_row_two_sure)
    try:
        result = engine.run(request)
    finally:
        handle.remove()
    assert result.token_ids[2] == [favoured] * 6
    assert result.ranking[0] == 2 and result.text == result.texts[2]
    assert result.scores[2] > -1e-3  # its own tokens at probability ~1
    assert all(score < result.scores[2] for score in result.scores[:2])


def test_a_single_candidate_is_not_scored(engine: Engine) -> None:
    with recorded_canvases(engine) as seen:
        result = engine.run(EditRequest(prefix="The boy", suffix=" the woods.", mode="fill", max_new_tokens=6,
                                        seed=3, options=FAST))
    assert result.scores == [0.0] and result.ranking == [0]
    assert len(seen) == result.passes  # no extra forward


def test_continuation_may_end_the_document_at_once(engine: Engine) -> None:
    request = EditRequest(prefix="The end.", mode="fill", max_new_tokens=8, seed=1, options=FAST)
    with favouring(engine, [engine.eos_id]):
        result = engine.run(request)
    assert result.raw_tokens[0][0] == engine.eos_id
    assert result.token_ids[0] == []


def test_passes_carry_what_a_ui_paints(engine: Engine) -> None:
    request = EditRequest(prefix="Rain", suffix=" fell.", mode="fill", max_new_tokens=8, seed=1, options=FAST)
    for step, p in enumerate(_passes(engine, request)):
        assert p.step == step
        assert len(p.tokens[0]) == len(p.accepted[0]) == len(p.entropy[0]) == len(p.pieces[0]) == 8
        assert p.pieces[0] == [engine.tokenizer.decode([t]) for t in p.tokens[0]]
        assert all(e >= 0 for e in p.entropy[0])


@pytest.mark.parametrize(
    "request_kwargs, message",
    [
        ({"prefix": "", "suffix": "", "mode": "fill", "max_new_tokens": 8}, "empty"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 0}, "max new tokens"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": -3}, "max new tokens"),
        ({"prefix": "a", "mode": "rewrite", "span": "   "}, "non-empty span"),
        ({"prefix": "a", "mode": "fill", "span": "x", "max_new_tokens": 4}, "no span"),
        ({"prefix": "a", "mode": "instruct", "span": "x"}, "instruction"),
        ({"prefix": "a", "mode": "poem", "max_new_tokens": 4}, "unknown mode"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4, "candidates": 500}, "candidates"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4, "context_budget": 0}, "context budget"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4,
          "options": DenoiseOptions(t_max=0.2, t_min=0.9)}, "temperature"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4,
          "options": DenoiseOptions(max_denoising_steps=0)}, "denoising steps"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4,
          "options": DenoiseOptions(entropy_bound=float("nan"))}, "finite"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4,
          "options": DenoiseOptions(entropy_bound=-1.0)}, "entropy bound"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4,
          "options": DenoiseOptions(left_to_right_bias=-0.5)}, "left-to-right bias"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4,
          "options": DenoiseOptions(wide_entropy_bound=-2.0)}, "wide canvas's entropy bound must be >= 0"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4,
          "options": DenoiseOptions(wide_entropy_bound=float("inf"))}, "finite"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4,
          "options": DenoiseOptions(polish_rounds=-1)}, "polish rounds must be between 0 and 64"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4,
          "options": DenoiseOptions(polish_rounds=65)}, "polish rounds must be between 0 and 64"),
        ({"prefix": "a", "mode": "fill", "max_new_tokens": 4,
          "options": DenoiseOptions(polish_rounds=2.5)}, "polish rounds must be a whole number"),  # type: ignore[arg-type]
    ],
)
def test_bad_requests_get_clear_errors(engine: Engine, request_kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(RequestError, match=message):
        engine.run(EditRequest(**request_kwargs))


def test_left_to_right_bias_develops_the_span_from_the_left(engine: Engine) -> None:
    def accepted_masks(bias: float) -> list[list[bool]]:
        # A bound of about two tokens' entropy: each pass accepts a few slots, not all.
        options = DenoiseOptions(max_denoising_steps=8, entropy_bound=12.0, left_to_right_bias=bias)
        request = EditRequest(prefix="The river", suffix=" at dawn.", mode="fill", max_new_tokens=12, seed=3,
                              options=options)
        return [p.accepted[0] for p in _passes(engine, request)]

    def is_left_prefix(mask: list[bool]) -> bool:
        return mask == sorted(mask, reverse=True)

    biased = accepted_masks(100.0)
    assert all(is_left_prefix(m) and 0 < sum(m) < len(m) for m in biased)
    # Without the bias the same model and seed accept scattered slots (what the bias changes).
    assert not all(is_left_prefix(m) for m in accepted_masks(0.0))


@pytest.mark.parametrize(
    ("start", "end", "words"),
    [(-1, 3, "before the start of the text"), (2, 99, "past the end of the text"), (5, 2, "starts after it ends")],
)
def test_span_outside_the_text_is_refused(start: int, end: int, words: str) -> None:
    with pytest.raises(RequestError, match=words):
        split_document("short text", start, end)


def test_empty_document_is_refused() -> None:
    with pytest.raises(RequestError, match="empty"):
        split_document("", 0, 0)


def test_checkpoint_generation_defaults_are_used(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(engine.loaded.generation_defaults, "max_denoising_steps", 3)
    monkeypatch.setitem(engine.loaded.generation_defaults, "confidence_threshold", 1e-12)
    result = engine.run(EditRequest(prefix="Once", mode="fill", max_new_tokens=4, seed=1))
    assert result.passes == 3
    # A request's own option wins over the checkpoint's.
    result = engine.run(EditRequest(prefix="Once", mode="fill", max_new_tokens=4, seed=1,
                                    options=DenoiseOptions(max_denoising_steps=5)))
    assert result.passes == 5


def test_instruct_mode_uses_the_chat_prompt(engine: Engine) -> None:
    request = EditRequest(prefix="Before. ", span="The text.", suffix=" After.", mode="instruct",
                          instruction="Make it shorter", max_new_tokens=8, seed=1, options=FAST)
    with recorded_canvases(engine):
        result = engine.run(request)
    assert result.prompt_tokens > len(engine.encode("Make it shorter"))
    assert len(result.token_ids[0]) <= 8


def test_chunked_prefill_gives_the_same_result(engine: Engine) -> None:
    prefix = " ".join(f"word{i}" for i in range(200))
    request = EditRequest(prefix=prefix, suffix=" end.", mode="fill", max_new_tokens=8, seed=3, options=FAST)
    whole = engine.run(request)
    engine.prefill_chunk = 37  # several chunks, including a ragged last one
    try:
        chunked = engine.run(request)
    finally:
        engine.prefill_chunk = 2048
    assert whole.prompt_tokens > 3 * 37
    assert chunked.raw_tokens == whole.raw_tokens


def test_rewrite_strength_starts_from_the_original_span(engine: Engine) -> None:
    span = " on the market square, where the stalls"
    original = engine.encode(span)
    request = EditRequest(prefix="Rain fell", span=span, suffix=" folded.", mode="rewrite", seed=6,
                          strength=0.3, candidates=4, options=FAST)
    with recorded_canvases(engine) as canvases:
        engine.run(request)
    first = canvases[0][:, : len(original)]
    kept = (first == torch.tensor(original)[None]).float().mean().item()
    assert 0.5 < kept < 0.95  # about 70% of the original tokens survive the initial noise
    with recorded_canvases(engine) as canvases:
        engine.run(dataclasses.replace(request, strength=1.0))
    fresh = (canvases[0][:, : len(original)] == torch.tensor(original)[None]).float().mean().item()
    assert fresh < 0.1


def test_strength_out_of_range_is_refused(engine: Engine) -> None:
    with pytest.raises(RequestError, match="strength"):
        engine.run(EditRequest(prefix="a", span="b", mode="rewrite", strength=0.0))


def test_instructions_need_an_instruction_tuned_checkpoint(tiny_checkpoint, tmp_path) -> None:
    import shutil

    from model import load

    plain = Path(shutil.copytree(tiny_checkpoint, tmp_path / "plain"))
    (plain / "chat_template.jinja").unlink()
    loaded = load(plain, device="cpu")
    assert not loaded.follows_instructions
    request = EditRequest(prefix="A", span="the text", mode="instruct", instruction="Shorter", max_new_tokens=4)
    with pytest.raises(RequestError, match="not instruction-tuned"):
        Engine(loaded).run(request)


def test_the_prefix_is_encoded_once_for_all_candidates(engine: Engine) -> None:
    # The candidates' caches are copies of one prefill; each finished block is then encoded per
    # candidate, since their blocks differ. That the copies are right is what the generate()
    # equivalence above checks (generate() encodes the prompt once per row).
    request = EditRequest(prefix="The lighthouse keeper climbed", mode="fill", max_new_tokens=engine.canvas_length + 4,
                          seed=3, candidates=3, options=FAST)
    with recorded_prompts(engine) as prompts:
        result = engine.run(request)
    assert result.blocks == 2
    assert [prompt.shape[0] for prompt in prompts] == [1, 3]
    assert prompts[0][0].tolist() == [engine.bos_id, *engine.encode(request.prefix)]


def test_a_space_ending_the_prefix_becomes_the_start_of_the_first_token(engine: Engine) -> None:
    # A writer's selection usually starts after a space. Byte-level BPE glues that space to the next
    # word, so no training prefix ends in a bare space: the engine moves it onto the canvas.
    (glued,) = engine.encode("x")  # a token without a leading space, made the model's favourite
    request = EditRequest(prefix="The boy ", suffix=" the woods.", mode="fill", max_new_tokens=6, seed=3,
                          options=FAST)
    with favouring(engine, [glued]), recorded_prompts(engine) as prompts:
        passes: list[Any] = []
        result = engine.run(request, on_pass=passes.append)
    assert prompts[0][0].tolist() == [engine.bos_id, *engine.encode("The boy")]
    first = engine.decode([result.raw_tokens[0][0]])
    assert first.startswith(" ") and result.raw_tokens[0][1:6] == [glued] * 5
    assert result.text == engine.decode(result.token_ids[0])[1:]  # the document keeps its own space
    assert not result.text.startswith(" ")
    for step in passes:  # painted without the space too
        piece = engine.decode([step.tokens[0][0]])
        assert step.lead == " " and step.pieces[0][0] == (piece[1:] if piece.startswith(" ") else piece)

    # Without the trailing space nothing moves and the favourite may start the span. (A fresh engine: this
    # one keeps the same prompt's cache from the run above and would not encode it again.)
    fresh = Engine(engine.loaded)
    with favouring(fresh, [glued]), recorded_prompts(fresh) as prompts:
        plain = fresh.run(dataclasses.replace(request, prefix="The boy"))
    assert prompts[0][0].tolist() == [engine.bos_id, *engine.encode("The boy")]
    assert plain.raw_tokens[0][:6] == [glued] * 6 and plain.text == "x" * 6


def test_a_moved_space_lets_a_continuation_still_end_at_once(engine: Engine) -> None:
    request = EditRequest(prefix="The end. ", mode="fill", max_new_tokens=8, seed=1, options=FAST)
    with favouring(engine, [engine.eos_id]):
        result = engine.run(request)
    assert result.raw_tokens[0][0] == engine.eos_id and result.text == ""


def test_a_rewrite_after_a_space_starts_from_the_span_as_training_tokenized_it(engine: Engine) -> None:
    span = "on the market square, where the stalls"
    glued_to_space = engine.encode(" " + span)
    assert glued_to_space != engine.encode(" ") + engine.encode(span)  # the case this is about
    request = EditRequest(prefix="Rain fell ", span=span, suffix=" folded.", mode="rewrite", seed=6,
                          strength=0.3, candidates=4, options=FAST)
    with recorded_canvases(engine) as canvases:
        result = engine.run(request)
    first = canvases[0][:, : len(glued_to_space)]
    kept = (first == torch.tensor(glued_to_space)[None]).float().mean().item()
    assert 0.5 < kept < 0.95
    assert all(not text.startswith(" ") or text.startswith("  ") for text in result.texts)


def test_candidates_that_lead_into_the_suffix_rank_first(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every candidate writes the same, equally sure fill; only candidate 1's model would predict the
    # suffix's first tokens back after them. The seam term must pick it.
    favoured = engine.encode(" river")[0]
    suffix = " the woods and the hills."
    suffix_ids = engine.encode(suffix)
    slots = 6

    def sure_fill_and_seam(_module: Any, _args: Any, output: Any) -> None:
        output.logits[:, :slots, favoured] += 50.0
        for offset, token in enumerate(suffix_ids[:4]):
            output.logits[1, slots + offset, token] += 50.0  # pinned positions: read only by the seam score

    request = EditRequest(prefix="The boy", suffix=suffix, mode="fill", max_new_tokens=slots, seed=3,
                          candidates=3, options=FAST, vary_length=False)
    handle = engine.model.register_forward_hook(sure_fill_and_seam)
    try:
        result = engine.run(request)
        monkeypatch.setattr("model.edit.ranking.SEAM_WEIGHT", 0.0)
        without_seam = engine.run(request)
    finally:
        handle.remove()
    assert result.token_ids == [[favoured] * slots] * 3
    assert result.ranking[0] == 1
    assert result.scores[1] > -1e-3 and all(result.scores[c] < -0.01 for c in (0, 2))
    assert without_seam.ranking == [0, 1, 2]  # all tied on their own tokens: no reason to prefer 1


def test_gap_candidates_develop_at_several_lengths_with_the_suffix_after_each(engine: Engine) -> None:
    suffix = " the stairs every evening."
    suffix_ids = engine.encode(suffix)
    favoured = engine.encode(" river")[0]
    request = EditRequest(prefix="The keeper", suffix=suffix, mode="fill", max_new_tokens=12, seed=4,
                          candidates=5, options=FAST)
    widths = [12, 8, 6, 4, 12]  # LENGTH_SHARES, cycled
    passes: list[Pass] = []
    with favouring(engine, [favoured]), recorded_canvases(engine) as canvases, \
            recorded_self_conditioning(engine) as signals:
        result = engine.run(request, on_pass=passes.append)

    # Every slot is favoured, so each candidate fills exactly its own slots; none takes suffix tokens.
    assert result.token_ids == [[favoured] * width for width in widths]
    assert result.texts == [engine.span_text([favoured] * width) for width in widths]
    for canvas in canvases[: result.passes]:
        for row, width in enumerate(widths):
            assert canvas[row, width : width + len(suffix_ids)].tolist() == suffix_ids
            assert canvas[row, width + len(suffix_ids)] == engine.eos_id
    for signal in signals[1 : result.passes]:  # the passes (the ranking's re-reads come after)
        for row, width in enumerate(widths):
            assert torch.count_nonzero(signal[row, width:]) == 0
            assert torch.count_nonzero(signal[row, :width]) > 0
    for step in passes:  # painted: each candidate's own slots only
        assert [len(tokens) for tokens in step.tokens] == widths
        assert [len(pieces) for pieces in step.pieces] == widths
        assert [len(accepted) for accepted in step.accepted] == widths


def test_the_seam_can_rank_a_shorter_gap_candidate_first(engine: Engine) -> None:
    # All candidates are equally sure of their own tokens; only the 6-slot candidate's model predicts
    # the suffix back right after its text, where its suffix starts.
    favoured = engine.encode(" river")[0]
    suffix = " the woods and the hills."
    suffix_ids = engine.encode(suffix)

    def sure_fill_and_seam(_module: Any, _args: Any, output: Any) -> None:
        output.logits[:, :, favoured] += 50.0
        for offset, token in enumerate(suffix_ids[:4]):
            output.logits[2, 6 + offset, token] += 80.0

    request = EditRequest(prefix="The boy", suffix=suffix, mode="fill", max_new_tokens=12, seed=3,
                          candidates=3, options=FAST)
    handle = engine.model.register_forward_hook(sure_fill_and_seam)
    try:
        result = engine.run(request)
    finally:
        handle.remove()
    assert [len(ids) for ids in result.token_ids] == [12, 8, 6]
    assert result.ranking[0] == 2 and result.text == engine.span_text([favoured] * 6)


@pytest.mark.parametrize(
    "change",
    [
        {"vary_length": False},
        {"candidates": 1},
        {"suffix": ""},  # continuation: no seam to choose a length by
        {"mode": "rewrite", "span": "by the old mill", "max_new_tokens": None, "vary_length": False},
    ],
)
def test_lengths_vary_only_before_a_suffix_with_several_candidates(engine: Engine, change: dict[str, Any]) -> None:
    request = EditRequest(prefix="The boy", suffix=" the woods.", mode="fill", max_new_tokens=12, seed=3,
                          candidates=3, options=FAST)
    request = dataclasses.replace(request, **change)
    layout = engine._layout(request)
    assert layout.candidate_slots == []
    with recorded_canvases(engine) as canvases:
        engine.run(request)
    slots = layout.block_slots[-1]
    suffix_ids = engine.encode(" the woods.")
    for row in canvases[0]:  # every candidate has the suffix right after all the slots
        assert row[slots : slots + len(suffix_ids)].tolist() == (suffix_ids if request.suffix else [])


@pytest.mark.parametrize(
    ("prefix", "span", "suffix", "model_suffix", "trail"),
    [
        ("The boy ", None, "ran home.", " ran home.", " "),  # fill with the cursor before a word
        ("", None, "ran home.", " ran home.", " "),  # ... at the start of the document (inside a sentence:
        # before a capital the gap is between sentences, and its held ending comes first, tests/test_shape.py)
        ("The boy ", "ran into ", "the woods.", " the woods.", " "),  # selection ending in a space
        ("The boy ", "ran into\n", "The woods.", "\nThe woods.", "\n"),  # ... in a line break
        ("The bo", None, "y ran home.", "y ran home.", ""),  # inside a word: nothing moves
        ("The boy ", None, ", then home.", ", then home.", ""),  # before punctuation
        ("The boy ", "ran into", " the woods.", " the woods.", ""),  # the suffix has its space
    ],
)
def test_whitespace_before_a_suffix_word_is_handed_to_the_suffix(
    engine: Engine, prefix: str, span: str | None, suffix: str, model_suffix: str, trail: str
) -> None:
    # The mirror of the moved prefix space: in training text the space before a word belongs to it.
    mode = "rewrite" if span else "fill"
    request = EditRequest(prefix=prefix, span=span, suffix=suffix, mode=mode, max_new_tokens=6, seed=2,  # type: ignore[arg-type]
                          options=FAST)
    slots = 6 if span is None else engine._layout(request).block_slots[0]
    with recorded_canvases(engine) as canvases:
        result = engine.run(request)
    expected = engine.encode(model_suffix)
    assert canvases[-1][0, slots : slots + len(expected)].tolist() == expected
    new_text = engine.span_text(result.token_ids[0])
    new_text = new_text[1:] if prefix.endswith(" ") and new_text.startswith(" ") else new_text
    assert result.text == (new_text + trail if trail and not new_text[-1].isspace() else new_text)


@contextmanager
def recorded_decoder_calls(engine: Engine) -> Iterator[list[tuple[torch.Tensor, torch.Tensor]]]:
    """(canvas, logits) of every decoder call, in order."""
    calls: list[tuple[torch.Tensor, torch.Tensor]] = []

    def record(_module: Any, _args: Any, kwargs: dict[str, Any], output: Any) -> None:
        calls.append((kwargs["decoder_input_ids"].clone(), output.logits.clone()))

    handle = engine.model.register_forward_hook(record, with_kwargs=True)
    try:
        yield calls
    finally:
        handle.remove()


def test_polish_re_develops_each_candidates_least_likely_tokens_with_the_rest_in_place(engine: Engine) -> None:
    from model.edit.polish import POLISH_SHARE

    rounds, slot_count = 3, 10
    suffix = " the stairs every evening."
    suffix_ids = engine.encode(suffix)
    request = EditRequest(prefix="The keeper", suffix=suffix, mode="fill", max_new_tokens=slot_count, seed=4,
                          candidates=3, options=dataclasses.replace(FAST, polish_rounds=rounds))
    bans = engine._bans(engine._layout(request), block=0)
    widths = [10, 7, 5]  # LENGTH_SHARES
    passes: list[Pass] = []
    with recorded_decoder_calls(engine) as calls:
        result = engine.run(request, on_pass=passes.append)

    developed = result.passes - rounds  # the polish rounds are passes too, two decoder calls each
    slots = calls[developed][0][:, :slot_count].clone()  # the first re-read holds the developed canvases
    for polish_round in range(rounds):
        first = developed + 2 * polish_round
        (reread, reread_logits), (noised, logits) = calls[first : first + 2]
        assert torch.equal(reread[:, :slot_count], slots)
        own = torch.log_softmax(engine._slot_logits(reread_logits, slot_count, bans, None).float(), -1)
        own = own.gather(-1, slots[..., None])[..., 0]
        predicted = engine._slot_logits(logits, slot_count, bans, None).argmax(-1)
        share = POLISH_SHARE * (1 - polish_round / rounds)
        for row, width in enumerate(widths):
            # Only the candidate's own slots are polished; its suffix stays pinned right after them.
            assert noised[row, width : width + len(suffix_ids)].tolist() == suffix_ids
            assert torch.equal(noised[row, width:slot_count], slots[row, width:])
            weakest = own[row, :width].argsort(stable=True)[: max(1, round(share * width))]
            changed = (noised[row, :slot_count] != slots[row]).nonzero().flatten()
            assert set(changed.tolist()) <= set(weakest.tolist())  # noise may redraw a token as itself
            slots[row, weakest] = predicted[row, weakest]
        painted = passes[developed + polish_round]
        assert painted.tokens == [row[:width] for row, width in zip(slots.tolist(), widths, strict=True)]
        assert all(all(flags) for flags in painted.accepted)
    assert result.raw_tokens == [row[:width] for row, width in zip(slots.tolist(), widths, strict=True)]


def test_polish_off_changes_nothing_and_on_only_adds_passes(engine: Engine) -> None:
    def run(rounds: int | None) -> Any:
        options = dataclasses.replace(FAST, polish_rounds=rounds)
        return engine.run(EditRequest(prefix="Rain", suffix=" fell.", mode="fill", max_new_tokens=8, seed=2,
                                      options=options))

    default, off, polished = run(None), run(0), run(4)
    assert off.raw_tokens == default.raw_tokens and off.passes == default.passes  # published default: off
    assert polished.passes == off.passes + 4


def test_rewrite_candidates_try_lengths_around_the_spans_own(engine: Engine) -> None:
    from model.edit.canvas import REWRITE_LENGTH_SHARES

    span, suffix = " by the old mill and over the hill", " the woods."
    original, suffix_ids = engine.encode(span), engine.encode(suffix)
    request = EditRequest(prefix="The boy ran", span=span, suffix=suffix, mode="rewrite", seed=3, candidates=4,
                          strength=0.5, options=FAST)
    slots = engine._layout(request).block_slots[-1]
    widths = [round(slots * share) for share in REWRITE_LENGTH_SHARES]
    assert engine._layout(request).candidate_slots == widths and widths[0] > len(original) > widths[-1]
    with recorded_canvases(engine) as canvases:
        result = engine.run(request)
    first = canvases[0]
    for row, width in enumerate(widths):
        assert first[row, width : width + len(suffix_ids)].tolist() == suffix_ids  # the suffix after its own slots
        start = first[row, : min(width, len(original))].tolist()
        kept = sum(token == want for token, want in zip(start, original, strict=False))
        assert kept >= 2  # about half the span's tokens seed each candidate (strength 0.5)
    assert [len(ids) for ids in result.raw_tokens] == widths


def test_each_block_is_polished_before_it_is_committed_as_context(engine: Engine) -> None:
    canvas = engine.canvas_length
    request = EditRequest(prefix="Once", suffix=" and that was the end of it.", mode="fill",
                          max_new_tokens=canvas + 10, seed=4, options=dataclasses.replace(FAST, polish_rounds=2))
    passes: list[Pass] = []
    with recorded_prompts(engine) as prompts:
        result = engine.run(request, on_pass=passes.append)
    for block in (0, 1):
        own = [p for p in passes if p.block == block]
        assert all(all(p.accepted[0]) for p in own[-2:])  # each block ends with its two polish rounds
    # What the second block is conditioned on is the first block as polished, which the result keeps.
    assert prompts[1][0].tolist() == passes[len([p for p in passes if p.block == 0]) - 1].tokens[0]
    assert result.raw_tokens[0][:canvas] == prompts[1][0].tolist()
    unpolished = engine.run(dataclasses.replace(request, options=FAST))
    assert unpolished.raw_tokens[0][:canvas] != result.raw_tokens[0][:canvas]  # polishing did change the block


def test_every_gap_length_before_a_suffix_lays_out_into_blocks(engine: Engine) -> None:
    # Lengths just past a multiple of the canvas once left the last block a negative number of slots.
    canvas = engine.canvas_length
    for tokens in range(canvas - 8, 2 * canvas + 9):
        request = EditRequest(prefix="The keeper.", suffix=" The end of it all, said the gulls.", mode="fill",
                              max_new_tokens=tokens, seed=1, options=DenoiseOptions(max_denoising_steps=1))
        result = engine.run(request)
        assert 1 <= result.blocks <= math.ceil(tokens / canvas) + 1
        assert len(result.token_ids[0]) <= tokens


def test_a_prepared_prompt_is_not_encoded_again_and_changes_nothing(engine: Engine) -> None:
    request = EditRequest(prefix="The keeper climbed the stairs", span=" slowly", suffix=" and lit the lamp.",
                          mode="rewrite", seed=2, candidates=3, options=FAST)  # fmt: skip
    fresh = Engine(engine.loaded).run(request)
    assert engine.prepare(request)
    with recorded_prompts(engine) as prompts:
        prepared = engine.run(request)
        regenerated = engine.run(request)
    assert prompts == []  # neither the edit nor its regeneration encoded the prompt again
    assert prepared.texts == fresh.texts == regenerated.texts
    assert prepared.scores == fresh.scores
    other = dataclasses.replace(request, prefix="Another prompt altogether")
    with recorded_prompts(engine) as prompts:
        engine.run(other)
    assert len(prompts) == 1  # a different prompt is encoded (and kept in its place)


def test_the_ranking_leans_toward_the_length_asked_for(engine: Engine) -> None:
    from model.edit import ranking

    # Equally sure candidates: the one nearest the length asked for ranks first, on either side of it.
    flat = torch.full((3, 8), -0.05)
    positions = [list(range(8))] * 3
    scores = ranking.candidate_scores(positions, flat, length_ratios=[0.6, 1.05, 1.6])
    assert max(range(3), key=scores.__getitem__) == 1 and scores[0] < scores[1] > scores[2]
    assert ranking.candidate_scores(positions, flat) == pytest.approx([-0.05] * 3)  # no length asked: no lean
    # A lean, not a rule: a candidate the model is far surer of still wins at the wrong length.
    surer = flat.clone()
    surer[0] += 0.5
    assert ranking.candidate_scores(positions, surer, length_ratios=[0.6, 1.05, 1.6])[0] > scores[1]
    # Only a rewrite asks for a length: its words times the setting's factor.
    span = " by the old mill and over the hill"
    for length, factor in (("shorter", 0.6), ("same", 1.0), ("longer", 1.5)):
        request = EditRequest(prefix="The boy ran", span=span, suffix=".", mode="rewrite", length=length)
        assert engine._layout(request).wanted_words == pytest.approx(8 * factor)
    fill = EditRequest(prefix="The boy ran", suffix=".", mode="fill", max_new_tokens=6)
    assert engine._layout(fill).wanted_words == 0


@pytest.mark.parametrize(("text", "suffix_start", "expected"), [
    ("The end of the day,", ", ", "The end of the day"),  # the writer's glitch: "day,, then"
    ("the day;", ", ", "the day"),
    ("the day ,", ". ", "the day"),
    ("the day.", ". ", "the day"),
    ("the day", ", ", "the day"),  # nothing doubled
    ("the day,", " t", "the day,"),  # the suffix starts a word
    ("etc.", ", ", "etc."),  # a full stop before a comma is English
    ("and so...", ". ", "and so..."),  # an ellipsis stays
    ("the day,", "..", "the day,"),
    ("?", ", ", "?"),
    (",", ", ", ","),  # nothing would be left: the model's text stands
    ("the day,", "", "the day,"),  # no suffix
])
def test_a_mark_the_suffix_repeats_is_dropped_at_the_seam(text: str, suffix_start: str, expected: str) -> None:
    assert without_doubled_mark(text, suffix_start) == expected


def writing(engine: Engine, words: str) -> AbstractContextManager[None]:
    """Make the model predict ``words``' tokens in the first slots, one each, by a wide margin."""
    ids = engine.vocabulary.encode(words)

    def boost(logits: torch.Tensor) -> None:
        for slot, token in enumerate(ids):
            logits[:, slot, token] += 50.0

    return boosted(engine, boost)


@pytest.mark.parametrize("mode", ["fill", "rewrite"])
def test_a_draft_does_not_double_the_suffixs_comma(engine: Engine, mode: str) -> None:
    span = "was" if mode == "rewrite" else None
    with writing(engine, " the,"):
        doubled = engine.run(EditRequest(prefix="She walked to", suffix=", then home.", span=span, mode=mode,  # type: ignore[arg-type]
                                         max_new_tokens=2, seed=0, options=FAST))
        single = engine.run(EditRequest(prefix="She walked to", suffix=" then home.", span=span, mode=mode,  # type: ignore[arg-type]
                                        max_new_tokens=2, seed=0, options=FAST))
    assert doubled.raw_tokens == single.raw_tokens  # the same tokens: only the text at the seam differs
    assert doubled.texts[0].rstrip() == single.texts[0].rstrip()[:-1] and single.texts[0].rstrip().endswith(",")


def test_the_writers_own_comma_before_the_suffix_stays(engine: Engine) -> None:
    # Gaps hold the writer's text exactly, so a held last word keeps its comma even before ", then".
    result = engine.run(EditRequest(prefix="She walked ", span="[...] the day,", suffix=", then home.",
                                    mode="gaps", max_new_tokens=2, seed=0, options=FAST))
    assert result.texts[0].endswith(" the day,")


def test_a_gap_does_not_double_the_comma_of_the_text_after_it(engine: Engine) -> None:
    with writing(engine, " the,"):
        result = engine.run(EditRequest(prefix="She walked to", span=" [...], then home", suffix=".", mode="gaps",
                                        max_new_tokens=2, seed=0, options=FAST))
    assert result.texts[0] == " the, then home"
