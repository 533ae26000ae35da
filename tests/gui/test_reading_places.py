"""A file opens where the writer left off (app/window/reading_places.py): the caret's place is kept when another
document takes the window or the window closes, and found again when the file opens, this start or the next."""

from __future__ import annotations

from pathlib import Path

from gui_helpers import place_cursor

from app.window.reading_places import REST_MS

BOOK = "".join(f"Line {number} of the book, where the keeper counts the steps.\n" for number in range(400))


def caret_line(window) -> str:
    return window.editor.textCursor().block().text()


def test_a_file_opens_where_the_caret_was_left_this_start_and_the_next(make_window, qtbot, tmp_path: Path) -> None:
    book, notes = tmp_path / "book.md", tmp_path / "notes.md"
    book.write_text(BOOK, encoding="utf-8")
    notes.write_text("A note.\n", encoding="utf-8")
    window = make_window(wait_for_model=False)
    assert window.open_path(book)
    assert window.editor.textCursor().position() == 0  # never opened before: its start
    place_cursor(window, BOOK.index("Line 300 of") + 5)
    qtbot.wait(REST_MS + 200)  # the caret rests there
    assert window.open_path(notes)  # another document takes the window
    assert window.open_path(book)
    assert caret_line(window) == "Line 300 of the book, where the keeper counts the steps."
    qtbot.waitUntil(lambda: window.editor.viewport().rect().contains(window.editor.cursorRect()))  # in view

    place_cursor(window, BOOK.index("Line 350 of"))
    window.close()  # noted as the window closes, without waiting for the caret to rest
    again = make_window(wait_for_model=False)  # the next start: the same settings
    assert again.open_path(book)
    assert caret_line(again) == "Line 350 of the book, where the keeper counts the steps."


def test_a_file_shortened_elsewhere_opens_at_its_end_and_a_new_one_at_its_start(make_window, qtbot,
                                                                                 tmp_path: Path) -> None:  # fmt: skip
    book, other = tmp_path / "book.md", tmp_path / "other.md"
    book.write_text(BOOK, encoding="utf-8")
    other.write_text(BOOK, encoding="utf-8")
    window = make_window(wait_for_model=False)
    assert window.open_path(book)
    place_cursor(window, BOOK.index("Line 300 of"))
    qtbot.wait(REST_MS + 200)
    window.new_document()
    assert window.editor.textCursor().position() == 0
    book.write_text("Cut to one line.\n", encoding="utf-8")  # by another program
    assert window.open_path(book)
    assert window.editor.textCursor().position() == window.editor.end_position()
    assert window.open_path(other)  # the same text, another file: a place of its own
    assert window.editor.textCursor().position() == 0
