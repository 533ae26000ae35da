"""The fused NF4 expert kernel, run by Triton's CPU interpreter against the dequantize-then-matmul path.

No GPU here, so these check what the kernel computes (decoding, packing order, double-quantized
scales, tiling, masking), not how fast it is; bench/quant_memory.py times it where CUDA exists.
"""

from __future__ import annotations

import copy

import pytest
import torch

pytest.importorskip("triton")

from model.checkpoint import nf4_kernel  # noqa: E402
from model.checkpoint.quantization import QuantizedExperts, quantize_model  # noqa: E402
from tests.test_quantization import damped_model, logits  # noqa: E402


@pytest.fixture
def interpreter() -> None:
    # tests/conftest.py turns the interpreter on before Triton is imported; it cannot be switched later.
    assert nf4_kernel.interpreting()


def experts_module(double_quant: bool, dtype: torch.dtype, hidden: int = 128, inner: int = 64) -> QuantizedExperts:
    torch.manual_seed(0)
    module = QuantizedExperts(6, hidden, inner, "gelu_pytorch_tanh", double_quant=double_quant, compute_dtype=dtype)
    module.load_projection("gate_up", torch.randn(6, 2 * inner, hidden) * 0.05)
    module.load_projection("down", torch.randn(6, hidden, inner) * 0.05)
    return module


