"""model.edit.draws: accepted slots get torch.multinomial's tokens, and the generator ends where torch's draw
leaves it."""

from __future__ import annotations

import pytest
import torch

from model.edit import draws


def _torch_draw(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What the engine did before: torch's sampler over every slot, and the next numbers the generator gives."""
    batch, slots, vocab = logits.shape
    probs = torch.softmax(logits, dim=-1, dtype=torch.float32)
    sampled = torch.multinomial(probs.reshape(-1, vocab), num_samples=1).view(batch, slots)
    return sampled, torch.randint(0, 1 << 30, (8,))


def _row_noise(rows: int, vocab: int, wanted: torch.Tensor) -> torch.Tensor:
    """The Exp(1) noise of rows ``wanted`` as model.edit.draws makes it from the generator's words."""
    return draws._exponentials(draws._uniform_doubles(draws._row_words(rows, vocab, wanted)))


def test_this_torch_samples_as_the_replica_assumes() -> None:
    # If a torch release changes its CPU sampler, this fails and the engine quietly uses torch's own.
    assert draws.replica_matches_torch()
    assert draws.replica_matches_torch(rows=70, vocab=40_000)


@pytest.mark.parametrize(("batch", "slots", "vocab", "accepted_share"),
                         [(1, 64, 8192, 0.1), (3, 16, 1000, 0.5), (2, 8, 50, 1.0), (1, 12, 300, 0.0)])  # fmt: skip
def test_accepted_slots_get_torchs_tokens_and_the_generator_moves_alike(
    batch: int, slots: int, vocab: int, accepted_share: float
) -> None:
    for seed in range(5):
        torch.manual_seed(1000 + seed)
        logits = torch.randn(batch, slots, vocab) * 4
        accepted = torch.rand(batch, slots) < accepted_share
        entropy = torch.distributions.Categorical(logits=logits).entropy()
        torch.manual_seed(seed)
        expected, expected_next = _torch_draw(logits)
        torch.manual_seed(seed)
        ours = draws.sample_accepted(logits, accepted, entropy)
        assert torch.equal(ours[accepted], expected[accepted])
        assert torch.equal(torch.randint(0, 1 << 30, (8,)), expected_next)


def test_a_view_of_the_first_slots_is_sampled_like_a_copy() -> None:
    # The engine samples logits[:, :slots] of a wider canvas: a non-contiguous view.
    torch.manual_seed(7)
    canvas = torch.randn(2, 20, 500) * 3
    view = canvas[:, :12]
    accepted = torch.ones(2, 12, dtype=torch.bool)
    entropy = torch.zeros(2, 12)
    torch.manual_seed(3)
    expected, expected_next = _torch_draw(view.contiguous())
    torch.manual_seed(3)
    assert torch.equal(draws.sample_accepted(view, accepted, entropy), expected)
    assert torch.equal(torch.randint(0, 1 << 30, (8,)), expected_next)


def test_torchs_sampler_is_used_when_the_replica_does_not_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(draws, "_verdict", False)
    torch.manual_seed(11)
    logits = torch.randn(1, 10, 200)
    torch.manual_seed(5)
    expected, expected_next = _torch_draw(logits)
    torch.manual_seed(5)
    ours = draws.sample_accepted(logits, torch.ones(1, 10, dtype=torch.bool), torch.zeros(1, 10))
    assert torch.equal(ours, expected)
    assert torch.equal(torch.randint(0, 1 << 30, (8,)), expected_next)


def test_logits_that_make_no_distribution_get_torchs_error() -> None:
    logits = torch.zeros(1, 4, 30)
    logits[0, 2] = float("nan")
    entropy = torch.distributions.Categorical(logits=logits, validate_args=False).entropy()
    with pytest.raises(RuntimeError, match="probability tensor contains either `inf`, `nan` or element < 0"):
        draws.sample_accepted(logits, torch.tensor([[True, False, False, False]]), entropy)


def test_the_noise_is_torchs_exponential_noise_over_millions_of_draws() -> None:
    # The float32 rounding of -log1p(-u): a vectorised log1p may differ from the C library's in the last
    # bit of some doubles, and the rounding to float32 must still come out as torch's.
    torch.manual_seed(2026)
    expected = torch.empty(4, 1 << 20).exponential_()
    after = torch.get_rng_state()
    torch.manual_seed(2026)
    noise = _row_noise(4, 1 << 20, torch.arange(4))
    assert torch.equal(noise, expected)
    assert torch.equal(torch.get_rng_state(), after)


def test_rows_are_drawn_a_group_at_a_time_as_one_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    # A large vocabulary's rows are drawn in groups; the noise and the generator come out the same.
    monkeypatch.setattr(draws, "_GROUP_DRAWS", 3 * 1000)
    torch.manual_seed(9)
    expected = torch.empty(10, 1000).exponential_()
    after = torch.get_rng_state()
    torch.manual_seed(9)
    wanted = torch.tensor([0, 2, 3, 7, 9])
    assert torch.equal(_row_noise(10, 1000, wanted), expected[wanted])
    assert torch.equal(torch.get_rng_state(), after)


def _exact_winners(probs: torch.Tensor, words: torch.Tensor) -> torch.Tensor:
    """argmax(probs / q) with every q computed, as torch's sampler does."""
    return torch.argmax(probs / draws._exponentials(draws._uniform_doubles(words.clone())), dim=-1)


@pytest.mark.parametrize("scale", [0.0, 0.5, 4.0, 30.0])  # flat, soft, peaked, nearly one-hot
def test_the_pruned_argmax_is_the_full_one(scale: float) -> None:
    torch.manual_seed(int(scale * 10))
    logits = torch.randn(400, 3000) * scale
    logits[:50, 1000:] = float("-inf")  # ruled-out tokens: p == 0
    logits[50:60] = logits[50:60, :1].expand(-1, 3000)  # exact ties in p
    probs = torch.softmax(logits, dim=-1)
    words = torch.empty(400, 3000, dtype=torch.int64).random_()
    assert torch.equal(draws._winners(probs, words.clone()), _exact_winners(probs, words))


def test_a_zero_draw_is_judged_as_torch_judges_it() -> None:
    # u == 0 gives q == 0: p / q is inf (or nan where p == 0, which argmax ranks first).
    torch.manual_seed(4)
    probs = torch.softmax(torch.randn(3, 500) * 3, dim=-1)
    probs[1, 7] = 0.0
    words = torch.empty(3, 500, dtype=torch.int64).random_()
    words[0, 123] = 0
    words[1, 7] = 1 << 60  # the low 53 bits are zero
    assert torch.equal(draws._winners(probs, words.clone()), _exact_winners(probs, words))


def test_the_pruned_argmax_holds_where_the_lower_bound_cancels() -> None:
    # u close to 1 makes p / u - p a difference of near-equal floats: the float32 lower bound must still err
    # low, or the true winner would be pruned. Rows mix u just below 1, tiny u, and ordinary draws.
    torch.manual_seed(12)
    rows, vocab = 300, 2000
    probs = torch.softmax(torch.randn(rows, vocab) * 3, dim=-1)
    words = torch.empty(rows, vocab, dtype=torch.int64).random_()
    near_one = (1 << 53) - torch.randint(1, 1 << 24, (rows, vocab))  # u within 2**-29 of 1
    words = torch.where(torch.rand(rows, vocab) < 0.5, near_one, words)
    words[:, :5] = torch.randint(1, 1 << 10, (rows, 5))  # a few tiny u: huge p / u
    words[100:200] = near_one[100:200]  # whole rows of u near 1
    assert torch.equal(draws._winners(probs, words.clone()), _exact_winners(probs, words))


# -- the everyday path: inverse transform, one number per accepted slot ----------------------------------


def test_inverse_transform_draws_follow_the_distribution() -> None:
    # 30,000 draws over a six-token distribution with a ruled-out token: every frequency within 1% of
    # its probability (about 4 standard errors), and the zero one never drawn.
    probs = torch.tensor([0.5, 0.2, 0.0, 0.15, 0.1, 0.05])
    rows = probs.expand(1, 30_000, -1).contiguous()
    torch.manual_seed(0)
    drawn = draws.draw_accepted(rows, torch.ones(1, 30_000, dtype=torch.bool))
    frequency = torch.bincount(drawn.flatten(), minlength=6).float() / 30_000
    assert frequency[2] == 0
    assert torch.allclose(frequency, probs, atol=0.01)


def test_inverse_transform_draws_agree_with_torchs_sampler_on_a_real_vocabulary() -> None:
    # Per token, the counts of 4,000 inverse-transform draws and 4,000 of torch.multinomial's from one peaked
    # distribution over 8,192 tokens: the same tokens come up, at frequencies within sampling noise.
    torch.manual_seed(3)
    probs = torch.softmax(torch.randn(8192) * 3, dim=-1)
    rows = probs.expand(1, 4000, -1).contiguous()
    ours = torch.bincount(draws.draw_accepted(rows, torch.ones(1, 4000, dtype=torch.bool)).flatten(), minlength=8192)
    theirs = torch.bincount(torch.multinomial(rows[0], 1).flatten(), minlength=8192)
    top = torch.argsort(probs, descending=True)[:20]  # together about half the mass
    expected = probs[top] * 4000
    for counts in (ours, theirs):
        assert ((counts[top] - expected).abs() <= 4 * expected.sqrt() + 2).all()
    assert int(ours.sum()) == 4000


def test_only_accepted_slots_are_drawn_one_number_each() -> None:
    torch.manual_seed(5)
    probs = torch.softmax(torch.randn(2, 7, 300) * 2, dim=-1)
    accepted = torch.tensor([[True, False, False, True, False, False, False], [False] * 6 + [True]])
    torch.manual_seed(8)
    drawn = draws.draw_accepted(probs, accepted)
    after = torch.get_rng_state()
    torch.manual_seed(8)
    torch.rand(3, 1, dtype=torch.float64)  # the three numbers the draw used
    assert torch.equal(torch.get_rng_state(), after)
    assert (drawn[~accepted] == 0).all()
    assert (probs.gather(-1, drawn[..., None])[..., 0][accepted] > 0).all()
    none = torch.zeros(2, 7, dtype=torch.bool)
    assert torch.equal(draws.draw_accepted(probs, none), torch.zeros(2, 7, dtype=torch.long))


def test_the_largest_uniform_number_still_lands_on_a_token_with_probability(monkeypatch: pytest.MonkeyPatch) -> None:
    # rand's largest value times the row's total may round up to the total: the point is kept below it, so
    # the search ends on the last token with probability, not on the ruled-out ones after it.
    probs = torch.zeros(1, 2, 50)
    probs[..., :10] = 0.1
    largest = 1 - 2.0**-53
    monkeypatch.setattr(torch, "rand", lambda *shape, **kwargs: torch.full(shape, largest, dtype=torch.float64))
    assert draws.draw_accepted(probs, torch.ones(1, 2, dtype=torch.bool)).tolist() == [[9, 9]]


def test_probabilities_that_make_no_distribution_get_torchs_error() -> None:
    probs = torch.full((1, 3, 20), 0.05)
    probs[0, 1, 4] = float("nan")
    with pytest.raises(RuntimeError, match="probability tensor contains either `inf`, `nan` or element < 0"):
        draws.draw_accepted(probs, torch.tensor([[False, True, False]]))
    draws.draw_accepted(probs, torch.tensor([[True, False, True]]))  # the bad row is not drawn: no error
