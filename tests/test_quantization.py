"""NF4 experts and the precision policy, on tiny random models (CPU; bitsandbytes runs there too).

Random models at the library's init are chaotic: bf16 vs fp32 logits of a 4-layer one agree only to
cosine ~0.92, which would swamp any quantization error. The agreement tests therefore damp the residual
updates (post-norm gains 0.1, as in a trained residual stack where each block nudges the stream) and
first check the bf16-vs-fp32 noise floor, so what they measure is the quantization.
"""

from __future__ import annotations

import copy

import bitsandbytes.functional as bnbf
import pytest
import torch
from transformers import DiffusionGemmaForBlockDiffusion

from model.checkpoint.architecture import TextModelShape, build_config
from model.checkpoint.building import new_model
from model.checkpoint.quantization import QuantizedExperts, cast_floating_parameters, module_bytes, quantize_model

CPU = torch.device("cpu")


def cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    return torch.nn.functional.cosine_similarity(a.flatten().double(), b.flatten().double(), dim=0).item()


def damped_model(seed: int = 0, gain: float = 0.1) -> DiffusionGemmaForBlockDiffusion:
    torch.manual_seed(seed)
    shape = TextModelShape(
        vocab_size=512,
        hidden_size=128,
        num_hidden_layers=4,
        num_experts=8,
        top_k_experts=2,
        moe_intermediate_size=64,
        intermediate_size=256,
        num_attention_heads=4,
        num_key_value_heads=2,
    )
    model = new_model(build_config(shape)).eval()
    with torch.no_grad():
        for layer in model.model.decoder.layers:  # the encoder's layers share these weights
            layer.post_attention_layernorm.weight.fill_(gain)
            layer.post_feedforward_layernorm.weight.fill_(gain)
    return model


@torch.no_grad()
def logits(model: torch.nn.Module, seed: int = 1) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    prompt = torch.randint(3, 512, (2, 40), generator=generator)
    canvas = torch.randint(3, 512, (2, 32), generator=generator)
    return model(input_ids=prompt, decoder_input_ids=canvas).logits.float()


@pytest.fixture(scope="module")
def reference() -> DiffusionGemmaForBlockDiffusion:
    return damped_model()


@pytest.fixture(scope="module")
def bf16_logits(reference: DiffusionGemmaForBlockDiffusion) -> torch.Tensor:
    return logits(cast_floating_parameters(copy.deepcopy(reference), CPU, torch.bfloat16))


def test_bitsandbytes_nf4_runs_on_cpu_tensors() -> None:
    weight = torch.randn(256, 512, dtype=torch.bfloat16)
    packed, state = bnbf.quantize_4bit(weight, blocksize=64, quant_type="nf4", compress_statistics=True)
    assert packed.device.type == "cpu" and packed.dtype == torch.uint8
    assert cosine(bnbf.dequantize_4bit(packed, state), weight) > 0.99


@pytest.mark.parametrize("double_quant", [True, False])
def test_quantized_experts_compute_exactly_the_routed_experts(double_quant: bool) -> None:
    """Against the library's experts holding the dequantized weights: same maths, same routing."""
    model = damped_model()
    experts = model.model.decoder.layers[0].experts
    quantized = QuantizedExperts.from_float(experts, "nf4", double_quant, torch.float32)
    quantized.scratch_bytes = 3 * 2 * 128 * 64 * 4 * 2  # force several runs per forward
    with torch.no_grad():
        experts.gate_up_proj.copy_(quantized.dequantize("gate_up", 0, 8))
        experts.down_proj.copy_(quantized.dequantize("down", 0, 8))
    hidden = torch.randn(50, 128)
    index = torch.randint(0, 8, (50, 2))
    index[index == 5] = 6  # leave expert 5 unrouted: it must be skipped, not computed
    weights = torch.rand(50, 2)
    with torch.no_grad():
        expected, got = experts(hidden, index, weights), quantized(hidden, index, weights)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)


def test_nf4_experts_against_bf16_experts_per_module() -> None:
    experts = damped_model().model.decoder.layers[0].experts
    quantized = QuantizedExperts.from_float(experts, "nf4", True, torch.float32)
    hidden, index, weights = torch.randn(64, 128), torch.randint(0, 8, (64, 2)), torch.rand(64, 2)
    with torch.no_grad():
        # Three NF4 matmuls in a row on Gaussian weights: ~0.987 is the format's own floor.
        assert cosine(quantized(hidden, index, weights), experts(hidden, index, weights)) > 0.98


def test_reference_is_not_chaotic(
    reference: DiffusionGemmaForBlockDiffusion, bf16_logits: torch.Tensor
) -> None:
    assert cosine(bf16_logits, logits(reference)) > 0.999


@pytest.mark.parametrize(
    ("precision", "linears", "floor"),
    [
        ("4bit", "bf16", 0.99),  # NF4 experts only
        ("4bit", None, 0.99),  # the policy: NF4 experts + int8 linears
        ("8bit", None, 0.995),
    ],
)
def test_quantized_logits_agree_with_bf16(
    reference: DiffusionGemmaForBlockDiffusion,
    bf16_logits: torch.Tensor,
    precision: str,
    linears: str | None,
    floor: float,
) -> None:
    quantized = quantize_model(copy.deepcopy(reference), precision, linears=linears)
    got = logits(quantized)
    assert cosine(got, bf16_logits) >= floor
    assert (got.argmax(-1) == bf16_logits.argmax(-1)).float().mean() >= 0.95


def test_nf4_everywhere_is_measurably_worse(
    reference: DiffusionGemmaForBlockDiffusion, bf16_logits: torch.Tensor
) -> None:
    """Why the policy keeps the non-expert linears at 8 bit: their NF4 error dominates."""
    policy = cosine(logits(quantize_model(copy.deepcopy(reference), "4bit")), bf16_logits)
    everywhere = cosine(logits(quantize_model(copy.deepcopy(reference), "4bit", linears="nf4")), bf16_logits)
    assert 1 - everywhere > 3 * (1 - policy)


def test_tied_layers_share_one_quantized_module(reference: DiffusionGemmaForBlockDiffusion) -> None:
    model = quantize_model(copy.deepcopy(reference), "4bit")
    for encoder_layer, decoder_layer in zip(
        model.model.encoder.language_model.layers, model.model.decoder.layers, strict=True
    ):
        assert encoder_layer.experts is decoder_layer.experts
        assert isinstance(decoder_layer.experts, QuantizedExperts)
        assert encoder_layer.self_attn.q_proj is decoder_layer.self_attn.q_proj
    assert model.lm_head.weight is model.model.decoder.embed_tokens.weight
    bf16 = cast_floating_parameters(copy.deepcopy(reference), CPU, torch.bfloat16)
    assert module_bytes(model) < 0.5 * module_bytes(bf16)
