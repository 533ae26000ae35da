"""The pass's decisions from one entropy: which tokens to accept, and when a block has settled.

DiffusionGemma's sampler (transformers' ``EntropyBoundSampler``) ranks a canvas's tokens by entropy and
accepts the most certain ones while their summed entropy, less the largest, stays within the bound;
its stopper (``StableAndConfidentStoppingCriteria``) ends a block once the argmax canvas has held for a
few passes and the mean entropy is low. Each computes the entropy over the whole vocabulary for itself
(a ``torch.distributions.Categorical``, about 1.7 ms a pass each on the built-in model) and the painter
wants it too, so :func:`token_entropy` computes it once, with the very operations ``Categorical`` uses,
and :meth:`LeftToRightEntropyBoundSampler.acceptance` and :class:`StableAndConfident` take it. Both make the
same decisions as transformers' classes (tests/test_sampling.py, and the generate() equivalence).

``left_to_right_bias`` (Redraft's first extension of the sampler) adds ``bias × slot index`` (nats) to
each token's entropy *for the ranking only*: early slots are preferred, so the text develops roughly
from the left, each word conditioned on settled words before it, while a very certain token further
right may still be taken. The bound is still applied to the true entropies. On the built-in model this
cut the trigram perplexity of gap fills by about half (MODEL_CARD.md); a large model does not need it,
so the published default is 0, where acceptance is exactly transformers' rule.

``wide_entropy_bound`` (another extension, also off at 0) widens the bound for blocks with many free slots
(:func:`block_entropy_bound`). One bound for every width lets a 64-slot block of the built-in model
accept a token or two a pass, as a 16-slot one does, so it ran to its step cap with a quarter of its
slots still changing (README, "Performance"); from half the canvas free up to all of it, the bound rises
linearly to ``wide_entropy_bound``, each draft by its own width. Narrower drafts, a sentence's rewrite
or a short gap, keep ``entropy_bound`` exactly.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, cast

import torch
from transformers.models.diffusion_gemma.generation_diffusion_gemma import (
    EntropyBoundSampler,
    EntropyBoundSamplerConfig,
    LinearTemperatureScheduleLogitsProcessor,
)


def block_entropy_bound(entropy_bound: float, wide_entropy_bound: float, slots: int, canvas_length: int) -> float:
    """The entropy bound of a block with ``slots`` free slots on a ``canvas_length`` canvas: ``entropy_bound`` up
    to half the canvas, then linearly up to ``wide_entropy_bound`` with the whole canvas free (never below
    ``entropy_bound``: a wide bound of 0, the published sampler, leaves every block at ``entropy_bound``)."""
    half = canvas_length / 2
    rise = min(1.0, max(0.0, (slots - half) / half)) if half > 0 else 0.0
    return entropy_bound + max(0.0, wide_entropy_bound - entropy_bound) * rise


def token_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Each position's entropy (nats) over the last dimension, bit for bit as ``Categorical`` computes it."""
    normalized = logits - logits.logsumexp(dim=-1, keepdim=True)
    probs = torch.softmax(normalized, dim=-1)
    # -(clamp(normalized) * probs).sum(-1), in place on the two temporaries: the same numbers (a product
    # commutes exactly, and negating the sum is its last step either way) without two more
    # vocabulary-sized tensors a pass.
    clamped = normalized.clamp_(min=torch.finfo(normalized.dtype).min)
    return probs.mul_(clamped).sum(-1).neg_()


