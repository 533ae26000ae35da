"""The pass's sample of the accepted slots: by inverse transform (the engine's everyday path), or token for
token as ``torch.multinomial`` draws it (``Engine(library_exact=True)``), computed only where it is used.

:func:`draw_accepted` takes one uniform number per accepted slot and finds where it falls in the slot's
cumulative distribution (float64, so the rounding of 8k or 262k summed probabilities is far below any
token's share): the same distribution as torch's draw, at a fraction of its cost, since torch's CPU draw
makes an Exp(1) number for every token of every slot, accepted or not. The rest of this module is the
exact path, kept so that the engine can still make transformers' generate() tokens for a seed (the
equivalence tests, and bench/engine_vs_library.py's check that both did the same work).

Each pass samples one token per slot from the whole vocabulary, then keeps the samples of the slots it
accepts and re-noises the rest, so most samples are thrown away. On the CPU, torch draws a row as
``argmax(probs / q)`` with ``q ~ Exp(1)`` for every token of every row, one element at a time from its
Mersenne Twister: each ``q`` is ``-log1p(-u)`` rounded to float32, ``u`` the low 53 bits of a 64-bit
draw (two 32-bit words) times 2^-53. On the built-in model (64 slots x 8,192 tokens) that serial
``exponential_`` costs about 11 ms a pass on our CPU, more than the rest of the sampler.

:func:`sample_accepted` draws the same 64-bit words from the same generator with ``random_()`` on an
int64 tensor (two words per element, in the same order, without the logarithm: about 2 ms for the
built-in model's draw), so the generator ends exactly where torch's draw leaves it, and makes ``u``,
``q`` (with torch's vectorised ``log1p``) and the softmax for the accepted rows only. The accepted
slots get the tokens torch would have drawn, and everything after (the re-noising, later passes) sees
the same numbers.

What this relies on is checked, not assumed: the first use compares a draw and the generator after it
with torch's own (:func:`replica_matches_torch`, also a test); if a torch release changes its CPU
sampler, the engine falls back to ``torch.multinomial`` and stays correct, only slower. GPUs always
use torch's. The vectorised ``log1p`` may differ from the C library's, which torch's serial kernel
calls, in the last bit of a double; that changes the float32 only when the double lies next to a
float32 rounding midpoint, so those few (about one draw in 10^7) are recomputed with ``math.log1p``.
"""

from __future__ import annotations

import math
import threading

import torch

# A double whose low 29 mantissa bits are this close to a float32 halfway point may round the other way
# if the vectorised log1p is a few ulps off the C library's: those are recomputed exactly.
_FLOAT32_DROPPED_BITS = (1 << 29) - 1  # the mantissa bits a double loses on its way to float32
_MIDPOINT = 1 << 28
_MIDPOINT_MARGIN = 64
# Relative slack on the bounds of a token's p / q (the docstring of _winners): far above float32's
# roundings (2**-24 each), far below the gaps that decide a draw.
_BOUND_MARGIN = 1e-6
# How much p / u is shrunk before p is taken from it for the lower bound: above its float32 roundings
# (about 1.2e-7) with room, so p / u - p errs low (the docstring of _winners).
_LOWER_SHRINK = 4e-7
# The bits of a 64-bit draw that make torch's uniform double.
_DOUBLE_MANTISSA = (1 << 53) - 1
# The most draws held at once (32 MiB): a large vocabulary's rows are drawn a group at a time.
_GROUP_DRAWS = 1 << 22

_verdict: bool | None = None
_verdict_lock = threading.Lock()


def _exponentials(uniform: torch.Tensor) -> torch.Tensor:
    """The float32 Exp(1) noise torch's CPU ``exponential_`` makes from these uniform doubles (consumed)."""
    minus_uniform = uniform.neg_()
    noise = torch.log1p(minus_uniform).neg_()
    # Low 29 bits within the margin of the midpoint: (bits - (midpoint - margin)) mod 2**29 <= 2 * margin.
    near = ((noise.view(torch.int64) - (_MIDPOINT - _MIDPOINT_MARGIN)) & _FLOAT32_DROPPED_BITS) <= 2 * _MIDPOINT_MARGIN
    for index in torch.nonzero(near).tolist():
        noise[tuple(index)] = -math.log1p(float(minus_uniform[tuple(index)]))
    return noise.float()


