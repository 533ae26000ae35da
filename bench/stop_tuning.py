"""Fewer passes at the same judged quality: the built-in model's stopping rule, temperatures and polish rounds.

    python bench/stop_tuning.py                    # 24 sentences and 24 gaps per setting, four drafts each
    python bench/stop_tuning.py --cases 8          # a quicker look
    python bench/stop_tuning.py --step caps --cases 16 --seed 1   # the step cap: 48, 40, 32 passes
    python bench/stop_tuning.py --step wide --cases 16 --seed 1   # the wide canvas's entropy bound: 0, 4, 8, 16

A sentence's four drafts ran 48 passes and six polish rounds (two forwards each) on the built-in model: its
mean entropy never gets below DiffusionGemma's confidence threshold (0.005 nats), so the early stop never
fires. Each setting here rewrites held-out sentences and fills held-out gaps as the editor asks (four
candidates; rewrites at strength 0.7) and reports passes per edit, whole-edit seconds and the trigram judge's
perplexity of the shown draft in its place (``evaluation.judge``, trained on the training split).

Tuned on the *even* held-out sections only (:func:`tuning_sections`); ``bench/peers.py`` measures on the odd
ones, so no setting is chosen on the cases it is then shown on.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from evaluation.cases import (  # noqa: E402
    Case,  # noqa: E402
    fill_cases,
    rewrite_cases,
)
from evaluation.judge import (  # noqa: E402
    bootstrap_interval,
    fluency_lm,  # noqa: E402
    judged,
    pooled_ppl,
)
from evaluation.runs import (  # noqa: E402
    FILL_SLOTS,  # noqa: E402
    FillFigures,
    run_fills,
    run_rewrites,
)
from evaluation.setup import engine_and_held_out, held_out_parser  # noqa: E402

import model.edit.engine as engine_module  # noqa: E402
from model import DenoiseOptions, EditRequest, Engine  # noqa: E402
from model.edit import canvas  # noqa: E402
from model.edit.sampling import StableAndConfident  # noqa: E402
from model.edit.shape import shape_request  # noqa: E402
from model.training.data import Section  # noqa: E402
from model.training.ngram import words  # noqa: E402

# The built-in model's settings at the start of this work (redraft_sampler.json, generation_config.json).
SESSION_START: dict[str, Any] = {
    "max_denoising_steps": 48, "t_min": 0.4, "t_max": 0.8, "entropy_bound": 1.0, "stability_threshold": 1,
    "confidence_threshold": 0.005, "left_to_right_bias": 1.0, "polish_rounds": 6, "wide_entropy_bound": 0.0,
}  # fmt: skip

# Rows of the second step: each changes the checkpoint's settings (redraft_sampler.json, generation_config.json)
# by what it names; ``--rule`` adds a stopping rule chosen from the first step to the rows that name none.
GRID: list[dict[str, Any]] = [
    {**SESSION_START},
    {},
    {"polish_rounds": 3},
    {"t_min": 0.3, "t_max": 0.6},
    {"t_min": 0.3, "t_max": 0.6, "polish_rounds": 3},
    {"polish_rounds": 0},
]
# The step cap's sweep (--step caps): each cap on the editor's requests (four drafts) and on 64-slot gaps (one
# draft, where a block runs to its cap: its entropy never gets low enough for the early stop).
STEP_CAPS = (48, 40, 32)
LONG_GAP_SLOTS = 64
# The wide canvas's entropy bound (--step wide, model.edit.sampling.block_entropy_bound): 0 is one bound for every
# width; each on gaps wider than half the canvas, where it applies, with one draft and the editor's four.
WIDE_BOUNDS = (0.0, 4.0, 8.0, 16.0)
WIDE_GAPS = ((64, 1), (64, 4), (48, 1))
STABILITY = (1, 2, 3)
CONFIDENCE = (0.005, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5)


def tuning_sections(held_out: list[Section]) -> list[Section]:
    """The held-out sections settings are tuned on (even positions); ``bench/peers.py`` takes the odd ones."""
    return held_out[0::2]


class Recorder(StableAndConfident):
    """A stopper that never stops and keeps what it was shown: per pass, the argmax canvas and each candidate's
    mean entropy, as :class:`StableAndConfident` reads them."""

    seen: list[tuple[torch.Tensor, torch.Tensor]] = []

    def __call__(self, argmax_canvas: torch.Tensor, entropy: torch.Tensor) -> torch.Tensor:
        Recorder.seen.append((argmax_canvas.clone(), torch.mean(entropy, dim=-1)))
        return torch.zeros(argmax_canvas.shape[0], dtype=torch.bool, device=argmax_canvas.device)


def stop_pass(canvases: torch.Tensor, means: torch.Tensor, stability: int, confidence: float) -> int:
    """The pass (0-based) at which :class:`StableAndConfident` ends one candidate's block: its argmax canvas equal
    to the ``stability`` before it and its mean entropy below ``confidence``; the last pass if never."""
    for index in range(stability, len(means)):
        recent = canvases[index - stability : index]
        if bool((recent == canvases[index]).all()) and float(means[index]) < confidence:
            return index
    return len(means) - 1


def simulate(engine: Engine, lm: Any, cases: list[Case], mode: str, seed: int, candidates: int) -> list[dict[str, Any]]:
    """Every (stability, confidence) rule on the same trajectories: one run per case with the stop disabled and no
    polish; a rule's result is each candidate's argmax at its own stopping pass (the draws before it do not depend
    on when another candidate stops). Judged over every candidate, not only the ranking's choice. Run library-exact:
    its draw takes the same numbers from the generator every pass, where the everyday draw takes one per accepted
    slot, so there a candidate that stops would shift the others' later draws."""
    engine = Engine(engine.loaded, library_exact=True)
    options = DenoiseOptions(polish_rounds=0)
    runs = []
    original = engine_module.StableAndConfident
    engine_module.StableAndConfident = Recorder  # type: ignore[misc]
    try:
        for index, case in enumerate(cases):
            request = (
                EditRequest(prefix=case.prefix, suffix=case.suffix, span=case.gap, mode="rewrite", strength=0.7,
                            seed=seed + index, candidates=candidates, options=options)
                if mode == "rewrite"
                else EditRequest(prefix=case.prefix, suffix=case.suffix, mode="fill", max_new_tokens=FILL_SLOTS,
                                 seed=seed + index, candidates=candidates, options=options)
            )  # fmt: skip
            Recorder.seen = []
            result = engine.run(request)
            if result.blocks != 1:
                continue
            layout = engine._layout(shape_request(request)[0])
            widths = layout.candidate_slots or [layout.block_slots[0]] * candidates
            canvases = torch.stack([argmax for argmax, _ in Recorder.seen], dim=1)  # (batch, passes, slots)
            means = torch.stack([mean for _, mean in Recorder.seen], dim=1)  # (batch, passes)
            runs.append((case, layout, widths, canvases, means))
            print(f"  {mode} {index + 1}/{len(cases)}", flush=True)
    finally:
        engine_module.StableAndConfident = original  # type: ignore[misc]
    rows = []
    for stability in STABILITY:
        for confidence in CONFIDENCE:
            passes, logs, seams = [], [], []
            for case, layout, widths, canvases, means in runs:
                stops = [stop_pass(canvases[c], means[c], stability, confidence) for c in range(len(widths))]
                passes.append(max(stops) + 1)
                kept = [canvases[c, stop, : widths[c]].tolist() for c, stop in enumerate(stops)]
                for text in canvas.span_texts(kept, layout, engine.vocabulary)[0]:
                    whole, seam = judged(lm, case, words(text))
                    logs.append(whole)
                    seams.append(seam)
            rows.append({
                "stability_threshold": stability, "confidence_threshold": confidence,
                "passes_per_edit": statistics.mean(passes), "ppl_candidates": pooled_ppl(logs),
                "ppl_candidates_interval": bootstrap_interval(logs, seed), "ppl_seam": pooled_ppl(seams),
            })  # fmt: skip
    return rows


