"""Evaluate the built-in model (resources/models/redraft-tiny) on the held-out slice of the corpus.

    python bench/builtin_model_eval.py                 # figures, 10 fills, 5 rewrites
    python bench/builtin_model_eval.py --tune          # also a sampler-settings sweep on other passages

Prints: denoising accuracy at t = 0.25/0.5/0.75 and infill accuracy (model level, one forward);
then, through the engine with the checkpoint's default sampler settings: tokens per forward, passes
per fill, and a fluency figure — the perplexity of filled passages under a word trigram model
trained on the training split, next to the original passages and a shuffled-words baseline — and
real fills and rewrites, unedited. Deterministic given ``--seed``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.cases import fill_cases, rewrite_cases  # noqa: E402
from evaluation.judge import fluency_lm  # noqa: E402
from evaluation.runs import FILL_SLOTS, FillFigures, run_fills, run_rewrites, tune  # noqa: E402

from model import Engine, load  # noqa: E402
from model.training.evaluate import (  # noqa: E402
    HeldOut,
    denoising_accuracy,
    expert_usage,
    heldout_data,
    infill_accuracy,
)

DEFAULT_MODEL = ROOT / "resources" / "models" / "redraft-tiny"
DEFAULT_CORPUS = Path("/work/shared/corpus")


def _interval(figures: FillFigures) -> str:
    low, high = figures.ppl_fill_interval
    return f"(90% bootstrap interval over gaps {low:.0f}-{high:.0f})"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fills", type=int, default=40, help="held-out fills scored for the fill figures")
    p.add_argument("--fill-slots", type=int, default=FILL_SLOTS, help="slots offered per gap (the longest fill)")
    p.add_argument("--show-fills", type=int, default=10)
    p.add_argument("--show-rewrites", type=int, default=5)
    p.add_argument("--rewrites", type=int, default=40, help="held-out sentences rewritten for the rewrite figures")
    p.add_argument(
        "--rewrite-strength", type=float, default=0.7, help="noise level of the rewrites (0.7: the editor's default)"
    )
    p.add_argument(
        "--candidates", type=int, default=4, help="best-of-N fills, as the editor develops them (its default: 4)"
    )
    p.add_argument(
        "--fixed-length", action="store_true", help="best-of-N candidates all at --fill-slots (the editor varies them)"
    )
    p.add_argument("--batches", type=int, default=8, help="batches of 16 canvases per accuracy figure")
    p.add_argument("--tune", action="store_true", help="sweep sampler settings on other held-out passages")
    p.add_argument("--tune-fills", type=int, default=24, help="held-out gaps per sweep setting")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", type=Path, help="also write every figure and sample here")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)

    t0 = time.time()
    loaded = load(args.model, device="cpu")
    engine = Engine(loaded)
    model = loaded.model
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model {args.model} ({n_params / 1e6:.2f}M parameters), defaults {loaded.generation_defaults}")
    data: HeldOut = heldout_data(args.corpus, loaded.tokenizer, seed=args.seed)
    print(
        f"held-out slice: {len(data.sections)} sections, "
        f"{int(data.stories.lengths.sum()) + int(data.books.lengths.sum())} tokens"
    )
    report: dict = {"model": str(args.model), "parameters": n_params}

    print("\n== denoising accuracy (one forward, held-out continuation canvases) ==")
    denoise = denoising_accuracy(model, data, batches=args.batches)
    for level, acc in denoise.items():
        print(f"  t = {level:.2f}: all slots {acc['all']:.3f}   replaced slots {acc['replaced']:.3f}")
    report["denoising_accuracy"] = {str(k): v for k, v in denoise.items()}

    print("\n== infill accuracy (span fully replaced, suffix pinned) ==")
    infill = infill_accuracy(model, data, batches=args.batches)
    print(
        f"  one pass {infill['one_pass']:.3f}   second, self-conditioned pass "
        f"{infill['self_conditioned']:.3f}   ({infill['span_tokens']} span tokens)"
    )
    report["infill_accuracy"] = infill

    usage = expert_usage(model, data)
    print("\n== expert routing (share of top-2 slots per decoder layer) ==")
    for layer, shares in enumerate(usage):
        print(f"  layer {layer}: " + "  ".join(f"{x:.2f}" for x in shares))
    report["expert_usage"] = usage

    print("\ntraining the trigram fluency judge on the training split ...", flush=True)
    lm = fluency_lm(args.corpus, args.seed)

    if args.tune:
        print(f"\n== sampler sweep ({args.tune_fills} other held-out passages) ==")
        tune_cases = fill_cases(data.sections, args.tune_fills, args.seed + 1000)
        report["tuning"] = tune(engine, lm, tune_cases, args.seed + 1000)

    cases = fill_cases(data.sections, args.fills, args.seed)
    figures, fills = run_fills(engine, lm, cases, args.seed, slots=args.fill_slots)
    print(f"\n== fills through the engine (default sampler settings, {args.fill_slots} slots, {len(cases)} gaps) ==")
    print(
        f"  tokens per forward {figures.tokens_per_forward:.2f}"
        f"   passes per fill {figures.passes_per_fill:.1f}   ms per pass {figures.ms_per_pass:.1f}"
    )
    print(
        f"  words per fill {figures.mean_fill_words:.1f} (original gaps {figures.mean_original_words:.1f}),"
        f" empty fills {figures.empty_fills}"
    )
    print(
        f"  trigram perplexity: fills {figures.ppl_fill:.1f} {_interval(figures)}"
        f"   originals {figures.ppl_original:.1f}   shuffled originals {figures.ppl_shuffled:.1f}"
    )
    print(
        f"  the seam alone (two words after the gap): fills {figures.ppl_fill_seam:.1f}"
        f"   originals {figures.ppl_original_seam:.1f}"
    )
    report["fills"] = asdict(figures)
    report["fill_slots"] = args.fill_slots

    if args.candidates > 1:
        best, best_fills = run_fills(
            engine, lm, cases, args.seed, candidates=args.candidates, slots=args.fill_slots,
            vary_length=not args.fixed_length,
        )
        lengths = "all at the slots offered" if args.fixed_length else "at several lengths"
        print(
            f"\n== the same gaps, best of {args.candidates} candidates ({lengths}) by the model's own score"
            " (the editor) ==\n"
            f"  trigram perplexity: fills {best.ppl_fill:.1f} {_interval(best)}   seam {best.ppl_fill_seam:.1f}\n"
            f"  words per fill {best.mean_fill_words:.1f}   passes per fill {best.passes_per_fill:.1f}"
            f"   ms per pass {best.ms_per_pass:.1f}   empty fills {best.empty_fills}"
        )
        report["fills_best_of"] = {"candidates": args.candidates, "vary_length": not args.fixed_length, **asdict(best)}
        fills = best_fills  # the samples shown are what the editor would show

    print(
        f"\n== {args.show_fills} fills (held-out passages; [gap] marks the filled place;"
        f" best of {args.candidates}) =="
    )
    shown = []
    for case, fill in list(zip(cases, fills, strict=True))[: args.show_fills]:
        before = case.prefix[-160:].replace("\n", " / ")
        after = case.suffix[:100].replace("\n", " / ")
        print(f"\n[{case.source}] …{before}[{fill}]{after}…\n  original: [{case.gap}]")
        shown.append({**asdict(case), "fill": fill})
    report["shown_fills"] = shown

    rewrite_count = max(args.rewrites, args.show_rewrites)
    rewrite_figures, rewritten = run_rewrites(
        engine,
        lm,
        rewrite_cases(data.sections, rewrite_count, args.seed),
        args.seed,
        args.rewrite_strength,
        args.candidates,
        vary_length=not args.fixed_length,
    )
    low, high = rewrite_figures.ppl_rewrite_interval
    print(
        f"\n== rewrites of {rewrite_count} held-out sentences (strength {args.rewrite_strength}, best of"
        f" {args.candidates}) ==\n"
        f"  trigram perplexity: rewrites {rewrite_figures.ppl_rewrite:.1f} (90% interval {low:.0f}-{high:.0f})"
        f"   originals {rewrite_figures.ppl_original:.1f}\n"
        f"  the seam alone: rewrites {rewrite_figures.ppl_rewrite_seam:.1f}"
        f"   originals {rewrite_figures.ppl_original_seam:.1f}\n"
        f"  length {rewrite_figures.length_ratio:.2f} x the sentence's, {rewrite_figures.words_kept:.0%} of its"
        f" words kept, {rewrite_figures.passes_per_rewrite:.1f} passes"
    )
    report["rewrite_figures"] = asdict(rewrite_figures)

    print(f"\n== {args.show_rewrites} rewrites (a held-out sentence rewritten in place; best of {args.candidates}) ==")
    rewrites = []
    for case, (text, passes) in list(zip(rewrite_cases(data.sections, rewrite_count, args.seed), rewritten,
                                         strict=True))[: args.show_rewrites]:
        print(f"\n[{case.source}] before: {case.gap}\n  after:  {text}  ({passes} passes)")
        rewrites.append({**asdict(case), "rewrite": text, "passes": passes})
    report["rewrites"] = rewrites
    report["rewrite_strength"] = args.rewrite_strength
    report["candidates"] = args.candidates
    print(f"\nevaluated in {time.time() - t0:.0f}s")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
