"""Does a rewrite keep the shape of the writer's text? Held-out sentences and gaps, the built-in model.

    python bench/text_shape.py                  # 40 rewrites and 40 fills, before and after model/edit/shape.py
    python bench/text_shape.py --cases 12       # a quicker look

Rewrites: held-out sentences selected three ways a writer selects them (the sentence alone; with the space
or line break after it, as a triple click takes a paragraph's break; with the whitespace before it), each
rewritten with the editor's four candidates. Every candidate is checked, not only the winner (the writer
can show any): **edges** (the new text starts and ends with exactly the selection's whitespace) and
**ending** (a selection that ends a sentence gets a new text that ends one).

Fills: the same sentences taken out and filled as a gap between sentences, so each fill must end a sentence
and be spaced from the text around it (**ending**, **spacing**); and gaps inside sentences, which may end
anywhere (their endings are reported, not judged).

"Before" runs the engine's loop on the request as it comes (``Engine.edit.__wrapped__``, the loop without
:mod:`model.edit.shape`), "after" the editor's path. Targets: 100 % edges, at least 95 % endings.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.cases import Case, fill_cases, rewrite_cases  # noqa: E402
from evaluation.setup import engine_and_held_out, held_out_parser  # noqa: E402

from model import EditRequest, EditResult, Engine  # noqa: E402
from model.edit.passes import run_to_end  # noqa: E402
from model.edit.shape import SENTENCE_END, between_sentences  # noqa: E402

FILL_WORDS = 24  # the longest gap offered, in tokens (the editor's "medium" fill)


def _edges(text: str) -> tuple[str, str]:
    return text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]


def ends_sentence(text: str) -> bool:
    return bool(SENTENCE_END.search(text.rstrip()))


def selections(case: Case, index: int) -> tuple[str, str, str]:
    """(prefix, span, suffix) of a held-out sentence, selected the ``index % 3``-th way."""
    prefix, span, suffix = case.prefix, case.gap, case.suffix
    way = index % 3
    if way == 1:  # with the whitespace after it (a triple-clicked paragraph takes its line break)
        after = suffix[: len(suffix) - len(suffix.lstrip())] or " "
        return prefix, span + after, suffix[len(suffix) - len(suffix.lstrip()) :]
    if way == 2:  # with the whitespace before it
        before = prefix[len(prefix.rstrip()) :]
        return prefix[: len(prefix.rstrip())], before + span, suffix
    return prefix, span, suffix


@dataclass
class Tally:
    checked: int = 0
    edges: int = 0
    endings_asked: int = 0
    endings: int = 0
    spacing: int = 0

    def share(self, part: int, whole: int) -> str:
        return f"{part}/{whole} ({100 * part / max(1, whole):.0f} %)"


def run_rewrites(run: Callable[[EditRequest], EditResult], cases: list[Case], candidates: int, seed: int) -> Tally:
    tally = Tally()
    for index, case in enumerate(cases):
        prefix, span, suffix = selections(case, index)
        request = EditRequest(
            prefix=prefix, span=span, suffix=suffix, mode="rewrite", candidates=candidates, seed=seed + index,
            strength=0.7,
        )  # fmt: skip
        wanted_edges = _edges(span)
        for text in run(request).texts:
            tally.checked += 1
            tally.edges += _edges(text) == wanted_edges
            if ends_sentence(span):
                tally.endings_asked += 1
                tally.endings += ends_sentence(text)
    return tally


def run_fills(run: Callable[[EditRequest], EditResult], cases: list[Case], candidates: int, seed: int) -> Tally:
    """Fills of whole sentences taken out, the caret three ways (after the space, right before the next
    sentence, right after the one before): each must end a sentence and sit between spaces."""
    tally = Tally()
    for index, case in enumerate(cases):
        prefix, suffix = case.prefix, case.suffix
        if index % 3 == 1:  # the caret at the next sentence's first letter
            suffix = suffix.lstrip()
        elif index % 3 == 2:  # the caret right after the sentence before
            prefix = prefix.rstrip()
        request = EditRequest(
            prefix=prefix, suffix=suffix, mode="fill", max_new_tokens=FILL_WORDS, candidates=candidates,
            seed=seed + index,
        )  # fmt: skip
        for text in run(request).texts:
            tally.checked += 1
            tally.endings_asked += 1
            tally.endings += ends_sentence(text)
            joined_left = (prefix[-1:] + text[:1]) if prefix else " "
            joined_right = (text[-1:] + suffix[:1]) if suffix else " "
            tally.spacing += any(c.isspace() for c in joined_left) and any(c.isspace() for c in joined_right)
    return tally


def run_inner_fills(run: Callable[[EditRequest], EditResult], cases: list[Case], candidates: int, seed: int) -> Tally:
    """Gaps inside sentences: how often the fill ends a sentence anyway (reported, not judged)."""
    tally = Tally()
    for index, case in enumerate(cases):
        if between_sentences(case.prefix, case.gap + case.suffix):
            continue
        request = EditRequest(
            prefix=case.prefix, suffix=case.suffix, mode="fill", max_new_tokens=FILL_WORDS, candidates=candidates,
            seed=seed + index,
        )  # fmt: skip
        for text in run(request).texts:
            tally.checked += 1
            tally.endings += ends_sentence(text)
    return tally


def main(argv: list[str] | None = None) -> None:
    args = held_out_parser(__doc__ or "", "held-out sentences, and as many gaps").parse_args(argv)
    engine, heldout = engine_and_held_out(args)
    sentences = rewrite_cases(heldout, args.cases, args.seed)
    gaps = fill_cases(heldout, args.cases, args.seed)
    unshaped = Engine.edit.__wrapped__  # type: ignore[attr-defined]
    ways: dict[str, Callable[[EditRequest], EditResult]] = {
        "before": lambda request: run_to_end(unshaped(engine, request, None), None),
        "after": engine.run,
    }
    report: dict[str, dict[str, object]] = {}
    for name, run in ways.items():
        started = time.perf_counter()
        rewrites = run_rewrites(run, sentences, args.candidates, args.seed)
        fills = run_fills(run, sentences, args.candidates, args.seed)
        inner = run_inner_fills(run, gaps, args.candidates, args.seed)
        seconds = time.perf_counter() - started
        print(f"\n== {name} ({seconds:.0f} s) ==")
        shown = f"{len(sentences)} sentences x {args.candidates} candidates = {rewrites.checked} shown results"
        print(f"  rewrites, {shown}")
        print(f"    edges kept:              {rewrites.share(rewrites.edges, rewrites.checked)}")
        print(f"    sentence ends kept:      {rewrites.share(rewrites.endings, rewrites.endings_asked)}")
        print(f"  fills between sentences, {fills.checked} shown results")
        print(f"    end a sentence:          {fills.share(fills.endings, fills.endings_asked)}")
        print(f"    spaced from the text:    {fills.share(fills.spacing, fills.checked)}")
        print(f"  fills inside sentences (may end anywhere), {inner.checked} shown results")
        print(f"    end a sentence anyway:   {inner.share(inner.endings, inner.checked)}")
        report[name] = {
            "seconds": round(seconds, 1),
            "rewrites": vars(rewrites),
            "fills_between_sentences": vars(fills),
            "fills_inside_sentences": vars(inner),
        }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
