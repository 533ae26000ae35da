"""Weights small enough to come back from the device (8 files of 16 MiB a call) or to be carried into it:
int8 (row-wise absmax) or NF4 (block-wise absmax, bitsandbytes' 16 code values and layout of two codes a
byte), unpacked here into float weights that ``model.load`` reads like any checkpoint.

A 70M-parameter model is 140 MB in bf16 but ~72 MB in int8: five 15 MiB pieces. Embeddings stay bf16 (they
are the tied LM head: the sampler's entropy test reads its logits), as do norms and other small tensors.
Encoder and decoder share every text-layer weight, so tied tensors are packed once and restored as one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import torch

from model.checkpoint.building import new_model

SCHEMES = ("int8", "nf4")
NF4_BLOCK = 64
# QLoRA's NF4 code values (bitsandbytes.functional.get_4bit_type("nf4")), smallest first.
NF4_CODE = (
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
    -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
    0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0,
)  # fmt: skip
SMALL = 4096  # tensors under this many values stay as they are (norms, scalars): exact and negligible


def _keeps_precision(name: str, tensor: torch.Tensor) -> bool:
    return not tensor.is_floating_point() or tensor.numel() < SMALL or tensor.dim() < 2 or "embed" in name


def _int8(w: torch.Tensor) -> dict[str, torch.Tensor]:
    rows = w.float().reshape(-1, w.shape[-1])
    scale = rows.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / 127
    return {"q": torch.round(rows / scale).to(torch.int8), "scale": scale.squeeze(1)}


def _nf4(w: torch.Tensor) -> dict[str, torch.Tensor]:
    flat = w.float().reshape(-1)
    pad = (-flat.numel()) % NF4_BLOCK
    blocks = torch.cat([flat, flat.new_zeros(pad)]).reshape(-1, NF4_BLOCK)
    absmax = blocks.abs().amax(dim=1, keepdim=True).clamp_min(1e-12)
    code = torch.tensor(NF4_CODE)
    # Nearest code value: the midpoints between neighbours split the range (values are sorted).
    index = torch.bucketize((blocks / absmax).reshape(-1), (code[1:] + code[:-1]) / 2).to(torch.uint8)
    index = torch.cat([index, index.new_zeros(index.numel() % 2)])
    return {"q": (index[0::2] << 4) | index[1::2], "scale": absmax.squeeze(1).half()}


def pack_tensors(state: dict[str, torch.Tensor], scheme: str) -> dict[str, Any]:
    """``state`` packed with ``scheme``; tensors sharing storage (tied weights) are packed once."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme {scheme!r}: use one of {SCHEMES}")
    packed: dict[str, Any] = {"scheme": scheme, "tensors": {}, "aliases": {}}
    first: dict[tuple[int, tuple[int, ...], tuple[int, ...]], str] = {}
    for name, tensor in state.items():
        key = (tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()))
        if tensor.numel() and key in first:
            packed["aliases"][name] = first[key]
            continue
        first[key] = name
        tensor = tensor.detach().cpu()
        if _keeps_precision(name, tensor):
            kept = tensor.to(torch.bfloat16) if tensor.is_floating_point() and tensor.numel() >= SMALL else tensor
            packed["tensors"][name] = {"raw": kept.clone()}
        else:
            body = _int8(tensor) if scheme == "int8" else _nf4(tensor)
            packed["tensors"][name] = {**body, "shape": tuple(tensor.shape), "dtype": str(tensor.dtype)}
    return packed


def _unpack_one(entry: dict[str, Any], scheme: str) -> torch.Tensor:
    if "raw" in entry:
        return entry["raw"]
    shape, numel = torch.Size(entry["shape"]), torch.Size(entry["shape"]).numel()
    if scheme == "int8":
        values = entry["q"].float() * entry["scale"].float().unsqueeze(1)
    else:
        code = torch.tensor(NF4_CODE)
        index = torch.stack([entry["q"] >> 4, entry["q"] & 15], dim=1).reshape(-1)[: entry["scale"].numel() * NF4_BLOCK]
        values = code[index.long()].reshape(-1, NF4_BLOCK) * entry["scale"].float().unsqueeze(1)
    return values.reshape(-1)[:numel].reshape(shape)


def unpack_tensors(packed: dict[str, Any], dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """The float weights again (ties restored as one tensor), floating tensors in ``dtype``."""
    state: dict[str, torch.Tensor] = {}
    for name, entry in packed["tensors"].items():
        tensor = _unpack_one(entry, packed["scheme"])
        state[name] = tensor.to(dtype) if tensor.is_floating_point() else tensor
    for name, target in packed["aliases"].items():
        state[name] = state[target]
    return state


def packed_bytes(packed: dict[str, Any]) -> int:
    """The tensor bytes of a packed state (what a piece must carry, less torch.save's few KB of framing)."""
    total = 0
    for entry in packed["tensors"].values():
        total += sum(v.numel() * v.element_size() for v in entry.values() if isinstance(v, torch.Tensor))
    return total


def packed_values(packed: dict[str, Any]) -> int:
    """How many values the packed state holds, each tied tensor once (the model's parameter count)."""
    return sum(e["raw"].numel() if "raw" in e else torch.Size(e["shape"]).numel() for e in packed["tensors"].values())


def estimate_packed_bytes(parameters: int, embedding: int, scheme: str) -> int:
    """Bytes of ``parameters`` packed with ``scheme``, ``embedding`` of them kept bf16 (the sizing rule's
    arithmetic, before any weights exist): int8 is a byte a value plus a 4-byte scale a row (~1%), NF4 half a
    byte plus a 2-byte scale a block of 64 (~3%)."""
    per_value = 1.01 if scheme == "int8" else 0.5 + 2 / NF4_BLOCK
    return int((parameters - embedding) * per_value + embedding * 2)


def choose_scheme(parameters: int, embedding: int, room: int) -> str:
    """int8 where it fits ``room`` bytes (the closer copy), else NF4."""
    return "int8" if estimate_packed_bytes(parameters, embedding, "int8") <= room else "nf4"


def save_packed(packed: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(packed, path)
    return path


def write_model_folder(state: dict[str, torch.Tensor], folder: Path, dtype: torch.dtype = torch.bfloat16) -> Path:
    """Unpacked weights into ``folder`` (which holds the exported config, tokenizer and sampler files) as
    ``model.safetensors`` in ``dtype``: bf16 is 2 bytes a parameter, so a 70M model ships in ~140 MB."""
    from torch import nn
    from transformers import DiffusionGemmaConfig

    config = DiffusionGemmaConfig.from_pretrained(str(folder))
    model = new_model(config)
    model.load_state_dict(state)
    cast(nn.Module, model).to(dtype)  # transformers types .to as wanting self again (as in loading.py)
    model.save_pretrained(str(folder), safe_serialization=True)
    return folder
