"""Routed experts in host memory (model/checkpoint/expert_placement.py): the same tokens as experts computed in
place, on a small real MoE model whose "host" copy is on the CPU; and the doctor's choice of placement."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
import torch
from torch import nn

from model import DenoiseOptions, EditRequest, Engine, LoadedModel, load
from model.checkpoint.doctor import (
    GIB,
    DeviceInfo,
    choose_placement,
    diffusiongemma_26b_a4b_config,
    estimate_footprint,
    preflight,
    resident_layers_that_fit,
    weight_bytes,
)
from model.checkpoint.expert_placement import (
    PlacedExperts,
    hosted_layers,
    place_experts,
    quantized_experts_in_order,
)
from model.checkpoint.quantization import QuantizedExperts
from model.checkpoint.tiny import build_tiny_checkpoint
from model.errors import ModelLoadError

FAST = DenoiseOptions(max_denoising_steps=5)
PLACEMENTS = ("device", "host-stream", "host-compute")


@pytest.fixture(scope="module")
def three_layers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Three layers, so the stream's two slots must be refilled (two layers would stay in them for good).
    return build_tiny_checkpoint(tmp_path_factory.mktemp("moe") / "tiny", num_hidden_layers=3)


def four_bit(folder: Path, experts: str, copies: Path | bool = False) -> LoadedModel:
    return load(folder, precision="4bit", device="cpu", experts=experts, quantized_copies=copies)


def edits(loaded: LoadedModel) -> list[list[int]]:
    engine = Engine(loaded)
    requests = [
        EditRequest(prefix="The lighthouse keeper climbed", suffix=" every evening.", mode="fill",
                    max_new_tokens=12, seed=3, options=FAST),
        EditRequest(prefix="She wrote the letter twice, ", span="then tore up both copies",
                    suffix=" and walked to the harbour.", mode="rewrite", seed=5, candidates=2, options=FAST),
    ]  # fmt: skip
    return [tokens for request in requests for tokens in engine.run(request).raw_tokens]


def placed(loaded: LoadedModel) -> PlacedExperts:
    result = loaded.model.redraft_experts
    assert isinstance(result, PlacedExperts)
    return result


def test_host_placements_write_the_tokens_of_experts_computed_in_place(three_layers: Path) -> None:
    loaded = {placement: four_bit(three_layers, placement) for placement in PLACEMENTS}
    assert {name: model.experts for name, model in loaded.items()} == {name: name for name in PLACEMENTS}
    expected = edits(loaded["device"])
    assert edits(loaded["host-stream"]) == expected
    assert edits(loaded["host-compute"]) == expected

    stream, compute = placed(loaded["host-stream"]), placed(loaded["host-compute"])
    assert stream.modules == compute.modules == 3
    layer_bytes = stream.host_bytes // 3
    # Every layer was copied, most of them ahead of their turn; nothing was computed on the CPU's side path.
    assert stream.stats.copies > 3 and stream.stats.prefetch_hits >= stream.stats.copies - 2
    assert stream.stats.bytes_copied == stream.stats.copies * layer_bytes and stream.stats.cpu_calls == 0
    assert stream.slot_bytes == 2 * layer_bytes
    assert compute.stats.cpu_calls > 0 and compute.stats.copies == 0
    # The forward's logits, not only the sampled tokens, are the same to the bit.
    ids = torch.tensor([[5, 17, 42, 9, 77, 31]])
    logits = [loaded[name].model.model.encoder(input_ids=ids).last_hidden_state for name in PLACEMENTS]
    assert all(torch.equal(logits[0], other) for other in logits[1:])


def test_the_stream_is_right_when_layers_come_out_of_order(three_layers: Path) -> None:
    loaded = four_bit(three_layers, "host-stream")
    experts = quantized_experts_in_order(loaded.model)
    generator = torch.Generator().manual_seed(0)
    hidden = experts[0].hidden_dim
    for index in (2, 0, 0, 1, 2, 1, 0):  # misses, repeats and backwards steps
        module = experts[index]
        x = torch.randn(7, hidden, generator=generator)
        routes = torch.randint(0, module.num_experts, (7, 2), generator=generator)
        weights = torch.rand(7, 2, generator=generator)
        assert torch.equal(module(x, routes, weights), module.compute(x, routes, weights))


def test_layers_the_gpu_has_room_for_keep_their_experts_and_the_rest_stream_between_them(three_layers: Path) -> None:
    assert hosted_layers(30, 26) == [3, 11, 18, 26] and hosted_layers(30, 0) == list(range(30))
    assert hosted_layers(3, 1) == [0, 2] and hosted_layers(3, 3) == [] and hosted_layers(3, 7) == []
    loaded = four_bit(three_layers, "host-stream")
    expected = edits(four_bit(three_layers, "device"))
    result = place_experts(loaded.model, "host-stream", "cpu", resident=1)
    experts = quantized_experts_in_order(loaded.model)
    assert [module.host is None for module in experts] == [False, True, False]
    assert result.resident == 1 and result.hosted == 2 and "1 of 3 layers' experts on the GPU" in result.describe()
    assert edits(loaded) == expected
    # Two hosted layers fit the two slots: after the first pass nothing is copied again.
    assert result.stats.copies == 2 and result.stats.bytes_copied == result.host_bytes
    # Room for every layer: nothing is left in host memory, whatever was asked.
    assert place_experts(loaded.model, "host-compute", "cpu", resident=3).placement == "device"
    assert all(module.host is None for module in experts) and edits(loaded) == expected


def test_host_experts_stay_where_they_are_when_the_model_moves(three_layers: Path) -> None:
    hosted = four_bit(three_layers, "host-compute").model
    # cast: transformers' wrapped ``to`` reads to mypy as wanting the model passed again.
    moving = cast(nn.Module, hosted)
    moving.to(torch.float16)
    module = quantized_experts_in_order(hosted)[0]
    assert module.gate_up_nested_absmax.dtype == torch.float32  # untouched: the placement guards it
    assert hosted.get_input_embeddings().weight.dtype == torch.float16  # the rest of the model moved
    # Back on the device, the module moves with the model again.
    place_experts(hosted, "device", "cpu")
    assert module.host is None
    moving.to(torch.float16)
    assert module.gate_up_nested_absmax.dtype == torch.float16


def test_a_quantized_copy_loads_into_host_memory_with_the_same_tokens(three_layers: Path, tmp_path: Path) -> None:
    copies = tmp_path / "copies"
    first = four_bit(three_layers, "host-stream", copies)  # quantizes and writes the copy from host memory
    second = four_bit(three_layers, "host-stream", copies)
    assert second.model.redraft_weights_folder != three_layers and second.experts == "host-stream"
    assert isinstance(second.model.model.decoder.layers[0].experts, QuantizedExperts)
    assert edits(second) == edits(first) == edits(four_bit(three_layers, "device"))


def test_a_host_placement_needs_quantized_experts(three_layers: Path) -> None:
    with pytest.raises(ModelLoadError, match="only at 4 or 8 bit, not fp32"):
        load(three_layers, precision="fp32", device="cpu", experts="host-stream")
    with pytest.raises(ModelLoadError, match="unknown experts placement 'gpu'"):
        load(three_layers, precision="4bit", device="cpu", experts="gpu", quantized_copies=False)
    # "auto" precision (the editor's) with a host placement asked for is 4 bit: only quantized experts move.
    asked = load(three_layers, device="cpu", experts="host-compute", quantized_copies=False)
    assert asked.precision == "4bit" and asked.experts == "host-compute"
    full = load(three_layers, precision="fp32", device="cpu")
    assert full.experts == "device"
    with pytest.raises(ValueError, match="no quantized experts"):
        place_experts(full.model, "host-stream", "cpu")


RTX_3060 = DeviceInfo(kind="cuda", name="RTX 3060", total_bytes=12 * GIB, free_bytes=11 * GIB, index=0)
RTX_4080 = DeviceInfo(kind="cuda", name="RTX 4080", total_bytes=16 * GIB, free_bytes=15 * GIB, index=0)
RTX_4090 = DeviceInfo(kind="cuda", name="RTX 4090", total_bytes=24 * GIB, free_bytes=23 * GIB, index=0)
DESKTOP_RAM = DeviceInfo(kind="cpu", name="host memory", total_bytes=32 * GIB, free_bytes=24 * GIB)
SMALL_RAM = DeviceInfo(kind="cpu", name="host memory", total_bytes=16 * GIB, free_bytes=9 * GIB)


def test_the_26b_on_a_12_or_16_gb_card_keeps_its_experts_in_host_memory() -> None:
    config = diffusiongemma_26b_a4b_config()
    experts = weight_bytes(config, "4bit")["weights: experts (nf4)"]
    hosted = estimate_footprint(config, "4bit", experts_on_host=True)
    whole = estimate_footprint(config, "4bit")
    assert hosted.host_bytes == experts
    # The GPU holds all but the experts, plus two layers of them to stream through.
    assert hosted.total_bytes < whole.total_bytes - experts + 2 * experts / 30 + 0.1 * GIB
    assert hosted.parts["expert slots (two layers, streamed)"] == pytest.approx(2 * experts / 30, rel=1e-6)
    for card in (RTX_3060, RTX_4080):
        report = preflight(config, "auto", card, host_info=DESKTOP_RAM)
        assert report.fits and report.precision == "4bit" and report.footprint.experts_on_host
        assert report.summary().startswith("YES, with the routed experts in host memory:")
        plan = choose_placement(config, "4bit", card, host_info=DESKTOP_RAM)
        assert plan.placement == "host-stream"
        # The card's spare room keeps as many layers' experts as fit, and the estimate with them still fits.
        assert plan.resident_layers == resident_layers_that_fit(config, "4bit", card)
        kept = estimate_footprint(config, "4bit", experts_on_host=True, resident_layers=plan.resident_layers)
        assert kept.total_bytes <= card.free_bytes < kept.total_bytes + 2 * experts / 30 + GIB
        assert kept.host_bytes == pytest.approx(experts * (30 - plan.resident_layers) / 30, rel=1e-6)
    # A card that holds the whole model keeps it whole; asked for, the host placement is used anyway.
    assert choose_placement(config, "4bit", RTX_4090, host_info=DESKTOP_RAM).placement == "device"
    asked = choose_placement(config, "4bit", RTX_4090, "host-compute", host_info=DESKTOP_RAM)
    assert asked.placement == "host-compute" and asked.resident_layers == 29  # one layer at least stays hosted
    assert [resident_layers_that_fit(config, "4bit", card) for card in (RTX_3060, RTX_4080)] == [10, 21]
    # Without the host memory for the experts it does not fit either way, and the advice says what to free.
    short = preflight(config, "4bit", RTX_3060, experts_on_host=True, host_info=SMALL_RAM)
    assert not short.fits and "Free host memory: the routed experts need" in short.summary()
    assert choose_placement(config, "4bit", RTX_3060, host_info=SMALL_RAM).placement == "device"
    # Asked for 4 bit on the small card, the doctor points to the host placement instead of a bigger card.
    advice = preflight(config, "4bit", RTX_3060, host_info=DESKTOP_RAM).summary().split("What to do: ")[1]
    assert advice.startswith("Keep the routed experts in host memory") and "too small" not in advice
    with pytest.raises(ValueError, match="only at 4bit or 8bit"):
        estimate_footprint(config, "bf16", experts_on_host=True)
    with pytest.raises(ValueError, match="only at 4bit or 8bit, not bf16"):
        choose_placement(config, "bf16", RTX_4090, "host-stream")


def test_doctor_shows_the_host_placement_and_refuses_it_without_a_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    from model.checkpoint.doctor import doctor_main

    doctor_main(["--model", "26b"])
    out = capsys.readouterr().out
    assert "4bit with the routed experts in host memory: about 6.4 GiB on the GPU and 11.0 GiB of host memory" in out
    if not torch.cuda.is_available():
        assert doctor_main(["--model", "26b", "--experts", "host-stream"]) == 2
        assert "--experts host-stream needs a CUDA GPU" in capsys.readouterr().out
