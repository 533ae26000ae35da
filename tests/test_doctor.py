"""The preflight's estimate for the real 26B-A4B, computed from its config alone."""

from __future__ import annotations

import copy

import pytest
import torch

from model.checkpoint.architecture import TextModelShape, build_config
from model.checkpoint.building import new_model
from model.checkpoint.doctor import (
    GIB,
    DeviceInfo,
    diffusiongemma_26b_a4b_config,
    doctor_main,
    estimate_footprint,
    parameter_groups,
    preflight,
    weight_bytes,
)
from model.checkpoint.quantization import module_bytes, quantize_model

RTX_4090 = DeviceInfo(kind="cuda", name="RTX 4090", total_bytes=24 * GIB, free_bytes=int(23.0 * GIB), index=0)


def by_hand_4bit_bytes() -> float:
    """The issue's facts, summed by hand: NF4 experts, int8 linears, bf16 embedding."""
    hidden, layers, experts, expert_inter, dense_inter, vocab = 2816, 30, 128, 704, 2112, 262_144
    expert_params = layers * experts * 3 * hidden * expert_inter
    sliding = hidden * (16 * 256 + 8 * 256 + 8 * 256) + 16 * 256 * hidden  # q, k, v, o
    full = hidden * (16 * 512 + 2 * 512) + 16 * 512 * hidden  # q, k (values = keys), o
    linear_params = 25 * sliding + 5 * full + (layers + 1) * 3 * hidden * dense_inter  # + self-conditioning
    return expert_params * (4 + 8 / 64) / 8 + linear_params * 1 + vocab * hidden * 2


def test_real_config_has_the_published_shape() -> None:
    groups = parameter_groups(diffusiongemma_26b_a4b_config())
    expert_params = sum(e * r * c for e, r, c in groups.experts)
    assert abs(groups.total / 25.2e9 - 1) < 0.02
    assert abs(expert_params / groups.total - 0.91) < 0.01


def test_estimate_matches_the_arithmetic_sum_of_quantized_sizes() -> None:
    weights = sum(weight_bytes(diffusiongemma_26b_a4b_config(), "4bit").values())
    assert abs(weights / by_hand_4bit_bytes() - 1) < 0.10


def test_weight_estimate_matches_real_quantized_bytes_of_a_tiny_model() -> None:
    torch.manual_seed(0)
    config = build_config(TextModelShape(vocab_size=512, hidden_size=128, num_experts=8, moe_intermediate_size=64))
    model = new_model(config).eval()
    for precision in ("4bit", "8bit", "bf16"):
        quantized = quantize_model(copy.deepcopy(model), precision)
        estimate = sum(weight_bytes(config, precision).values())
        assert abs(estimate / module_bytes(quantized) - 1) < 0.10, precision


def test_4bit_fits_a_24gb_card_at_2k_and_bf16_does_not() -> None:
    config = diffusiongemma_26b_a4b_config()
    four = preflight(config, "4bit", RTX_4090)
    # The 18 GB goal is peak allocated tensors (torch.cuda.max_memory_allocated); the estimate adds the
    # runtime and fragmentation reserve on top, which only the driver's free figure sees.
    tensors = four.footprint.total_bytes - four.footprint.parts["runtime + fragmentation"]
    assert four.fits and tensors < 18e9
    bf16 = preflight(config, "bf16", RTX_4090)
    assert not bf16.fits and "4bit" in bf16.advice
    assert preflight(config, "auto", RTX_4090).precision == "4bit"
    assert estimate_footprint(config, "4bit", 8192).total_bytes > four.footprint.total_bytes


def test_doctor_prints_a_plain_answer(capsys) -> None:
    status = doctor_main(["--model", "diffusiongemma-26b-a4b", "--precision", "4bit"])
    out = capsys.readouterr().out
    assert "GPUs:" in out and "25.2" in out and ("YES" in out or "NO" in out)
    assert status in (0, 1)


