"""Every speed benchmark in one command: their tables as they run, their JSON under bench/results/.

    python bench/run_all.py              # the built-in model, CPU
    python bench/run_all.py --quick      # fewer repeats, for a smoke run

Runs, each in its own process (so one's threads, caches and memory do not colour the next):
engine_vs_library.py (the engine, and its library-exact self, against DiffusionGemmaForBlockDiffusion.generate),
parallel_vs_sequential.py, scaling.py and editor_speed.py, then prints the headline figures together.
Figures are only comparable when taken on a quiet machine: run it with nothing else busy.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"

STEPS: list[tuple[str, str, list[str], list[str]]] = [
    # name, script, arguments, --quick arguments
    ("engine_vs_library", "engine_vs_library.py", ["--repeats", "9"], ["--repeats", "1"]),
    ("parallel", "parallel_vs_sequential.py", [], ["--repeats", "1", "--lengths", "16", "64"]),
    ("scaling", "scaling.py", [], ["--passes", "3"]),
    ("editor", "editor_speed.py", [], ["--repeats", "1", "--startup-runs", "1"]),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", nargs="+", choices=[step[0] for step in STEPS], default=None)
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    failed = []
    for name, script, arguments, quick in STEPS:
        if args.only and name not in args.only:
            continue
        out = RESULTS / f"{name}.json"
        print(f"\n== {name} ({script})", flush=True)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, str(BENCH / script), *arguments, *(quick if args.quick else []),
                               "--json", str(out)])  # fmt: skip
        print(f"   ({time.perf_counter() - started:.0f} s)")
        if done.returncode != 0:
            failed.append(name)
    summary = summarise()
    summary["machine"] = f"{platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}"
    (RESULTS / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print("\n== summary")
    for key, value in summary.items():
        print(f"{key:<40} {value}")
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


def summarise() -> dict[str, object]:
    """The headline figures of whatever results are there."""

    def read(name: str) -> dict[str, object] | None:
        path = RESULTS / f"{name}.json"
        return json.loads(path.read_text()) if path.exists() else None

    summary: dict[str, object] = {}
    library = read("engine_vs_library")
    if library:
        summary["engine / library, ms per pass"] = library.get("ratio_ms_per_pass")
        summary["engine / library, whole edit"] = library.get("ratio_edit")
    parallel = read("parallel")
    if parallel:
        rows = parallel.get("rows", [])
        assert isinstance(rows, list)
        summary["parallel speed-up (16/64/128 tokens)"] = " / ".join(f"{row['speedup']:.2f}x" for row in rows)
    editor = read("editor")
    if editor:
        figures = ("window_shown_s", "model_ready_s", "first_pass_ms", "first_pass_after_drag_ms",
                   "first_pass_after_pause_ms", "result_ms", "delay_p99_ms", "busy_mib")  # fmt: skip
        for key in figures:
            if key in editor:
                summary[f"editor {key}"] = round(float(str(editor[key])), 2)
    return summary


if __name__ == "__main__":
    raise SystemExit(main())
