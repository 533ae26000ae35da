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
import math
import random
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model import DenoiseOptions, EditRequest, Engine, load  # noqa: E402
from model.request import PUBLISHED_DEFAULTS  # noqa: E402
from model.training.data import Section, read_sections, split_sections  # noqa: E402
from model.training.evaluate import (  # noqa: E402
    HeldOut,
    denoising_accuracy,
    expert_usage,
    heldout_data,
    infill_accuracy,
)
from model.training.ngram import TrigramLM, words  # noqa: E402

DEFAULT_MODEL = ROOT / "resources" / "models" / "redraft-tiny"
DEFAULT_CORPUS = Path("/work/shared/corpus")
PREFIX_CHARS = 600
SUFFIX_CHARS = 300
FILL_SLOTS = 24


@dataclass(frozen=True)
class Case:
    source: str
    prefix: str
    gap: str
    suffix: str


def _word_cut(text: str, at: int) -> int:
    """The start of the word at or after ``at``."""
    match = re.compile(r"\s\S").search(text, at)
    return match.start() + 1 if match else len(text)


def fill_cases(sections: list[Section], count: int, seed: int) -> list[Case]:
    """A gap of 4-14 words in the middle of held-out passages (stories and books alternately)."""
    rng = random.Random(seed)
    stories = [s for s in sections if s.is_story and len(s.text) > 400]
    books = [s for s in sections if not s.is_story and len(s.text) > 1500]
    cases = []
    for i in range(count):
        section = rng.choice(stories if i % 2 == 0 else books)
        text = section.text
        start = _word_cut(text, int(len(text) * rng.uniform(0.3, 0.6)))
        gap_words = rng.randint(4, 14)
        end = start
        for _ in range(gap_words):
            end = _word_cut(text, end + 1)
        gap = text[start:end].rstrip()
        end = start + len(gap)
        prefix = text[max(0, start - PREFIX_CHARS) : start]
        if start > PREFIX_CHARS:
            prefix = prefix[_word_cut(prefix, 0) :]
        cases.append(Case(f"{section.source}#{section.index}", prefix, gap, text[end : end + SUFFIX_CHARS]))
    return cases


def rewrite_cases(sections: list[Section], count: int, seed: int) -> list[Case]:
    """One whole sentence (the span) in the middle of held-out passages."""
    rng = random.Random(seed)
    cases: list[Case] = []
    pool = [s for s in sections if len(s.text) > 600]
    while len(cases) < count:
        section = rng.choice(pool)
        text = section.text
        bounds = [0] + [m.end() for m in re.finditer(r"(?<=[.!?])\s+", text)] + [len(text)]
        if len(bounds) < 5:
            continue
        k = rng.randrange(2, len(bounds) - 2)
        start, end = bounds[k], bounds[k + 1]
        span = text[start:end].rstrip()
        if not 20 <= len(span) <= 160:
            continue
        end = start + len(span)
        prefix = text[max(0, start - PREFIX_CHARS) : start]
        cases.append(Case(f"{section.source}#{section.index}", prefix, span, text[end : end + SUFFIX_CHARS]))
    return cases


def fluency_lm(corpus: Path, seed: int, book_chars: int = 6_000_000) -> TrigramLM:
    """Trigram judge trained on the training split: every story and a fixed share of book text."""
    train, _ = split_sections(read_sections(corpus), 0.02, seed)
    stories = [s.text for s in train if s.is_story]
    books: list[str] = []
    used = 0
    for section in sorted((s for s in train if not s.is_story), key=lambda s: (s.index, s.source)):
        if used > book_chars:
            break
        books.append(section.text)
        used += len(section.text)
    return TrigramLM(stories + books)


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


def _pooled_ppl(logs: list[list[float]]) -> float:
    flat = [x for row in logs for x in row]
    return math.exp(-sum(flat) / max(1, len(flat)))


def _bootstrap_interval(logs: list[list[float]], seed: int, draws: int = 2000) -> tuple[float, float]:
    """5th and 95th percentiles of the pooled perplexity over gaps resampled with replacement.

    Forty gaps make a noisy figure (a few unlikely words move it a lot); the interval says how noisy,
    so two models are only called different when their figures are well apart.
    """
    rng = random.Random(seed)
    samples = sorted(_pooled_ppl([rng.choice(logs) for _ in logs]) for _ in range(draws))
    return samples[int(0.05 * draws)], samples[int(0.95 * draws) - 1]


def _judged(lm: TrigramLM, case: Case, span_words: list[str]) -> tuple[list[float], list[float]]:
    """Trigram log-probabilities of ``span_words`` in the case's place, followed by the two words after it
    (so the seam counts), and of those two words alone (the seam)."""
    junction = words(case.suffix)[:2]
    logs = lm.log_probs(words(case.prefix)[-2:], span_words + junction)
    return logs, logs[len(logs) - len(junction) :]


def run_fills(
    engine: Engine,
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
            whole, seam = _judged(lm, case, text)
            logs.append(whole)
            seams.append(seam)
        lp_shuf.append(_judged(lm, case, shuffled)[0])
    figures = FillFigures(
        fills=len(cases),
        tokens_per_forward=sum(per_forward) / len(cases),
        passes_per_fill=sum(passes) / len(cases),
        ms_per_pass=sum(ms) / len(cases),
        empty_fills=sum(1 for f in fills if not f.strip()),
        mean_fill_words=sum(len(words(f)) for f in fills) / len(cases),
        mean_original_words=sum(len(words(c.gap)) for c in cases) / len(cases),
        ppl_fill=_pooled_ppl(lp_fill),
        ppl_original=_pooled_ppl(lp_orig),
        ppl_shuffled=_pooled_ppl(lp_shuf),
        ppl_fill_interval=_bootstrap_interval(lp_fill, seed),
        ppl_fill_seam=_pooled_ppl(seam_fill),
        ppl_original_seam=_pooled_ppl(seam_orig),
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
        )
        result = engine.run(request)
        rewrites.append((result.text, result.passes))
        ms.append(result.ms_per_pass)
        new, original = words(result.text), words(case.gap)
        for text, logs, seams in ((new, lp_new, seam_new), (original, lp_orig, seam_orig)):
            whole, seam = _judged(lm, case, text)
            logs.append(whole)
            seams.append(seam)
        ratios.append(len(new) / max(1, len(original)))
        kept.append(len(set(new) & set(original)) / max(1, len(set(original))))
    figures = RewriteFigures(
        rewrites=len(cases),
        strength=strength,
        candidates=candidates,
        ppl_rewrite=_pooled_ppl(lp_new),
        ppl_rewrite_interval=_bootstrap_interval(lp_new, seed),
        ppl_original=_pooled_ppl(lp_orig),
        ppl_rewrite_seam=_pooled_ppl(seam_new),
        ppl_original_seam=_pooled_ppl(seam_orig),
        length_ratio=sum(ratios) / len(cases),
        words_kept=sum(kept) / len(cases),
        passes_per_rewrite=sum(passes for _, passes in rewrites) / len(cases),
        ms_per_pass=sum(ms) / len(cases),
    )
    return figures, rewrites


def _interval(figures: FillFigures) -> str:
    low, high = figures.ppl_fill_interval
    return f"(90% bootstrap interval over gaps {low:.0f}-{high:.0f})"


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
