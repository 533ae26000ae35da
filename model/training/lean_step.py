"""Fewer operators in every adaptation step (#47): a small model's training step on a GPU is bound by how many
operators it launches, each costing microseconds of Python, dispatch and launch whatever its size
(bench/step_operators.py counts them). Two changes, each checked against the plain model in
tests/test_transplant.py:

- ``silence_moe``: the transplant's silent MoE blocks skipped (exactly: they add zero) and frozen;
- ``fuse_norms``: every RMSNorm one ``torch.nn.functional.rms_norm`` call, which CUDA runs as one fused
  kernel forward and one backward where the model's own norm runs some eight (equal to float rounding).
  On the CPU it decomposes into the same operators, so only a device can say what it buys: the runbook
  times a step both ways there before it trains (``Recipe.fused_norms`` carries the choice).

Both change how the model computes in this process only: its weights, and the folder it is saved to, are the
same, and the engine runs the model's own modules.
"""

from __future__ import annotations

from types import MethodType
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from transformers import DiffusionGemmaForBlockDiffusion
from transformers.models.diffusion_gemma.modeling_diffusion_gemma import DiffusionGemmaRMSNorm


def _same(hidden: torch.Tensor) -> torch.Tensor:
    return hidden


def _no_routing(_hidden: torch.Tensor) -> tuple[None, None, None]:
    return None, None, None


def _silent_experts(hidden: torch.Tensor, _index: object, _weights: object) -> torch.Tensor:
    # A zero scalar seen at the block's shape (one fill, no copy), in the dtype the real block returns.
    return hidden.new_zeros(()).expand_as(hidden)


def moe_layers(model: DiffusionGemmaForBlockDiffusion) -> list[Any]:
    """Every layer module (the encoder's and the decoder's, which share their weights) with an MoE block."""
    return [m for m in model.modules() if isinstance(getattr(m, "experts", None), nn.Module) and hasattr(m, "router")]


def silence_moe(model: DiffusionGemmaForBlockDiffusion) -> int:
    """Skip the transplant's silent MoE blocks while it adapts; returns how many layer modules it changed (0
    where the blocks are not all silent, as after a run that trained them: they then run, and train, as ever).

    Each block contributes exactly zero, yet runs ~30 operators forward and as many backward in every layer
    (norm, router, top-k, the expert's grouped matmul): a third of an adaptation step's operators, which bound
    a small model's step on a GPU (bench/step_operators.py). Skipped, a block is a zero seen at its output's
    shape, bit for bit what it computed. Its parameters must then stay as they are: trained, ``down_proj``
    would leave zero and the block would no longer be silent (``silenced_parameters``, which the adaptation
    freezes). The weights and the saved model are untouched: the engine runs the real block.
    """
    layers = moe_layers(model)
    if not all(layer.experts.num_experts == 1 and not layer.experts.down_proj.detach().any() for layer in layers):
        return 0
    for layer in layers:
        layer.pre_feedforward_layernorm_2.forward = _same  # feeds only the expert
        layer.router.forward = _no_routing
        layer.experts.forward = _silent_experts
        layer.post_feedforward_layernorm_2.forward = _same  # the norm of zero is zero
    return len(layers)


def silenced_parameters(model: DiffusionGemmaForBlockDiffusion) -> set[int]:
    """The ids of the parameters of the MoE blocks ``silence_moe`` skips in ``model`` (none if it has not)."""
    layers = [layer for layer in moe_layers(model) if vars(layer.experts).get("forward") is _silent_experts]
    blocks = ("router", "experts", "pre_feedforward_layernorm_2", "post_feedforward_layernorm_2")
    return {id(p) for layer in layers for name in blocks for p in getattr(layer, name).parameters()}


def _fused_norm(norm: DiffusionGemmaRMSNorm, hidden: torch.Tensor) -> torch.Tensor:
    # As the model's norm: in float32 whatever the input (bf16 under autocast), back in the input's dtype.
    scale = norm.weight.float() if norm.with_scale else None
    return F.rms_norm(hidden.float(), (hidden.shape[-1],), scale, _norm_eps(norm)).type_as(hidden)


def _norm_eps(norm: DiffusionGemmaRMSNorm) -> float:
    # transformers 5.25 renamed the norm's ``eps`` to ``variance_epsilon``; our range takes in both.
    eps = getattr(norm, "variance_epsilon", None)
    return float(getattr(norm, "eps") if eps is None else eps)  # noqa: B009 - absent after 5.24


def fuse_norms(model: DiffusionGemmaForBlockDiffusion) -> int:
    """Run every RMSNorm of ``model`` (its text layers' and the rest) as one ``rms_norm`` call; returns how
    many. Norms ``silence_moe`` skips stay skipped."""
    count = 0
    for module in model.modules():
        if isinstance(module, DiffusionGemmaRMSNorm) and vars(module).get("forward") is not _same:
            patched: Any = module  # an instance's forward, not the class's; a bound method, so a deep copy of
            patched.forward = MethodType(_fused_norm, module)  # the model gets its own (the runbook's trials)
            count += 1
    return count
