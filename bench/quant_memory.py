"""Peak memory and ms per denoising pass of DiffusionGemma with quantized experts.

On CUDA: the real 26B-A4B config with random weights, quantized tensor by tensor exactly as the
streaming loader does (its ``_Loader`` is fed random bf16 tensors instead of safetensors reads), then
peak VRAM (``torch.cuda.max_memory_allocated``) and ms per pass for a 256-token canvas after prefixes of
0, 2k and 8k tokens; bf16 too where the preflight says it fits. 4-bit experts are timed with both
expert kernels on CUDA: the fused NF4 Triton kernel and dequantize-then-matmul. On CPU: a scaled-down
config (same structure) with prefixes scaled down as well, peak anonymous RSS instead of VRAM, and the
dequantize path only (the fused kernel needs a GPU).

    python bench/quant_memory.py [--precisions 4bit bf16] [--kernels fused dequantize] [--passes 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from transformers import DiffusionGemmaConfig, DiffusionGemmaForBlockDiffusion
from transformers.cache_utils import DynamicCache

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.checkpoint.architecture import TextModelShape, build_config, canvas_length_of, text_config_of  # noqa: E402
from model.checkpoint.doctor import GIB, cuda_device_info, diffusiongemma_26b_a4b_config, preflight  # noqa: E402
from model.checkpoint.quantization import QuantizedExperts, module_bytes, policy_for  # noqa: E402
from model.checkpoint.streaming import StreamingStats, _Loader, build_skeleton, rss_anon_bytes  # noqa: E402
from model.runtime.cache_kwarg import with_cache  # noqa: E402


def scaled_down_config() -> DiffusionGemmaConfig:
    """The real structure (MoE + dense MLP, 5:1 sliding/full, k=v full layers) at CPU-friendly size."""
    return build_config(
        TextModelShape(
            vocab_size=16_384,
            hidden_size=512,
            intermediate_size=384,
            num_hidden_layers=6,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=128,
            global_head_dim=256,
            num_global_key_value_heads=1,
            num_experts=32,
            top_k_experts=8,
            moe_intermediate_size=128,
            sliding_window=256,
            canvas_length=64,
            full_attention_every=6,
            max_position_embeddings=8192,
        )
    )


@torch.no_grad()
def random_quantized_model(
    config: DiffusionGemmaConfig, precision: str, device: torch.device
) -> DiffusionGemmaForBlockDiffusion:
    """Random weights (std 0.02, norms at 1) pushed through the streaming loader's conversion path."""
    model = build_skeleton(config)
    loader = _Loader(model, policy_for(precision), device, StreamingStats())
    names = [name for name, _ in model.named_parameters()]  # one name per tied group
    for name in names:
        shape = model.get_parameter(name).shape
        if len(shape) == 1:
            tensor = torch.ones(shape, dtype=torch.bfloat16)
        else:
            # Generated where it will live: the loader's float copy is the only one on the device.
            tensor = torch.randn(shape, dtype=torch.bfloat16, device=device) * 0.02
            tensor = tensor if len(shape) == 3 else tensor.cpu()
        loader.take(name, tensor)
        del tensor
    loader.finish()
    return model.eval()


