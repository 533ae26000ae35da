"""Streaming, quantize-as-you-go loading of a DiffusionGemma safetensors checkpoint.

``from_pretrained`` with a bf16 26B-A4B would need ~50 GB of host RAM or VRAM before any quantization
could happen. Here the model skeleton is built with its parameters on the meta device (buffers such as
the rotary tables are still computed for real: they are tiny and not all are in the checkpoint), then
the shards are read with ``safe_open`` one tensor at a time; each tensor is quantized or cast onto the
target device and the float copy is dropped before the next one is read. Fused expert tensors are
quantized a few experts at a time (see ``QuantizedExperts.load_projection``), so not even one layer's
bf16 experts has to sit on the GPU.

Ties: encoder and decoder text layers (and the LM head / embeddings) share parameters. The skeleton's
own tie map (parameters that are the same object) tells which checkpoint names are one weight; the
first name found in the checkpoint is loaded and the result installed at every name of the group,
whichever side the checkpoint happened to save.

Shards are read with plain file reads (``safetensors_io.read_tensors``), not ``safe_open``'s memory
map: a mapped shard keeps every page read from it resident until it is closed, which on the 26B-A4B
put a whole 5 GB shard on top of the model. :func:`load_quantized_copy` reads a quantized copy
(``model/checkpoint/quantized_copy.py``) through the same loader: nothing is quantized, the stored NF4
and int8 tensors become the modules' own.
"""

from __future__ import annotations

import threading
import weakref
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from safetensors import safe_open
from torch import nn
from transformers import DiffusionGemmaConfig, DiffusionGemmaForBlockDiffusion

from model.checkpoint.building import MODEL_BUILDING
from model.checkpoint.expert_placement import move_storage
from model.checkpoint.folders import INDEX_FILE, index_shards
from model.checkpoint.quantization import (
    QUANTIZED_LAYER_LINEARS,
    QUANTIZED_SELF_CONDITIONING_LINEARS,
    ExpertsSpec,
    PrecisionPolicy,
    QuantizedExperts,
    policy_for,
    quantize_linear,
)
from model.checkpoint.safetensors_io import DTYPES, read_header, read_tensors

if TYPE_CHECKING:
    import bitsandbytes as bnb
else:  # imported on first use: model.checkpoint.lazy_bnb
    from model.checkpoint.lazy_bnb import bnb

SINGLE_FILE = "model.safetensors"
LAYER_PREFIXES = ("model.decoder.layers.", "model.encoder.language_model.layers.")


@dataclass
class StreamingStats:
    """What the loader held while it ran (the tests assert on these)."""

    shards: int = 0
    tensors: int = 0
    largest_shard_bytes: int = 0
    largest_tensor_bytes: int = 0
    # Checkpoint (unquantized) tensors alive at once, in bytes, measured through weak references to
    # every tensor read: anything still referenced (by the loader, a quantizer, a cache) counts, except
    # tensors the model adopted as its own weights unchanged (e.g. bf16 norms loaded onto the CPU).
    peak_unquantized_bytes: int = 0
    # Anonymous resident memory of this process (excludes the shards' page cache), sampled per tensor.
    baseline_rss_anon_bytes: int | None = None
    peak_rss_anon_bytes: int | None = None
    skipped_tied: list[str] = field(default_factory=list)

    @property
    def peak_rss_growth_bytes(self) -> int | None:
        if self.baseline_rss_anon_bytes is None or self.peak_rss_anon_bytes is None:
            return None
        return self.peak_rss_anon_bytes - self.baseline_rss_anon_bytes


