"""What parallel decoding buys: the same network, several tokens a pass against one token a pass.

    python bench/parallel_vs_sequential.py                   # the built-in model
    python bench/parallel_vs_sequential.py --json bench/results/parallel.json

Fills of 16, 64 and 128 tokens after about 1k tokens of context (of which the built-in model reads its
``max_context_tokens``, 128), with no suffix. "Parallel" is the
published entropy-bound sampler (a pass accepts every token until their summed entropy passes the
bound); "one a pass" is the same engine and network with a bound so small that each pass accepts only
its single most certain token (and as many passes as tokens). Polish rounds and the left-to-right bias
are off in both, so the difference is the acceptance rule alone. Prints passes, tokens per forward,
wall time and the speed-up; medians over ``--repeats`` seeds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model import DenoiseOptions, EditRequest, Engine, load  # noqa: E402

WORDS = (
    "the keeper climbed the stairs of the lighthouse every evening and counted the steps as his father had "
    "done before him while the sea turned grey and the gulls went quiet over the harbour"
).split()
ONE_A_PASS_BOUND = 1e-12  # below any token's entropy: only the single most certain token is accepted


def run(engine: Engine, prefix: str, tokens: int, options: DenoiseOptions, seeds: range) -> dict[str, float]:
    rows = []
    for seed in seeds:
        request = EditRequest(prefix=prefix, mode="fill", max_new_tokens=tokens, seed=seed, vary_length=False,
                              options=options)  # fmt: skip
        started = time.perf_counter()
        result = engine.run(request)
        rows.append((result.passes, result.tokens_per_forward, (time.perf_counter() - started) * 1000))
    return {
        "passes": statistics.median(r[0] for r in rows),
        "tokens_per_forward": statistics.median(r[1] for r in rows),
        "wall_ms": statistics.median(r[2] for r in rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="model folder (default: the built-in model)")
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 64, 128])
    parser.add_argument("--context-words", type=int, default=800, help="about 1k tokens")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    engine = Engine(load(args.model, device="cpu"))
    prefix = " ".join(WORDS[i % len(WORDS)] for i in range(args.context_words)) + "."
    common: dict[str, Any] = {"left_to_right_bias": 0.0, "polish_rounds": 0, "wide_entropy_bound": 0.0}
    engine.run(EditRequest(prefix=prefix, mode="fill", max_new_tokens=8, seed=0))  # warm-up
    print(f"{'tokens':>6} {'mode':>11} {'passes':>7} {'tok/fwd':>8} {'wall ms':>9} {'speed-up':>9}")
    rows = []
    for tokens in args.lengths:
        seeds = range(1, args.repeats + 1)
        parallel = run(engine, prefix, tokens, DenoiseOptions(**common), seeds)
        # One pass for each slot of a block (a block holds at most a canvas of them).
        one_each = DenoiseOptions(
            entropy_bound=ONE_A_PASS_BOUND, max_denoising_steps=min(tokens, engine.loaded.canvas_length), **common
        )
        sequential = run(engine, prefix, tokens, one_each, seeds)
        speedup = sequential["wall_ms"] / parallel["wall_ms"]
        for mode, figures in (("parallel", parallel), ("one a pass", sequential)):
            print(f"{tokens:>6} {mode:>11} {figures['passes']:>7.0f} {figures['tokens_per_forward']:>8.2f} "
                  f"{figures['wall_ms']:>9.0f} {speedup if mode == 'parallel' else 1.0:>8.2f}x")
        rows.append({"tokens": tokens, "parallel": parallel, "one_a_pass": sequential, "speedup": speedup})
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"model": engine.loaded.name, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
