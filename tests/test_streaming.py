"""The streaming loader on sharded tiny checkpoints, and a quantized tiny model through the engine."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import torch
from transformers import DiffusionGemmaForBlockDiffusion

from model import DenoiseOptions, EditRequest, Engine, load
from model.checkpoint.architecture import TextModelShape, build_config
from model.checkpoint.building import MODEL_BUILDING, new_model
from model.checkpoint.quantization import QuantizedExperts, cast_floating_parameters, module_bytes, quantize_model
from model.checkpoint.streaming import StreamingStats, load_streaming

CPU = torch.device("cpu")
FAST = DenoiseOptions(max_denoising_steps=6)


def small_model(seed: int = 0) -> DiffusionGemmaForBlockDiffusion:
    torch.manual_seed(seed)
    shape = TextModelShape(
        vocab_size=2048,
        hidden_size=128,
        num_hidden_layers=4,
        num_experts=16,
        top_k_experts=2,
        moe_intermediate_size=64,
        intermediate_size=256,
    )
    model = new_model(build_config(shape)).eval()
    return cast_floating_parameters(model, CPU, torch.bfloat16)


@pytest.fixture(scope="module")
def reference() -> DiffusionGemmaForBlockDiffusion:
    return small_model()


@pytest.fixture(scope="module")
def sharded(reference: DiffusionGemmaForBlockDiffusion, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sharded")
    reference.save_pretrained(folder, max_shard_size="600KB")
    return folder


@torch.no_grad()
def logits(model: torch.nn.Module) -> torch.Tensor:
    generator = torch.Generator().manual_seed(3)
    prompt = torch.randint(3, 2048, (1, 24), generator=generator)
    canvas = torch.randint(3, 2048, (1, 32), generator=generator)
    return model(input_ids=prompt, decoder_input_ids=canvas).logits


def test_checkpoint_is_laid_out_like_the_hub(sharded: Path) -> None:
    index = json.loads((sharded / "model.safetensors.index.json").read_text())
    assert len(set(index["weight_map"].values())) >= 4


@pytest.mark.parametrize("precision", ["4bit", "8bit"])
def test_streamed_model_equals_in_memory_quantization(
    reference: DiffusionGemmaForBlockDiffusion, sharded: Path, precision: str
) -> None:
    streamed = load_streaming(sharded, reference.config, precision, CPU)
    in_memory = quantize_model(copy.deepcopy(reference), precision)
    torch.testing.assert_close(logits(streamed), logits(in_memory), rtol=0, atol=0)
    assert module_bytes(streamed) == module_bytes(in_memory)
    decoder, encoder = streamed.model.decoder, streamed.model.encoder.language_model
    for dec, enc in zip(decoder.layers, encoder.layers, strict=True):
        assert isinstance(dec.experts, QuantizedExperts) and enc.experts is dec.experts
    assert streamed.lm_head.weight is decoder.embed_tokens.weight is encoder.embed_tokens.weight


def test_streaming_never_holds_more_than_one_shard(
    reference: DiffusionGemmaForBlockDiffusion, sharded: Path
) -> None:
    stats = StreamingStats()
    model = load_streaming(sharded, reference.config, "4bit", CPU, stats=stats)
    total = sum(p.stat().st_size for p in sharded.glob("*.safetensors"))
    assert stats.shards >= 4 and stats.largest_shard_bytes < total / 2
    # Measured through weak references to every tensor read: only the one being converted was alive.
    assert stats.peak_unquantized_bytes <= stats.largest_tensor_bytes
    assert stats.peak_unquantized_bytes <= stats.largest_shard_bytes
    if stats.peak_rss_growth_bytes is not None:
        # Anonymous memory grew by the quantized model plus at most about one shard in flight.
        assert stats.peak_rss_growth_bytes <= module_bytes(model) + stats.largest_shard_bytes + 8 * 2**20


def test_single_file_checkpoint_and_mismatch(
    reference: DiffusionGemmaForBlockDiffusion, tmp_path: Path
) -> None:
    reference.save_pretrained(tmp_path / "one")
    assert (tmp_path / "one" / "model.safetensors").is_file()
    model = load_streaming(tmp_path / "one", reference.config, "4bit", CPU)
    assert torch.isfinite(logits(model)).all()
    other = small_model().config
    other.text_config.num_hidden_layers = 2
    other.text_config.layer_types = other.text_config.layer_types[:2]
    with pytest.raises(ValueError, match="does not match"):
        load_streaming(tmp_path / "one", other, "4bit", CPU)


def _damped_checkpoint(source: Path, target: Path) -> Path:
    """The tiny checkpoint with its residual updates damped (see tests/test_quantization.py)."""
    with MODEL_BUILDING:
        model = DiffusionGemmaForBlockDiffusion.from_pretrained(source)
    with torch.no_grad():
        for layer in model.model.decoder.layers:
            layer.post_attention_layernorm.weight.fill_(0.1)
            layer.post_feedforward_layernorm.weight.fill_(0.1)
    shutil.copytree(source, target)
    for stale in target.glob("*.safetensors*"):
        stale.unlink()
    model.save_pretrained(target)
    return target


def test_quantized_tiny_model_runs_the_engine_and_accepts_nearly_the_same_tokens(
    tiny_checkpoint: Path, tmp_path: Path
) -> None:
    folder = _damped_checkpoint(tiny_checkpoint, tmp_path / "damped")
    reference = Engine(load(folder, precision="bf16", device="cpu"))
    quantized_model = load(folder, precision="4bit", device="cpu", quantized_copies=False)
    assert isinstance(quantized_model.model.model.decoder.layers[0].experts, QuantizedExperts)
    quantized = Engine(quantized_model)
    agree = total = 0
    for seed in range(3):
        request = EditRequest(
            prefix="The lighthouse keeper climbed",
            suffix=" every evening.",
            mode="fill",
            max_new_tokens=16,
            seed=seed,
            options=FAST,
        )
        expected, got = reference.run(request), quantized.run(request)
        assert got.passes >= 1 and got.texts[0] == got.text
        agree += sum(a == b for a, b in zip(expected.raw_tokens[0], got.raw_tokens[0], strict=True))
        total += len(expected.raw_tokens[0])
    assert agree / total >= 0.9