def slot_statistics(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each position's most likely token, entropy (nats) and probabilities over the last dimension.

    The engine's everyday path: the same quantities as ``argmax``, :func:`token_entropy` and ``softmax``,
    in fewer sweeps of the vocabulary, and the probabilities feed :func:`model.edit.draws.draw_accepted`.
    With ``z`` the logits less their maximum, ``log Z = -log p_max`` (the top token's ``z`` is 0), so
    ``H = log Z - E[z] = -log p_max - sum(p * z)``. Subtracting the maximum first keeps the sum's terms
    small: within about 2e-5 nats of a float64 reference, as :func:`token_entropy` is within 1e-5; the last
    bits differ, so the engine's tokens are no longer generate()'s (``Engine(library_exact=True)`` keeps those).
    The maximum and its position come from :func:`top_and_argmax`.
    """
    top, argmax = top_and_argmax(logits)
    shifted = logits - top[..., None]
    probs = torch.softmax(shifted, dim=-1)
    top_prob = probs.gather(-1, argmax[..., None])[..., 0]
    # A ruled-out -inf would make 0 * -inf = nan in the sum; Categorical clamps the same way. The product goes
    # into ``shifted``, which nothing reads after it.
    expected_shift = torch.mul(probs, shifted.clamp_(min=torch.finfo(shifted.dtype).min), out=shifted).sum(-1)
    entropy = top_prob.log_().neg_().sub_(expected_shift).clamp_(min=0)
    return argmax, entropy, probs


# Tiles of the vocabulary :func:`top_and_argmax` reduces first; a vocabulary with no such divisor of at least
# _SMALLEST_TILE takes torch's own ``max``.
_TILE = 128
_SMALLEST_TILE = 32


def top_and_argmax(values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``values.max(dim=-1)``: the largest value over the last dimension and its first position, the same
    numbers. torch's CPU ``max`` and ``argmax`` with a position walk the vocabulary about fifteen times slower
    than ``amax`` (0.6 against 0.04 ms over 64 x 8,192 here), so the maximum of each tile of ``_TILE`` is taken
    first (``amax``), then the position inside the first tile that holds the largest: 0.2 ms."""
    vocab = values.shape[-1]
    tile = math.gcd(vocab, _TILE)
    if tile < _SMALLEST_TILE:
        top, argmax = values.max(dim=-1)
        return top, argmax
    tiles = values.unflatten(-1, (vocab // tile, tile))
    tile_tops = tiles.amax(dim=-1)
    # argmax takes the first of equal maxima (and the first nan, as torch's does), so the first tile holding the
    # largest value, then the first position in it, is the first position over the whole row.
    best_tile = tile_tops.argmax(dim=-1, keepdim=True)
    inside = torch.take_along_dim(tiles, best_tile[..., None], dim=-2)[..., 0, :]
    return tile_tops.gather(-1, best_tile)[..., 0], best_tile[..., 0] * tile + inside.argmax(dim=-1)


class InPlaceLinearTemperature(LinearTemperatureScheduleLogitsProcessor):
    """transformers' linear temperature schedule, dividing the pass's fresh logits in place: the same
    quotients (one division by the same float32 temperature) without a vocabulary-sized copy, about 0.6 ms
    a pass on the built-in model. The logits must be the caller's to change."""

    def __call__(self, input_ids: torch.LongTensor | None, scores: torch.Tensor, cur_step: Any) -> torch.Tensor:  # type: ignore[override]
        temperature = self.t_min + ((self.t_max - self.t_min) * (cur_step / self.max_denoising_steps))
        return scores.div_(temperature)


class LeftToRightEntropyBoundSampler(EntropyBoundSampler):
    """transformers' sampler (canvas noise, re-noising) with acceptance from a given entropy."""

    # The last acceptance's (batch, slots) bool mask. transformers' __init__ assigns a bare None, so mypy infers
    # the type None; redeclared with the type it really holds (mypy refuses to widen an inherited attribute).
    accepted_token_mask: torch.Tensor | None  # type: ignore[assignment]

    def __init__(
        self,
        config: EntropyBoundSamplerConfig,
        canvas_length: int,
        vocab_size: int,
        max_denoising_steps: int,
        left_to_right_bias: float = 0.0,
    ) -> None:
        super().__init__(config, canvas_length, vocab_size, max_denoising_steps)
        if not left_to_right_bias >= 0:
            raise ValueError(f"left_to_right_bias must be >= 0, got {left_to_right_bias}")
        self.left_to_right_bias = left_to_right_bias

    def accept_canvas(  # type: ignore[override]
        self,
        current_canvas: torch.Tensor,
        denoiser_canvas: torch.Tensor,
        logits: torch.Tensor,
        cur_step: int | torch.Tensor,
    ) -> torch.Tensor:
        """transformers' signature: the canvas with the accepted slots taken from ``denoiser_canvas``."""
        return torch.where(self.acceptance(token_entropy(logits)), denoiser_canvas, current_canvas)

    def acceptance(self, entropy: torch.Tensor, row_bounds: torch.Tensor | None = None) -> torch.Tensor:
        """Which slots this pass accepts, from their (batch, slots) ``entropy`` (also in ``accepted_token_mask``);
        ``row_bounds`` (batch,) replaces the entropy bound row by row (drafts of different widths)."""
        if self.left_to_right_bias == 0:
            # transformers' rule as it is: its (unstable) sort, so ties among equal entropies break alike.
            ranked_entropy, order = torch.sort(entropy, dim=-1, descending=False)
        else:
            slot_index = torch.arange(entropy.shape[-1], device=entropy.device, dtype=entropy.dtype)
            order = torch.argsort(entropy + self.left_to_right_bias * slot_index, dim=-1, stable=True)
            ranked_entropy = entropy.gather(-1, order)
        # Accept a token while the entropy of the tokens ranked before it stays within the bound.
        bound = self.entropy_bound if row_bounds is None else row_bounds[:, None]
        ranked_accepted = torch.cumsum(ranked_entropy, dim=-1) - ranked_entropy <= bound
        self.accepted_token_mask = torch.zeros_like(ranked_accepted).scatter(-1, order, ranked_accepted)
        return self.accepted_token_mask

    def renoise(self, accepted_canvas: torch.Tensor, step: torch.Tensor) -> torch.Tensor:
        """transformers' re-noising of the slots not accepted, typed as generate() calls it (tensors)."""
        return self.renoise_canvas(cast(torch.LongTensor, accepted_canvas), cast(int, step))


class StableAndConfident:
    """A block is done when its argmax canvas equals each of the last ``stability_threshold`` ones and its
    mean token entropy is below ``confidence_threshold`` (transformers' rule, from a given entropy)."""

    def __init__(self, stability_threshold: int, confidence_threshold: float) -> None:
        self.stability_threshold = stability_threshold
        self.confidence_threshold = confidence_threshold
        self._recent: deque[torch.Tensor] = deque(maxlen=max(1, stability_threshold))

    def reset(self) -> None:
        self._recent.clear()

    def __call__(self, argmax_canvas: torch.Tensor, entropy: torch.Tensor) -> torch.Tensor:
        """Per candidate (batch,), whether it has settled, after seeing this pass's argmax canvas."""
        batch = argmax_canvas.shape[0]
        if self.stability_threshold == 0:
            stable = torch.ones(batch, dtype=torch.bool, device=argmax_canvas.device)
        elif len(self._recent) < self.stability_threshold:
            stable = torch.zeros(batch, dtype=torch.bool, device=argmax_canvas.device)
        else:
            stable = (torch.stack(list(self._recent)) == argmax_canvas[None]).all(dim=-1).all(dim=0)
        if self.stability_threshold:
            self._recent.append(argmax_canvas)
        confident = torch.mean(entropy, dim=-1) < self.confidence_threshold
        return stable & confident
