"""Routed experts in host memory: the 26B-A4B on a 12–16 GB card.

At 4 bit the 26B-A4B's routed experts are ~11 GiB of its ~14 GiB; attention, the dense and
self-conditioning MLPs, the router and the embeddings/LM head are the rest. With the experts in host
memory (pinned, so copies run at the link's full speed and asynchronously) the GPU holds everything
else plus, when streaming, two layers' worth of expert slots. Two ways to run the experts:

* ``host-stream``: each layer's NF4 experts are copied to the GPU just before the layer needs them,
  into one of two slots, while the previous layer computes (the copy runs on a side CUDA stream, so it
  overlaps the maths); the GPU multiplies as if the experts lived there. A pass moves every layer's
  experts across the bus once (~11 GiB for the 26B).
* ``host-compute``: the routed rows go to the CPU, which multiplies them with the experts where they
  are, and the result comes back (llama.cpp's ``--n-cpu-moe``): little crosses the bus, the CPU does
  the arithmetic.

Which is faster depends on the link and the CPU; ``bench/gpu_runbook.py bench26b`` measures both under
12 and 16 GiB caps. Encoder and decoder share their layers, and every forward runs them in order, so
"the next layer" is known: the stream prefetches it. On a CPU-only machine both placements run (host
and device are the same memory), which is how the tests check them token for token against the
experts computed in place.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import torch
from torch import nn

from model.checkpoint.quantized_experts import QuantizedExperts

logger = logging.getLogger(__name__)

EXPERT_PLACEMENTS = ("auto", "device", "host-stream", "host-compute")
HOST_PLACEMENTS = ("host-stream", "host-compute")
# Plain words for each placement, for the doctor, the status bar and the logs.
PLACEMENT_WORDS = {
    "device": "all on the model's device",
    "host-stream": "routed experts in host memory, streamed to the GPU layer by layer",
    "host-compute": "routed experts in host memory, computed on the CPU",
}
# One slot computes while the other fills with the next layer.
STREAM_SLOTS = 2


@dataclass
class PlacementStats:
    """What the placement did since it was made (the bench reports it per pass, the tests assert on it)."""

    copies: int = 0  # layers copied to the device (prefetched or on demand)
    prefetch_hits: int = 0  # layers found already copied when their turn came
    bytes_copied: int = 0
    cpu_calls: int = 0  # layers computed on the CPU


class HostCompute:
    """The routed rows cross to the CPU, the experts multiply them there, the result crosses back."""

    mode = "host-compute"

    def __init__(self, stats: PlacementStats) -> None:
        self.stats = stats

    def forward(
        self, experts: QuantizedExperts, hidden_states: torch.Tensor, top_k_index: torch.Tensor,
        top_k_weights: torch.Tensor,
    ) -> torch.Tensor:  # fmt: skip
        host = experts.device
        self.stats.cpu_calls += 1
        result = experts.compute(hidden_states.to(host), top_k_index.to(host), top_k_weights.to(host))
        return result.to(hidden_states.device)


@dataclass
class _Slot:
    """Device buffers shaped like one layer's experts, and whose experts they hold now."""

    staging: QuantizedExperts
    owner: QuantizedExperts | None = None
    ready: torch.cuda.Event | None = None  # the copy into it finished (CUDA)
    done: torch.cuda.Event | None = None  # the last compute reading it finished (CUDA)


