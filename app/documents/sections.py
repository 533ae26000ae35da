"""Moving a section of a long text past its neighbour: a chapter (or a scene under a ## heading) with everything
under it, as the Outline's Move Section Up and Down do (``app/window/outline.py``). Pure text in, text out.

A section runs from its heading to the next heading of its level or above, so a part moves with its chapters. It
changes places with its sibling (the section of its own level before or after it, under the same heading); the
first under its heading goes no higher, the last no lower. The blank lines between the two stay between them and
the text's ending stays at its end, so a last section moved up ends with its paragraph, not with the next one's
heading glued to its words."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SectionMove:
    """The two sections' place (``start``…``end`` of the old text), their text in the new order, and where the
    moved section's heading now starts."""

    start: int
    end: int
    text: str
    moved_to: int


def section_end(starts: list[int], levels: list[int], index: int, length: int) -> int:
    """Where heading ``index``'s section ends: at the next heading of its level or above, else the text's end."""
    return next((starts[later] for later in range(index + 1, len(starts)) if levels[later] <= levels[index]), length)


def sibling(levels: list[int], index: int, up: bool) -> int | None:
    """The heading of the section ``index`` would change places with: the nearest before (or after) it of a level
    no deeper, if that level is its own; None at the first (or last) under its heading."""
    others = range(index - 1, -1, -1) if up else range(index + 1, len(levels))
    found = next((other for other in others if levels[other] <= levels[index]), None)
    return found if found is not None and levels[found] == levels[index] else None


def move_section(text: str, starts: list[int], levels: list[int], index: int, up: bool,
                 sections_end: int | None = None) -> SectionMove | None:  # fmt: skip
    """Section ``index`` moved past its sibling before it (``up``) or after it; None where it has none there.
    ``starts`` are the headings' first characters in ``text``, in order, and ``levels`` their levels;
    ``sections_end`` where the last section ends (the text's end, or where its footnotes' lines begin, which
    stay at the end whichever chapter is last)."""
    other = sibling(levels, index, up)
    if other is None:
        return None
    first, second = (other, index) if up else (index, other)
    first_start, second_start = starts[first], starts[second]
    second_end = section_end(starts, levels, second, len(text) if sections_end is None else sections_end)
    earlier, later = text[first_start:second_start], text[second_start:second_end]
    earlier_words, later_words = earlier.rstrip(), later.rstrip()
    between, ending = earlier[len(earlier_words) :], later[len(later_words) :]
    moved = later_words + between + earlier_words + ending
    moved_to = first_start if up else first_start + len(later_words) + len(between)
    return SectionMove(first_start, second_end, moved, moved_to)
