"""What a model needs and what a device has: parameter counts per group from the config alone (no weights
read), the bytes each group takes under the precision policy of :mod:`model.checkpoint.quantization`, the
prefix KV cache for a context length, activations and runtime overheads, as one :class:`Footprint` whose
every term the doctor can show; and the GPUs and the processor with the memory each offers.
"""

from __future__ import annotations

import ctypes
import math
import os
import sys
from dataclasses import dataclass, field

import torch
from transformers import AutoModel, DiffusionGemmaConfig

from model.checkpoint.architecture import (
    ExpertSizes,
    layer_types_of,
    text_config_of,
    vision_config_of,
)
from model.checkpoint.building import MODEL_BUILDING
from model.checkpoint.quantization import DEFAULT_SCRATCH_BYTES, int8_bytes, nf4_bytes, policy_for

DEFAULT_CONTEXT = 2048  # tokens of context the estimate assumes unless told
GIB = 2**30
# Allocator fragmentation and the caching allocator's rounding, as a share of everything allocated.
FRAGMENTATION = 0.04
# Memory the process needs beyond tensors it allocates (cuBLAS workspaces, bitsandbytes scratch).
RUNTIME_BYTES = 384 * 2**20
# Precisions whose experts are quantized modules, which can live in host memory.
HOST_PRECISIONS = ("4bit", "8bit")
# fp32 copies of one canvas's logits alive at once: the softcapped logits, the sampler's probabilities
# and log-probabilities, and the previous pass's logits kept for self-conditioning.
LOGIT_COPIES = 4


@dataclass(frozen=True)
class DeviceInfo:
    """A device and its memory, as the preflight sees it."""

    kind: str  # "cuda" or "cpu"
    name: str
    total_bytes: int
    free_bytes: int
    index: int | None = None
    capability: tuple[int, int] | None = None

    def describe(self) -> str:
        where = f"cuda:{self.index}" if self.kind == "cuda" else "cpu"
        extra = f", compute capability {self.capability[0]}.{self.capability[1]}" if self.capability else ""
        free, total = self.free_bytes / GIB, self.total_bytes / GIB
        return f"{where} {self.name}: {free:.1f} GiB free of {total:.1f} GiB{extra}"


def cuda_device_info(device: torch.device | int | None = None) -> DeviceInfo:
    """Free and total memory of one CUDA device (free as the driver reports it, other processes included)."""
    index = device.index if isinstance(device, torch.device) else device
    index = torch.cuda.current_device() if index is None else index
    free, total = torch.cuda.mem_get_info(index)
    properties = torch.cuda.get_device_properties(index)
    return DeviceInfo(
        kind="cuda",
        name=properties.name,
        total_bytes=int(total),
        free_bytes=int(free),
        index=index,
        capability=(properties.major, properties.minor),
    )


def cpu_device_info() -> DeviceInfo:
    """The host's RAM (MemAvailable where /proc/meminfo exists)."""
    if sys.platform == "win32":  # no os.sysconf there: the loader's memory check failed on every Windows
        status = _MemoryStatus()
        status.length = ctypes.sizeof(_MemoryStatus)
        if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
            raise ctypes.WinError()
        return DeviceInfo(kind="cpu", name="host memory", total_bytes=status.total, free_bytes=status.available)
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    free = total
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
    except OSError:
        pass
    return DeviceInfo(kind="cpu", name="host memory", total_bytes=total, free_bytes=free)


class _MemoryStatus(ctypes.Structure):
    """Windows' MEMORYSTATUSEX."""

    _fields_ = [
        ("length", ctypes.c_uint32),
        ("load", ctypes.c_uint32),
        ("total", ctypes.c_uint64),
        ("available", ctypes.c_uint64),
        ("page_file", ctypes.c_uint64),
        ("page_file_free", ctypes.c_uint64),
        ("virtual", ctypes.c_uint64),
        ("virtual_free", ctypes.c_uint64),
        ("extended", ctypes.c_uint64),
    ]


def all_devices() -> list[DeviceInfo]:
    """Every CUDA device PyTorch can see."""
    if not torch.cuda.is_available():
        return []
    return [cuda_device_info(index) for index in range(torch.cuda.device_count())]


# --------------------------------------------------------------------------------------------------
# Parameter counts and footprint


