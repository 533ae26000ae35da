"""One command per call of a lent GPU: the 26B figures, engine vs library, and the next built-in model.

A lent machine (an H100; see "On a lent GPU" in README.md) gives 30 minutes in commands of at most
10, takes at most 64 MiB of files in (the working tree plus carried folders) and gives back at most 8
files of 16 MiB (64 MiB together), and can download nothing. Its image has torch and Triton but an old
transformers and no bitsandbytes. So everything is prepared here and each step is one command there::

    python bench/gpu_runbook.py prepare        # here: wheels and corpus shards into .gpu-carry/, sizes checked
    python bench/gpu_runbook.py plan           # the session plan: each run call's command and carry list
    python bench/gpu_runbook.py cpu-speed      # here: ms per pass on this CPU of each size train-a may choose
    python3 bench/gpu_runbook.py bench26b      # there: 26B-A4B at 4 bit (experts on the GPU or in host memory,
                                               # 12/16 GiB caps) and bf16, the NF4 kernel checked
    python3 bench/gpu_runbook.py engine-vs-library
    python3 bench/gpu_runbook.py train-a       # there: pick a size from measured speed, train, checkpoint
    python bench/gpu_runbook.py take-back train-a FILES_AT   # here: keep the checkpoint pieces for train-b
    python3 bench/gpu_runbook.py train-b       # there: resume, finish, export, evaluate
    python bench/gpu_runbook.py take-back train-b FILES_AT   # here: reassemble the model into runs/gpu/
    python bench/gpu_runbook.py keep-adapted FILES_AT   # here: adapt-transplant's pieces into main's history
    python bench/gpu_runbook.py restore-adapted          # here, a fresh checkout: them back, packed to carry
    python bench/gpu_runbook.py readme-table FILES_AT/bench26b.json --write   # the README's 26B table
    python bench/gpu_runbook.py --dry-run      # every step at toy scale on CPU (what the tests run)

Each device step installs the carried wheels into /tmp (then re-executes itself with them on the path),
keeps to its time budget, writes everything it measured to ``$OUT`` as it goes (a timeout still returns
what was done), and checks ``$OUT`` against the limits of what comes back before it exits.

This file is the command line; each step and what they share live in ``bench/runbook/`` (its
``__init__`` names the modules). The names tests and other scripts use are importable from here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess  # noqa: F401  (tests replace subprocess.run through this module)
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from runbook.adapt import (  # noqa: E402
    prepare_corpus_adapt,
    prepare_transplant,
    step_adapt,
    step_transplant_carry,
    take_back_adapt,
)
from runbook.bench26b import readme_rows, step_bench26b, write_readme_table  # noqa: E402
from runbook.common import (  # noqa: E402
    BACK_FILE_LIMIT,
    BACK_FILES,
    BACK_PIECES,
    CARRY,
    CARRY_LIMIT,
    MIB,
    PIECE_BYTES,
    SHARED,
    SHIP_LIMIT,
    SITE_ENV,
    T0_ENV,
    WORK,
    Report,
    elapsed_s,
    logged,
    say,
)
from runbook.corpus import prepare_corpus  # noqa: E402
from runbook.dry_run import dry_run  # noqa: E402
from runbook.plan import CALLS, STEP_BUDGET, carry_budget, plan_markdown  # noqa: E402
from runbook.sizing import LADDER, TOY_LADDER, candidate_parameters, choose_size, parameter_cap  # noqa: E402
from runbook.training import step_train_a, step_train_b, train_in_process, train_keeping_checkpoint  # noqa: E402
from runbook.transfer import check_back, cold_resume, join_pieces, split_file, take_back, tree_bytes  # noqa: E402
from runbook.versus_library import step_engine_vs_library  # noqa: E402
from runbook.wheels import (  # noqa: E402
    _rewrite_wheel,
    check_wheels,
    prepare_wheels,
    slim_bitsandbytes,
    slim_transformers,
    use_carried_wheels,
)

__all__ = [
    "BACK_FILES", "BACK_FILE_LIMIT", "BACK_PIECES", "CALLS", "CARRY_LIMIT", "PIECE_BYTES", "SHIP_LIMIT",
    "cold_resume", "parameter_cap", "tree_bytes", "LADDER", "MIB", "SITE_ENV", "T0_ENV", "TOY_LADDER", "Report",
    "_rewrite_wheel", "candidate_parameters", "check_back", "choose_size", "join_pieces", "main", "plan_markdown",
    "slim_bitsandbytes", "slim_transformers", "split_file", "use_carried_wheels", "write_readme_table",
]  # fmt: skip

# The trainer the training steps run in this process; a name here so a test can replace it.
_train = train_in_process


def _train_keeping_checkpoint(argv: list[str], run_dir: Path, report: Report) -> dict[str, Any]:
    """:func:`runbook.training.train_keeping_checkpoint` with this module's ``_train``."""
    return train_keeping_checkpoint(argv, run_dir, report, train=_train)


