"""Safetensors files written and read one tensor at a time, without memory maps.

Writing: a shard's header (every name, dtype and shape) is known before any data exists, so
:class:`ShardWriter` writes it first and then takes the tensors one by one, straight from their memory
(no serialized copy of the shard, unlike ``safetensors.torch.save_file``). That is what lets the
full-size bench write a 50 GB checkpoint holding one tensor at a time, and the quantized copy be saved
beside a 14 GB model without a second copy of it.

Reading: ``safe_open`` maps the whole shard; every page a tensor was read from then stays in the
process's resident set until the shard is closed (a 5 GB shard counts 5 GB on top of the model).
:func:`read_tensors` reads each tensor into its own buffer with plain file reads and tells the kernel
it can drop those pages from its cache, so the resident set is the model plus the tensor in hand.
The files are the standard format: ``safe_open`` and transformers read them.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import torch

DTYPE_NAMES: dict[torch.dtype, str] = {
    torch.bfloat16: "BF16",
    torch.float16: "F16",
    torch.float32: "F32",
    torch.float64: "F64",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.int16: "I16",
    torch.int32: "I32",
    torch.int64: "I64",
    torch.bool: "BOOL",
}
DTYPES: dict[str, torch.dtype] = {name: dtype for dtype, name in DTYPE_NAMES.items()}
INDEX_NAME = "model.safetensors.index.json"
# Read in pieces this large, so dropping the page cache behind the reader keeps pace with it.
READ_CHUNK = 64 * 2**20


@dataclass(frozen=True)
class TensorPlan:
    """One tensor a shard will hold."""

    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    @classmethod
    def of(cls, name: str, tensor: torch.Tensor) -> TensorPlan:
        return cls(name, tuple(tensor.shape), tensor.dtype)


def plan_shards(plans: Sequence[TensorPlan], max_shard_bytes: int) -> list[list[TensorPlan]]:
    """Tensors split, in order, into shards of at most ``max_shard_bytes`` (a bigger tensor gets its own)."""
    shards: list[list[TensorPlan]] = [[]]
    size = 0
    for plan in plans:
        if shards[-1] and size + plan.nbytes > max_shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(plan)
        size += plan.nbytes
    return [shard for shard in shards if shard]


def shard_names(count: int) -> list[str]:
    """The hub's names: model-00001-of-00012.safetensors, ... (model.safetensors for one file)."""
    if count == 1:
        return ["model.safetensors"]
    return [f"model-{index:05d}-of-{count:05d}.safetensors" for index in range(1, count + 1)]


def write_index(folder: Path, shards: Sequence[Sequence[TensorPlan]], names: Sequence[str]) -> None:
    weight_map = {plan.name: name for shard, name in zip(shards, names, strict=True) for plan in shard}
    total = sum(plan.nbytes for shard in shards for plan in shard)
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / INDEX_NAME).write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")


class ShardWriter:
    """Writes one safetensors file whose tensors are declared up front, then given one at a time in order."""

    def __init__(self, path: Path, plans: Sequence[TensorPlan], metadata: dict[str, str] | None = None) -> None:
        header: dict[str, Any] = {"__metadata__": {"format": "pt", **(metadata or {})}}
        offset = 0
        for plan in plans:
            if plan.dtype not in DTYPE_NAMES:
                raise ValueError(f"{plan.name}: dtype {plan.dtype} has no safetensors name here")
            header[plan.name] = {
                "dtype": DTYPE_NAMES[plan.dtype],
                "shape": list(plan.shape),
                "data_offsets": [offset, offset + plan.nbytes],
            }
            offset += plan.nbytes
        encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
        encoded += b" " * (-len(encoded) % 8)  # the data starts 8-byte aligned, as safetensors writes it
        self.path = path
        self.pending = list(reversed(plans))
        self.handle: IO[bytes] = path.open("wb")
        self.handle.write(len(encoded).to_bytes(8, "little"))
        self.handle.write(encoded)

    def write(self, name: str, tensor: torch.Tensor) -> None:
        if not self.pending:
            raise ValueError(f"{self.path.name}: {name} was not declared")
        plan = self.pending.pop()
        if plan.name != name or tuple(tensor.shape) != plan.shape or tensor.dtype != plan.dtype:
            raise ValueError(
                f"{self.path.name}: expected {plan.name} {plan.shape} {plan.dtype}, got {name} "
                f"{tuple(tensor.shape)} {tensor.dtype}"
            )
        if plan.nbytes:
            # A byte view of the tensor's own memory: nothing is copied for a contiguous CPU tensor.
            data = tensor.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8)
            self.handle.write(data.numpy().data)

    def close(self) -> None:
        self.handle.close()
        if self.pending:
            raise ValueError(f"{self.path.name}: {len(self.pending)} declared tensors were never written")

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if kind is None:
            self.close()
        else:
            self.handle.close()


def read_header(path: Path) -> tuple[int, dict[str, Any]]:
    """The data's start and the header's tensor entries (``__metadata__`` left out)."""
    with path.open("rb") as handle:
        length = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(length))
    if not isinstance(header, dict):
        raise ValueError(f"{path.name}: the safetensors header is not an object")
    header.pop("__metadata__", None)
    return 8 + length, header


def read_tensors(path: Path) -> Iterator[tuple[str, torch.Tensor]]:
    """Every tensor of a safetensors file in file order, each in memory of its own (no memory map).

    Raises ``ValueError`` for a dtype this reader does not know (the caller may fall back to ``safe_open``).
    """
    start, header = read_header(path)
    entries = sorted(header.items(), key=lambda item: item[1]["data_offsets"][0])
    unknown = sorted({entry["dtype"] for _, entry in entries} - set(DTYPES))
    if unknown:
        raise ValueError(f"{path.name}: dtypes {unknown} are not read here")
    with path.open("rb", buffering=0) as handle:
        for name, entry in entries:
            first, end = entry["data_offsets"]
            tensor = torch.empty(entry["shape"], dtype=DTYPES[entry["dtype"]])
            if end - first != tensor.numel() * tensor.element_size():
                raise ValueError(f"{path.name}: {name}'s byte range does not match its shape and dtype")
            if end > first:
                view = tensor.reshape(-1).view(torch.uint8).numpy().data
                handle.seek(start + first)
                done = 0
                while done < end - first:
                    got = handle.readinto(view[done : done + READ_CHUNK])
                    if not got:
                        raise ValueError(f"{path.name} is truncated inside {name}")
                    _drop_cache(handle.fileno(), start + first + done, got)
                    done += got
            yield name, tensor
            del tensor  # not held while the next one is read


def _drop_cache(fd: int, offset: int, length: int) -> None:
    # The bytes now live in the tensor; leaving them in the page cache as well would push out what other
    # programs (and the rest of this checkpoint) need.
    if hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, offset, length, os.POSIX_FADV_DONTNEED)