def test_doctor_reads_any_spec_load_would_open(tiny_checkpoint, tmp_path) -> None:
    import pytest

    from model.checkpoint.doctor import config_for_spec

    assert config_for_spec("builtin").text_config.vocab_size == 8192
    assert config_for_spec(str(tiny_checkpoint)).canvas_length == 32
    with pytest.raises(ValueError, match="does not exist"):
        config_for_spec(str(tmp_path / "nowhere"))


def test_doctor_without_model_sizes_the_builtin_model(capsys) -> None:
    status = doctor_main([])
    out = capsys.readouterr().out
    assert "Model: the built-in model" in out and "YES, it fits" in out and status == 0


def test_a_model_too_large_for_the_machine_is_answered_with_what_to_do(capsys) -> None:
    laptop = DeviceInfo(kind="cpu", name="host memory", total_bytes=16 * GIB, free_bytes=8 * GIB)
    summary = preflight(diffusiongemma_26b_a4b_config(), "auto", laptop).summary()
    assert summary.startswith("Not on this machine as it is (") and "\nWhat to do: " in summary
    assert "NO" not in summary and "built-in model" in summary and "NVIDIA" in summary
    small_card = DeviceInfo(kind="cuda", name="RTX 3060", total_bytes=12 * GIB, free_bytes=11 * GIB, index=0)
    # Too little host memory for the experts too (tests/test_expert_placement.py has the card with enough).
    little_ram = DeviceInfo(kind="cpu", name="host memory", total_bytes=8 * GIB, free_bytes=6 * GIB)
    advice = preflight(diffusiongemma_26b_a4b_config(), "4bit", small_card, host_info=little_ram).summary()
    advice = advice.split("What to do: ")[1]
    assert "Close other programs using the GPU" in advice and "too small for this model" in advice
    status = doctor_main(["--model", "google/diffusiongemma-26B-A4B-it", "--precision", "bf16"])
    assert "GPUs:" in capsys.readouterr().out and status in (0, 1)


def test_without_a_gpu_but_with_enough_ram_the_26b_runs_on_the_cpu_and_the_wait_is_said() -> None:
    from model.checkpoint.doctor import CPU_PASS_FIGURE, cpu_rewrite_estimate

    config = diffusiongemma_26b_a4b_config()
    workstation = DeviceInfo(kind="cpu", name="host memory", total_bytes=32 * GIB, free_bytes=28 * GIB)
    report = preflight(config, "auto", workstation)  # bf16 (51 GiB) does not fit: 4 bit does
    assert report.precision == "4bit" and report.fits
    summary = report.summary()
    assert summary.startswith("YES, it fits in memory and runs on the CPU (no usable GPU)")
    estimate = cpu_rewrite_estimate(config)
    assert f"a denoising pass takes about {estimate.ms_per_pass / 1000:.1f} s" in summary
    assert f"takes up to {estimate.seconds_per_rewrite / 60:.0f} min (48 passes at most" in summary
    assert CPU_PASS_FIGURE.source in summary and "redraft enable-gpu" in summary
    # The bench's own machine gets the bench's own figure back: ms per pass x passes.
    on_bench = cpu_rewrite_estimate(diffusiongemma_26b_a4b_config(canvas_length=32), cores=CPU_PASS_FIGURE.cores)
    assert on_bench.ms_per_pass == pytest.approx(dict(CPU_PASS_FIGURE.ms_by_canvas)[32])
    assert on_bench.seconds_per_rewrite == pytest.approx(on_bench.ms_per_pass * 48 / 1000)
    assert cpu_rewrite_estimate(config, cores=8).ms_per_pass == pytest.approx(
        cpu_rewrite_estimate(config, cores=2).ms_per_pass / 4
    )
    # Not enough RAM and no GPU: no promise of running, the way to a GPU or the built-in model instead.
    laptop = DeviceInfo(kind="cpu", name="host memory", total_bytes=16 * GIB, free_bytes=12 * GIB)
    short = preflight(config, "auto", laptop).summary()
    assert short.startswith("Not on this machine as it is") and "denoising pass takes" not in short
    assert "NVIDIA" in short and "built-in model" in short
    # A GPU that fits says nothing about CPU seconds.
    assert "CPU" not in preflight(config, "4bit", RTX_4090).summary()