class ExpertStream:
    """Copies each layer's experts from host memory into one of two device slots, the next layer's copy
    running while this layer computes; the slot's copy then computes exactly as the host module would."""

    mode = "host-stream"

    def __init__(self, order: list[QuantizedExperts], device: torch.device, stats: PlacementStats) -> None:
        self.order = order
        self.position = {id(module): index for index, module in enumerate(order)}
        self.device = device
        self.stats = stats
        self.slots: list[_Slot] = []
        self.last: _Slot | None = None
        self.copy_stream = torch.cuda.Stream(device) if device.type == "cuda" else None

    @property
    def slot_bytes(self) -> int:
        return sum(tensor.numel() * tensor.element_size() for slot in self.slots for tensor in _stored(slot.staging))

    def forward(
        self, experts: QuantizedExperts, hidden_states: torch.Tensor, top_k_index: torch.Tensor,
        top_k_weights: torch.Tensor,
    ) -> torch.Tensor:  # fmt: skip
        slot = self._slot_with(experts)
        following = self.order[(self.position[id(experts)] + 1) % len(self.order)]
        if following is not experts:
            other = self._other_than(slot)
            if other.owner is not following:
                self._fill(other, following, asynchronous=True)
        slot.staging.kernel = experts.kernel
        result = slot.staging.compute(hidden_states, top_k_index, top_k_weights)
        experts.kernel = slot.staging.kernel  # a fused kernel that failed to build stays off for the host module
        if self.copy_stream is not None:
            slot.done = torch.cuda.Event()
            slot.done.record(torch.cuda.current_stream(self.device))
        self.last = slot
        return result

    def _slot_with(self, experts: QuantizedExperts) -> _Slot:
        for slot in self.slots:
            if slot.owner is experts:
                self.stats.prefetch_hits += 1
                if slot.ready is not None:
                    torch.cuda.current_stream(self.device).wait_event(slot.ready)
                return slot
        # Not prefetched (the first layer of the first pass, or a call out of order): copy it now, into the
        # slot the last layer did not use.
        slot = self._other_than(self.last)
        self._fill(slot, experts, asynchronous=False)
        return slot

    def _other_than(self, slot: _Slot | None) -> _Slot:
        while len(self.slots) < STREAM_SLOTS:
            self.slots.append(_Slot(staging=_staging_like(self.order[0], self.device)))
        return next(candidate for candidate in self.slots if candidate is not slot)

    def _fill(self, slot: _Slot, experts: QuantizedExperts, *, asynchronous: bool) -> None:
        _fit(slot.staging, experts)
        pairs = list(zip(_stored(slot.staging), _stored(experts), strict=True))
        if self.copy_stream is None:
            for target, source in pairs:
                target.copy_(source)
        else:
            stream = self.copy_stream if asynchronous else torch.cuda.current_stream(self.device)
            with torch.cuda.stream(stream):
                if slot.done is not None:  # the layer that last read this slot must be done with it
                    stream.wait_event(slot.done)
                for target, source in pairs:
                    target.copy_(source, non_blocking=True)
                slot.ready = torch.cuda.Event()
                slot.ready.record(stream)
        slot.owner = experts
        self.stats.copies += 1
        self.stats.bytes_copied += sum(source.numel() * source.element_size() for _, source in pairs)


def _stored(experts: QuantizedExperts) -> list[torch.Tensor]:
    return list(experts.stored_tensors().values())


def _staging_like(experts: QuantizedExperts, device: torch.device) -> QuantizedExperts:
    """An empty module of the same sizes and scheme on ``device``, whose buffers ``_fit`` sizes."""
    staging = QuantizedExperts(
        num_experts=experts.num_experts,
        hidden_dim=experts.hidden_dim,
        intermediate_dim=experts.intermediate_dim,
        hidden_activation=experts.hidden_activation,
        scheme=experts.scheme,
        double_quant=experts.double_quant,
        compute_dtype=experts.compute_dtype,
        scratch_bytes=experts.scratch_bytes,
        device=device,
        kernel=experts.kernel,
    )
    staging._loaded = {"gate_up", "down"}
    return staging


def _fit(staging: QuantizedExperts, experts: QuantizedExperts) -> None:
    """Give ``staging`` buffers the shapes of ``experts``' (once, unless the layers differ in size)."""
    if (staging.num_experts, staging.hidden_dim, staging.intermediate_dim, staging.scheme) != (
        experts.num_experts, experts.hidden_dim, experts.intermediate_dim, experts.scheme
    ):  # fmt: skip
        raise ValueError("streamed expert layers must share their sizes and scheme")
    for name, source in experts.stored_tensors().items():
        target = getattr(staging, name)
        if target.shape != source.shape or target.dtype != source.dtype:
            # Normal tensors even when the first forward runs under inference mode: an inference tensor
            # could not be copied into by a later forward that runs outside it.
            with torch.inference_mode(False):
                setattr(staging, name, torch.empty_like(source, device=staging.nf4_table.device))


@dataclass
class PlacedExperts:
    """Where a model's routed experts are now, and what keeping them there costs."""

    placement: str
    modules: int
    host_bytes: int  # expert weights in host memory
    resident: int = 0  # layers whose experts stayed on the device (the GPU had room for them)
    stats: PlacementStats = field(default_factory=PlacementStats)
    stream: ExpertStream | None = None

    @property
    def slot_bytes(self) -> int:
        """Device memory of the streaming slots (allocated at the first forward)."""
        return self.stream.slot_bytes if self.stream is not None else 0

    @property
    def hosted(self) -> int:
        """Layers whose experts live in host memory."""
        return 0 if self.placement == "device" else self.modules - self.resident

    def describe(self) -> str:
        if self.placement == "device" or not self.resident:
            return PLACEMENT_WORDS[self.placement]
        return f"{PLACEMENT_WORDS[self.placement]} ({self.resident} of {self.modules} layers' experts on the GPU)"


