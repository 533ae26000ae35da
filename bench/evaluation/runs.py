"""The built-in model's fills and rewrites through the engine, judged: the figures of one run, and the sweep.

Every request is the editor's (``EditRequest`` through ``Engine.run``), so the figures are what a writer
gets; the judge is ``evaluation.judge``'s trigram model.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import asdict, dataclass
from typing import Protocol

from evaluation.cases import Case
from evaluation.judge import bootstrap_interval, judged, pooled_ppl
from model import DenoiseOptions, EditRequest, EditResult, Engine
from model.edit.request import PUBLISHED_DEFAULTS
from model.training.ngram import TrigramLM, words

FILL_SLOTS = 24


class RunsEdits(Protocol):
    """What the fills need of an engine: the local :class:`Engine` or a team server's ``ServerEngine``."""

    def run(self, request: EditRequest) -> EditResult: ...


@dataclass
class FillFigures:
    fills: int
    tokens_per_forward: float
    passes_per_fill: float
    ms_per_pass: float
    empty_fills: int
    mean_fill_words: float
    mean_original_words: float
    ppl_fill: float
    ppl_original: float
    ppl_shuffled: float
    ppl_fill_interval: tuple[float, float]  # 90% bootstrap interval over gaps
    # The two words after the gap alone: does the new text join the suffix? (Long fills could
    # otherwise hide a bad seam among many easy words.)
    ppl_fill_seam: float = math.nan
    ppl_original_seam: float = math.nan


def run_fills(
    engine: RunsEdits,
    lm: TrigramLM,
    cases: list[Case],
    seed: int,
    options: DenoiseOptions | None = None,
    candidates: int = 1,
    slots: int = FILL_SLOTS,
    vary_length: bool = True,
) -> tuple[FillFigures, list[str]]:
    """Fill every case through the engine; score fills, originals and shuffled originals.

    With several candidates the fill is the one the model rates best (what the editor shows).
    """
    rng = random.Random(seed)
    fills: list[str] = []
    lp_fill: list[list[float]] = []
    lp_orig: list[list[float]] = []
    lp_shuf: list[list[float]] = []
    seam_fill: list[list[float]] = []
    seam_orig: list[list[float]] = []
    passes, per_forward, ms = [], [], []
    for i, case in enumerate(cases):
        request = EditRequest(
            prefix=case.prefix,
            suffix=case.suffix,
            mode="fill",
            max_new_tokens=slots,
            seed=seed + i,
            candidates=candidates,
            options=options or DenoiseOptions(),
            vary_length=vary_length,
        )
        result = engine.run(request)
        fills.append(result.text)
        passes.append(result.passes)
        per_forward.append(result.tokens_per_forward)
        ms.append(result.ms_per_pass)
        original = words(case.gap)
        shuffled = original[:]
        rng.shuffle(shuffled)
        for text, logs, seams in ((words(result.text), lp_fill, seam_fill), (original, lp_orig, seam_orig)):
            whole, seam = judged(lm, case, text)
            logs.append(whole)
            seams.append(seam)
        lp_shuf.append(judged(lm, case, shuffled)[0])
    figures = FillFigures(
        fills=len(cases),
        tokens_per_forward=sum(per_forward) / len(cases),
        passes_per_fill=sum(passes) / len(cases),
        ms_per_pass=sum(ms) / len(cases),
        empty_fills=sum(1 for f in fills if not f.strip()),
        mean_fill_words=sum(len(words(f)) for f in fills) / len(cases),
        mean_original_words=sum(len(words(c.gap)) for c in cases) / len(cases),
        ppl_fill=pooled_ppl(lp_fill),
        ppl_original=pooled_ppl(lp_orig),
        ppl_shuffled=pooled_ppl(lp_shuf),
        ppl_fill_interval=bootstrap_interval(lp_fill, seed),
        ppl_fill_seam=pooled_ppl(seam_fill),
        ppl_original_seam=pooled_ppl(seam_orig),
    )
    return figures, fills


@dataclass
class RewriteFigures:
    rewrites: int
    strength: float
    candidates: int
    ppl_rewrite: float
    ppl_rewrite_interval: tuple[float, float]
    ppl_original: float
    ppl_rewrite_seam: float
    ppl_original_seam: float
    length_ratio: float  # words in the rewrite / words in the sentence, averaged over sentences
    words_kept: float  # share of the sentence's distinct words the rewrite still has, averaged
    passes_per_rewrite: float
    ms_per_pass: float


