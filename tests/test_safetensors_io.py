"""Shards written and read a tensor at a time: the standard format, exactly the bytes given."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors import safe_open

from model.checkpoint.safetensors_io import ShardWriter, TensorPlan, plan_shards, read_tensors, shard_names


def test_a_shard_written_tensor_by_tensor_reads_back_everywhere(tmp_path: Path) -> None:
    torch.manual_seed(0)
    tensors = {
        "a.weight": torch.randn(5, 7).to(torch.bfloat16),
        "b.codes": torch.randint(0, 255, (33,), dtype=torch.uint8),
        "c.scale": torch.tensor(3.5),
        "d.empty": torch.empty(0, dtype=torch.float32),
        "e.int8": torch.randint(-127, 127, (4, 3), dtype=torch.int8),
    }
    plans = [TensorPlan.of(name, tensor) for name, tensor in tensors.items()]
    with ShardWriter(tmp_path / "model.safetensors", plans) as writer:
        for name, tensor in tensors.items():
            writer.write(name, tensor)
    with safe_open(str(tmp_path / "model.safetensors"), framework="pt") as opened:
        assert set(opened.keys()) == set(tensors)
        for name, tensor in tensors.items():
            assert torch.equal(opened.get_tensor(name), tensor), name
    back = dict(read_tensors(tmp_path / "model.safetensors"))
    assert back.keys() == tensors.keys()
    assert all(torch.equal(back[name], tensor) and back[name].dtype == tensor.dtype for name, tensor in tensors.items())


def test_the_writer_refuses_what_was_not_declared(tmp_path: Path) -> None:
    plans = [TensorPlan("x", (2,), torch.float32), TensorPlan("y", (2,), torch.float32)]
    with pytest.raises(ValueError, match="expected x"), ShardWriter(tmp_path / "a.safetensors", plans) as writer:
        writer.write("y", torch.zeros(2))
    with pytest.raises(ValueError, match="never written"), ShardWriter(tmp_path / "b.safetensors", plans) as writer:
        writer.write("x", torch.zeros(2))


def test_shards_are_planned_like_the_hub() -> None:
    plans = [TensorPlan(f"t{index}", (256,), torch.float32) for index in range(10)]  # 1 KiB each
    shards = plan_shards(plans, 3 * 1024)
    assert [len(shard) for shard in shards] == [3, 3, 3, 1]
    assert shard_names(len(shards))[0] == "model-00001-of-00004.safetensors" and shard_names(1) == ["model.safetensors"]
