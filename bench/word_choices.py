"""Words That Fit on held-out text: does the model's reading of a word's place find the writer's own word, and
how long does the reading take? The built-in model unless --model names another.

    python bench/word_choices.py               # 400 words from held-out stories and books
    python bench/word_choices.py --cases 100   # a quicker look

Each case is a word of a held-out section (its 600 characters before and 300 after, as the cases of
bench/builtin_model_eval.py), read as the editor reads it (:mod:`model.edit.word_choices`) but with the word
itself left in the ranking. A writer's own word is one that fits, so how often it comes first, or among the eight
the editor lists, says how well the list fits its place. Beside it, the same figure for the eight words most
common in the held-out text (a list that reads no context). Then the reading's time, median and 90th percentile,
through ``Engine.word_choices`` as the editor calls it, and some cases' lists, unedited.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.cases import PREFIX_CHARS, SUFFIX_CHARS, Case  # noqa: E402
from evaluation.setup import engine_and_held_out, held_out_parser  # noqa: E402

from model import Engine  # noqa: E402
from model.edit import word_choices  # noqa: E402
from model.edit.request import WHOLE_WORD  # noqa: E402
from model.training.data import Section  # noqa: E402

SHOWN = 8


def word_cases(sections: list[Section], count: int, seed: int) -> list[Case]:
    """``count`` words in the middle of held-out sections, stories and books alternately."""
    rng = random.Random(seed)
    kinds = [[s for s in sections if s.is_story == story and len(s.text) > 1200] for story in (True, False)]
    cases = []
    for index in range(count):
        text = rng.choice(kinds[index % 2]).text
        inside = range(PREFIX_CHARS, len(text) - SUFFIX_CHARS)
        words = [m for m in WHOLE_WORD.finditer(text) if m.start() in inside and m.end() in inside]
        match = rng.choice(words)
        start, end = match.span()
        cases.append(Case("", text[start - PREFIX_CHARS : start], match.group(), text[end : end + SUFFIX_CHARS]))
    return cases


def ranked(engine: Engine, case: Case, count: int) -> list[str]:
    """The reading's whole words, the case's own word among them (the editor leaves it out), lower-cased."""
    layout = engine._layout(word_choices.gap_request(case.prefix, case.gap, case.suffix))
    with torch.inference_mode():
        cache = engine._prompt_cache(layout.prompt_ids)
        shares = word_choices.slot_shares(engine, layout, cache, engine._bans(layout, 0))
    choices = word_choices.whole_words(word_choices.ranked(shares), engine.vocabulary.pieces, "", layout.lead, count)
    return [choice.word.casefold() for choice in choices]


def measure(engine: Engine, cases: list[Case], sections: list[Section], threads: int) -> dict[str, float | str]:
    """The figures: how often the writer's own word is first and among those listed (and among the commonest
    words of ``sections``), of the cases whose word is one token; the reading's time over every case."""
    counts = Counter(m.group().casefold() for s in sections for m in WHOLE_WORD.finditer(s.text))
    common = [word for word, _ in counts.most_common(SHOWN)]
    # A word the tokenizer splits cannot be offered (one slot holds one token): counted apart.
    whole = [c for c in cases if len(engine.encode(" " + c.gap)) == 1 or len(engine.encode(c.gap)) == 1]
    first = in_list = by_frequency = 0
    for case in whole:
        found = ranked(engine, case, SHOWN + 1)
        own = case.gap.casefold()
        first += found[:1] == [own]
        in_list += own in found[:SHOWN]
        by_frequency += own in common
    times = []
    for case in cases:
        started = time.perf_counter()
        engine.word_choices(case.prefix, case.gap, case.suffix)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    print(f"{len(cases)} held-out words, {len(whole)} of them one token (the rest cannot be offered)")
    return {
        "cases": len(cases),
        "one_token_words": len(whole),
        "own_word_first": first / max(1, len(whole)),
        "own_word_in_list": in_list / max(1, len(whole)),
        "own_word_in_most_common": by_frequency / max(1, len(whole)),
        "most_common": ", ".join(common),
        "median_ms": statistics.median(times),
        "p90_ms": times[int(0.9 * (len(times) - 1))],
        "threads": threads,
    }


def main(argv: list[str] | None = None) -> None:
    parser = held_out_parser(__doc__ or "", "held-out words")
    parser.set_defaults(cases=400)
    args = parser.parse_args(argv)
    engine, held_out = engine_and_held_out(args)
    engine.warm_up()
    cases = word_cases(held_out, args.cases, args.seed)
    figures = measure(engine, cases, held_out, args.threads)
    print(f"the writer's own word first:              {figures['own_word_first']:.1%}")
    print(f"the writer's own word among the {SHOWN} listed:  {figures['own_word_in_list']:.1%}")
    print(f"among the {SHOWN} commonest words ({figures['most_common']}): {figures['own_word_in_most_common']:.1%}")
    print(f"a reading: median {figures['median_ms']:.0f} ms, 90th percentile {figures['p90_ms']:.0f} ms "
          f"({args.threads} threads)")  # fmt: skip
    print()
    for case in cases[:12]:
        offered = ", ".join(choice.word for choice in engine.word_choices(case.prefix, case.gap, case.suffix))
        before = " ".join(case.prefix.split()[-8:])
        after = " ".join(case.suffix.split()[:6])
        print(f"…{before} [{case.gap}] {after}…\n    {offered}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
