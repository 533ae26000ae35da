"""Fused NF4 grouped matmul for :class:`model.checkpoint.quantization.QuantizedExperts` (Triton).

Why a kernel: the portable path dequantizes every routed expert to bf16 and then multiplies. On the
26B-A4B a 256-token canvas routes to nearly all 128 experts of every layer, so each pass writes and
re-reads ~45 GB of bf16 on top of reading the ~11.4 GB of NF4 codes: ~30 ms on an H100 and ~100 ms
on a 4090, memory traffic alone. This kernel reads the packed codes and block scales once, decodes
them in registers and feeds ``tl.dot`` directly, so a pass costs about the NF4 bytes, which is what
makes ≥ 1,000 tokens/s plausible on one card.

Layout it reads (written by ``QuantizedExperts.load_projection``): one projection's experts back to
back as a flat NF4 stream, element ``(e, n, k)`` of ``W[e]`` (``[N, K]``, row-major) at flat index
``(e * N + n) * K + k``; two codes a byte, the even index in the high nibble (bitsandbytes' packing);
one scale per 64 consecutive elements, either fp32 or double-quantized (uint8 code into a 256-entry
map, times a per-256-scales absmax, plus one offset). Because ``K`` is a multiple of 64 on every
layer the kernel serves, a 64-wide slice of a row is exactly one scale block.

Rows of ``x`` arrive sorted by expert. The host cuts each expert's rows into tiles of ``BLOCK_M``, so
one program multiplies one tile of one expert by one ``BLOCK_N`` slice of that expert's matrix.

The same code runs under Triton's interpreter (``TRITON_INTERPRET=1``) on CPU tensors, which is how
the tests check it against bitsandbytes' own dequantization on machines without a GPU.
"""

# Kernel arguments carry no annotations: Triton infers pointer and integer types from each call.
# ruff: noqa: ANN001

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

try:  # Triton ships with CUDA builds of torch on Linux; elsewhere the dequantize path is used.
    import triton
    import triton.language as tl
    from triton import knobs as _triton_knobs
except ImportError:  # pragma: no cover - exercised on platforms without Triton
    triton = None
    tl = None
    _triton_knobs = None

try:  # what a failed kernel build or launch raises: compile errors, too little shared memory
    from triton.errors import TritonError as KernelBuildError
except ImportError:  # pragma: no cover - no Triton, or one too old to have the common base class

    class KernelBuildError(Exception):  # type: ignore[no-redef]
        """Never raised: stands in for Triton's error class where Triton is absent."""


NF4_BLOCK = 64
NESTED_BLOCK = 256


def triton_available() -> bool:
    return triton is not None


def interpreting() -> bool:
    """True when Triton runs kernels in its CPU interpreter (``TRITON_INTERPRET=1``)."""
    return _triton_knobs is not None and bool(_triton_knobs.runtime.interpret)


def supports(k: int, device: torch.device) -> bool:
    """Whether the fused kernel can serve a projection with inner size ``k`` on ``device``.

    A CPU counts only under the interpreter, which is a testing tool. Only ``kernel="fused"`` asks for
    it: ``"auto"`` dequantizes, the faster path on the one GPU measured (``QuantizedExperts``).
    """
    if triton is None or k % NF4_BLOCK:
        return False
    return device.type == "cuda" or (device.type == "cpu" and interpreting())


