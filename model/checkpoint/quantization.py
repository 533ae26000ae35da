"""Quantized Mixture-of-Experts for DiffusionGemma: NF4 experts, int8 or bf16 for the rest.

:class:`~model.checkpoint.quantized_experts.QuantizedExperts` (``model/checkpoint/quantized_experts.py``) keeps
every expert matrix in NF4 and dequantizes only the experts the current tokens were routed to; this module is
the policy and its installation.

Precision policy (``PRECISIONS``), for the parts that are not experts:

* ``"4bit"``: experts NF4; attention projections, dense MLP and the self-conditioning MLP in
  bitsandbytes int8 (``Linear8bitLt``, row-wise absmax, no outlier split); router, embeddings/LM head,
  norms and the (unused for text) vision tower stay bf16.
* ``"8bit"``: experts int8 (row-wise absmax, dequantized per run like NF4), the same linears int8.
* ``"bf16"``: nothing quantized.

Reasons (measured on tiny random models by ``tests/test_quantization.py`` and ``bench/quant_memory.py``;
figures in the README section): NF4 *everywhere* (linears too) drops the logit cosine and the sampler's
accepted-token agreement well below NF4-experts-only, the failure others saw on the real model (low-bit
logits raise the entropy of the distribution, so the entropy-bound sampler accepts fewer tokens per
pass). int8 linears cost almost nothing in agreement against bf16 linears and save ~1.7 GB on the real
config (1.66B non-expert linear parameters), which is the margin that keeps 2k context under 16 GB. The
router stays bf16 because it is tiny (0.36M per layer) and its output is a discrete top-8 choice: a
small error flips which experts run. The embedding stays bf16 because it is tied to the LM head (logits
feed the sampler's entropy test) and the decoder reads ``embed_tokens.weight`` directly to turn the
previous pass's probabilities into self-conditioning embeddings, which an int8 module would not expose.

Encoder and decoder share (tie) every text-layer weight; :func:`quantize_model` quantizes each shared
weight once and installs the same module in both places, so ties cost no memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn
from transformers import DiffusionGemmaForBlockDiffusion

# The experts' module and its constants stay importable from here, where the loaders and tools find them.
from model.checkpoint.quantized_experts import (
    DEFAULT_SCRATCH_BYTES,
    EXPERT_KERNELS,
    EXPERT_SCHEMES,
    NESTED_BLOCKSIZE,
    NF4_BLOCKSIZE,
    ExpertsSpec,
    QuantizedExperts,
)

if TYPE_CHECKING:
    import bitsandbytes as bnb
else:  # imported on first use: model.checkpoint.lazy_bnb
    from model.checkpoint.lazy_bnb import bnb

__all__ = [
    "DEFAULT_SCRATCH_BYTES", "EXPERT_KERNELS", "EXPERT_SCHEMES", "LINEAR_SCHEMES", "NESTED_BLOCKSIZE",
    "NF4_BLOCKSIZE", "PRECISIONS", "QUANTIZED_LAYER_LINEARS", "QUANTIZED_SELF_CONDITIONING_LINEARS",
    "ExpertsSpec", "PrecisionPolicy", "QuantizedExperts", "cast_floating_parameters", "int8_bytes",
    "module_bytes", "nf4_bytes", "policy_for", "quantize_linear", "quantize_model", "quantized_linear_paths",
    "tied_partner",
]  # fmt: skip

PRECISIONS = ("4bit", "8bit", "bf16")
LINEAR_SCHEMES = ("int8", "bf16", "nf4")  # "nf4" exists only to measure why the policy avoids it
# Linear submodules (by attribute path inside a text layer) that the policy quantizes.
QUANTIZED_LAYER_LINEARS = (
    "self_attn.q_proj",
    "self_attn.k_proj",
    "self_attn.v_proj",
    "self_attn.o_proj",
    "mlp.gate_proj",
    "mlp.up_proj",
    "mlp.down_proj",
)
QUANTIZED_SELF_CONDITIONING_LINEARS = ("gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class PrecisionPolicy:
    """Which storage each group of weights gets for one user-facing precision."""

    experts: str  # "nf4" | "int8" | "bf16"
    linears: str  # "int8" | "bf16" | "nf4"
    compute_dtype: torch.dtype = torch.bfloat16


def policy_for(precision: str, linears: str | None = None) -> PrecisionPolicy:
    """The documented policy for ``precision``; ``linears`` overrides the non-expert choice."""
    if precision == "4bit":
        policy = PrecisionPolicy(experts="nf4", linears="int8")
    elif precision == "8bit":
        policy = PrecisionPolicy(experts="int8", linears="int8")
    elif precision == "bf16":
        policy = PrecisionPolicy(experts="bf16", linears="bf16")
    else:
        raise ValueError(f"unknown precision {precision!r}; use one of {', '.join(PRECISIONS)}")
    if linears is not None:
        if linears not in LINEAR_SCHEMES:
            raise ValueError(f"unknown linear scheme {linears!r}; use one of {', '.join(LINEAR_SCHEMES)}")
        policy = PrecisionPolicy(experts=policy.experts, linears=linears)
    return policy


# --------------------------------------------------------------------------------------------------
# Non-expert linears


def quantize_linear(
    weight: torch.Tensor, scheme: str, device: torch.device, compute_dtype: torch.dtype = torch.bfloat16
) -> nn.Module:
    """A bias-free ``nn.Linear`` replacement holding ``weight`` ([out, in]) in ``scheme`` on ``device``."""
    out_features, in_features = weight.shape
    if scheme == "bf16":
        linear = nn.Linear(in_features, out_features, bias=False, device="meta")
        linear.weight = nn.Parameter(weight.to(device=device, dtype=compute_dtype), requires_grad=False)
        return linear
    if scheme == "int8":
        linear8 = bnb.nn.Linear8bitLt(
            in_features, out_features, bias=False, has_fp16_weights=False, threshold=0.0, device="meta"
        )
        # Int8Params quantizes when it moves from the CPU to the target device.
        linear8.weight = bnb.nn.Int8Params(
            weight.detach().to("cpu", torch.float16), requires_grad=False, has_fp16_weights=False
        )
        return linear8.to(device)
    if scheme == "nf4":
        linear4 = bnb.nn.Linear4bit(
            in_features,
            out_features,
            bias=False,
            compute_dtype=compute_dtype,
            quant_type="nf4",
            device="meta",
        )
        linear4.weight = bnb.nn.Params4bit(
            weight.detach().to("cpu", compute_dtype), requires_grad=False, quant_type="nf4"
        )
        return linear4.to(device)
    raise ValueError(f"unknown linear scheme {scheme!r}")


def quantized_linear_paths(model: DiffusionGemmaForBlockDiffusion) -> list[str]:
    """Dotted names of the linears the policy may quantize (decoder copies; the encoder ties to them)."""
    decoder = model.model.decoder
    paths = [
        f"model.decoder.layers.{index}.{linear}"
        for index in range(len(decoder.layers))
        for linear in QUANTIZED_LAYER_LINEARS
        if _get(model, f"model.decoder.layers.{index}.{linear}") is not None
    ]
    paths += [f"model.decoder.self_conditioning.{name}" for name in QUANTIZED_SELF_CONDITIONING_LINEARS]
    return paths


def _get(root: nn.Module, path: str) -> nn.Module | None:
    module: nn.Module | None = root
    for part in path.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


def _set(root: nn.Module, path: str, value: nn.Module) -> None:
    parent_path, _, name = path.rpartition(".")
    parent = _get(root, parent_path) if parent_path else root
    setattr(parent, name, value)


def tied_partner(path: str) -> str | None:
    """The encoder twin of a decoder text-layer module path (encoder and decoder layers share weights)."""
    prefix = "model.decoder.layers."
    if path.startswith(prefix):
        return "model.encoder.language_model.layers." + path[len(prefix) :]
    return None


@torch.no_grad()
def quantize_model(
    model: DiffusionGemmaForBlockDiffusion,
    precision: str,
    *,
    linears: str | None = None,
    double_quant: bool = True,
    device: torch.device | str | None = None,
) -> nn.Module:
    """Quantize an in-memory ``DiffusionGemmaForBlockDiffusion`` in place (and return it) per the policy.

    ``device`` defaults to where the model is. Tied encoder/decoder weights are quantized once and the
    same module is installed in both layers.
    """
    policy = policy_for(precision, linears)
    target = torch.device(device) if device is not None else next(model.parameters()).device
    if policy.experts == "bf16" and policy.linears == "bf16":
        return cast_floating_parameters(model, target, policy.compute_dtype)
    decoder = model.model.decoder
    for index in range(len(decoder.layers)):
        path = f"model.decoder.layers.{index}.experts"
        experts = _get(model, path)
        assert experts is not None
        if policy.experts == "bf16":
            replacement: nn.Module = experts.to(device=target, dtype=policy.compute_dtype)
        else:
            replacement = QuantizedExperts.from_float(
                experts, policy.experts, double_quant, policy.compute_dtype, device=target
            )
        _install(model, path, replacement)
    for path in quantized_linear_paths(model):
        linear = _get(model, path)
        assert isinstance(linear, nn.Linear)
        _install(model, path, quantize_linear(linear.weight, policy.linears, target, policy.compute_dtype))
    cast_floating_parameters(model, target, policy.compute_dtype)
    return model


def cast_floating_parameters(model: nn.Module, device: torch.device, dtype: torch.dtype) -> nn.Module:
    """Float parameters to ``dtype`` on ``device``; buffers only move.

    Unlike ``model.to(dtype)`` this keeps the rotary inverse-frequency tables and embedding scales in
    float32, as ``from_pretrained(dtype=torch.bfloat16)`` does (a bf16 rotary table visibly shifts the
    logits). bitsandbytes modules are left alone: their storage is already final.
    """
    for module in model.modules():
        if isinstance(module, QuantizedExperts | bnb.nn.Linear8bitLt | bnb.nn.Linear4bit):
            continue
        for param in module.parameters(recurse=False):
            if param.is_floating_point():
                param.data = param.data.to(device=device, dtype=dtype)
        for name, buffer in list(module.named_buffers(recurse=False)):
            module._buffers[name] = buffer.to(device=device)
    return model


def _install(model: nn.Module, path: str, module: nn.Module) -> None:
    """Put ``module`` at ``path`` and at its tied encoder twin when that twin shares the weights."""
    original = _get(model, path)
    _set(model, path, module)
    twin_path = tied_partner(path)
    twin = _get(model, twin_path) if twin_path else None
    if twin is None or original is None:
        return
    if _shares_weights(original, twin):
        _set(model, twin_path, module)  # type: ignore[arg-type]
    else:
        raise ValueError(f"{twin_path} is not tied to {path}; DiffusionGemma ties encoder and decoder layers")


def _shares_weights(left: nn.Module, right: nn.Module) -> bool:
    mine = [p.data_ptr() for p in left.parameters(recurse=False)]
    theirs = [p.data_ptr() for p in right.parameters(recurse=False)]
    return left is right or (bool(mine) and mine == theirs)


def module_bytes(model: nn.Module) -> int:
    """Bytes actually held by the model's parameters and buffers, counting shared tensors once."""
    seen: set[int] = set()
    total = 0
    for tensor in list(model.parameters()) + list(model.buffers()):
        if tensor.device.type == "meta":
            continue
        key = tensor.data_ptr()
        if key in seen or tensor.numel() == 0:
            continue
        seen.add(key)
        total += tensor.numel() * tensor.element_size()
        scb = getattr(tensor, "SCB", None)  # Int8Params keep their row scales outside the module
        if isinstance(scb, torch.Tensor):
            total += scb.numel() * scb.element_size()
    return total


# --------------------------------------------------------------------------------------------------
# Footprint arithmetic (used by the doctor's estimate; the tests check it against real quantized bytes)


def nf4_bytes(numel: int, double_quant: bool = True, blocksize: int = NF4_BLOCKSIZE) -> int:
    """Bytes of one NF4 tensor: packed nibbles + block scales (uint8 + nested fp32 with double quant)."""
    blocks = math.ceil(numel / blocksize)
    if double_quant:
        return numel // 2 + blocks + 4 * math.ceil(blocks / NESTED_BLOCKSIZE) + 256 * 4 + 4
    return numel // 2 + 4 * blocks


def int8_bytes(rows: int, cols: int) -> int:
    """Bytes of one row-wise int8 matrix: the int8 values + one fp32 scale per row."""
    return rows * cols + 4 * rows
