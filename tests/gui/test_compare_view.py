"""The preview that shows one text as a change from another (app/dialogs/compare_view.py): what Saved Versions,
the recovery dialog and Mark Changes Since… show a writer before they choose."""

from __future__ import annotations

from gui_helpers import pieces
from PySide6.QtWidgets import QPlainTextEdit

from app.dialogs.compare_view import show_change


def test_the_words_only_one_text_has_are_marked_and_the_first_change_is_in_view(qtbot) -> None:
    preview = QPlainTextEdit()
    qtbot.addWidget(preview)
    before = "The sea 🌊 was calm.\nThe keeper climbed the stairs.\nThe lamp was lit.\n"
    after = "The sea 🌊 was calm.\nThe keeper ran up the stairs.\nThe lamp was lit at dusk.\n"
    assert show_change(preview, before, after) == 2
    assert pieces(preview) == [
        ("The sea 🌊 was calm.\nThe keeper ", "kept"), ("climbed", "removed"), ("ran up", "added"),
        (" the stairs.\nThe lamp was lit", "kept"), (" at dusk", "added"), (".\n", "kept"),
    ]  # fmt: skip
    # The caret on the first change, in Qt's positions (the wave counts two).
    assert preview.textCursor().position() == len("The sea 🌊 was calm.\nThe keeper ") + 1
    assert not preview.document().isUndoRedoEnabled()


def test_with_nothing_to_compare_the_text_is_shown_plain(qtbot) -> None:
    preview = QPlainTextEdit()
    qtbot.addWidget(preview)
    assert show_change(preview, None, "Only copy.\n") == 0
    assert pieces(preview) == [("Only copy.\n", "kept")]
    show_change(preview, "One.\nTwo.\n", "One.\n")  # a preview used again forgets its earlier marks
    assert show_change(preview, "Same.\n", "Same.\n") == 0 and pieces(preview) == [("Same.\n", "kept")]


def test_a_book_with_a_change_in_two_chapters_marks_just_those(qtbot) -> None:
    preview = QPlainTextEdit()
    qtbot.addWidget(preview)
    lines = [f"Line {number} of the book, where the keeper counts the steps again." for number in range(20_000)]
    before = "\n".join(lines) + "\n"
    lines[3_000] = lines[3_000].replace("keeper", "lighthouse keeper")
    lines[17_000] = lines[17_000].replace(" again", "")
    after = "\n".join(lines) + "\n"
    assert show_change(preview, before, after) == 2
    marked = [piece for piece in pieces(preview) if piece[1] != "kept"]
    assert marked == [("lighthouse ", "added"), (" again", "removed")]
    line = preview.textCursor().block().text()
    assert line.startswith("Line 3000 of the book")


def test_a_line_break_taken_out_shows_as_a_struck_pilcrow_and_the_new_lines_stand(qtbot) -> None:
    preview = QPlainTextEdit()
    qtbot.addWidget(preview)
    assert show_change(preview, "It went out.\nMara lit the lamp.\n", "It went out. Mara lit the lamp.\n") == 1
    assert pieces(preview) == [
        ("It went out.", "kept"), ("¶", "removed"), (" ", "added"), ("Mara lit the lamp.\n", "kept"),
    ]  # fmt: skip
    assert preview.document().blockCount() == 2  # the text's one line, and the empty one after its last break