def hosted_layers(layers: int, resident: int) -> list[int]:
    """Which layers' experts go to host memory when ``resident`` of ``layers`` stay on the device: spread
    evenly, so that each streamed layer's copy has the resident layers before it to overlap with."""
    hosted = layers - max(0, min(resident, layers))
    return sorted({int((index + 0.5) * layers / hosted) for index in range(hosted)}) if hosted else []


def quantized_experts_in_order(model: nn.Module) -> list[QuantizedExperts]:
    """Each distinct QuantizedExperts module in the order a forward meets them (encoder twins are the same)."""
    seen: dict[int, QuantizedExperts] = {}
    for module in model.modules():
        if isinstance(module, QuantizedExperts):
            seen.setdefault(id(module), module)
    return list(seen.values())


def move_storage(experts: QuantizedExperts, device: torch.device, *, pin: bool = False) -> None:
    """Move ``experts``' weights (and its NF4 table) to ``device``; ``pin`` page-locks host copies."""
    for name, tensor in experts.stored_tensors().items():
        moved = tensor.to(device)
        if pin and moved.device.type == "cpu" and moved.numel() and not moved.is_pinned():
            try:
                moved = moved.pin_memory()
            except RuntimeError as error:  # a locked-memory limit: pageable memory still works, only slower
                logger.warning("could not pin %s in host memory (%s); copies from it will be slower", name, error)
                pin = False
        setattr(experts, name, moved)
    experts.nf4_table = experts.nf4_table.to(device)


def should_pin(device: torch.device) -> bool:
    """Pinned host memory only helps copies to a CUDA device (and needs a working CUDA runtime)."""
    return device.type == "cuda" and torch.cuda.is_available()


@torch.no_grad()
def place_experts(model: nn.Module, placement: str, device: torch.device | str, *, resident: int = 0) -> PlacedExperts:
    """Put ``model``'s NF4/int8 routed experts in host memory (``HOST_PLACEMENTS``) or back on ``device``.

    ``resident``: how many layers' experts stay on ``device`` anyway (the GPU's spare room, see
    ``doctor.resident_layers_that_fit``), spread evenly between the hosted ones. The rest of the model stays
    where it is. Raises ``ValueError`` for an unknown placement or a model without quantized experts (bf16
    experts are plain parameters: load at 4 or 8 bit first).
    """
    device = torch.device(device)
    if placement not in ("device", *HOST_PLACEMENTS):
        raise ValueError(f"unknown experts placement {placement!r}; use one of device, {', '.join(HOST_PLACEMENTS)}")
    experts = quantized_experts_in_order(model)
    if not experts:
        raise ValueError("this model has no quantized experts to place; load it at 4 or 8 bit")
    chosen = hosted_layers(len(experts), resident) if placement in HOST_PLACEMENTS else []
    hosted = [experts[index] for index in chosen]
    kept = [module for index, module in enumerate(experts) if index not in set(chosen)]
    stats = PlacementStats()
    stream = ExpertStream(hosted, device, stats) if placement == "host-stream" and hosted else None
    strategy = stream if stream is not None else HostCompute(stats) if placement == "host-compute" else None
    # Off the device first, so the layers coming onto it find the room.
    for module in hosted:
        module.host = None  # so that moving it below is not refused by its own guard
        move_storage(module, torch.device("cpu"), pin=should_pin(device))
        module.host = strategy
    for module in kept:
        module.host = None
        move_storage(module, device)
    host_bytes = sum(_bytes(module) for module in hosted)
    if not hosted:  # nothing left in host memory: all on the device, whatever was asked
        placement = "device"
    placed = PlacedExperts(placement, len(experts), host_bytes, len(kept) if hosted else 0, stats, stream)
    model.redraft_experts = placed  # type: ignore[assignment]
    if device.type == "cuda":
        torch.cuda.empty_cache()  # the experts' device copies are free now; give them back to the driver
    return placed


def _bytes(experts: QuantizedExperts) -> int:
    return sum(tensor.numel() * tensor.element_size() for tensor in experts.stored_tensors().values())


def placement_of(model: nn.Module) -> str:
    """The model's experts placement: what ``place_experts`` made it, else "device"."""
    placed = getattr(model, "redraft_experts", None)
    return placed.placement if isinstance(placed, PlacedExperts) else "device"