def evaluate(engine: Engine, lm: Any, sections: list[Section], cases: int, seed: int, candidates: int,
             settings: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    options = DenoiseOptions(**settings)
    started = time.perf_counter()
    rewrites, _ = run_rewrites(engine, lm, rewrite_cases(sections, cases, seed), seed, 0.7, candidates, options=options)
    rewrite_seconds = (time.perf_counter() - started) / cases
    started = time.perf_counter()
    fills, _ = run_fills(engine, lm, fill_cases(sections, cases, seed), seed, options, candidates)
    fill_seconds = (time.perf_counter() - started) / cases
    return {
        "settings": settings,
        "rewrite": {**asdict(rewrites), "seconds_per_edit": rewrite_seconds},
        "fill": {**asdict(fills), "seconds_per_edit": fill_seconds},
    }


def step_caps(engine: Engine, lm: Any, sections: list[Section], cases: int, seed: int, candidates: int,
              rule: dict[str, Any]) -> list[dict[str, Any]]:  # fmt: skip
    """Each cap of STEP_CAPS (the rest of the settings as shipped, plus ``rule``): the editor's requests through
    :func:`evaluate`, and 64-slot gaps with one draft."""
    rows = []
    long_gaps = fill_cases(sections, cases, seed)
    for cap in STEP_CAPS:
        settings = {**rule, "max_denoising_steps": cap}
        row = evaluate(engine, lm, sections, cases, seed, candidates, settings)
        started = time.perf_counter()
        options = DenoiseOptions(**settings)
        long: FillFigures = run_fills(engine, lm, long_gaps, seed, options, 1, slots=LONG_GAP_SLOTS)[0]
        row["long_fill"] = {**asdict(long), "seconds_per_edit": (time.perf_counter() - started) / cases}
        rows.append(row)
        rewrite, fill = row["rewrite"], row["fill"]
        print(
            f"  cap {cap}: rewrite ppl {rewrite['ppl_rewrite']:6.1f} seam {rewrite['ppl_rewrite_seam']:6.1f} "
            f"passes {rewrite['passes_per_rewrite']:5.1f} | fill ppl {fill['ppl_fill']:6.1f} seam "
            f"{fill['ppl_fill_seam']:6.1f} passes {fill['passes_per_fill']:5.1f} | {LONG_GAP_SLOTS}-slot fill ppl "
            f"{long.ppl_fill:6.1f} seam "
            f"{long.ppl_fill_seam:6.1f} passes {long.passes_per_fill:5.1f}",
            flush=True,
        )
    return rows


def step_wide(engine: Engine, lm: Any, sections: list[Section], cases: int, seed: int) -> list[dict[str, Any]]:
    """Each bound of WIDE_BOUNDS (the rest of the settings as shipped) on the gaps of WIDE_GAPS (slots, drafts)."""
    rows = []
    gaps = fill_cases(sections, cases, seed)
    for wide in WIDE_BOUNDS:
        for slots, drafts in WIDE_GAPS:
            started = time.perf_counter()
            figures = run_fills(engine, lm, gaps, seed, DenoiseOptions(wide_entropy_bound=wide), drafts, slots=slots)[0]
            rows.append({"wide_entropy_bound": wide, "slots": slots, "drafts": drafts, **asdict(figures),
                         "seconds_per_edit": (time.perf_counter() - started) / cases})  # fmt: skip
            low, high = figures.ppl_fill_interval
            print(
                f"  wide bound {wide:4g}, {slots}-slot gaps, {drafts} draft(s): passes {figures.passes_per_fill:5.1f} "
                f"ppl {figures.ppl_fill:6.1f} ({low:.0f}-{high:.0f}) seam {figures.ppl_fill_seam:6.1f}",
                flush=True,
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = held_out_parser(__doc__ or "", "held-out sentences and gaps per setting")
    parser.set_defaults(cases=24)
    parser.add_argument("--step", choices=["simulate", "verify", "caps", "wide"], default="simulate")
    parser.add_argument("--rule", type=json.loads, default={}, help="e.g. '{\"confidence_threshold\": 0.3}'")
    parser.add_argument("--only", type=int, nargs="*", default=None, help="rows of GRID to verify")
    args = parser.parse_args(argv)
    engine, held_out = engine_and_held_out(args)
    lm = fluency_lm(args.corpus, args.seed)
    sections = tuning_sections(held_out)
    report: dict[str, Any] = {"machine": "2-core x86-64 CPU, shared and busy", "cases": args.cases}
    print(f"{args.cases} sentences and {args.cases} gaps, {args.candidates} drafts, the tuning half of the held-out "
          "sections (a busy machine: seconds are indicative)", flush=True)  # fmt: skip
    if args.step in ("caps", "wide"):
        report[args.step] = (
            step_caps(engine, lm, sections, args.cases, args.seed, args.candidates, args.rule)
            if args.step == "caps"
            else step_wide(engine, lm, sections, args.cases, args.seed)
        )
        if args.json:
            args.json.write_text(json.dumps(report, indent=1) + "\n")
        return 0
    if args.step == "simulate":
        for mode, cases in (("rewrite", rewrite_cases(sections, args.cases, args.seed)),
                            ("fill", fill_cases(sections, args.cases, args.seed))):  # fmt: skip
            rows = simulate(engine, lm, cases, mode, args.seed, args.candidates)
            report[mode] = rows
            print(f"{mode}: stopping rules on the same trajectories (every candidate judged)")
            for row in rows:
                low, high = row["ppl_candidates_interval"]
                print(
                    f"  stability {row['stability_threshold']} confidence {row['confidence_threshold']:<6} "
                    f"passes {row['passes_per_edit']:5.1f}  ppl {row['ppl_candidates']:6.1f} ({low:.0f}-{high:.0f}) "
                    f"seam {row['ppl_seam']:6.1f}",
                    flush=True,
                )
            if args.json:
                args.json.write_text(json.dumps(report, indent=1) + "\n")
        return 0
    rows = []
    for index, settings in enumerate(GRID):
        if args.only is not None and index not in args.only:
            continue
        settings = settings if settings is SESSION_START else {**args.rule, **settings}
        row = evaluate(engine, lm, sections, args.cases, args.seed, args.candidates, settings)
        rows.append(row)
        rewrite, fill = row["rewrite"], row["fill"]
        print(
            f"  {json.dumps(settings):68s} rewrite: ppl {rewrite['ppl_rewrite']:6.1f} seam "
            f"{rewrite['ppl_rewrite_seam']:6.1f} passes {rewrite['passes_per_rewrite']:5.1f} "
            f"{rewrite['seconds_per_edit']:5.2f} s | fill: ppl {fill['ppl_fill']:6.1f} "
            f"seam {fill['ppl_fill_seam']:6.1f} passes {fill['passes_per_fill']:5.1f} "
            f"{fill['seconds_per_edit']:5.2f} s",
            flush=True,
        )
        report["verify"] = rows
        if args.json:
            args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
