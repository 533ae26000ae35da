"""Per-position control of DiffusionGemma's self-conditioning signal.

transformers' decoder accepts a per-*example* ``self_conditioning_mask``; pinned canvases need a
per-*position* one: a pinned position holds its clean token every pass and must get no
self-conditioning signal (zeroed), the semantics vLLM uses for pinned canvases. We get that without
forking the decoder by scaling the soft embeddings on their way into the decoder's
``DiffusionGemmaSelfConditioning`` block with a forward pre-hook. The engine and the training loop
both use this one helper, so sampling and training see the same inputs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn
from transformers import DiffusionGemmaForBlockDiffusion


def self_conditioning_block(model: DiffusionGemmaForBlockDiffusion) -> nn.Module:
    """The decoder's self-conditioning module of a ``DiffusionGemmaForBlockDiffusion``."""
    return model.model.decoder.self_conditioning


@contextmanager
def zero_self_conditioning_at(model: DiffusionGemmaForBlockDiffusion, keep: torch.Tensor | None) -> Iterator[None]:
    """Within the block, decoder calls see their self-conditioning signal multiplied by ``keep``.

    ``keep`` has shape (batch, canvas) and is 1 where a position may receive the previous pass's
    signal and 0 where it must not (pinned positions). ``None`` leaves the decoder untouched.
    """
    if keep is None:
        yield
        return

    def scale_signal(_module: nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...]:
        inputs_embeds, signal = args
        return inputs_embeds, signal * keep.to(signal.dtype)[:, :, None]

    handle = self_conditioning_block(model).register_forward_pre_hook(scale_signal)
    try:
        yield
    finally:
        handle.remove()