@dataclass(frozen=True)
class ParameterGroups:
    """Parameter counts by how the precision policy stores them (tied weights counted once)."""

    experts: list[tuple[int, int, int]]  # (num_experts, rows, cols) per fused expert projection
    linears: list[tuple[int, int]]  # (out, in) of each policy linear (attention, dense MLP, self-cond.)
    embedding: int  # tied token embedding / LM head
    router: int
    other: int  # norms, scalars, vision tower: always bf16

    @property
    def total(self) -> int:
        return (
            sum(e * r * c for e, r, c in self.experts)
            + sum(o * i for o, i in self.linears)
            + self.embedding
            + self.router
            + self.other
        )


def parameter_groups(config: DiffusionGemmaConfig) -> ParameterGroups:
    """Count the model's parameters from its config (nothing is allocated for the text model)."""
    text = text_config_of(config)
    sizes = ExpertSizes.of(text)
    hidden, heads = text.hidden_size, text.num_attention_heads
    experts: list[tuple[int, int, int]] = []
    linears: list[tuple[int, int]] = []
    router = other = 0
    for index, layer_type in enumerate(layer_types_of(text)):
        layer = text.per_layer_config[index]
        head_dim, kv_heads = layer.head_dim, layer.num_key_value_heads
        linears += [(heads * head_dim, hidden), (kv_heads * head_dim, hidden), (hidden, heads * head_dim)]
        if layer_type == "sliding_attention":  # full-attention layers reuse keys as values: no v_proj
            linears.append((kv_heads * head_dim, hidden))
        linears += [(text.intermediate_size, hidden)] * 2 + [(hidden, text.intermediate_size)]
        experts += [
            (sizes.num_experts, 2 * sizes.moe_intermediate_size, hidden),
            (sizes.num_experts, hidden, sizes.moe_intermediate_size),
        ]
        router += sizes.num_experts * hidden + hidden + sizes.num_experts
        other += 7 * hidden + 2 * head_dim  # seven layer norms, q/k norms
    # Self-conditioning MLP (decoder only) and its norm, the final norm.
    linears += [(text.intermediate_size, hidden)] * 2 + [(hidden, text.intermediate_size)]
    other += 2 * hidden
    other += _vision_parameters(config)
    return ParameterGroups(
        experts=experts, linears=linears, embedding=text.vocab_size * hidden, router=router, other=other
    )


def _vision_parameters(config: DiffusionGemmaConfig) -> int:
    """The vision tower and its projection, counted on the meta device (from the config, no memory)."""
    vision = vision_config_of(config)
    with MODEL_BUILDING, torch.device("meta"):
        tower = AutoModel.from_config(vision)
    projection = getattr(vision, "output_proj_dims", vision.hidden_size)
    return sum(p.numel() for p in tower.parameters()) + projection * text_config_of(config).hidden_size


@dataclass(frozen=True)
class Footprint:
    """Estimated device memory for one model at one precision and context length, in bytes."""

    precision: str
    context_tokens: int
    parts: dict[str, int] = field(default_factory=dict)
    # Host memory the placement needs besides (the routed experts, when they live there).
    host_parts: dict[str, int] = field(default_factory=dict)

    @property
    def weights_bytes(self) -> int:
        return sum(v for k, v in self.parts.items() if k.startswith("weights:"))

    @property
    def host_bytes(self) -> int:
        return sum(self.host_parts.values())

    @property
    def experts_on_host(self) -> bool:
        return bool(self.host_parts)

    @property
    def total_bytes(self) -> int:
        return sum(self.parts.values())

    def table(self) -> str:
        rows = [f"  {name:<38} {size / GIB:7.2f} GiB" for name, size in self.parts.items()]
        rows.append(f"  {'total on the device':<38} {self.total_bytes / GIB:7.2f} GiB")
        rows += [f"  {'host memory: ' + name:<38} {size / GIB:7.2f} GiB" for name, size in self.host_parts.items()]
        return "\n".join(rows)


def weight_bytes(config: DiffusionGemmaConfig, precision: str, double_quant: bool = True) -> dict[str, int]:
    """Bytes of the weights per group under the precision policy (arithmetic on the config only)."""
    policy = policy_for(precision)
    groups = parameter_groups(config)
    if policy.experts == "nf4":
        experts = sum(nf4_bytes(e * r * c, double_quant) for e, r, c in groups.experts)
    elif policy.experts == "int8":
        experts = sum(int8_bytes(e * r, c) for e, r, c in groups.experts)
    else:
        experts = sum(2 * e * r * c for e, r, c in groups.experts)
    if policy.linears == "int8":
        linears = sum(int8_bytes(o, i) for o, i in groups.linears)
    elif policy.linears == "nf4":
        linears = sum(nf4_bytes(o * i, double_quant) for o, i in groups.linears)
    else:
        linears = sum(2 * o * i for o, i in groups.linears)
    return {
        f"weights: experts ({policy.experts})": experts,
        f"weights: linears ({policy.linears})": linears,
        "weights: embedding/LM head (bf16)": 2 * groups.embedding,
        "weights: router, norms, vision (bf16)": 2 * (groups.router + groups.other),
    }


