"""Moving a section of a long text past its neighbour: a chapter (or a scene under a ## heading) with everything
under it, as the Outline's Move Section Up and Down do (``app/window/outline.py``), or to any place a section of
its level may stand, as a row dragged in the Outline does. Pure text in, text out.

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
    moved section's heading now starts; ``edits`` make the same change touching only the smaller of the two
    blocks: (start, end, text) in the old text, the later first, so each leaves the next one's place as it was
    (a part of War and Peace moved to its end rewrote 3 MB of the editor's text, now the part's)."""

    start: int
    end: int
    text: str
    moved_to: int
    edits: tuple[tuple[int, int, str], tuple[int, int, str]]


def next_section(levels: list[int], index: int) -> int | None:
    """The heading after heading ``index``'s section: the next of its level or above; None where it runs to the end."""
    return next((later for later in range(index + 1, len(levels)) if levels[later] <= levels[index]), None)


def heading_over(levels: list[int], index: int) -> int:
    """The heading heading ``index``'s section is under (a chapter's part); ``index`` itself where none is."""
    return next((above for above in range(index - 1, -1, -1) if levels[above] < levels[index]), index)


def section_end(starts: list[int], levels: list[int], index: int, length: int) -> int:
    """Where heading ``index``'s section ends: at the next heading of its level or above, else the text's end."""
    after = next_section(levels, index)
    return length if after is None else starts[after]


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
    if up:
        return place_section(text, starts, levels, index, other, sections_end)
    return place_section(text, starts, levels, index, next_section(levels, other), sections_end)


def can_place(levels: list[int], index: int, before: int | None) -> bool:
    """Whether section ``index`` may go before heading ``before`` (None: after the last section) and move: that
    heading starts a section of its level or above (put before a scene, a chapter would take the scenes after it
    as its own), outside the section itself, and not the place it already stands."""
    end = next_section(levels, index)
    if before is None:
        return end is not None
    if not 0 <= before < len(levels) or levels[before] > levels[index]:
        return False
    return not index <= before <= (len(levels) if end is None else end)


def place_section(text: str, starts: list[int], levels: list[int], index: int, before: int | None,
                  sections_end: int | None = None) -> SectionMove | None:  # fmt: skip
    """Section ``index`` taken out and put in again before heading ``before`` (None: after the last section), as
    the Outline's rows dragged do; None where :func:`can_place` says no. The text between its old and new place
    changes places with it as one block, blank lines kept between them and the text's ending at its end (see
    the module's docstring), so a chapter dropped at the end of another part joins that part."""
    if not can_place(levels, index, before):
        return None
    last = len(text) if sections_end is None else sections_end
    own_end = section_end(starts, levels, index, last)
    target = last if before is None else starts[before]
    up = target < starts[index]
    first_start, second_start, second_end = (target, starts[index], own_end) if up else (starts[index], own_end,
                                                                                            target)  # fmt: skip
    earlier, later = text[first_start:second_start], text[second_start:second_end]
    earlier_words, later_words = earlier.rstrip(), later.rstrip()
    between, ending = earlier[len(earlier_words) :], later[len(later_words) :]
    moved = later_words + between + earlier_words + ending
    moved_to = first_start if up else first_start + len(later_words) + len(between)
    later_end = second_start + len(later_words)
    if len(later_words) <= len(earlier_words):  # the later block taken out and put in before the earlier
        edits = ((first_start + len(earlier_words), later_end, ""), (first_start, first_start, later_words + between))
    else:  # the earlier block taken out and put in after the later
        edits = ((later_end, later_end, between + earlier_words), (first_start, second_start, ""))
    return SectionMove(first_start, second_end, moved, moved_to, edits)


def has_sections_under(levels: list[int], index: int) -> bool:
    """Whether heading ``index`` has headings under it (the next heading is deeper): one it can fold away."""
    return index + 1 < len(levels) and levels[index + 1] > levels[index]


def hidden_by_folds(levels: list[int], folded: list[bool]) -> list[bool]:
    """Which headings a folded one above them hides: every heading deeper than a folded one, up to the next of its
    level or above, as the Outline shows a part folded to its line."""
    hidden, fold_level = [], None  # the level of the outermost open fold, while inside it
    for level, fold in zip(levels, folded, strict=True):
        if fold_level is not None and level <= fold_level:
            fold_level = None
        hidden.append(fold_level is not None)
        if fold_level is None and fold:
            fold_level = level
    return hidden
