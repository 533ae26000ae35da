"""How a pass's cost grows: with the context before the canvas, and with the canvas's width.

    python bench/scaling.py                            # the built-in model, CPU
    python bench/scaling.py --json bench/results/scaling.json

One pass is one decoder forward of DiffusionGemmaForBlockDiffusion over the canvas, reading the
prefix's KV cache and the previous pass's logits (self-conditioning), exactly what the engine runs.
Context: 0, 1k, 4k and 16k tokens of prefix at the model's canvas. Canvas: 16 tokens up to the
model's canvas at a 1k-token prefix. Medians of ``--passes`` timed passes after one warm-up.

Why it grows as it does: every canvas token attends to the whole cache in the full-attention layers
(linear in the context) but only to the last ``sliding_window`` tokens in the sliding layers
(constant once the context passes the window); the feed-forward, expert and vocabulary-head work is
per canvas token (linear in the width), and attention inside the canvas is quadratic in the width
but small beside the rest at these sizes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch
from transformers import DynamicCache

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model import load  # noqa: E402
from model.checkpoint.architecture import text_config_of  # noqa: E402
from model.runtime.cache_kwarg import with_cache  # noqa: E402


def ms_per_pass(model: Any, context: int, width: int, passes: int) -> float:
    config = text_config_of(model.config)
    generator = torch.Generator().manual_seed(0)
    cache = DynamicCache(config=config)
    prefix = torch.randint(3, config.vocab_size, (1, max(context, 1)), generator=generator)  # BOS-only at 0
    with torch.inference_mode():
        for start in range(0, prefix.shape[1], 1024):  # as the engine prefills: in chunks
            chunk = prefix[:, start : start + 1024]
            positions = torch.arange(start, start + chunk.shape[1], dtype=torch.int32)[None]
            model.model.encoder(input_ids=chunk, position_ids=positions, **with_cache(cache))
        canvas = torch.randint(3, config.vocab_size, (1, width), generator=generator)
        positions = torch.arange(prefix.shape[1], prefix.shape[1] + width, dtype=torch.int32)[None]
        previous, times = None, []
        for _ in range(passes + 1):
            started = time.perf_counter()
            out = model(decoder_input_ids=canvas, decoder_position_ids=positions, self_conditioning_logits=previous,
                        **with_cache(cache))  # fmt: skip
            previous = out.logits
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="model folder (default: the built-in model)")
    parser.add_argument("--contexts", type=int, nargs="+", default=[0, 1024, 4096, 16384])
    parser.add_argument("--passes", type=int, default=10)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    loaded = load(args.model, device="cpu")
    model, canvas = loaded.model, loaded.canvas_length
    widths = sorted({w for w in (16, 32, 64, 128, 256) if w < canvas} | {canvas})
    window = getattr(text_config_of(model.config), "sliding_window", None)
    print(f"model {loaded.name}, canvas {canvas}, sliding window {window}, {torch.get_num_threads()} threads")
    ms_per_pass(model, 256, canvas, 3)  # the process's first forwards set up kernels: not a context's cost
    by_context = []
    print(f"{'context':>8} {'ms/pass':>8}   (canvas {canvas})")
    for context in args.contexts:
        ms = ms_per_pass(model, context, canvas, args.passes)
        by_context.append({"context": context, "ms_per_pass": ms})
        print(f"{context:>8} {ms:>8.1f}")
    by_width = []
    print(f"{'canvas':>8} {'ms/pass':>8}   (context 1024)")
    for width in widths:
        ms = ms_per_pass(model, 1024, width, args.passes)
        by_width.append({"canvas": width, "ms_per_pass": ms})
        print(f"{width:>8} {ms:>8.1f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        figures = {"model": loaded.name, "canvas": canvas, "by_context": by_context, "by_canvas": by_width}
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
