"""The two ways to show a server edit, measured against a running vLLM: fill quality and latency per edit.

    python bench/server_modes.py --server http://127.0.0.1:8000 [--fills 24] [--model redraft-tiny]

``one-request`` sends each block as one request (the writer sees a moving veil until the text arrives);
``per-pass`` sends one request per denoising pass (every pass shows). Both fill the same held-out gaps
(``evaluation.cases.fill_cases``) through ``ServerEngine.run``, the editor's path, and are judged by the built-in
model's evaluation (``evaluation.judge``'s trigram model): perplexity of the fills, of the two words after them
(the seam), and wall-clock seconds per edit, median and 90th percentile. The modes alternate gap by gap, so
a machine that gets busier part-way through slows both alike. Prints a table and writes
``bench/results/server_modes.json``. A server's noise is its own, so fills are not reproducible run to run.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.cases import Case, fill_cases  # noqa: E402
from evaluation.judge import bootstrap_interval, fluency_lm, judged, pooled_ppl  # noqa: E402
from evaluation.runs import FILL_SLOTS  # noqa: E402

from model import EditRequest  # noqa: E402
from model.server import SERVER_PASSES, Endpoint, PassMode, ServerEngine, connect  # noqa: E402
from model.training.data import read_sections, split_sections  # noqa: E402
from model.training.ngram import TrigramLM, words  # noqa: E402

DEFAULT_CORPUS = Path("/work/shared/corpus")
RESULTS = ROOT / "bench" / "results" / "server_modes.json"


@dataclass
class ModeFigures:
    mode: str
    fills: int
    ppl_fill: float
    ppl_fill_interval: tuple[float, float]  # 90% bootstrap interval over gaps
    ppl_fill_seam: float
    empty_fills: int
    mean_fill_words: float
    requests_per_edit: float  # server passes (per-pass) or blocks (one-request)
    seconds_median: float
    seconds_p90: float


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def measure(
    engines: dict[str, ServerEngine], lm: TrigramLM, cases: list[Case], slots: int
) -> tuple[list[ModeFigures], dict[str, list[str]]]:
    logs: dict[str, list[list[float]]] = {mode: [] for mode in engines}
    seams: dict[str, list[list[float]]] = {mode: [] for mode in engines}
    seconds: dict[str, list[float]] = {mode: [] for mode in engines}
    passes: dict[str, list[int]] = {mode: [] for mode in engines}
    fills: dict[str, list[str]] = {mode: [] for mode in engines}
    for i, case in enumerate(cases):
        # The editor's fill request (one candidate: the evaluation's figure; more only multiply requests).
        request = EditRequest(prefix=case.prefix, suffix=case.suffix, mode="fill", max_new_tokens=slots)
        order = list(engines) if i % 2 == 0 else list(reversed(engines))
        for mode in order:
            started = time.perf_counter()
            result = engines[mode].run(request)
            seconds[mode].append(time.perf_counter() - started)
            whole, seam = judged(lm, case, words(result.text))
            logs[mode].append(whole)
            seams[mode].append(seam)
            passes[mode].append(result.passes)
            fills[mode].append(result.text)
        print(
            f"  gap {i + 1:2d}/{len(cases)}  "
            + "  ".join(f"{mode} {seconds[mode][-1]:5.1f} s" for mode in engines),
            flush=True,
        )
    figures = [
        ModeFigures(
            mode=mode,
            fills=len(cases),
            ppl_fill=pooled_ppl(logs[mode]),
            ppl_fill_interval=bootstrap_interval(logs[mode], 0),
            ppl_fill_seam=pooled_ppl(seams[mode]),
            empty_fills=sum(1 for text in fills[mode] if not text.strip()),
            mean_fill_words=statistics.mean(len(words(text)) for text in fills[mode]),
            requests_per_edit=statistics.mean(passes[mode]),
            seconds_median=statistics.median(seconds[mode]),
            seconds_p90=_p90(seconds[mode]),
        )
        for mode in engines
    ]
    return figures, fills


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", required=True, help="the vLLM server's address, e.g. http://127.0.0.1:8000")
    p.add_argument("--model", default=None, help="the served model (default: the first the server lists)")
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fills", type=int, default=24, help="held-out gaps, each filled once per mode")
    p.add_argument("--fill-slots", type=int, default=FILL_SLOTS, help="slots offered per gap (the longest fill)")
    p.add_argument("--machine", default="", help="a label for the JSON: where the server ran")
    p.add_argument("--json", type=Path, default=RESULTS)
    args = p.parse_args(argv)

    endpoint = Endpoint(args.server, timeout_s=600)
    info = connect(endpoint, args.model)
    print(info.describe())
    modes: tuple[PassMode, ...] = SERVER_PASSES
    engines: dict[str, ServerEngine] = {mode: ServerEngine(endpoint, info, passes=mode) for mode in modes}
    print("training the trigram judge on the training split ...", flush=True)
    lm = fluency_lm(args.corpus, args.seed)
    _, heldout = split_sections(read_sections(args.corpus), 0.02, args.seed)
    cases = fill_cases(heldout, args.fills, args.seed)

    # Warm the server once (its first request compiles and fills caches), unmeasured.
    engines[modes[0]].run(EditRequest(prefix=cases[0].prefix, suffix=cases[0].suffix, mode="fill", max_new_tokens=8))
    figures, fills = measure(engines, lm, cases, args.fill_slots)
    original = pooled_ppl([judged(lm, case, words(case.gap))[0] for case in cases])

    print(f"\n{info.name}, {len(cases)} held-out gaps of up to {args.fill_slots} slots, one candidate")
    print(f"{'mode':12s} {'ppl fill':>9s} {'90% interval':>14s} {'seam':>7s} {'empty':>6s} {'words':>6s}"
          f" {'requests':>9s} {'median s':>9s} {'p90 s':>7s}")
    for row in figures:
        low, high = row.ppl_fill_interval
        print(f"{row.mode:12s} {row.ppl_fill:9.0f} {f'{low:.0f}-{high:.0f}':>14s} {row.ppl_fill_seam:7.0f}"
              f" {row.empty_fills:6d} {row.mean_fill_words:6.1f} {row.requests_per_edit:9.1f}"
              f" {row.seconds_median:9.1f} {row.seconds_p90:7.1f}")
    print(f"{'original':12s} {original:9.0f}")
    for mode, texts in fills.items():
        print(f"\n{mode}, the first fills:")
        for text in texts[:4]:
            print(f"  {text!r}")

    args.json.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "server": info.describe(),
        "machine": args.machine,
        "fill_slots": args.fill_slots,
        "ppl_original": original,
        "modes": [asdict(row) for row in figures],
        "fills": fills,
        "gaps": [case.gap for case in cases],
    }
    args.json.write_text(json.dumps(report, indent=2))
    print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