def out_folder(dry_run: bool) -> Path:
    if os.environ.get("OUT"):
        return Path(os.environ["OUT"])
    return Path(tempfile.mkdtemp(prefix="redraft-gpu-out-" if not dry_run else "redraft-dry-out-"))


def run_step(step: str, args: argparse.Namespace) -> int:
    needs_bnb = step == "bench26b"
    # transplant-carry needs no library; it installs the wheels only when its call carries them (the first).
    if not args.dry_run and (step != "transplant-carry" or any((args.carry / "wheels").glob("*.whl"))):
        use_carried_wheels(args.carry, needs_bnb)
    os.environ.setdefault(T0_ENV, str(time.time()))
    out = out_folder(args.dry_run)
    budget_s = args.budget_s or STEP_BUDGET[step]
    with logged(out, step):
        say(f"{step}{' (dry run)' if args.dry_run else ''}: writing to {out}, budget {budget_s:.0f} s")
        if step == "transplant-carry":
            step_transplant_carry(out, args.dry_run, budget_s, args.carry, args.work)
        elif step == "adapt-transplant":
            step_adapt(out, args.dry_run, budget_s, args.carry, args.work)
        elif step == "bench26b":
            step_bench26b(out, args.dry_run, budget_s)
        elif step == "engine-vs-library":
            step_engine_vs_library(out, args.dry_run, budget_s)
        elif step == "train-a":
            step_train_a(out, args.dry_run, budget_s, args.carry, args.work)
        else:
            step_train_b(out, args.dry_run, budget_s, args.carry, args.work)
        problems = check_back(out)
        say(f"done in {elapsed_s():.0f} s; " + ("everything in $OUT comes back" if not problems else
                                                 f"NOT all of $OUT comes back: {problems}"))  # fmt: skip
    return 1 if problems else 0