def rss_anon_bytes() -> int | None:
    """This process's anonymous resident memory (Linux); ``None`` where /proc is not available."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def shard_files(folder: Path) -> list[Path]:
    """The checkpoint's safetensors files, from the index when there is one (the hub's layout), which is
    checked as loading checks it (a ModelLoadError for a shard named outside the folder)."""
    shards = index_shards(folder)
    if shards is not None:
        return shards
    single = folder / SINGLE_FILE
    if single.is_file():
        return [single]
    raise FileNotFoundError(f"{folder} has neither {INDEX_FILE} nor {SINGLE_FILE}")


# parameters_on_meta patches nn.Module.register_parameter, which every thread shares: the editor builds a
# skeleton on its model thread while the window's thread (or another window's model thread) may build modules
# too. Each save-patch-restore of its own let two overlapping loads restore in the wrong order, leaving the
# patch installed for good: every module made afterwards, in any thread, had its parameters on the meta
# device ("Cannot copy out of meta tensor; no data!" at the next load). So the patch is installed once while
# any thread is inside, removed by the last one out, and acts only for the threads inside.
_meta_lock = threading.Lock()
_meta_users = 0
_meta_local = threading.local()
_register_parameter = nn.Module.register_parameter


def _register_on_meta(self: nn.Module, name: str, param: nn.Parameter | None) -> None:
    """nn.Module.register_parameter, with the parameter moved to meta in a thread inside parameters_on_meta."""
    if getattr(_meta_local, "depth", 0) and param is not None and param.device.type != "meta":
        param = nn.Parameter(param.to("meta"), requires_grad=param.requires_grad)
    _register_parameter(self, name, param)


@contextmanager
def parameters_on_meta() -> Iterator[None]:
    """Within the block, every parameter a module registers in this thread is moved to the meta device.

    Unlike ``with torch.device("meta")`` this keeps buffers real, so rotary tables and embedding scales
    (non-persistent, never in a checkpoint) come out right without re-deriving them afterwards.
    Construction creates each parameter with ``torch.empty`` first: that reserves but never touches
    memory, and it is released at once. Other threads are untouched, and overlapping uses nest safely.
    """
    global _meta_users, _register_parameter
    with _meta_lock:
        if _meta_users == 0:
            _register_parameter = nn.Module.register_parameter  # whatever is installed now (another library's)
            nn.Module.register_parameter = _register_on_meta  # type: ignore[method-assign]
        _meta_users += 1
    _meta_local.depth = getattr(_meta_local, "depth", 0) + 1
    try:
        yield
    finally:
        _meta_local.depth -= 1
        with _meta_lock:
            _meta_users -= 1
            if _meta_users == 0:
                nn.Module.register_parameter = _register_parameter  # type: ignore[method-assign]


def build_skeleton(config: DiffusionGemmaConfig) -> DiffusionGemmaForBlockDiffusion:
    """The model with all parameters on meta (ties already made) and real buffers on the CPU."""
    with MODEL_BUILDING, parameters_on_meta():
        model = DiffusionGemmaForBlockDiffusion(config)
    return model.eval()


def _is_policy_linear(name: str) -> bool:
    """Whether parameter ``name`` is the weight of a linear the precision policy quantizes."""
    if not name.endswith(".weight"):
        return False
    module = name[: -len(".weight")]
    for prefix in LAYER_PREFIXES:
        if module.startswith(prefix):
            inner = module[len(prefix) :].split(".", 1)[-1]
            return inner in QUANTIZED_LAYER_LINEARS
    sc_prefix = "model.decoder.self_conditioning."
    return module.startswith(sc_prefix) and module[len(sc_prefix) :] in QUANTIZED_SELF_CONDITIONING_LINEARS


def _set_module(model: nn.Module, path: str, module: nn.Module) -> None:
    parent, _, attr = path.rpartition(".")
    setattr(model.get_submodule(parent), attr, module)


class _Loader:
    def __init__(
        self,
        model: DiffusionGemmaForBlockDiffusion,
        policy: PrecisionPolicy,
        device: torch.device,
        stats: StreamingStats,
        experts_device: torch.device | None = None,
    ) -> None:
        self.model = model
        self.policy = policy
        self.device = device
        # Where quantized experts are kept: the host for a model whose experts do not fit its GPU
        # (model/checkpoint/expert_placement.py). They are still quantized on ``device``, which is fast there.
        self.experts_device = experts_device or device
        self.stats = stats
        self.groups: dict[str, list[str]] = {}
        by_object: dict[int, list[str]] = {}
        for name, param in model.named_parameters(remove_duplicate=False):
            by_object.setdefault(id(param), []).append(name)
        for names in by_object.values():
            for name in names:
                self.groups[name] = names
        self.buffers = {name for name, _ in model.named_buffers()}
        self.loaded: set[str] = set()  # every parameter name already materialized (whole tie groups)
        self.experts: dict[str, QuantizedExperts] = {}  # keyed by the experts module path first seen
        self.unexpected: list[str] = []
        self.adopted: set[int] = set()  # data pointers of checkpoint tensors kept as model weights
        self.read: list[tuple[weakref.ref[torch.Tensor], int]] = []

    def live_unquantized_bytes(self) -> int:
        """Bytes of checkpoint tensors still alive that the model did not adopt as weights."""
        alive = [(ref(), size) for ref, size in self.read]
        self.read = [
            (weakref.ref(tensor), size)
            for tensor, size in alive
            if tensor is not None and tensor.data_ptr() not in self.adopted
        ]
        return sum(size for _, size in self.read)

    def take(self, name: str, tensor: torch.Tensor) -> None:
        if name in self.buffers:
            module_path, _, attr = name.rpartition(".")
            module = self.model.get_submodule(module_path)
            moved = tensor.to(self.device)
            module._buffers[attr] = moved
            if moved.data_ptr() == tensor.data_ptr():
                self.adopted.add(tensor.data_ptr())
            return
        group = self.groups.get(name)
        if group is None:
            self.unexpected.append(name)
            return
        if name in self.loaded:
            self.stats.skipped_tied.append(name)
            return
        module_path, _, attr = name.rpartition(".")
        owner = self.model.get_submodule(module_path)
        if attr in ("gate_up_proj", "down_proj") and owner.__class__.__name__.endswith("TextExperts"):
            self._take_experts(group, attr, owner, tensor)
        elif _is_policy_linear(name) and self.policy.linears != "bf16":
            linear = quantize_linear(tensor, self.policy.linears, self.device, self.policy.compute_dtype)
            for member in group:
                _set_module(self.model, member.rpartition(".")[0], linear)
        else:
            dtype = self.policy.compute_dtype if tensor.is_floating_point() else tensor.dtype
            param = nn.Parameter(tensor.to(device=self.device, dtype=dtype), requires_grad=False)
            if param.data_ptr() == tensor.data_ptr():
                self.adopted.add(tensor.data_ptr())
            for member in group:
                path, _, leaf = member.rpartition(".")
                setattr(self.model.get_submodule(path), leaf, param)
        self.loaded.update(group)

    def _take_experts(self, group: list[str], attr: str, owner: nn.Module, tensor: torch.Tensor) -> None:
        paths = [member.rpartition(".")[0] for member in group]
        if self.policy.experts == "bf16":
            param = nn.Parameter(tensor.to(device=self.device, dtype=self.policy.compute_dtype), requires_grad=False)
            for path in paths:
                setattr(self.model.get_submodule(path), attr, param)
            return
        key = next((path for path in paths if path in self.experts), paths[0])
        quantized = self.experts.get(key)
        if quantized is None:
            spec = ExpertsSpec.of(owner)
            quantized = QuantizedExperts(
                num_experts=spec.num_experts,
                hidden_dim=spec.hidden_dim,
                intermediate_dim=spec.intermediate_dim,
                hidden_activation=spec.hidden_activation,
                scheme=self.policy.experts,
                compute_dtype=self.policy.compute_dtype,
                device=self.device,
            )
            for path in paths:
                self.experts[path] = quantized
        quantized.load_projection("gate_up" if attr == "gate_up_proj" else "down", tensor)
        # Install once both projections are in, so a half-loaded module never replaces the skeleton's.
        if {"gate_up", "down"} <= quantized._loaded:
            if self.experts_device != self.device:
                move_storage(quantized, self.experts_device)
            for path in paths:
                _set_module(self.model, path, quantized)

    def install_stored_experts(self, path: str, parts: dict[str, torch.Tensor], double_quant: bool) -> None:
        group = self.groups.get(f"{path}.gate_up_proj")
        if group is None or self.policy.experts == "bf16":
            raise ValueError(f"{path} holds quantized experts the model or the precision has no place for")
        spec = ExpertsSpec.of(self.model.get_submodule(path))
        quantized = QuantizedExperts(
            num_experts=spec.num_experts,
            hidden_dim=spec.hidden_dim,
            intermediate_dim=spec.intermediate_dim,
            hidden_activation=spec.hidden_activation,
            scheme=self.policy.experts,
            double_quant=double_quant,
            compute_dtype=self.policy.compute_dtype,
            device=self.experts_device,
        )
        quantized.load_stored(parts)
        for member in group:
            _set_module(self.model, member.rpartition(".")[0], quantized)
        for attr in ("gate_up_proj", "down_proj"):
            self.loaded.update(self.groups[f"{path}.{attr}"])

    def install_stored_int8(self, path: str, parts: dict[str, torch.Tensor]) -> None:
        group = self.groups.get(f"{path}.weight")
        if group is None or self.policy.linears != "int8":
            raise ValueError(f"{path} holds an int8 linear the model or the precision has no place for")
        out_features, in_features = parts["weight"].shape
        linear = bnb.nn.Linear8bitLt(
            in_features, out_features, bias=False, has_fp16_weights=False, threshold=0.0, device="meta"
        )
        # Already quantized: Int8Params with int8 data and its row scales, never moved through .to() from
        # a float (which is where bitsandbytes quantizes).
        values = parts["weight"].to(self.device)
        linear.weight = bnb.nn.Int8Params(
            values, requires_grad=False, has_fp16_weights=False, CB=values, SCB=parts["SCB"].to(self.device)
        )
        for member in group:
            _set_module(self.model, member.rpartition(".")[0], linear)
        self.loaded.update(group)

    def finish(self) -> None:
        missing = [name for name in self.groups if name not in self.loaded]
        problems = []
        if missing:
            problems.append(f"missing from the checkpoint: {', '.join(sorted(missing)[:8])}")
        if self.unexpected:
            problems.append(f"not in the model: {', '.join(sorted(self.unexpected)[:8])}")
        if problems:
            raise ValueError("checkpoint does not match the config; " + "; ".join(problems))
        for module in self.model.modules():
            if isinstance(module, QuantizedExperts):
                continue  # already where the experts are kept
            for name, buffer in list(module._buffers.items()):
                if buffer is not None and buffer.device != self.device:
                    module._buffers[name] = buffer.to(self.device)


@torch.no_grad()
def load_streaming(
    folder: Path,
    config: DiffusionGemmaConfig,
    precision: str,
    device: torch.device,
    *,
    stats: StreamingStats | None = None,
    experts_device: torch.device | None = None,
) -> DiffusionGemmaForBlockDiffusion:
    """Build ``DiffusionGemmaForBlockDiffusion`` from ``folder``'s safetensors, quantizing as it reads.

    ``precision`` is "4bit", "8bit" or "bf16" (see ``model.checkpoint.quantization.policy_for``). Pass a
    :class:`StreamingStats` to learn what was held at once; it is also left on the model as
    ``model.streaming_stats``. Raises ``FileNotFoundError`` without weights and ``ValueError`` when the
    checkpoint's tensors do not match the config. ``experts_device`` keeps the quantized experts elsewhere
    (the host, for ``model.checkpoint.expert_placement``); they are quantized on ``device`` first.
    """
    stats = stats if stats is not None else StreamingStats()
    policy = policy_for(precision)
    files = shard_files(Path(folder))
    stats.baseline_rss_anon_bytes = rss_anon_bytes()
    stats.peak_rss_anon_bytes = stats.baseline_rss_anon_bytes
    model = build_skeleton(config)
    loader = _Loader(model, policy, torch.device(device), stats, experts_device)
    for name, tensor in _tensors(files, stats):
        size = tensor.numel() * tensor.element_size()
        stats.largest_tensor_bytes = max(stats.largest_tensor_bytes, size)
        loader.read.append((weakref.ref(tensor), size))
        stats.peak_unquantized_bytes = max(stats.peak_unquantized_bytes, loader.live_unquantized_bytes())
        loader.take(name, tensor)
        del tensor
        _sample_rss(stats)
    loader.finish()
    model.streaming_stats = stats  # type: ignore[assignment]
    return model


def _tensors(files: list[Path], stats: StreamingStats) -> Iterator[tuple[str, torch.Tensor]]:
    """Every tensor of every shard, one at a time; ``safe_open`` only for dtypes the plain reader lacks."""
    for file in files:
        stats.shards += 1
        stats.largest_shard_bytes = max(stats.largest_shard_bytes, file.stat().st_size)
        try:
            start, header = read_header(file)
            plain = {entry["dtype"] for entry in header.values()} <= set(DTYPES)
        except (OSError, ValueError, TypeError, KeyError):
            plain = False
        if not plain:
            with safe_open(str(file), framework="pt", device="cpu") as shard:
                for name in shard.keys():  # noqa: SIM118 - safe_open handles are not iterable
                    stats.tensors += 1
                    yield name, shard.get_tensor(name)
            continue
        # Each tensor is let go before the next is read, so only one is ever held here.
        for name, tensor in read_tensors(file):
            stats.tensors += 1
            yield name, tensor
            del tensor


EXPERT_PARTS = tuple(f"{name}_{part}" for name in ("gate_up", "down") for part in QuantizedExperts.STORED_PARTS)


@torch.no_grad()
def load_quantized_copy(
    folder: Path,
    config: DiffusionGemmaConfig,
    precision: str,
    device: torch.device,
    *,
    double_quant: bool = True,
    stats: StreamingStats | None = None,
    experts_device: torch.device | None = None,
) -> DiffusionGemmaForBlockDiffusion:
    """Build the model from a quantized copy written by ``quantized_copy.write_copy`` (nothing is quantized).

    NF4/int8 experts and int8 linears arrive in parts (several tensors each) and are installed once
    complete; every other tensor goes through the same path as a bf16 checkpoint's.
    """
    stats = stats if stats is not None else StreamingStats()
    policy = policy_for(precision)
    files = shard_files(Path(folder))
    stats.baseline_rss_anon_bytes = rss_anon_bytes()
    stats.peak_rss_anon_bytes = stats.baseline_rss_anon_bytes
    model = build_skeleton(config)
    loader = _Loader(model, policy, torch.device(device), stats, experts_device)
    experts: dict[str, dict[str, torch.Tensor]] = defaultdict(dict)
    int8: dict[str, dict[str, torch.Tensor]] = defaultdict(dict)
    for name, tensor in _tensors(files, stats):
        path, _, attr = name.rpartition(".")
        if attr in EXPERT_PARTS:
            experts[path][attr] = tensor
            if len(experts[path]) == len(EXPERT_PARTS):
                loader.install_stored_experts(path, experts.pop(path), double_quant)
        elif attr == "SCB" or (attr == "weight" and tensor.dtype == torch.int8 and _is_policy_linear(name)):
            int8[path][attr] = tensor
            if len(int8[path]) == 2:
                loader.install_stored_int8(path, int8.pop(path))
        else:
            loader.take(name, tensor)
        del tensor
        _sample_rss(stats)
    if experts or int8:
        raise ValueError(f"incomplete quantized modules: {', '.join(sorted([*experts, *int8])[:8])}")
    loader.finish()
    model.streaming_stats = stats  # type: ignore[assignment]
    return model


def _sample_rss(stats: StreamingStats) -> None:
    current = rss_anon_bytes()
    if current is not None and stats.peak_rss_anon_bytes is not None:
        stats.peak_rss_anon_bytes = max(stats.peak_rss_anon_bytes, current)
