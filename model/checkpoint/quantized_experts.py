"""NF4 (or int8) Mixture-of-Experts weights that dequantize only the experts a step's tokens were routed to.

Why the experts need their own module: transformers stores each layer's experts as two fused 3-D
parameters (``gate_up_proj`` [E, 2I, H] and ``down_proj`` [E, H, I]) of ``DiffusionGemmaTextExperts``.
``BitsAndBytesConfig(load_in_4bit=True)`` only swaps ``nn.Linear`` modules, so it leaves ~22.8B of the
26B-A4B's ~25.2B parameters in bf16 (~46 GB). :class:`QuantizedExperts` keeps every expert matrix in
bitsandbytes NF4 (block-wise, blocksize 64, optional double quantization of the block scales) and, in
``forward``, dequantizes and multiplies only the experts the current tokens were routed to: hit experts
are taken in runs of consecutive ids, each run is dequantized into one bounded scratch buffer and
multiplied with one ``torch.nn.functional.grouped_mm`` call (same kernel on CPU and CUDA).

:mod:`model.checkpoint.quantization` decides where this module goes (the precision policy) and installs it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import torch
from torch import nn
from transformers import DiffusionGemmaTextConfig
from transformers.activations import ACT2FN

from model.checkpoint import nf4_kernel

logger = logging.getLogger(__name__)


class HostPlacement(Protocol):
    """How experts whose weights live in host memory run (model/checkpoint/expert_placement.py)."""

    mode: str

    def forward(
        self,
        experts: QuantizedExperts,
        hidden_states: torch.Tensor,
        top_k_index: torch.Tensor,
        top_k_weights: torch.Tensor,
    ) -> torch.Tensor: ...


# bitsandbytes' import-time warnings are quietened by model.runtime.library_warnings, installed on `import model`;
# it is imported on first use (model.checkpoint.lazy_bnb).
if TYPE_CHECKING:
    import bitsandbytes.functional as bnbf
else:
    from model.checkpoint.lazy_bnb import bnbf

# How NF4 experts multiply: "fused" reads the packed codes inside a Triton kernel (model/checkpoint/nf4_kernel.py),
# "dequantize" expands each run of experts to the compute dtype first. "auto" dequantizes: on an H100 the 26B's
# 4-bit pass took 249-295 ms that way against 342-350 ms fused, at the same peak memory (bench26b,
# 2026-11-26), so the kernel is opt-in until it wins a measurement.
EXPERT_KERNELS = ("auto", "fused", "dequantize")
EXPERT_SCHEMES = ("nf4", "int8")

NF4_BLOCKSIZE = 64
# bitsandbytes' own double-quantization block for the absmax statistics.
NESTED_BLOCKSIZE = 256
# Scratch budget for one run of dequantized experts: bounds the extra memory a forward needs while
# still amortising kernel launches over several experts (the real config: ~10 experts per run).
DEFAULT_SCRATCH_BYTES = 128 * 2**20


@dataclass(frozen=True)
class ExpertsSpec:
    """The sizes and activation of a library ``DiffusionGemmaTextExperts``, which a stand-in must match."""

    num_experts: int
    hidden_dim: int
    intermediate_dim: int
    hidden_activation: str

    @classmethod
    def of(cls, experts: nn.Module) -> ExpertsSpec:
        # Plain attributes, and the text config transformers' experts decorator stores: mypy reads them through
        # nn.Module.__getattr__ as Tensor | Module, hence the checks.
        num_experts, hidden_dim, intermediate_dim = experts.num_experts, experts.hidden_dim, experts.intermediate_dim
        config = experts.config
        if not (
            isinstance(num_experts, int)
            and isinstance(hidden_dim, int)
            and isinstance(intermediate_dim, int)
            and isinstance(config, DiffusionGemmaTextConfig)
        ):
            raise TypeError(f"{type(experts).__name__} is not a DiffusionGemmaTextExperts (sizes and text config)")
        return cls(num_experts, hidden_dim, intermediate_dim, config.hidden_activation)


class QuantizedExperts(nn.Module):
    """Drop-in for ``DiffusionGemmaTextExperts``: same ``forward(hidden_states, top_k_index, top_k_weights)``.

    Storage is flat per projection, all experts back to back, so a run of consecutive experts is one
    contiguous slice and dequantizes with one bitsandbytes call. Buffer names deliberately avoid the
    library's ``gate_up_proj``/``down_proj`` so its tie-weights regexes never touch them.
    """

    # forward reads the routing on the host (which experts to dequantize), so TorchScript tracing
    # (model.runtime.traced_layers) would only be refused after a whole forward: it is not tried.
    traceable = False

    # Buffers read as attributes (registered by name in __init__).
    gate_up_data: torch.Tensor
    nf4_table: torch.Tensor

    def __init__(
        self,
        num_experts: int,
        hidden_dim: int,
        intermediate_dim: int,
        hidden_activation: str,
        scheme: str = "nf4",
        double_quant: bool = True,
        compute_dtype: torch.dtype = torch.bfloat16,
        scratch_bytes: int = DEFAULT_SCRATCH_BYTES,
        device: torch.device | str | None = None,
        kernel: str = "auto",
    ) -> None:
        super().__init__()
        if scheme not in EXPERT_SCHEMES:
            raise ValueError(f"unknown expert scheme {scheme!r}; use one of {', '.join(EXPERT_SCHEMES)}")
        if kernel not in EXPERT_KERNELS:
            raise ValueError(f"unknown expert kernel {kernel!r}; use one of {', '.join(EXPERT_KERNELS)}")
        self.kernel = kernel
        self.num_experts = num_experts
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.hidden_activation = hidden_activation
        self.act_fn = ACT2FN[hidden_activation]
        self.scheme = scheme
        self.double_quant = double_quant and scheme == "nf4"
        self.compute_dtype = compute_dtype
        self.scratch_bytes = scratch_bytes
        self.blocksize = NF4_BLOCKSIZE
        self.shapes = {"gate_up": (2 * intermediate_dim, hidden_dim), "down": (hidden_dim, intermediate_dim)}
        for name, (rows, cols) in self.shapes.items():
            if scheme == "nf4" and (rows * cols) % self.blocksize:
                raise ValueError(f"expert {name} matrix {rows}x{cols} is not a whole number of NF4 blocks")
        # Filled by load_projection(); empty placeholders keep .to()/state_dict well-defined before that.
        for name in self.shapes:
            for part in ("data", "absmax", "nested_absmax", "nested_code", "offset"):
                self.register_buffer(f"{name}_{part}", torch.empty(0, device=device), persistent=True)
        self._loaded: set[str] = set()
        # Set by model.checkpoint.expert_placement when the weights live in host memory while the rest of
        # the model is on a GPU: forward then goes through it (streamed to the GPU, or computed on the CPU).
        self.host: HostPlacement | None = None
        # The 16 NF4 code values for the fused kernel; derived, so not part of the state dict.
        self.register_buffer("nf4_table", bnbf.get_4bit_type("nf4", device="cpu").float().to(device), persistent=False)

    @classmethod
    def from_float(
        cls,
        experts: nn.Module,
        scheme: str = "nf4",
        double_quant: bool = True,
        compute_dtype: torch.dtype = torch.bfloat16,
        device: torch.device | str | None = None,
        kernel: str = "auto",
    ) -> QuantizedExperts:
        """Quantize a library ``DiffusionGemmaTextExperts`` (weights on any device) onto ``device``."""
        spec = ExpertsSpec.of(experts)
        gate_up, down = experts.gate_up_proj, experts.down_proj
        assert isinstance(gate_up, torch.Tensor) and isinstance(down, torch.Tensor)
        target = torch.device(device) if device is not None else gate_up.device
        module = cls(
            num_experts=spec.num_experts,
            hidden_dim=spec.hidden_dim,
            intermediate_dim=spec.intermediate_dim,
            hidden_activation=spec.hidden_activation,
            scheme=scheme,
            double_quant=double_quant,
            compute_dtype=compute_dtype,
            device=target,
            kernel=kernel,
        )
        module.load_projection("gate_up", gate_up.detach())
        module.load_projection("down", down.detach())
        return module

    # ---- quantization ------------------------------------------------------------------------

    @property
    def device(self) -> torch.device:
        return self.gate_up_data.device

    def load_projection(self, name: str, weight: torch.Tensor, experts_per_step: int | None = None) -> None:
        """Quantize one fused projection ([E, rows, cols], any float dtype, any device) into this module.

        Works through the experts a few at a time, so the float copy on the target device never exceeds
        the scratch budget however large the projection is.
        """
        rows, cols = self.shapes[name]
        if tuple(weight.shape) != (self.num_experts, rows, cols):
            raise ValueError(f"{name}: expected {(self.num_experts, rows, cols)}, got {tuple(weight.shape)}")
        device = self.device
        if experts_per_step is None:
            experts_per_step = max(1, self.scratch_bytes // (rows * cols * 4))
        data_parts: list[torch.Tensor] = []
        scale_parts: list[torch.Tensor] = []
        for start in range(0, self.num_experts, experts_per_step):
            chunk = weight[start : start + experts_per_step].to(device=device)
            if self.scheme == "nf4":
                packed, state = bnbf.quantize_4bit(
                    chunk.to(self.compute_dtype).contiguous(),
                    blocksize=self.blocksize,
                    compress_statistics=False,
                    quant_type="nf4",
                )
                data_parts.append(packed.reshape(-1))
                scale_parts.append(state.absmax.float().reshape(-1))
            else:
                values, row_absmax, _ = bnbf.int8_vectorwise_quant(chunk.reshape(-1, cols).to(torch.float16))
                data_parts.append(values.reshape(-1))
                scale_parts.append(row_absmax.float().reshape(-1))
            del chunk
        data = torch.cat(data_parts)
        absmax = torch.cat(scale_parts)
        del data_parts, scale_parts
        setattr(self, f"{name}_data", data)
        if self.double_quant:
            # Same scheme as bitsandbytes' compress_statistics, done once over all experts' scales so a
            # run of experts can decode its slice of them (see _absmax).
            offset = absmax.mean()
            codes, nested = bnbf.quantize_blockwise(absmax - offset, blocksize=NESTED_BLOCKSIZE)
            setattr(self, f"{name}_absmax", codes)
            setattr(self, f"{name}_nested_absmax", nested.absmax.float())
            setattr(self, f"{name}_nested_code", nested.code.float())
            setattr(self, f"{name}_offset", offset.reshape(1).float())
        else:
            setattr(self, f"{name}_absmax", absmax)
        self._loaded.add(name)

    # Buffers that hold one projection's quantized weights (the quantized copy saves and reads these).
    STORED_PARTS = ("data", "absmax", "nested_absmax", "nested_code", "offset")

    def stored_tensors(self) -> dict[str, torch.Tensor]:
        """The quantized weights by buffer name, as the quantized copy saves them."""
        return {f"{name}_{part}": getattr(self, f"{name}_{part}") for name in self.shapes for part in self.STORED_PARTS}

    def load_stored(self, tensors: dict[str, torch.Tensor]) -> None:
        """Take weights quantized before (``stored_tensors`` of a module like this one): nothing is quantized."""
        for name, (rows, cols) in self.shapes.items():
            values = self.num_experts * rows * cols
            expected = values // 2 if self.scheme == "nf4" else values
            data = tensors[f"{name}_data"]
            if data.numel() != expected or data.dtype != (torch.uint8 if self.scheme == "nf4" else torch.int8):
                raise ValueError(f"stored {name} experts hold {data.numel()} {data.dtype} values, expected {expected}")
            for part in self.STORED_PARTS:
                setattr(self, f"{name}_{part}", tensors[f"{name}_{part}"].to(self.nf4_table.device))
            self._loaded.add(name)

    # ---- dequantization ----------------------------------------------------------------------

    def _absmax(self, name: str, first_block: int, end_block: int) -> torch.Tensor:
        absmax: torch.Tensor = getattr(self, f"{name}_absmax")
        if not self.double_quant:
            return absmax[first_block:end_block]
        # Decode whole nested blocks around the slice, then cut it out.
        lo = first_block // NESTED_BLOCKSIZE
        hi = min(math.ceil(end_block / NESTED_BLOCKSIZE), getattr(self, f"{name}_nested_absmax").numel())
        codes = absmax[lo * NESTED_BLOCKSIZE : hi * NESTED_BLOCKSIZE]
        decoded = bnbf.dequantize_blockwise(
            codes,
            absmax=getattr(self, f"{name}_nested_absmax")[lo:hi],
            code=getattr(self, f"{name}_nested_code"),
            blocksize=NESTED_BLOCKSIZE,
        )
        decoded = decoded.float() + getattr(self, f"{name}_offset")
        start = first_block - lo * NESTED_BLOCKSIZE
        return decoded[start : start + (end_block - first_block)].contiguous()

    def dequantize(self, name: str, start: int, stop: int, dtype: torch.dtype | None = None) -> torch.Tensor:
        """Experts ``start:stop`` of projection ``name`` as a float tensor [stop - start, rows, cols]."""
        if name not in self._loaded:
            raise RuntimeError(f"QuantizedExperts.{name} was never loaded")
        rows, cols = self.shapes[name]
        dtype = dtype or self.compute_dtype
        count = stop - start
        data: torch.Tensor = getattr(self, f"{name}_data")
        if self.scheme == "int8":
            values = data[start * rows * cols : stop * rows * cols].view(count, rows, cols)
            scales = getattr(self, f"{name}_absmax")[start * rows : stop * rows].view(count, rows, 1)
            return (values.to(torch.float32) * (scales / 127.0)).to(dtype)
        per_expert = rows * cols
        blocks = per_expert // self.blocksize
        packed = data[start * per_expert // 2 : stop * per_expert // 2]
        absmax = self._absmax(name, start * blocks, stop * blocks)
        # No ``out=`` here: the CPU backend of bitsandbytes 0.50 only implements the allocating variant.
        state = bnbf.QuantState(
            absmax=absmax,
            shape=torch.Size((count, rows, cols)),
            dtype=dtype,
            blocksize=self.blocksize,
            quant_type="nf4",
        )
        return bnbf.dequantize_4bit(packed, quant_state=state)

    def uses_fused_kernel(self, device: torch.device | None = None) -> bool:
        """Whether ``forward`` multiplies through the fused NF4 kernel on ``device`` (default: its own)."""
        device = device or self.device
        if self.scheme != "nf4" or self.kernel != "fused":
            return False
        fits = all(nf4_kernel.supports(cols, device) for _, cols in self.shapes.values())
        if not fits:
            raise RuntimeError(
                "the fused NF4 kernel needs Triton on a CUDA device (or TRITON_INTERPRET=1 on CPU) and inner "
                f"sizes that are multiples of {nf4_kernel.NF4_BLOCK}; use kernel='dequantize' here"
            )
        return True

    def nf4_matrices(self, name: str) -> nf4_kernel.NF4Matrices:
        """Projection ``name`` as the fused kernel reads it (views of this module's buffers, no copies)."""
        rows, cols = self.shapes[name]
        nested = self.double_quant
        return nf4_kernel.NF4Matrices(
            packed=getattr(self, f"{name}_data"),
            scales=getattr(self, f"{name}_absmax"),
            nested_absmax=getattr(self, f"{name}_nested_absmax") if nested else None,
            nested_code=getattr(self, f"{name}_nested_code") if nested else None,
            offset=getattr(self, f"{name}_offset") if nested else None,
            table=self.nf4_table,
            n=rows,
            k=cols,
        )

    def _runs(self, counts: list[int]) -> Iterator[tuple[int, int]]:
        """Maximal runs of consecutive routed-to experts, split to fit the scratch budget."""
        rows, cols = self.shapes["gate_up"]
        per_expert = (rows * cols + self.hidden_dim * self.intermediate_dim) * self.compute_dtype.itemsize
        limit = max(1, self.scratch_bytes // per_expert)
        expert = 0
        while expert < self.num_experts:
            if counts[expert] == 0:
                expert += 1
                continue
            start = expert
            while expert < self.num_experts and counts[expert] > 0 and expert - start < limit:
                expert += 1
            yield start, expert

    def _apply(self, fn: Callable[[torch.Tensor], torch.Tensor], recurse: bool = True) -> QuantizedExperts:
        # A host placement's weights stay in host memory whatever moves the model (``model.to("cuda")``
        # would otherwise pull ~11 GiB of experts onto a card chosen because they do not fit it).
        if self.host is not None:
            return self
        return super()._apply(fn, recurse)

    def forward(
        self, hidden_states: torch.Tensor, top_k_index: torch.Tensor, top_k_weights: torch.Tensor
    ) -> torch.Tensor:
        if self.host is not None:
            return self.host.forward(self, hidden_states, top_k_index, top_k_weights)
        return self.compute(hidden_states, top_k_index, top_k_weights)

    def compute(
        self, hidden_states: torch.Tensor, top_k_index: torch.Tensor, top_k_weights: torch.Tensor
    ) -> torch.Tensor:
        """The routed experts' output where the inputs are, from this module's own weights (no placement)."""
        tokens, top_k = top_k_index.shape
        flat_experts = top_k_index.reshape(-1)
        # Sort the (token, slot) assignments by expert so each expert's rows are contiguous.
        order = torch.argsort(flat_experts, stable=True)
        token_of = order // top_k
        # One host sync per layer: the run structure decides which experts get dequantized at all.
        # Ids >= num_experts (the library's "dropped" sentinel) are counted in the last bin and skipped.
        counts = torch.bincount(flat_experts, minlength=self.num_experts + 1).tolist()
        inputs = hidden_states[token_of].to(self.compute_dtype)
        weights = top_k_weights.reshape(-1)[order]
        outputs = torch.zeros(tokens * top_k, self.hidden_dim, dtype=hidden_states.dtype, device=inputs.device)
        if self.uses_fused_kernel(inputs.device):
            try:
                self._multiply_fused(inputs, counts[: self.num_experts], weights, outputs)
            except nf4_kernel.KernelBuildError as error:
                if self.kernel == "fused":
                    raise
                # A Triton or driver that cannot build the kernel must not stop the model from running.
                logger.warning("fused NF4 kernel unavailable (%s); dequantizing experts instead", error)
                self.kernel = "dequantize"
                self._multiply_dequantized(inputs, counts, weights, outputs)
        else:
            self._multiply_dequantized(inputs, counts, weights, outputs)
        final = torch.zeros_like(hidden_states)
        final.index_add_(0, token_of, outputs)
        return final

    def _multiply_fused(
        self, inputs: torch.Tensor, counts: list[int], weights: torch.Tensor, outputs: torch.Tensor
    ) -> None:
        """All routed rows through the fused kernel: two launches per layer, no bf16 copy of any expert."""
        routed = sum(counts)
        tiles = nf4_kernel.RowTiles.plan(counts, inputs.device)  # same rows for both projections
        hidden = nf4_kernel.nf4_grouped_matmul(inputs[:routed], counts, self.nf4_matrices("gate_up"), tiles)
        gate, up = hidden.chunk(2, dim=-1)
        hidden = self.act_fn(gate) * up
        result = nf4_kernel.nf4_grouped_matmul(hidden, counts, self.nf4_matrices("down"), tiles)
        outputs[:routed] = (result.float() * weights[:routed, None]).to(outputs.dtype)

    def _multiply_dequantized(
        self, inputs: torch.Tensor, counts: list[int], weights: torch.Tensor, outputs: torch.Tensor
    ) -> None:
        """Runs of hit experts dequantized into scratch, each multiplied with one grouped_mm call."""
        ends = torch.tensor(counts[: self.num_experts], dtype=torch.int64).cumsum(0).tolist()
        for start, stop in self._runs(counts):
            row_start = ends[start] - counts[start]
            row_stop = ends[stop - 1]
            offsets = torch.tensor(
                [ends[e] - row_start for e in range(start, stop)], dtype=torch.int32, device=inputs.device
            )
            gate_up = self.dequantize("gate_up", start, stop)
            hidden = nn.functional.grouped_mm(inputs[row_start:row_stop], gate_up.transpose(-1, -2), offs=offsets)
            del gate_up
            gate, up = hidden.chunk(2, dim=-1)
            hidden = self.act_fn(gate) * up
            down = self.dequantize("down", start, stop)
            result = nn.functional.grouped_mm(hidden, down.transpose(-1, -2), offs=offsets)
            del down, hidden
            # Router weights are float32 (softmax in fp32): weight in fp32 like the library, per run so
            # the fp32 temporary stays small at long prefills.
            outputs[row_start:row_stop] = (result.float() * weights[row_start:row_stop, None]).to(outputs.dtype)

    def extra_repr(self) -> str:
        return (
            f"num_experts={self.num_experts}, hidden={self.hidden_dim}, "
            f"intermediate={self.intermediate_dim}, scheme={self.scheme}, double_quant={self.double_quant}"
        )