def _row_words(rows: int, vocab: int, wanted: torch.Tensor) -> torch.Tensor:
    """The 64-bit draws a (rows, vocab) ``multinomial`` makes its noise of, for rows ``wanted`` (ascending),
    from the default generator, which ends where that draw leaves it."""
    group = max(1, _GROUP_DRAWS // vocab)
    buffer = torch.empty(min(rows, group), vocab, dtype=torch.int64)
    pieces = []
    for first in range(0, rows, group):
        count = min(group, rows - first)
        # The same 64-bit draw per element as exponential_'s, in the same order, kept whole: ``random_()``
        # on int64 takes it modulo 2**63 and skips the conversion to double (2.1 against 2.8 ms for the
        # built-in model's draw), which only the accepted rows need.
        block = buffer[:count].random_()
        inside = wanted[(wanted >= first) & (wanted < first + count)] - first
        if len(inside):
            pieces.append(block[inside])
    if len(pieces) == 1:  # one group (a small vocabulary): no second copy
        return pieces[0]
    return torch.cat(pieces) if pieces else torch.empty(0, vocab, dtype=torch.int64)


def _winners(probs: torch.Tensor, words: torch.Tensor) -> torch.Tensor:
    """Per row, ``argmax(probs / q)`` with ``q`` the float32 Exp(1) noise torch makes of the row's 64-bit
    ``words``, computing ``q`` (a logarithm in float64) only for the tokens that can win.

    ``q = -log1p(-u)`` lies between ``u`` and ``u / (1 - u)``, so ``p / q`` lies between ``p / u - p``
    and ``p / u``: a token whose upper bound is below some token's lower bound cannot be the argmax. The
    bounds are float32 (half the memory traffic of float64, twice the vector width). ``p / u`` takes two
    roundings of 2**-24 (``u`` from its 53-bit integer, then the quotient), far inside ``_BOUND_MARGIN``.
    The lower bound is made to err low, never high, since ``p / u - p`` cancels as ``u`` nears 1: ``p / u``
    is first shrunk by ``_LOWER_SHRINK``, more than its roundings, so the difference stays below the true
    bound (exact where it cancels, Sterbenz; one more small rounding elsewhere). A low best bound only
    keeps more tokens. On the built-in model about one token in 8,000 is left to compute exactly.
    """
    mantissas = words.bitwise_and_(_DOUBLE_MANTISSA)
    if int(torch.count_nonzero(mantissas)) != mantissas.numel():
        # q == 0 makes torch's ratio inf or nan: compute every q as torch does.
        return torch.argmax(probs / _exponentials(_uniform_doubles(mantissas)), dim=-1)
    upper = probs / mantissas.float().mul_(2.0**-53)  # p / u
    best_lower = (upper * (1 - _LOWER_SHRINK)).sub_(probs).amax(dim=-1, keepdim=True).mul_(1 - _BOUND_MARGIN)
    vocab = probs.shape[1]
    flat = torch.nonzero(upper.mul_(1 + _BOUND_MARGIN).ge_(best_lower).view(-1)).flatten()
    rows, columns = flat // vocab, flat % vocab
    ratio = probs[rows, columns] / _exponentials(_uniform_doubles(mantissas[rows, columns]))
    # The first column with the row's largest ratio, as argmax picks it (ties are exact float32 equals).
    row_best = torch.full((probs.shape[0],), -math.inf).scatter_reduce_(0, rows, ratio, "amax")
    at_best = ratio == row_best[rows]
    first = torch.full((probs.shape[0],), vocab, dtype=torch.long)
    return first.scatter_reduce_(0, rows[at_best], columns[at_best], "amin")


def _uniform_doubles(words: torch.Tensor) -> torch.Tensor:
    """The uniform doubles torch makes of 64-bit draws: the low 53 bits times 2**-53 (exact in float64)."""
    return words.bitwise_and_(_DOUBLE_MANTISSA).double().mul_(2.0**-53)


def replica_matches_torch(rows: int = 4, vocab: int = 3000) -> bool:
    """Whether this torch samples as :func:`sample_accepted` assumes: the same tokens on the rows it
    computes, and the same generator state after. Leaves the default generator where it found it."""
    saved = torch.get_rng_state()
    try:
        torch.manual_seed(20261124)
        logits = torch.randn(rows, vocab) * 3
        start = torch.get_rng_state()
        expected = torch.multinomial(torch.softmax(logits, dim=-1), num_samples=1)[:, 0]
        expected_after = torch.get_rng_state()
        torch.set_rng_state(start)
        wanted = torch.tensor([1, rows - 1])
        ours = _winners(torch.softmax(logits[wanted], dim=-1), _row_words(rows, vocab, wanted))
        return torch.equal(ours, expected[wanted]) and torch.equal(torch.get_rng_state(), expected_after)
    except Exception:  # noqa: BLE001  any surprise in torch's sampler means: use torch's own
        return False
    finally:
        torch.set_rng_state(saved)


def replica_usable() -> bool:
    """:func:`replica_matches_torch`, run once per process."""
    global _verdict
    with _verdict_lock:
        if _verdict is None:
            _verdict = replica_matches_torch()
        return _verdict


def draw_accepted(probs: torch.Tensor, accepted: torch.Tensor) -> torch.Tensor:
    """One token per slot of (batch, slots, vocab) ``probs`` where ``accepted`` (batch, slots) holds, drawn
    from that slot's distribution by inverse transform; elsewhere 0 (those slots are re-noised). Draws
    one number per accepted slot from the default generator. Raises torch's own error on a row that
    is not a distribution."""
    batch, slots, vocab = probs.shape
    sampled = torch.zeros(batch * slots, dtype=torch.long, device=probs.device)
    wanted = torch.nonzero(accepted.reshape(-1)).flatten()
    if not len(wanted):
        return sampled.view(batch, slots)
    # index_select and min, not rows[wanted] and (rows >= 0).all(): the same values, and on the CPU about 6 and
    # 20 times faster over 200 rows of 8,192 (1.2 and 1.8 ms of a four-draft pass's 4.6 ms draw).
    rows = probs.reshape(-1, vocab).index_select(0, wanted)
    cdf = rows.cumsum(dim=-1, dtype=torch.float64)
    total = cdf[:, -1:]
    if not bool(torch.isfinite(total).all() and (total > 0).all() and rows.min() >= 0):
        torch.multinomial(rows, num_samples=1)  # raises, naming what is wrong with the rows
    # Below the row's total even where rand's largest value rounds up against it, so the search ends on
    # a token with probability (the first whose cumulative sum exceeds the point), never on a zero one.
    point = torch.minimum(torch.rand(len(wanted), 1, dtype=torch.float64, device=probs.device) * total,
                          torch.nextafter(total, torch.zeros_like(total)))  # fmt: skip
    sampled[wanted] = torch.searchsorted(cdf, point, right=True)[:, 0]
    return sampled.view(batch, slots)


def sample_accepted(logits: torch.Tensor, accepted: torch.Tensor, entropy: torch.Tensor) -> torch.Tensor:
    """``torch.multinomial(softmax(logits), 1)`` per slot of (batch, slots, vocab) ``logits``, exact where
    ``accepted`` (batch, slots) holds; elsewhere the result is unspecified (those slots are re-noised).
    Draws from the default generator and leaves it where torch's draw over every slot would. ``entropy``,
    the slots' entropy, says cheaply whether every row of ``logits`` makes a distribution."""
    batch, slots, vocab = logits.shape
    valid = bool(torch.isfinite(entropy).all())
    if not valid or logits.device.type != "cpu" or logits.dtype != torch.float32 or not replica_usable():
        # On a GPU, or on logits torch's sampler refuses (it names what is wrong with them).
        probs = torch.softmax(logits, dim=-1, dtype=torch.float32)
        return torch.multinomial(probs.reshape(-1, vocab), num_samples=1).view(batch, slots)
    # Cheaper than torch's draw even with every row accepted (built-in model, in the engine, one thread:
    # 4.0 ms with none, 10.5 with all 64, against 13.3 for torch.multinomial).
    wanted = torch.nonzero(accepted.reshape(-1)).flatten()
    probs = torch.softmax(logits.reshape(-1, vocab)[wanted], dim=-1, dtype=torch.float32)
    sampled = torch.zeros(batch * slots, dtype=torch.long, device=logits.device)
    sampled[wanted] = _winners(probs, _row_words(batch * slots, vocab, wanted))
    return sampled.view(batch, slots)