def print_or_pipe(text: str) -> int:
    """Print ``text``; a reader that stops early (``plan | head``) ends the command quietly, not with a
    BrokenPipeError traceback (stdout is pointed at devnull so the interpreter's final flush fails no more)."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", nargs="?", default=None,
                        choices=["prepare", "prepare-transplant", "plan", "cpu-speed", "transplant-carry",
                                 "adapt-transplant", "bench26b", "engine-vs-library", "train-a", "train-b",
                                 "take-back", "readme-table", "carry-check", "keep-adapted",
                                 "restore-adapted"])  # fmt: skip
    parser.add_argument("rest", nargs="*", help="take-back: STEP FILES_AT; keep-adapted: FILES_AT; readme-table: JSON")
    parser.add_argument(
        "--transplant",
        type=Path,
        default=ROOT / "runs" / "transplant",
        help="prepare-transplant: the transplant_build folder (or the last adapted model)",
    )
    parser.add_argument(
        "--resume",
        type=Path,
        default=None,
        help="prepare-transplant: the last session's resume.pt (take-back adapt-transplant)",
    )
    parser.add_argument("--dry-run", action="store_true", help="toy scale on CPU (with no step: every step)")
    parser.add_argument("--carry", type=Path, default=CARRY)
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--budget-s", type=float, default=None, help="a step's own time limit (default: the plan's)")
    parser.add_argument("--write", action="store_true", help="readme-table: write README.md")
    parser.add_argument("--threads", type=int, default=None, help="cpu-speed: torch threads (default: torch's)")
    parser.add_argument("--json", type=Path, default=None, help="cpu-speed: also write the rows here")
    args = parser.parse_args(argv)
    if args.step is None:
        if not args.dry_run:
            parser.error("name a step, or --dry-run for all of them")
        summary = dry_run(out_folder(True))
        bad: dict[str, Any] = {step: s["back_problems"] for step, s in summary["steps"].items() if s["back_problems"]}
        wheels = summary["wheels"]
        if wheels.get("problems") or not wheels.get("import_check", {"ok": True})["ok"]:
            bad["wheels"] = wheels
        print(json.dumps({"seconds": summary["seconds"], "steps": summary["steps"], "wheels": summary["wheels"]},
                         indent=1, default=str))  # fmt: skip
        return 1 if bad else 0
    if args.step == "prepare":
        args.carry.mkdir(parents=True, exist_ok=True)
        wheels = prepare_wheels(args.carry, args.carry / "downloads")
        corpus = prepare_corpus(args.carry, SHARED)
        budget = carry_budget(args.carry)
        text = json.dumps({"wheels": wheels, "corpus": corpus, **budget}, indent=1)
        (args.carry / "budget.json").write_text(text)
        (args.carry / "PLAN.md").write_text(plan_markdown() + "\n")
        print(json.dumps({"wheels": wheels, **budget}, indent=1))
        return 1 if budget["over"] or check_wheels(args.carry / "wheels")["problems"] else 0
    if args.step == "carry-check":  # the parts were sized to the tree of their day, which may have grown since
        budget = carry_budget()
        print(json.dumps(budget, indent=1))
        return 1 if budget["over"] else 0
    if args.step == "prepare-transplant":
        args.carry.mkdir(parents=True, exist_ok=True)
        corpus = prepare_corpus_adapt(args.carry, SHARED)
        packed = prepare_transplant(args.transplant, args.carry, args.resume)
        print(json.dumps({"corpus-adapt": corpus, **packed}, indent=1))
        return 0
    if args.step == "plan":
        return print_or_pipe(plan_markdown())
    if args.step == "cpu-speed":
        from runbook.cpu_speed import cpu_speed, cpu_speed_table

        rows = cpu_speed(threads=args.threads)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1) + "\n")
        return print_or_pipe("\n".join(cpu_speed_table(rows)))
    if args.step == "take-back":
        if len(args.rest) != 2:
            parser.error("take-back STEP FILES_AT")
        if args.rest[0] == "adapt-transplant":
            print(take_back_adapt(Path(args.rest[1]), args.carry))
            return 0
        print(take_back(args.rest[0], Path(args.rest[1]), args.carry))
        return 0
    if args.step == "keep-adapted":  # after take-back adapt-transplant: the pieces into main's history
        if len(args.rest) != 1:
            parser.error("keep-adapted FILES_AT")
        from runbook.history import keep_adapted

        print(keep_adapted(Path(args.rest[0]), ROOT / "runs" / "gpu" / "adapt" / "model"))
        return 0
    if args.step == "restore-adapted":  # a fresh checkout: the last kept session's model, packed for the next
        from runbook.history import restore_adapted

        adapted = ROOT / "runs" / "gpu" / "adapt"
        prepare_transplant(args.transplant, args.carry)  # the base transplant the pieces were trained from
        model = take_back_adapt(restore_adapted(adapted / "restored"), args.carry)
        packed = prepare_transplant(model, args.carry, adapted / "resume.pt")
        print(json.dumps({"model": str(model), "corpus-adapt": prepare_corpus_adapt(args.carry, SHARED), **packed},
                         indent=1))  # fmt: skip
        return 0
    if args.step == "readme-table":
        if len(args.rest) != 1:
            parser.error("readme-table JSON")
        data = json.loads(Path(args.rest[0]).read_text())
        print("\n".join(readme_rows(data)))
        if args.write:
            write_readme_table(data, ROOT / "README.md")
        return 0
    return run_step(args.step, args)


if __name__ == "__main__":
    raise SystemExit(main())
