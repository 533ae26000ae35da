"""The held-out cases the built-in model is evaluated on: gaps to fill and sentences to rewrite, in place.

Each case is cut from a held-out section at word (or sentence) boundaries, with the text before and after
it as the editor would send it. Deterministic given the seed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from model.training.data import Section

PREFIX_CHARS = 600
SUFFIX_CHARS = 300


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