def kv_cache_bytes(config: DiffusionGemmaConfig, context_tokens: int) -> int:
    """The encoder's prefix cache in bf16; sliding layers keep only their window (``DynamicCache``)."""
    text = text_config_of(config)
    total = 0
    for index, layer_type in enumerate(layer_types_of(text)):
        layer = text.per_layer_config[index]
        kept = min(context_tokens, text.sliding_window) if layer_type == "sliding_attention" else context_tokens
        # Keys and values are both cached, also where values are derived from the keys.
        total += 2 * layer.num_key_value_heads * layer.head_dim * kept * 2
    return total


def activation_bytes(config: DiffusionGemmaConfig, context_tokens: int, precision: str) -> dict[str, int]:
    """The largest transient tensors of a prefill of ``context_tokens`` and of one denoising pass."""
    text = text_config_of(config)
    sizes = ExpertSizes.of(text)
    canvas = config.canvas_length or 256
    tokens = max(context_tokens, canvas)
    routed = tokens * sizes.top_k_experts
    # Sorted expert inputs, their outputs (bf16) and the gate/up activations of the routed rows.
    moe = routed * (2 * text.hidden_size * 2 + 2 * sizes.moe_intermediate_size * 2)
    dense = tokens * (4 * text.hidden_size + 2 * text.intermediate_size) * 2
    heads = text.num_attention_heads
    widest = max(text.per_layer_config[i].head_dim for i in range(text.num_hidden_layers))
    # SDPA has no flash kernel beyond head dim 256, so the full-attention layers may fall back to the
    # math kernel and materialise bf16 scores plus fp32 softmax for the prompt. Counted, to be safe.
    scores = heads * tokens * tokens * (2 + 4) if widest > 256 else tokens * tokens
    logits = LOGIT_COPIES * canvas * text.vocab_size * 4
    return {
        "activations: logits (fp32)": logits,
        "activations: MoE + MLP": moe + dense,
        "activations: attention": scores,
        "activations: dequant scratch": 0 if precision == "bf16" else 2 * DEFAULT_SCRATCH_BYTES,
    }


def estimate_footprint(
    config: DiffusionGemmaConfig,
    precision: str,
    context_tokens: int = DEFAULT_CONTEXT,
    *,
    experts_on_host: bool = False,
    resident_layers: int = 0,
) -> Footprint:
    """Everything the model needs on its device for ``context_tokens`` of prefix plus one canvas.

    ``experts_on_host``: the quantized routed experts live in host memory (``host_parts``), but for
    ``resident_layers`` layers' worth that stay on the device, and the device holds two layers of them, the
    slots they stream through (``model/checkpoint/expert_placement.py``).
    """
    parts = weight_bytes(config, precision)
    host_parts: dict[str, int] = {}
    if experts_on_host:
        if precision not in HOST_PRECISIONS:
            raise ValueError(f"routed experts live in host memory only at {' or '.join(HOST_PRECISIONS)}")
        name = next(key for key in parts if key.startswith("weights: experts"))
        experts = parts.pop(name)
        layers = text_config_of(config).num_hidden_layers
        resident = max(0, min(resident_layers, layers))
        per_layer = math.ceil(experts / layers)
        if resident:
            parts[f"{name} ({resident} of {layers} layers)"] = per_layer * resident
        host_parts[name.removeprefix("weights: ")] = experts - per_layer * resident
        if resident < layers:
            parts["expert slots (two layers, streamed)"] = 2 * per_layer
    parts["KV cache (bf16)"] = kv_cache_bytes(config, context_tokens)
    parts.update(activation_bytes(config, context_tokens, precision))
    parts["runtime + fragmentation"] = RUNTIME_BYTES + int(FRAGMENTATION * sum(parts.values()))
    return Footprint(precision=precision, context_tokens=context_tokens, parts=parts, host_parts=host_parts)