@torch.no_grad()
def measure(
    model: DiffusionGemmaForBlockDiffusion,
    config: DiffusionGemmaConfig,
    prefix: int,
    passes: int,
    device: torch.device,
    counters: Callable[[], dict[str, int]] | None = None,
) -> dict[str, Any]:
    """Median ms per pass after ``prefix`` tokens and the peak memory; with ``counters`` (an experts
    placement's running totals) also their growth per timed pass, under ``"per_pass"``."""
    vocab, canvas = text_config_of(config).vocab_size, canvas_length_of(config)
    generator = torch.Generator(device="cpu").manual_seed(0)
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    cache = DynamicCache(config=text_config_of(config))
    # "Prefix 0" is one token (BOS): the decoder cannot read an empty cache.
    ids = torch.randint(3, vocab, (1, max(prefix, 1)), generator=generator).to(device)
    model.model.encoder(input_ids=ids, **with_cache(cache), use_cache=True)
    tokens = torch.randint(3, vocab, (1, canvas), generator=generator).to(device)
    previous = None
    times = []
    before: dict[str, int] = {}
    for index in range(passes + 1):  # the first pass warms up kernels and the allocator
        if index == 1 and counters is not None:
            before = counters()  # after the prefix and the warm-up: only timed passes count
        start = time.perf_counter()
        out = model(**with_cache(cache), decoder_input_ids=tokens, self_conditioning_logits=previous)
        previous = out.logits
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1000)
    peak = torch.cuda.max_memory_allocated() if device.type == "cuda" else (rss_anon_bytes() or 0)
    row: dict[str, Any] = {"prefix": prefix, "ms_per_pass": sorted(times[1:])[len(times[1:]) // 2], "peak_bytes": peak}
    if counters is not None:
        after = counters()
        row["per_pass"] = {key: round((after[key] - before.get(key, 0)) / passes, 1) for key in after}
    return row


@torch.no_grad()
def one_forward_logits(
    model: DiffusionGemmaForBlockDiffusion, config: DiffusionGemmaConfig, device: torch.device, prefix: int = 8
) -> torch.Tensor:
    """The logits of one denoising pass after a short random prefix (fixed seed), as float32 on the CPU:
    what two placements of the same weights must agree on."""
    vocab, canvas = text_config_of(config).vocab_size, canvas_length_of(config)
    generator = torch.Generator(device="cpu").manual_seed(0)
    cache = DynamicCache(config=text_config_of(config))
    ids = torch.randint(3, vocab, (1, prefix), generator=generator).to(device)
    model.model.encoder(input_ids=ids, **with_cache(cache), use_cache=True)
    tokens = torch.randint(3, vocab, (1, canvas), generator=generator).to(device)
    return model(**with_cache(cache), decoder_input_ids=tokens).logits.float().cpu()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--precisions", nargs="+", default=["4bit", "bf16"])
    parser.add_argument("--kernels", nargs="+", default=["fused", "dequantize"], help="expert kernels to time")
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    cuda = torch.cuda.is_available()
    kernels = args.kernels if cuda else ["dequantize"]
    device = torch.device("cuda" if cuda else "cpu")
    config = diffusiongemma_26b_a4b_config() if cuda else scaled_down_config()
    prefixes = (0, 2048, 8192) if cuda else (0, 256, 1024)
    results = []
    print(
        f"device: {cuda_device_info().describe() if cuda else 'CPU'}; config: "
        f"{'real 26B-A4B' if cuda else 'scaled-down (CPU)'}; canvas {config.canvas_length}"
    )
    for precision in args.precisions:
        if cuda and precision == "bf16" and not preflight(config, "bf16", cuda_device_info()).fits:
            print("bf16: does not fit this GPU (preflight); skipped")
            continue
        start = time.perf_counter()
        model = random_quantized_model(config, precision, device)
        build_s = time.perf_counter() - start
        weights = module_bytes(model)
        print(f"{precision}: weights {weights / GIB:.2f} GiB, built+quantized in {build_s:.1f} s")
        experts = [m for m in model.modules() if isinstance(m, QuantizedExperts)]
        for kernel in kernels if experts else ["none"]:
            for module in experts:
                module.kernel = kernel
            for prefix in prefixes:
                row = {
                    "precision": precision,
                    "expert_kernel": kernel,
                    "weights_bytes": weights,
                    **measure(model, config, prefix, args.passes, device),
                }
                kind = "peak VRAM" if cuda else "RSS (anon)"
                print(
                    f"  {kernel:>10} prefix {prefix:>5}: {row['ms_per_pass']:8.1f} ms/pass, {kind} "
                    f"{row['peak_bytes'] / GIB:.2f} GiB, {16 * 1000 / row['ms_per_pass']:.0f} tok/s at 16 tokens/pass"
                )
                results.append(row)
        del model
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
