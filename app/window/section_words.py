"""Each heading's section's words, as the Outline (``outline.py``) shows them beside its title."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from itertools import accumulate

from app.documents.critic_markup import marks, settle
from app.documents.word_count import WordCounter, count_words, without_notes
from app.window.headings import Heading
from app.window.live_span import positions_are_indices


def section_words(
    text: str, found: list[Heading], markdown: bool = False, count: Callable[[str], int] = count_words
) -> list[int]:
    """The words of each heading's section: from after its line to the next heading of its level or above, so a
    part counts its chapters' words too; counted as the status bar counts the document's (tracked changes made,
    a Markdown text's notes left out), by ``count`` (a WordCounter: a part's lines are its chapters')."""
    indices = positions_are_indices(text)
    if indices and not markdown and not marks(text):
        return _section_words_by_line(text, found, count)
    if indices:
        def between(start: int, end: int | None) -> str:
            return text[start:end]
    else:
        units = text.encode("utf-16-le")

        def between(start: int, end: int | None) -> str:
            return units[2 * start : None if end is None else 2 * end].decode("utf-16-le", errors="ignore")
    counts = []
    for index, heading in enumerate(found):
        later = (other.position for other in found[index + 1 :] if other.level <= heading.level)
        body = settle(between(heading.position, next(later, None)), accept=True)
        body = without_notes(body) if markdown else body
        title = without_notes(heading.title) if markdown else heading.title
        counts.append(max(0, count(body) - count_words(title)))  # its title's words are not its own
    return counts


def _section_words_by_line(text: str, found: list[Heading], count: Callable[[str], int]) -> list[int]:
    """:func:`section_words` for a plain text with no tracked changes whose positions are its indices (most): the
    text's lines counted once, each section a difference of running totals (War and Peace: its parts' lines were
    counted again with their chapters', 380 slices split and looked up)."""
    lines = text.split("\n")
    per_line = count.each_line(lines) if isinstance(count, WordCounter) else [count(line) for line in lines]
    before = list(accumulate(per_line, initial=0))  # the words before each line
    starts = list(accumulate((len(line) + 1 for line in lines), initial=0))  # each line's first position
    counts = []
    for index, heading in enumerate(found):
        later = (other.position for other in found[index + 1 :] if other.level <= heading.level)
        first, end = bisect.bisect_left(starts, heading.position), bisect.bisect_left(starts, next(later, len(text)))
        counts.append(max(0, before[end] - before[first] - count_words(heading.title)))
    return counts
