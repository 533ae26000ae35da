"""How fast the engine develops text: ms per pass and tokens per second, by prefix length.

    python bench/engine_speed.py                 # the built-in model
    python bench/engine_speed.py --model PATH    # any checkpoint folder
    python bench/engine_speed.py --tiny          # a tiny random model (no checkpoint needed)
    python bench/engine_speed.py --candidates 4  # as the editor runs it: four candidates in one batch

Prints one row per prefix length: passes, ms per pass, tokens per forward, new tokens per second
(of the first candidate, over its passes), and the whole edit's wall time, prefill included.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from model import DenoiseOptions, EditRequest, Engine, load
from model.checkpoint.tiny import build_tiny_checkpoint

WORDS = (
    "the keeper climbed the stairs of the lighthouse every evening and counted the steps as his "
    "father had done before him while the sea turned grey and the gulls went quiet over the harbour"
).split()


def words(count: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(count))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--prefix-words", type=int, nargs="+", default=[0, 200, 1500])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--candidates", type=int, default=1)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    spec: str | Path | None = args.model
    if args.tiny:
        spec = build_tiny_checkpoint(Path(tempfile.mkdtemp()) / "tiny")
    started = time.perf_counter()
    loaded = load(spec, device=args.device)
    print(f"model {loaded.name} on {loaded.describe_device()} ({loaded.precision}), "
          f"canvas {loaded.canvas_length}, loaded in {time.perf_counter() - started:.1f} s, "
          f"{torch.get_num_threads()} threads, {args.candidates} candidate(s)")
    engine = Engine(loaded)
    canvas = loaded.canvas_length
    print(f"{'prefix tokens':>13} {'passes':>7} {'ms/pass':>8} {'tok/fwd':>8} {'new tok/s':>10} {'edit ms':>8}")
    for count in args.prefix_words:
        prefix = words(count) or "The"
        request = EditRequest(prefix=prefix, suffix=" " + words(40), mode="fill", max_new_tokens=canvas // 2,
                              candidates=args.candidates, options=DenoiseOptions())
        engine.run(request.with_seed(0))  # warm-up
        runs, edit_ms = [], []
        for seed in range(1, args.repeats + 1):
            started = time.perf_counter()
            runs.append(engine.run(request.with_seed(seed)))
            edit_ms.append((time.perf_counter() - started) * 1000)
        ms = statistics.median(r.ms_per_pass for r in runs)
        passes = statistics.median(r.passes for r in runs)
        per_forward = statistics.median(r.tokens_per_forward for r in runs)
        new_tokens = sum(len(r.token_ids[0]) for r in runs)
        seconds = sum(sum(r.pass_ms) for r in runs) / 1000
        print(f"{runs[0].prompt_tokens:>13} {passes:>7.0f} {ms:>8.1f} {per_forward:>8.2f} "
              f"{new_tokens / seconds:>10.1f} {statistics.median(edit_ms):>8.0f}")


if __name__ == "__main__":
    main()
