"""The model's three calls in an edit: the prefix through the encoder into the KV cache, a decoder pass over
whole canvases, and a finished block committed to the cache. Every call passes the cache through
:func:`model.cache_kwarg.with_cache`."""

from __future__ import annotations

import torch
from transformers import DiffusionGemmaForBlockDiffusion, DynamicCache

from model.cache_kwarg import with_cache
from model.conditioning import zero_self_conditioning_at

# Long prefixes go through the encoder in chunks: attention scores for the whole prefix at once would
# need gigabytes at 8k tokens (no flash kernel for 512-wide heads), chunks bound that.
PREFILL_CHUNK = 2048


def prefill(model: DiffusionGemmaForBlockDiffusion, prompt: torch.Tensor, cache: DynamicCache, chunk: int) -> None:
    """Encode ``prompt`` (1, length) into ``cache``, ``chunk`` tokens at a time."""
    length = prompt.shape[1]
    for start in range(0, length, chunk):
        piece = prompt[:, start : start + chunk]
        model.model.encoder(
            input_ids=piece,
            **with_cache(cache),
            position_ids=torch.arange(start, start + piece.shape[1], device=prompt.device, dtype=torch.int32)[None],
        )


def decode(
    model: DiffusionGemmaForBlockDiffusion,
    canvas: torch.Tensor,
    positions: torch.Tensor,
    cache: DynamicCache,
    sc_logits: torch.Tensor | None,
    keep_signal: torch.Tensor | None,
) -> torch.Tensor:
    """One decoder pass over whole canvases; pinned positions (``keep_signal`` 0) get no self-conditioning."""
    with zero_self_conditioning_at(model, keep_signal if sc_logits is not None else None):
        return model(  # type: ignore[no-any-return]
            decoder_input_ids=canvas,
            **with_cache(cache),
            decoder_position_ids=positions,
            self_conditioning_logits=sc_logits,
        ).logits


def commit_block(
    model: DiffusionGemmaForBlockDiffusion, slots: torch.Tensor, cache: DynamicCache, positions: torch.Tensor
) -> None:
    """Put a finished block into the KV cache, so the next canvas is conditioned on it."""
    model.model.encoder(
        input_ids=slots.contiguous(),
        **with_cache(cache),
        position_ids=positions,
    )