def routing(tokens: int, top_k: int, experts: int, seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    # Expert 3 never chosen; some slots carry the library's "dropped" id (== num_experts).
    choices = torch.tensor([0, 1, 2, 4, 5, experts])
    index = choices[torch.randint(0, len(choices), (tokens, top_k), generator=generator)]
    weights = torch.rand(tokens, top_k, generator=generator)
    return index, weights


@pytest.mark.parametrize("double_quant", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.usefixtures("interpreter")
def test_fused_kernel_computes_what_the_dequantize_path_computes(double_quant: bool, dtype: torch.dtype) -> None:
    fused = experts_module(double_quant, dtype)
    fused.kernel = "fused"
    unfused = copy.deepcopy(fused)
    unfused.kernel = "dequantize"
    assert fused.uses_fused_kernel() and not unfused.uses_fused_kernel()
    # 70 tokens x top-2 puts more than 16 rows on some experts: several row tiles per expert.
    hidden = torch.randn(70, 128, generator=torch.Generator().manual_seed(2))
    index, weights = routing(70, 2, 6)
    got = fused(hidden, index, weights)
    want = unfused(hidden, index, weights)
    tolerance = 1e-5 if dtype == torch.float32 else 2e-2  # bf16 rounds the intermediate activations
    assert torch.allclose(got, want, atol=tolerance * want.abs().max().item(), rtol=0)
    # Tokens whose every slot was dropped get exactly zero, as in the library.
    dropped = (index == 6).all(dim=1)
    if dropped.any():
        assert got[dropped].abs().max() == 0


@pytest.mark.usefixtures("interpreter")
def test_fused_kernel_against_bitsandbytes_decoding_one_expert_at_a_time() -> None:
    module = experts_module(double_quant=True, dtype=torch.float32)
    counts = [5, 0, 37, 3, 0, 1]
    x = torch.randn(sum(counts), 128, generator=torch.Generator().manual_seed(3))
    got = nf4_kernel.nf4_grouped_matmul(x, counts, module.nf4_matrices("gate_up"))
    row, want = 0, []
    for expert, count in enumerate(counts):
        weight = module.dequantize("gate_up", expert, expert + 1, torch.float32)[0]
        want.append(x[row : row + count] @ weight.T)
        row += count
    assert torch.allclose(got, torch.cat(want), atol=1e-5, rtol=1e-5)


@pytest.mark.usefixtures("interpreter")
def test_quantized_model_logits_are_the_same_with_the_fused_kernel() -> None:
    model = quantize_model(damped_model(), "4bit")
    experts = [layer.experts for layer in model.model.decoder.layers]
    assert all(isinstance(e, QuantizedExperts) and not e.uses_fused_kernel() for e in experts)  # auto, CPU
    for module in experts:
        module.kernel = "fused"
    fused = logits(model)
    for module in experts:
        module.kernel = "dequantize"
    unfused = logits(model)
    cosine = torch.nn.functional.cosine_similarity(fused.flatten().double(), unfused.flatten().double(), dim=0)
    assert cosine.item() > 0.999
    assert (fused.argmax(-1) == unfused.argmax(-1)).float().mean().item() > 0.97


def test_tiles_cover_each_expert_row_once() -> None:
    counts = [0, 16, 17, 3, 0, 64]
    tiles = nf4_kernel.expert_tiles(counts, 16, torch.device("cpu"))
    covered: list[int] = []
    row = 0
    for expert, count in enumerate(counts):
        mine = tiles[:, tiles[0] == expert]
        for start, end in zip(mine[1].tolist(), mine[2].tolist(), strict=True):
            assert 0 < end - start <= 16
            covered.extend(range(start, end))
        assert sorted(r for r in covered if row <= r < row + count) == list(range(row, row + count))
        row += count
    assert sorted(covered) == list(range(sum(counts)))
    assert nf4_kernel.block_m_for([3, 16]) == 16 and nf4_kernel.block_m_for([300]) == 64


def test_auto_dequantizes_even_where_the_fused_kernel_could_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fused kernel lost to dequantizing on the one GPU measured, so "auto" must not choose it anywhere.
    monkeypatch.setattr(nf4_kernel, "supports", lambda k, device: True)
    module = experts_module(double_quant=False, dtype=torch.float32)
    assert module.kernel == "auto"
    assert not module.uses_fused_kernel(torch.device("cuda"))
    module.kernel = "fused"
    assert module.uses_fused_kernel(torch.device("cuda"))


def test_fused_kernel_is_refused_where_it_cannot_run(monkeypatch: pytest.MonkeyPatch) -> None:
    module = experts_module(double_quant=False, dtype=torch.float32)
    assert not module.uses_fused_kernel()  # auto never picks the fused kernel on a CPU
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    module.kernel = "fused"
    with pytest.raises(RuntimeError, match="CUDA device"):
        module.uses_fused_kernel()
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    odd = experts_module(double_quant=False, dtype=torch.float32, hidden=96, inner=64)  # 96: not whole blocks
    odd.kernel = "fused"
    with pytest.raises(RuntimeError, match="multiples of 64"):
        odd.uses_fused_kernel()
    with pytest.raises(ValueError, match="unknown expert kernel"):
        QuantizedExperts(2, 64, 64, "gelu_pytorch_tanh", kernel="fast")


@pytest.mark.usefixtures("interpreter")
def test_a_kernel_that_cannot_be_built_falls_back_to_dequantizing(monkeypatch: pytest.MonkeyPatch) -> None:
    module = experts_module(double_quant=True, dtype=torch.float32)
    reference = copy.deepcopy(module)
    reference.kernel = "dequantize"
    hidden = torch.randn(20, 128, generator=torch.Generator().manual_seed(4))
    index, weights = routing(20, 2, 6)
    want = reference(hidden, index, weights)

    def unbuildable(*_: object) -> torch.Tensor:
        raise nf4_kernel.KernelBuildError("out of shared memory")

    monkeypatch.setattr(nf4_kernel, "nf4_grouped_matmul", unbuildable)
    module.kernel = "fused"  # asked for explicitly: the failure is the caller's to see
    with pytest.raises(nf4_kernel.KernelBuildError):
        module(hidden, index, weights)
    module.kernel = "auto"
    monkeypatch.setattr(module, "uses_fused_kernel", lambda device=None: module.kernel == "auto")
    assert torch.equal(module(hidden, index, weights), want)  # auto: falls back, same numbers
    assert module.kernel == "dequantize"  # and does not try again on the next layer call
