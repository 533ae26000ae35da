"""Moving a section past its neighbour: its whole text with it (a part with its chapters), the blank lines kept
between them and the text's ending at its end, and no move past the first or last under its heading."""

from __future__ import annotations

from app.documents.sections import move_section, section_end, sibling

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
