"""The pass's sample, token for token as ``torch.multinomial`` draws it, computed only where it is used.

Each pass samples one token per slot from the whole vocabulary, then keeps the samples of the slots it
accepts and re-noises the rest, so most samples are thrown away. On the CPU, torch draws a row as
``argmax(probs / q)`` with ``q ~ Exp(1)`` for every token of every row, filled one element at a time
from its Mersenne Twister: on the built-in model (64 slots x 8,192 tokens) that is about 8 ms of a
22 ms pass. :func:`sample_accepted` computes ``q`` (and the softmax) for the accepted rows only, the way
torch does (two MT19937 words to a double ``u``, ``-log1p(-u)``, rounded to float32; numpy's MT19937 is
the same generator), and moves the generator on past the other rows' words without using them, to
exactly where torch's draw leaves it. The accepted slots get the tokens torch would have drawn, and
everything after (the re-noising, later passes) sees the same numbers.

What this relies on is checked, not assumed: the first use compares a draw and the state after it with
torch's own (:func:`replica_matches_torch`, also a test); if a torch release changes its CPU sampler,
the engine falls back to ``torch.multinomial`` and stays correct, only slower. GPUs always use torch's.
numpy's ``log1p`` may differ from the C library's in the last bit of a double; that changes the float32
only when the double lies next to a float32 rounding midpoint, so those few (about one draw in 10^7)
are recomputed with ``math.log1p``, the C library's, which torch's scalar kernel calls.
"""

from __future__ import annotations

import math
import struct
import threading

import numpy as np
import torch

# torch's CPU generator state (CPUGeneratorImplStateLegacy): seed, words left before the next twist (+1),
# a seeded flag and the next word's index, then the 624 Mersenne Twister words (as uint64).
_HEADER = struct.Struct("<QiiQ")
_WORDS_AT = _HEADER.size
_WORDS = 624
_TWIST = _WORDS + 1
# torch's uniform double keeps 53 bits of (first word << 32 | second word).
_HIGH_BITS = np.uint64((1 << 21) - 1)
_2_TO_MINUS_53 = 2.0**-53
# A double whose low 29 mantissa bits are this close to a float32 halfway point may round the other way
# if numpy's log1p is a few ulps off the C library's: those are recomputed exactly.
_MIDPOINT = 1 << 28
_MIDPOINT_MARGIN = 64
# Words per element: torch draws each exponential from a double, two 32-bit words.
_WORDS_PER_DRAW = 2

_verdict: bool | None = None
_verdict_lock = threading.Lock()


def _exponentials(words: np.ndarray) -> np.ndarray:
    """Exp(1) floats from consecutive pairs of MT19937 words, as torch's CPU ``exponential_`` makes them."""
    uniform = (((words[0::2] & _HIGH_BITS) << np.uint64(32)) | words[1::2]).astype(np.float64)
    uniform *= _2_TO_MINUS_53
    noise = np.log1p(-uniform)
    np.negative(noise, out=noise)
    low_bits = (noise.view(np.uint64) & np.uint64(0x1FFFFFFF)).astype(np.int64) - _MIDPOINT
    for index in np.flatnonzero(np.abs(low_bits) <= _MIDPOINT_MARGIN):
        noise[index] = -math.log1p(-float(uniform[index]))
    return noise.astype(np.float32)


def _row_noise(state: bytes, rows: int, vocab: int, wanted: list[int]) -> tuple[np.ndarray, bytes]:
    """The Exp(1) noise torch's ``multinomial`` gives rows ``wanted`` (ascending) of a (rows, vocab) draw
    from generator ``state``, and the generator state that draw leaves."""
    seed, left, seeded, _next = _HEADER.unpack_from(state, 0)
    twister = np.random.MT19937()
    words = np.frombuffer(state, dtype="<u8", count=_WORDS, offset=_WORDS_AT).astype(np.uint32)
    # torch counts the words left before its next twist (plus one); numpy the position of the next word.
    twister.state = {"bit_generator": "MT19937", "state": {"key": words, "pos": _TWIST - left}}
    row_words = _WORDS_PER_DRAW * vocab
    noise = np.empty((len(wanted), vocab), dtype=np.float32)
    at = 0  # the row the twister's next words belong to
    for index, row in enumerate(wanted):
        if row > at:
            twister.random_raw((row - at) * row_words, output=False)
        noise[index] = _exponentials(twister.random_raw(row_words))
        at = row + 1
    if rows > at:
        twister.random_raw((rows - at) * row_words, output=False)
    after = twister.state["state"]
    position = int(after["pos"])
    moved = bytearray(state)
    _HEADER.pack_into(moved, 0, seed, _TWIST - position, seeded, position)
    moved[_WORDS_AT : _WORDS_AT + 8 * _WORDS] = np.asarray(after["key"], dtype="<u8").tobytes()
    return noise, bytes(moved)


def _generator_state() -> bytes:
    return bytes(torch.get_rng_state().numpy().tobytes())


def _set_generator_state(state: bytes) -> None:
    torch.set_rng_state(torch.frombuffer(bytearray(state), dtype=torch.uint8))


def replica_matches_torch(rows: int = 4, vocab: int = 3000) -> bool:
    """Whether this torch samples as :func:`sample_accepted` assumes: the same tokens on the rows it
    computes, and the same generator state after. Leaves the default generator where it found it."""
    saved = torch.get_rng_state()
    try:
        torch.manual_seed(20261124)
        logits = torch.randn(rows, vocab) * 3
        start = _generator_state()
        expected = torch.multinomial(torch.softmax(logits, dim=-1), num_samples=1)[:, 0]
        expected_after = _generator_state()
        wanted = [1, rows - 1]
        noise, after = _row_noise(start, rows, vocab, wanted)
        ours = torch.argmax(torch.softmax(logits[wanted], dim=-1) / torch.from_numpy(noise), dim=-1)
        return torch.equal(ours, expected[wanted]) and after == expected_after
    except Exception:  # noqa: BLE001  any surprise in the state layout means: use torch's own sampler
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
    wanted = torch.nonzero(accepted.reshape(-1)).flatten()
    probs = torch.softmax(logits.reshape(-1, vocab)[wanted], dim=-1, dtype=torch.float32)
    noise, after = _row_noise(_generator_state(), batch * slots, vocab, wanted.tolist())
    _set_generator_state(after)
    sampled = torch.zeros(batch * slots, dtype=torch.long, device=logits.device)
    sampled[wanted] = torch.argmax(probs / torch.from_numpy(noise), dim=-1)
    return sampled.view(batch, slots)
