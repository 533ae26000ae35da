"""Moving a section past its neighbour: its whole text with it (a part with its chapters), the blank lines kept
between them and the text's ending at its end, and no move past the first or last under its heading."""

from __future__ import annotations

from app.documents.sections import (
    can_place,
    has_sections_under,
    hidden_by_folds,
    move_section,
    place_section,
    section_end,
    sibling,
)

BOOK = (
    "Title page.\n\n"
    "# Part One\n\n## The Storm\n\nRain came.\n\n## The Light\n\nIt held.\n\n"
    "# Part Two\n\n## The Calm\n\nAll quiet."
)
TITLES = ["# Part One", "## The Storm", "## The Light", "# Part Two", "## The Calm"]
STARTS = [BOOK.index(title) for title in TITLES]
LEVELS = [1, 2, 2, 1, 2]


def _moved(index: int, up: bool) -> str | None:
    move = move_section(BOOK, STARTS, LEVELS, index, up)
    if move is None:
        return None
    new = BOOK[: move.start] + move.text + BOOK[move.end :]
    assert _edited(BOOK, move.edits) == new
    assert new[move.moved_to :].startswith(TITLES[index])  # the caret's place: the moved heading
    return new


def test_a_chapter_changes_places_with_its_sibling_and_the_blank_lines_stay_between() -> None:
    storm_then_light = "## The Storm\n\nRain came.\n\n## The Light\n\nIt held."
    light_then_storm = "## The Light\n\nIt held.\n\n## The Storm\n\nRain came."
    assert _moved(2, up=True) == BOOK.replace(storm_then_light, light_then_storm)
    assert _moved(1, up=False) == _moved(2, up=True)  # down past the next is the same move


def test_a_part_moves_with_its_chapters_and_the_texts_ending_stays_at_the_end() -> None:
    moved = _moved(3, up=True)
    assert moved == ("Title page.\n\n# Part Two\n\n## The Calm\n\nAll quiet.\n\n"
                     "# Part One\n\n## The Storm\n\nRain came.\n\n## The Light\n\nIt held.")  # fmt: skip
    assert len(moved) == len(BOOK) and sorted(moved) == sorted(BOOK)  # not a character gained or lost


def test_the_first_or_last_under_its_heading_goes_no_further() -> None:
    assert _moved(1, up=True) is None  # the first chapter of Part One: not into the title page or out of its part
    assert _moved(2, up=False) is None  # the last of Part One: not into Part Two
    assert _moved(0, up=True) is None and _moved(3, up=False) is None
    assert sibling(LEVELS, 4, up=True) is None  # The Calm's nearest before is Part Two, its parent
    assert section_end(STARTS, LEVELS, 0, len(BOOK)) == STARTS[3]  # a part ends where the next part starts


def test_the_notes_at_the_texts_end_stay_there_when_the_last_chapter_moves() -> None:
    from app.documents.footnotes import notes_start

    text = "# One\n\nA.[^1]\n\n# Two\n\nB.[^2]\n\n[^1]: first\n\n[^2]: second\n    more\n"
    assert text[notes_start(text) :] == "[^1]: first\n\n[^2]: second\n    more\n"
    assert notes_start("# One\n\nA.[^1]\n\n[^1]: first\n\nAfter the notes.\n") == len(
        "# One\n\nA.[^1]\n\n[^1]: first\n\nAfter the notes.\n")  # notes not at the end: none to keep
    move = move_section(text, [0, text.index("# Two")], [1, 1], 1, up=True, sections_end=notes_start(text))
    assert move is not None
    assert text[: move.start] + move.text + text[move.end :] == (
        "# Two\n\nB.[^2]\n\n# One\n\nA.[^1]\n\n[^1]: first\n\n[^2]: second\n    more\n")


def _edited(text: str, edits: tuple[tuple[int, int, str], ...]) -> str:
    for start, end, words in edits:  # the later first: each leaves the next one's place as it was
        text = text[:start] + words + text[end:]
    return text


def _placed(index: int, before: int | None) -> str | None:
    move = place_section(BOOK, STARTS, LEVELS, index, before)
    if move is None:
        return None
    new = BOOK[: move.start] + move.text + BOOK[move.end :]
    assert _edited(BOOK, move.edits) == new  # the two small edits make the same text
    assert sum(end - start + len(words) for start, end, words in move.edits) <= move.end - move.start
    assert new[move.moved_to :].startswith(TITLES[index])
    assert len(new) == len(BOOK) and sorted(new) == sorted(BOOK)  # not a character gained or lost
    return new


def test_a_dragged_chapter_goes_where_it_is_dropped_even_into_another_part() -> None:
    # Up or down past one sibling is the same as Move Section Up or Down.
    assert _placed(2, before=1) == _moved(2, up=True)
    assert _placed(3, before=0) == _moved(3, up=True) and _placed(0, before=None) == _moved(0, up=False)
    # The Calm dropped before The Light: out of Part Two into Part One, the last chapter's blank lines kept.
    assert _placed(4, before=2) == ("Title page.\n\n# Part One\n\n## The Storm\n\nRain came.\n\n"
                                    "## The Calm\n\nAll quiet.\n\n## The Light\n\nIt held.\n\n# Part Two")  # fmt: skip
    # The Storm dropped above Part Two's heading: the last chapter of Part One.
    assert _placed(1, before=3) == ("Title page.\n\n# Part One\n\n## The Light\n\nIt held.\n\n## The Storm\n\n"
                                    "Rain came.\n\n# Part Two\n\n## The Calm\n\nAll quiet.")
    # The Storm dropped below the last row: after The Calm, at the end, and the text still ends as it did.
    assert _placed(1, before=None) == ("Title page.\n\n# Part One\n\n## The Light\n\nIt held.\n\n# Part Two\n\n"
                                       "## The Calm\n\nAll quiet.\n\n## The Storm\n\nRain came.")


def test_a_section_is_not_dropped_where_it_would_take_others_or_go_inside_itself() -> None:
    assert not can_place(LEVELS, 0, before=4)  # a part before a chapter: it would take The Calm as its own
    assert not can_place(LEVELS, 0, before=1) and not can_place(LEVELS, 0, before=2)  # inside itself
    assert not can_place(LEVELS, 0, before=0) and not can_place(LEVELS, 0, before=3)  # where it stands
    assert not can_place(LEVELS, 3, before=None) and not can_place(LEVELS, 4, before=None)  # already the last
    assert not can_place(LEVELS, 1, before=9)
    assert _placed(0, before=4) is None
    assert can_place(LEVELS, 4, before=0)  # a chapter may go before a part, after the title page


def test_a_folded_heading_hides_the_headings_under_it_up_to_the_next_of_its_level() -> None:
    levels = [1, 2, 3, 2, 1, 2]  # Part, chapter, scene, chapter, Part, chapter
    assert [has_sections_under(levels, index) for index in range(6)] == [True, True, False, False, True, False]
    assert hidden_by_folds(levels, [True, False, False, False, False, False]) == [False, True, True, True, False, False]
    assert hidden_by_folds(levels, [False, True, False, False, True, False]) == [False, False, True, False, False, True]
    # A fold inside a folded part stays as it was, hidden with the part.
    assert hidden_by_folds(levels, [True, True, False, False, False, False]) == [False, True, True, True, False, False]
    assert hidden_by_folds(levels, [False] * 6) == [False] * 6
