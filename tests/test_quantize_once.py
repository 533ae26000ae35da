"""Quantize once: the first 4-bit load writes a quantized copy, later loads read it (same tokens)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from model import DenoiseOptions, EditRequest, Engine, LoadedModel, load
from model.checkpoint import quantized_copy
from model.checkpoint.quantization import QuantizedExperts, module_bytes
from model.checkpoint.safetensors_io import read_tensors
from model.checkpoint.tiny import build_tiny_checkpoint
from model.errors import ModelLoadError

FAST = DenoiseOptions(max_denoising_steps=6)


def tokens(loaded: LoadedModel) -> list[list[int]]:
    engine = Engine(loaded)
    runs = []
    for seed in range(2):
        request = EditRequest(
            prefix="The lighthouse keeper climbed", suffix=" every evening.", mode="fill",
            max_new_tokens=16, seed=seed, options=FAST,
        )  # fmt: skip
        runs.append(engine.run(request).raw_tokens[0])
    return runs


def four_bit(folder: Path, copies: Path | bool) -> LoadedModel:
    return load(folder, precision="4bit", device="cpu", quantized_copies=copies)


def test_the_copy_is_written_once_read_after_and_gives_the_same_tokens(tmp_path: Path) -> None:
    source = build_tiny_checkpoint(tmp_path / "tiny")
    copies = tmp_path / "copies"
    first = four_bit(source, copies)
    assert first.model.redraft_weights_folder == source
    (copy,) = [path for path in copies.iterdir() if not path.name.startswith(".")]
    manifest = json.loads((copy / quantized_copy.MANIFEST).read_text())
    assert manifest["precision"] == "4bit" and manifest["policy"]["experts"] == "nf4"
    assert manifest["source"]["identity"] == {"folder": str(source.resolve())}
    config = json.loads((copy / "config.json").read_text())
    assert config["redraft_quantization"]["precision"] == "4bit"
    assert len(config["redraft_quantization"]["source_weights_sha256"]) == 64
    # NF4 codes on disk, not bf16 experts: the copy is what was quantized.
    stored = dict(read_tensors(copy / "model.safetensors"))
    assert stored["model.decoder.layers.0.experts.gate_up_data"].dtype == torch.uint8
    assert stored["model.decoder.layers.0.self_attn.q_proj.weight"].dtype == torch.int8

    second = four_bit(source, copies)
    assert second.model.redraft_weights_folder == copy
    assert isinstance(second.model.model.decoder.layers[0].experts, QuantizedExperts)
    assert second.model.model.encoder.language_model.layers[0].experts is second.model.model.decoder.layers[0].experts
    assert module_bytes(second.model) == module_bytes(first.model)
    expected = tokens(first)
    assert tokens(second) == expected

    # The copy stands in for the bf16 weights once they are deleted.
    for shard in source.glob("*.safetensors"):
        shard.unlink()
    third = four_bit(source, copies)
    assert third.model.redraft_weights_folder == copy
    assert tokens(third) == expected
    # And the copy is a model folder of its own.
    direct = load(copy, device="cpu")
    assert direct.precision == "4bit" and tokens(direct) == expected
    with pytest.raises(ModelLoadError, match="quantized to 4bit"):
        load(copy, precision="bf16", device="cpu")


def test_a_copy_of_other_weights_is_not_used(tmp_path: Path) -> None:
    source = build_tiny_checkpoint(tmp_path / "tiny", seed=0)
    copies = tmp_path / "copies"
    four_bit(source, copies)
    build_tiny_checkpoint(source, seed=1)  # same shapes and config, other weights
    fresh = four_bit(source, copies)
    assert fresh.model.redraft_weights_folder == source  # quantized again, not read from the stale copy
    assert tokens(fresh) == tokens(four_bit(source, False))
    # The stale copy was replaced by one of the new weights, which the next load reads.
    again = four_bit(source, copies)
    assert again.model.redraft_weights_folder != source
    assert tokens(again) == tokens(fresh)


def test_copies_live_in_redrafts_model_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from app.userdirs import user_dirs

    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path))
    assert quantized_copy.default_copies_folder() == user_dirs().models / "quantized"
    monkeypatch.delenv("REDRAFT_HOME")
    assert quantized_copy.default_copies_folder() == user_dirs().models / "quantized"
    source = build_tiny_checkpoint(tmp_path / "tiny")
    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path / "home"))
    load(source, precision="4bit", device="cpu")
    assert quantized_copy.find_copy(tmp_path / "home" / "models" / "quantized", source, "4bit") is not None

