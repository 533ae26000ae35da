"""The transplant's calibrated bridges: ``o_proj`` refitted layer by layer by least squares on activations.

DiffusionGemma normalises every value vector (a scale-free ``v_norm``) and its full-attention layers read
the keys as values (no ``v_proj``); neither has an exact counterpart in Gemma 3's weights. Both act
before ``o_proj``, so each layer's ``o_proj`` is refitted to map what the transplant's attention produces
onto what Gemma 3's attention output was, for the same text:

1. one Gemma 3 pass records every layer's attention output (after its ``o_proj``);
2. one pass of the transplant's encoder, in which a hook on each ``o_proj`` first solves the ridge
   regression ``W = argmin |C·Wᵀ - Y|² + λ|W|²`` on that layer's own inputs ``C`` (which already carry the
   refitted layers before it, so errors do not compound) and then runs with ``W``.

``agreement`` measures the result: how often the transplant's encoder and Gemma 3 agree on the next token.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from transformers import DiffusionGemmaForBlockDiffusion, Gemma3ForCausalLM

from model.training.transplant import encoder_logits, source_layers


def _ridge(inputs: torch.Tensor, targets: torch.Tensor, ridge: float) -> torch.Tensor:
    """``W`` (out, in) minimising ``|inputs·Wᵀ - targets|² + ridge·trace(CᵀC)/in·|W|²`` in float64."""
    c = inputs.double()
    gram = c.T @ c
    lam = ridge * float(torch.trace(gram)) / gram.shape[0]
    gram += lam * torch.eye(gram.shape[0], dtype=gram.dtype)
    return torch.linalg.solve(gram, c.T @ targets.double()).T.float()


@torch.no_grad()
def calibrate_pairs(
    model: DiffusionGemmaForBlockDiffusion,
    gemma: Gemma3ForCausalLM,
    pairs: Sequence[tuple[torch.Tensor, torch.Tensor]],
    keep_layers: int | None = None,
    ridge: float = 1e-4,
) -> list[float]:
    """Refit every layer's ``o_proj`` in place; ``pairs`` are (Gemma 3 ids, the same text in the
    transplant's ids), each starting with bos. Returns each layer's relative error after its fit."""
    layers = source_layers(gemma.config, keep_layers)
    targets: list[list[torch.Tensor]] = [[] for _ in layers]

    def recorder(slot: int) -> Any:
        def hook(_module: nn.Module, _args: tuple[Any, ...], out: torch.Tensor) -> None:
            targets[slot].append(out.detach().reshape(-1, out.shape[-1]).float())

        return hook

    handles = [
        gemma.model.layers[old].self_attn.o_proj.register_forward_hook(recorder(slot))
        for slot, old in enumerate(layers)
    ]
    try:
        for gemma_ids, _ in pairs:
            gemma.model(input_ids=gemma_ids, use_cache=False)
    finally:
        for handle in handles:
            handle.remove()

    # The transplant's pass runs once per batch, so each layer's inputs are gathered over all batches
    # before its fit: run the batches layer by layer, stopping every pass at the layer being fitted.
    lm = model.model.encoder.language_model
    errors: list[float] = []
    for slot, layer in enumerate(lm.layers):
        inputs: list[torch.Tensor] = []
        handle = layer.self_attn.o_proj.register_forward_pre_hook(_grabber(inputs))
        try:
            for _, model_ids in pairs:
                with contextlib.suppress(_StopPass):
                    model.model.encoder(input_ids=model_ids, use_cache=False)
        finally:
            handle.remove()
        c = torch.cat(inputs)
        y = torch.cat(targets[slot])
        weight = _ridge(c, y, ridge)
        layer.self_attn.o_proj.weight.copy_(weight)
        errors.append(float((c @ weight.T - y).norm() / y.norm()))
    return errors


class _StopPass(Exception):
    """Ends a calibration pass at the layer being fitted (the layers after it are not needed yet)."""


def _grabber(inputs: list[torch.Tensor]) -> Any:
    def grab(_module: nn.Module, args: tuple[Any, ...]) -> None:
        inputs.append(args[0].detach().reshape(-1, args[0].shape[-1]).float())
        raise _StopPass

    return grab


@dataclass(frozen=True)
class Agreement:
    """The transplant's encoder against Gemma 3 on the same text, next token by next token."""

    tokens: int
    top1: float  # share of positions where both predict the same next token
    top1_in_top5: float  # share where the transplant's top-1 is among Gemma 3's top 5
    nll_transplant: float  # mean negative log-likelihood of the true next token
    nll_gemma: float


@torch.no_grad()
def agreement(
    model: DiffusionGemmaForBlockDiffusion,
    gemma: Gemma3ForCausalLM,
    pairs: Sequence[tuple[torch.Tensor, torch.Tensor]],
    keep_ids: torch.Tensor | None = None,
) -> Agreement:
    """``Agreement`` over ``pairs`` (as in ``calibrate_pairs``). With a pruned vocabulary, Gemma 3's logits are
    compared on the kept tokens only (its columns ``keep_ids``), which is what the transplant can say."""
    same = in_top5 = count = 0
    nll_t = nll_g = 0.0
    for gemma_ids, model_ids in pairs:
        g = gemma(input_ids=gemma_ids, use_cache=False).logits.float()[:, :-1]
        if keep_ids is not None:
            g = g[..., keep_ids]
        t = encoder_logits(model, model_ids)[:, :-1]
        nxt = model_ids[:, 1:]
        t_top = t.argmax(-1)
        same += int((t_top == g.argmax(-1)).sum())
        in_top5 = in_top5 + int((g.topk(5, dim=-1).indices == t_top[..., None]).any(-1).sum())
        nll_t += float(F.cross_entropy(t.reshape(-1, t.shape[-1]), nxt.reshape(-1), reduction="sum"))
        nll_g += float(F.cross_entropy(g.reshape(-1, g.shape[-1]), nxt.reshape(-1), reduction="sum"))
        count += nxt.numel()
    return Agreement(count, same / count, in_top5 / count, nll_t / count, nll_g / count)