def run_rewrites(
    engine: Engine,
    lm: TrigramLM,
    cases: list[Case],
    seed: int,
    strength: float,
    candidates: int,
    vary_length: bool = True,
    options: DenoiseOptions | None = None,
) -> tuple[RewriteFigures, list[tuple[str, int]]]:
    """Rewrite every case's sentence in place (the editor's request); judge the rewrites like fills, and
    say how long they came out and how much of the sentence they kept. Returns (figures, [(text, passes)])."""
    rewrites: list[tuple[str, int]] = []
    lp_new: list[list[float]] = []
    lp_orig: list[list[float]] = []
    seam_new: list[list[float]] = []
    seam_orig: list[list[float]] = []
    ratios: list[float] = []
    kept: list[float] = []
    ms: list[float] = []
    for i, case in enumerate(cases):
        request = EditRequest(
            prefix=case.prefix,
            suffix=case.suffix,
            span=case.gap,
            mode="rewrite",
            strength=strength,
            seed=seed + i,
            candidates=candidates,
            vary_length=vary_length,
            options=options or DenoiseOptions(),
        )
        result = engine.run(request)
        rewrites.append((result.text, result.passes))
        ms.append(result.ms_per_pass)
        new, original = words(result.text), words(case.gap)
        for text, logs, seams in ((new, lp_new, seam_new), (original, lp_orig, seam_orig)):
            whole, seam = judged(lm, case, text)
            logs.append(whole)
            seams.append(seam)
        ratios.append(len(new) / max(1, len(original)))
        kept.append(len(set(new) & set(original)) / max(1, len(set(original))))
    figures = RewriteFigures(
        rewrites=len(cases),
        strength=strength,
        candidates=candidates,
        ppl_rewrite=pooled_ppl(lp_new),
        ppl_rewrite_interval=bootstrap_interval(lp_new, seed),
        ppl_original=pooled_ppl(lp_orig),
        ppl_rewrite_seam=pooled_ppl(seam_new),
        ppl_original_seam=pooled_ppl(seam_orig),
        length_ratio=sum(ratios) / len(cases),
        words_kept=sum(kept) / len(cases),
        passes_per_rewrite=sum(passes for _, passes in rewrites) / len(cases),
        ms_per_pass=sum(ms) / len(cases),
    )
    return figures, rewrites


def tune(engine: Engine, lm: TrigramLM, cases: list[Case], seed: int) -> list[dict]:
    """A small sweep of sampler settings; printed so the chosen defaults can be justified."""
    grid = [
        {},
        {"left_to_right_bias": 1.0},
        {"entropy_bound": 1.0},
        {"entropy_bound": 1.0, "left_to_right_bias": 0.3},
        {"entropy_bound": 1.0, "left_to_right_bias": 1.0},
        {"entropy_bound": 1.0, "left_to_right_bias": 3.0},
        {"entropy_bound": 0.5, "left_to_right_bias": 1.0},
        {"entropy_bound": 2.0, "left_to_right_bias": 1.0},
        {"entropy_bound": 1.0, "left_to_right_bias": 1.0, "max_denoising_steps": 64},
        {"t_min": 0.6, "t_max": 1.0, "entropy_bound": 1.0, "left_to_right_bias": 1.0},
        {"entropy_bound": 1.0, "left_to_right_bias": 1.0, "polish_rounds": 3},
        {"entropy_bound": 1.0, "left_to_right_bias": 1.0, "polish_rounds": 6},
        {"entropy_bound": 1.0, "left_to_right_bias": 1.0, "polish_rounds": 12},
        # The defaults shipped before the left-to-right bias existed.
        {"t_min": 0.6, "t_max": 1.0, "entropy_bound": 4.0},
    ]
    rows = []
    for settings in grid:
        # Relative to the published defaults, not the checkpoint's, so the sweep does not move with them.
        options = DenoiseOptions(**{**PUBLISHED_DEFAULTS, **settings})  # type: ignore[arg-type]
        figures, _ = run_fills(engine, lm, cases, seed, options)
        row = {"settings": settings, **asdict(figures)}
        rows.append(row)
        print(
            f"  {json.dumps(settings):70s} ppl {figures.ppl_fill:8.1f}  seam {figures.ppl_fill_seam:7.1f}"
            f"  passes {figures.passes_per_fill:5.1f}"
            f"  tok/fwd {figures.tokens_per_forward:5.2f}  words {figures.mean_fill_words:4.1f}"
            f"  empty {figures.empty_fills}",
            flush=True,
        )
    return rows