def _nf4_grouped_matmul(
    x_ptr,
    out_ptr,
    packed_ptr,
    scale_ptr,
    nested_absmax_ptr,
    nested_code_ptr,
    offset_ptr,
    table_ptr,
    tile_expert_ptr,
    tile_row_start_ptr,
    tile_row_end_ptr,
    N,
    K,
    stride_x,
    stride_out,
    NESTED: tl.constexpr,
    DOT_FP32: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
) -> None:
    tile = tl.program_id(0)
    expert = tl.load(tile_expert_ptr + tile).to(tl.int64)
    row_start = tl.load(tile_row_start_ptr + tile)
    row_end = tl.load(tile_row_end_ptr + tile)
    rows = row_start + tl.arange(0, BLOCK_M)
    row_ok = rows < row_end
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    pairs = tl.arange(0, BLOCK_K // 2)
    # Flat element index of (expert, col, 0): int64, the real projections exceed 2**31 elements.
    row_base = (expert * N + cols.to(tl.int64)) * K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # Even and odd columns of x meet the high and low nibbles of each packed byte.
        x_even = tl.load(x_ptr + rows[:, None] * stride_x + (k0 + 2 * pairs)[None, :], mask=row_ok[:, None], other=0.0)
        x_odd = tl.load(
            x_ptr + rows[:, None] * stride_x + (k0 + 2 * pairs + 1)[None, :], mask=row_ok[:, None], other=0.0
        )
        packed = tl.load(packed_ptr + (row_base[:, None] + k0 + 2 * pairs[None, :]) // 2, mask=col_ok[:, None], other=0)
        block = (row_base + k0) // BLOCK_K
        if NESTED:
            code = tl.load(scale_ptr + block, mask=col_ok, other=0).to(tl.int32)
            nested = tl.load(nested_absmax_ptr + block // 256, mask=col_ok, other=0.0)
            scale = tl.load(nested_code_ptr + code) * nested + tl.load(offset_ptr)
        else:
            scale = tl.load(scale_ptr + block, mask=col_ok, other=0.0)
        high = tl.load(table_ptr + (packed >> 4).to(tl.int32)) * scale[:, None]
        low = tl.load(table_ptr + (packed & 15).to(tl.int32)) * scale[:, None]
        if DOT_FP32:
            acc += tl.dot(x_even.to(tl.float32), tl.trans(high))
            acc += tl.dot(x_odd.to(tl.float32), tl.trans(low))
        else:
            acc += tl.dot(x_even, tl.trans(high.to(x_even.dtype)))
            acc += tl.dot(x_odd, tl.trans(low.to(x_odd.dtype)))
    out = out_ptr + rows[:, None] * stride_out + cols[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=row_ok[:, None] & col_ok[None, :])


@functools.cache
def _kernel(interpret: bool):  # noqa: ANN202 - a Triton JITFunction
    # Jitted on first use, not at import, so the interpreter switch is read when a kernel is needed.
    del interpret  # part of the cache key only
    return triton.jit(_nf4_grouped_matmul)


@dataclass(frozen=True)
class NF4Matrices:
    """One projection of all experts in the layout described in the module docstring."""

    packed: torch.Tensor  # uint8, E * N * K / 2
    scales: torch.Tensor  # fp32 per block, or uint8 codes when double-quantized
    nested_absmax: torch.Tensor | None
    nested_code: torch.Tensor | None
    offset: torch.Tensor | None
    table: torch.Tensor  # the 16 NF4 values, fp32
    n: int
    k: int


def expert_tiles(counts: list[int], block_m: int, device: torch.device) -> torch.Tensor:
    """[3, T] int32: (expert, first row, end row) for every ``block_m``-row tile of sorted rows."""
    experts, starts, ends = [], [], []
    row = 0
    for expert, count in enumerate(counts):
        for start in range(row, row + count, block_m):
            experts.append(expert)
            starts.append(start)
            ends.append(min(start + block_m, row + count))
        row += count
    return torch.tensor([experts, starts, ends], dtype=torch.int32).to(device)


def block_m_for(counts: list[int]) -> int:
    """Tile height: a canvas gives each expert ~16 rows; a long prefill gives hundreds."""
    busiest = max(counts, default=0)
    return 16 if busiest <= 16 else 32 if busiest <= 64 else 64


@dataclass(frozen=True)
class RowTiles:
    """How the sorted rows are cut into tiles; built once per layer, used by both of its projections."""

    block_m: int
    table: torch.Tensor  # expert_tiles(...)

    @classmethod
    def plan(cls, counts: list[int], device: torch.device) -> RowTiles:
        block_m = block_m_for(counts)
        return cls(block_m, expert_tiles(counts, block_m, device))


def nf4_grouped_matmul(
    x: torch.Tensor, counts: list[int], weights: NF4Matrices, tiles: RowTiles | None = None
) -> torch.Tensor:
    """``out[rows of e] = x[rows of e] @ W[e].T`` for rows sorted by expert, ``counts[e]`` rows each.

    ``tiles`` is ``RowTiles.plan(counts, x.device)``, planned here when not given.
    """
    if triton is None:
        raise RuntimeError("the fused NF4 kernel needs Triton")
    if x.ndim != 2 or x.shape[1] != weights.k or sum(counts) != x.shape[0]:
        raise ValueError(f"x {tuple(x.shape)} does not match K={weights.k} and {sum(counts)} routed rows")
    x = x.contiguous()
    out = torch.empty(x.shape[0], weights.n, dtype=x.dtype, device=x.device)
    if x.shape[0] == 0:
        return out
    tiles = tiles or RowTiles.plan(counts, x.device)
    block_n = 64
    nested = weights.nested_absmax is not None
    # Placeholders keep the signature fixed when the scales are plain fp32 (the branch is compiled out).
    nested_absmax = weights.nested_absmax if nested else weights.table
    nested_code = weights.nested_code if nested else weights.table
    offset = weights.offset if nested else weights.table
    grid = (tiles.table.shape[1], triton.cdiv(weights.n, block_n))
    _kernel(interpreting())[grid](
        x,
        out,
        weights.packed,
        weights.scales,
        nested_absmax,
        nested_code,
        offset,
        weights.table,
        tiles.table[0],
        tiles.table[1],
        tiles.table[2],
        weights.n,
        weights.k,
        x.stride(0),
        out.stride(0),
        NESTED=nested,
        # Triton 3.9's interpreter computes tl.dot on bf16 wrongly (numpy has no bf16), so interpreted
        # runs multiply in fp32; compiled kernels use the tensor cores in the input dtype.
        DOT_FP32=interpreting() and x.dtype != torch.float32,
        BLOCK_M=tiles.block_m,
        BLOCK_N=block_n,
        BLOCK_K=NF4_BLOCK,
    )
    return out
