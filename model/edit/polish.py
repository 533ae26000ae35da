"""Polishing a finished block (``polish_rounds``, Redraft's second sampler extension, off by default).

Uniform-noise diffusion trains the model to spot and replace wrong tokens anywhere on a canvas, but
the sampler never revisits a finished one. Each polish round re-reads the clean canvas, turns each
candidate's least likely tokens back into noise and predicts them again with everything else in
place; later rounds re-noise linearly fewer.
"""

from __future__ import annotations

import math

import torch
from transformers import DiffusionGemmaForBlockDiffusion, DynamicCache

from model.edit.bans import Bans, slot_logits
from model.runtime.forward import decode

# The first round re-noises this share of each candidate's slots (its least likely tokens).
POLISH_SHARE = 0.3


def polish_shares(rounds: int) -> list[float]:
    """The share of each candidate's slots every polish round re-noises: ``POLISH_SHARE``, then linearly less."""
    return [POLISH_SHARE * (1 - r / rounds) for r in range(rounds)]


def polish(
    model: DiffusionGemmaForBlockDiffusion,
    vocab_size: int,
    slots: torch.Tensor,
    pinned: torch.Tensor,
    widths: list[int],
    share: float,
    bans: Bans,
    held: torch.Tensor | None,
    sc_logits: torch.Tensor | None,
    keep_signal: torch.Tensor | None,
    positions: torch.Tensor,
    cache: DynamicCache,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One polishing round of finished slots (two decoder passes).

    The model re-reads the clean canvas; each candidate's ``share`` of its own slots (at least one)
    whose tokens it finds least likely become noise and are predicted again (argmax) from the rest,
    which stay in place. Returns the new slots, the re-read's logits (the next pass's
    self-conditioning) and the per-slot entropy of the new predictions.
    """
    batch, slot_count = slots.shape
    reread = decode(
        model, torch.cat([slots, pinned], dim=1), positions, cache, sc_logits, keep_signal, columns=slot_count
    )
    log_probs = torch.log_softmax(slot_logits(reread, slot_count, bans, held).float(), dim=-1)
    own = log_probs.gather(-1, slots[..., None])[..., 0]
    width = torch.tensor(widths, device=slots.device)[:, None]
    own = own.masked_fill(torch.arange(slot_count, device=slots.device)[None] >= width, math.inf)
    counts = torch.tensor([max(1, round(share * w)) for w in widths], device=slots.device)[:, None]
    weakest = own.argsort(dim=1, stable=True).argsort(dim=1) < counts  # each row's rank below its count
    noise = torch.randint(0, vocab_size, (batch, slot_count), device=slots.device)
    noised = torch.where(weakest, noise, slots)
    sc = reread.to(model.model.decoder.embed_tokens.weight.dtype)
    logits = slot_logits(
        decode(model, torch.cat([noised, pinned], dim=1), positions, cache, sc, keep_signal, columns=slot_count),
        slot_count,
        bans,
        held,
    )
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    entropy = -(log_probs.exp() * log_probs).sum(-1)
    return torch.where(weakest, logits.argmax(dim=-1), slots), sc, entropy
