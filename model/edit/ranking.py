"""Ranking finished candidates by the model's own score: the mean log-probability of each candidate's kept
tokens on its clean final canvas, plus a small weight on how well it leads into the suffix (the seam).

The loop (:mod:`model.edit.engine`) calls :func:`score_block` on every finished block and :func:`score_seam`
on the last one, when there are several candidates; :func:`candidate_scores` combines them.
"""

from __future__ import annotations

import math

import torch
from transformers import DiffusionGemmaForBlockDiffusion, DynamicCache

from model.runtime.cache_kwarg import with_cache
from model.runtime.forward import decode

# The suffix tokens re-predicted to judge the seam, and that score's weight beside the mean
# log-probability of the span's own tokens. The seam score spreads about 80 times wider (sd 3.2
# against 0.04 nats on held-out gaps), so 0.01 already gives it a real say. On 120 held-out gaps,
# best of 3: seam perplexity 311 -> 187, the whole fill's 65 -> 68 (single draws: 84).
SEAM_TOKENS = 4
SEAM_WEIGHT = 0.01
# A rewrite's lean toward the length the writer asked for (Shorter / Same / Longer): this weight times
# |log(words / words asked for)| comes off each candidate's score. The candidates already differ in length
# (canvas.REWRITE_LENGTH_SHARES) but the model's own score prefers the shorter ones. On 40 held-out sentences
# (bench/rewrite_length.py) the shown draft landed 28 / 22 / 18 % off the aim without it, 16 / 12 / 11 % at
# 0.3, and 13 / 11 / 10 % at 1.0, which would let length overrule the model's confidence far more.
LENGTH_WEIGHT = 0.3


def candidate_scores(
    positions: list[list[int]],
    slot_log_probs: torch.Tensor,
    seam: torch.Tensor | None = None,
    length_ratios: list[float] | None = None,
) -> list[float]:
    """Mean log-probability of the tokens each candidate keeps (-inf for an empty candidate), plus
    ``SEAM_WEIGHT`` × its seam score (:func:`score_seam`) when the span has a suffix, less ``LENGTH_WEIGHT`` ×
    |log ratio| for a rewrite's ``length_ratios`` (each candidate's words over the words asked for).

    A mean, not a sum: padding is the model's most confident prediction, so sums favour writing
    nothing. On 40 held-out gaps with the built-in model, best-of-4 by the mean cut the fills'
    trigram perplexity by about a fifth (261 → 213); the sum made it worse. The mean alone prefers
    self-assured fills that ignore the text after them; the seam term trades a little of that
    for fills that lead into it (MODEL_CARD.md).
    """
    return [
        float(slot_log_probs[candidate, where].mean())
        + (SEAM_WEIGHT * float(seam[candidate]) if seam is not None else 0.0)
        - (LENGTH_WEIGHT * abs(math.log(max(length_ratios[candidate], 1e-3))) if length_ratios else 0.0)
        if where
        else -math.inf
        for candidate, where in enumerate(positions)
    ]


def score_block(
    model: DiffusionGemmaForBlockDiffusion,
    slots: torch.Tensor,
    pinned: torch.Tensor,
    sc_logits: torch.Tensor | None,
    keep_signal: torch.Tensor | None,
    positions: torch.Tensor,
    cache: DynamicCache,
) -> torch.Tensor:
    """Log-probability of each finished slot token, re-read by the model on the clean final canvas."""
    raw_logits = decode(
        model, torch.cat([slots, pinned], dim=1), positions, cache, sc_logits, keep_signal, columns=slots.shape[1]
    )
    log_probs = torch.log_softmax(raw_logits.float(), dim=-1)
    return log_probs.gather(-1, slots[..., None])[..., 0].cpu()


def score_seam(
    model: DiffusionGemmaForBlockDiffusion,
    vocab_size: int,
    stops: set[int],
    slots: torch.Tensor,
    pinned: torch.Tensor,
    widths: list[int],
    suffix_tail: list[int],
    positions: torch.Tensor,
    cache: DynamicCache,
) -> torch.Tensor | None:
    """Per candidate, how well the new text leads into the suffix: the mean log-probability of the
    first ``SEAM_TOKENS`` suffix tokens (right after the candidate's own ``widths`` slots) when they
    are replaced by noise and predicted again from the finished span and the rest of the suffix (a
    real denoising question, unlike reading pinned tokens, on which the model was never trained).
    None when no suffix text follows (the tail starts with one of ``stops``: padding, end-of-text).
    """
    count = 0
    for token in suffix_tail[: min(SEAM_TOKENS, pinned.shape[1])]:
        if token in stops:
            break
        count += 1
    if count == 0:
        return None
    canvas = torch.cat([slots, pinned], dim=1)
    batch = canvas.shape[0]
    columns = torch.tensor(widths, device=canvas.device)[:, None] + torch.arange(count, device=canvas.device)
    noised = canvas.scatter(1, columns, torch.randint(0, vocab_size, (batch, count), device=canvas.device))
    # No self-conditioning: as on the first pass of a self-conditioned training step.
    logits = model(decoder_input_ids=noised, **with_cache(cache), decoder_position_ids=positions).logits
    rows = torch.arange(batch, device=canvas.device)[:, None]
    log_probs = torch.log_softmax(logits[rows, columns].float(), dim=-1)
    return log_probs.gather(-1, canvas.gather(1, columns)[..., None])[..., 0].mean(dim=1).cpu()
