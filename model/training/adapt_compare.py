"""Which adaptation choice lowers the held-out loss fastest per token: a measured table, on CPU.

    python -m model.training.adapt_compare --transplant runs/transplant-4 --runs-dir runs/adapt-compare \\
        --steps 400 --eval-every 25

Every arm starts from the same transplant folder (``transplant_build``; a smaller one, fewer layers, is
what a CPU can compare) and sees the same examples and noise (same seed); only the recipe differs:
the uniform-noise objective at three learning rates, distillation from Gemma 3 (the whole 270M, run
causally, as the teacher), attention-mask annealing, and both. The arms advance in turns of
``--eval-every`` steps, each resuming from its own checkpoint (``adapt.run``), so whatever time there is
gives every arm the same number of steps, and a stopped comparison continues where it stopped. The table
(``table.md`` in the runs folder, printed at the end) has each arm's held-out loss at each evaluated step.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import torch
from transformers import AutoTokenizer, DiffusionGemmaForBlockDiffusion

from model.checkpoint.building import MODEL_BUILDING
from model.training.adapt import Recipe, run
from model.training.data import TokenizedPool, read_sections, split_sections, tokenize_sections
from model.training.transplant_source import DEFAULT_CACHE, load_gemma3

ARMS: dict[str, dict[str, float | int]] = {
    "uniform lr 1e-4": {"lr": 1e-4},
    "uniform lr 3e-5": {"lr": 3e-5},
    "uniform lr 3e-4": {"lr": 3e-4},
    "uniform lr 1e-3": {"lr": 1e-3},
    "distill lr 3e-4": {"lr": 3e-4, "distill": 1.0},
    "anneal lr 3e-4": {"lr": 3e-4, "anneal_steps": -1},  # -1: --anneal-steps
    "distill+anneal lr 3e-4": {"lr": 3e-4, "distill": 1.0, "anneal_steps": -1},
}


def slug(name: str) -> str:
    return name.replace(" ", "_").replace("+", "-")


def pools(transplant: Path, runs_dir: Path, corpus: Path, max_bytes: int) -> tuple[list[TokenizedPool], ...]:
    """(train pools, held-out pools) in the transplant's vocabulary, tokenized once into ``runs_dir/pools``."""
    folder = runs_dir / "pools"
    names = ["train_stories", "train_books", "heldout_stories", "heldout_books"]
    if not all((folder / f"{n}.npz").exists() for n in names):
        tokenizer = AutoTokenizer.from_pretrained(str(transplant))
        train, heldout = split_sections(read_sections(corpus, max_bytes), 0.02, 0)
        groups = {
            "train_stories": [s for s in train if s.is_story],
            "train_books": [s for s in train if not s.is_story],
            "heldout_stories": [s for s in heldout if s.is_story],
            "heldout_books": [s for s in heldout if not s.is_story],
        }
        folder.mkdir(parents=True, exist_ok=True)
        for name, group in groups.items():
            tokenize_sections(group, tokenizer).save(folder / f"{name}.npz")
    loaded = {n: TokenizedPool.load(folder / f"{n}.npz") for n in names}
    return [loaded["train_stories"], loaded["train_books"]], [loaded["heldout_stories"], loaded["heldout_books"]]


def table(runs_dir: Path, arms: list[str]) -> str:
    """The measured table: held-out denoising loss per arm at each evaluated step (and canvas tokens)."""
    logs = {}
    for name in arms:
        path = runs_dir / slug(name) / "log.json"
        if path.exists():
            logs[name] = json.loads(path.read_text())
    steps = sorted({int(e["step"]) for log in logs.values() for e in log})
    if not logs:
        return "(no runs yet)\n"
    tokens = {int(e["step"]): int(e["tokens"]) for log in logs.values() for e in log}
    lines = [
        "| arm | " + " | ".join(f"step {s} ({tokens[s]} tok)" for s in steps) + " | s/step |",
        "|---|" + "---:|" * (len(steps) + 1),
    ]
    for name, log in logs.items():
        at = {int(e["step"]): e for e in log}
        cells = [f"{at[s]['loss']:.3f} ({100 * at[s]['accuracy']:.1f} %)" if s in at else "" for s in steps]
        last = log[-1]
        per_step = last["seconds"] / last["step"] if last["step"] else float("nan")
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {per_step:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--transplant", type=Path, required=True, help="a transplant_build folder")
    p.add_argument("--runs-dir", type=Path, required=True)
    p.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus"))
    p.add_argument("--max-bytes-per-file", type=int, default=400_000)
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the dequantized Gemma 3 (the teacher)")
    p.add_argument("--arms", default=",".join(ARMS), help="comma-separated arm names (default: all)")
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--anneal-steps", type=int, default=60, help="the annealing arms open the canvas over this many")
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--warmup-steps", type=int, default=10)
    p.add_argument("--canvas", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--until", default=None, help="stop starting new turns after this UTC time (HH:MM)")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    arms = [a for a in args.arms.split(",") if a]
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        raise SystemExit(f"unknown arms {unknown}; known: {list(ARMS)}")
    train, heldout = pools(args.transplant, args.runs_dir, args.corpus, args.max_bytes_per_file)
    keep = torch.tensor(json.loads((args.transplant / "source_vocabulary.json").read_text())["kept_ids"])
    teacher = None
    if any(float(ARMS[a].get("distill", 0)) > 0 for a in arms):
        teacher, _ = load_gemma3(args.cache)
    # A constant rate after a short warmup: the question is the first steps' slope, and a comparison that
    # has more time can be extended (--steps) without changing what the earlier steps did.
    base = Recipe(max_steps=args.steps, batch_size=args.batch_size, canvas=args.canvas, seed=args.seed,
                  warmup_steps=args.warmup_steps, min_lr_ratio=1.0)  # fmt: skip
    recipes = {}
    for name in arms:
        settings = dict(ARMS[name])
        if settings.get("anneal_steps") == -1:
            settings["anneal_steps"] = args.anneal_steps
        recipes[name] = replace(base, **settings)  # type: ignore[arg-type]
    for turn_end in range(args.eval_every, args.steps + 1, args.eval_every):
        if args.until and time.strftime("%H:%M", time.gmtime()) >= args.until:
            print(f"stopping: it is past {args.until} UTC", flush=True)
            break
        for name in arms:
            with MODEL_BUILDING:
                model = DiffusionGemmaForBlockDiffusion.from_pretrained(str(args.transplant), dtype=torch.float32)
            run(
                model,
                train,
                heldout,
                recipes[name],
                args.runs_dir / slug(name),
                teacher=teacher if recipes[name].distill > 0 else None,
                keep_ids=keep,
                eval_every=args.eval_every,
                stop_at_step=turn_end,
            )
        (args.runs_dir / "table.md").write_text(table(args.runs_dir, arms))
        print(table(args.runs_dir, arms), flush=True)


if __name__ == "__main__":
    main()
