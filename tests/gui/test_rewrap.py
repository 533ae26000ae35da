"""Edit ▸ Rewrap Paragraph (Alt+Q) in a real window: the ragged paragraph a rewrite leaves in hand-wrapped
text wrapped again at the document's width, one undo step, the caret before the same word, lists and the
developing span left alone."""

from __future__ import annotations

import textwrap

from gui_helpers import HAND_WRAPPED, SIGNAL_TIMEOUT_MS, place_cursor, select
from PySide6.QtCore import Qt

from model.edit.wrapping import wrap_width

FIRST = HAND_WRAPPED.rstrip("\n")
# The same paragraph after a sentence inside it was rewritten longer: its new text wrapped, the lines after
# it as they were, so one line is short.
RAGGED = (
    "So she called softly after it, 'Mouse dear! Do come back again, and we\n"
    "won't talk about cats or dogs either, if you don't like them!' When the\n"
    "Mouse heard this, it turned round at once and swam with great care and\n"
    "very slowly, step by step, back to her: its face\n"
    "was quite pale (with passion, Alice thought), and it said in a low\n"
    "trembling voice, 'Let us get to the shore, and then I'll tell you my\n"
    "history, and you'll understand why it is I hate cats and dogs.'"
)
LIST = "Things to bring:\n- the boots\n- the map of the whole coast from the harbour to the lighthouse"
DOCUMENT = "# The Pool\n\n" + FIRST + "\n\n" + RAGGED + "\n\n" + LIST + "\n"


def test_a_ragged_paragraph_is_wrapped_again_at_the_documents_width_as_one_undo_step(
    document_window, qtbot
) -> None:
    window = document_window(text=DOCUMENT)
    editor = window.editor
    width = max(map(len, FIRST.split("\n")))
    assert wrap_width(RAGGED.split("\n")) == 0  # no longer passes for hand-wrapped: its width is the document's
    caret = DOCUMENT.index("step by step")
    place_cursor(window, caret)
    window.rewrap_action.trigger()
    text = editor.plain_text()
    start = DOCUMENT.index(RAGGED)
    rewrapped = text[start : text.index("\n\n", start)]
    assert rewrapped.split() == RAGGED.split()  # the same words: only the breaks moved
    assert wrap_width(rewrapped.split("\n")) == width  # every line full again, none past the width
    assert text == DOCUMENT.replace(RAGGED, rewrapped)  # the heading, the other paragraph and the list as they were
    assert text[editor.textCursor().position() :].startswith("step by step")
    assert f"at {width} columns" in window.statusBar().currentMessage()
    window.undo()  # one step
    assert editor.plain_text() == DOCUMENT
    window.redo()
    assert editor.plain_text() == text


def test_a_list_keeps_its_lines_and_a_wrapped_paragraph_is_left_as_it_is(document_window) -> None:
    window = document_window(text=DOCUMENT)
    editor = window.editor
    for needle in ("the boots", "cats or dogs"):
        place_cursor(window, DOCUMENT.index(needle))
        window.rewrap_action.trigger()
        assert editor.plain_text() == DOCUMENT
        assert window.statusBar().currentMessage().startswith("Already wrapped at 71 columns")
    assert editor.document().availableUndoSteps() == 0
    # With no wrapped paragraph to measure, a typed one-line paragraph wraps at 72.
    typed = "The keeper climbed the stairs every evening and counted the steps as his father did before him.\n"
    window = document_window(text=typed)
    place_cursor(window, 5)
    window.rewrap_action.trigger()
    assert window.editor.plain_text() == textwrap.fill(typed, 72) + "\n" != typed
    assert "at 72 columns" in window.statusBar().currentMessage()


def test_the_paragraph_a_draft_waits_in_is_not_rewrapped_under_it(document_window, qtbot) -> None:
    window = document_window(text=DOCUMENT, candidates=1, max_denoising_steps=4)
    editor = window.editor
    select(window, "swam with great care")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    before = editor.plain_text()
    place_cursor(window, editor.live_span.start)
    window.rewrap_action.trigger()
    assert editor.plain_text() == before and "being rewritten" in window.statusBar().currentMessage()
    place_cursor(window, before.index("cats or dogs either"))  # another paragraph: rewrapped (nothing to do)
    window.rewrap_action.trigger()
    assert window.statusBar().currentMessage().startswith("Already wrapped")
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert editor.plain_text() == DOCUMENT


def test_an_accept_that_leaves_the_paragraph_ragged_says_how_to_even_it(document_window, qtbot) -> None:
    from app.window.rewrap import left_ragged

    document = FIRST + "\n\n" + FIRST.replace("Mouse", "Dodo") + "\n"
    window = document_window(text=document, candidates=1, max_denoising_steps=4)
    editor = window.editor
    width = max(map(len, FIRST.split("\n")))
    place_cursor(window, document.index("When the"))  # a fill in the middle of the first paragraph
    window.fill_gap()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    text = editor.plain_text()
    first = text[: text.index("\n\n")]
    assert all(len(line) <= width or " " not in line.strip() for line in first.split("\n")), first  # wrapped
    assert left_ragged(editor, 0, width)  # the lines after the fill kept their breaks
    assert "Alt+Q (Edit ▸ Rewrap Paragraph) evens them" in window.statusBar().currentMessage()
    place_cursor(window, 0)
    window.rewrap_action.trigger()
    assert not left_ragged(editor, 0, width) and "Alt+Q" not in window.statusBar().currentMessage()
    # A whole paragraph rewritten comes back wrapped: nothing to even, nothing said of it.
    second = editor.plain_text().index("\n\n") + 2
    select(window, FIRST.replace("Mouse", "Dodo"))
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.plain_text().index("\n\n") + 2 == second and not left_ragged(editor, second, width)
    assert window.statusBar().currentMessage().startswith("Rewrite accepted")
    assert "Alt+Q" not in window.statusBar().currentMessage()


def test_a_selection_from_a_blank_line_rewraps_the_paragraphs_and_keeps_every_blank_line(document_window) -> None:
    window = document_window(text=DOCUMENT)
    editor = window.editor
    start = DOCUMENT.index(RAGGED) - 1  # the blank line before the ragged paragraph
    editor.select_range(start, DOCUMENT.index("the boots"))
    window.rewrap_action.trigger()
    text = editor.plain_text()
    assert text.count("\n\n") == DOCUMENT.count("\n\n") and text.split() == DOCUMENT.split()
    assert text.startswith(DOCUMENT[: start + 1]) and text.endswith(LIST + "\n")  # the list keeps its lines
    assert window.statusBar().currentMessage().startswith("Rewrapped the paragraph at 71 columns")


def test_join_wrapped_lines_makes_each_hand_wrapped_paragraph_one_line_as_one_undo_step(document_window) -> None:
    window = document_window(text=DOCUMENT)
    editor = window.editor
    place_cursor(window, DOCUMENT.index("step by step"))
    window.join_action.trigger()  # nothing selected: the whole text
    text = editor.plain_text()
    assert text == DOCUMENT.replace(FIRST, " ".join(FIRST.split("\n"))).replace(RAGGED, " ".join(RAGGED.split("\n")))
    assert text.endswith(LIST + "\n")  # the list keeps its lines
    assert text[editor.textCursor().position() :].startswith("step by step")
    assert window.statusBar().currentMessage().startswith("Joined the lines of 2 paragraphs")
    window.undo()  # one step
    assert editor.plain_text() == DOCUMENT
    select(window, "step by step")  # a selection: its paragraphs alone
    window.join_action.trigger()
    assert editor.plain_text() == DOCUMENT.replace(RAGGED, " ".join(RAGGED.split("\n")))


def test_a_hand_wrapped_text_wider_than_the_column_says_how_to_join_its_lines(make_window, qtbot, tmp_path) -> None:
    book = tmp_path / "alice.txt"
    book.write_text(DOCUMENT, encoding="utf-8")
    window = make_window()
    window.resize(1200, 700)
    window.open_path(book)
    qtbot.wait(50)
    assert not window.message_bar.isVisible()  # the column holds its lines: nothing to say
    window.outline.show()
    window.drafts_panel.show()
    window.resize(700, 600)
    window.open_path(book)
    qtbot.waitUntil(window.message_bar.isVisible)
    assert "wrapped by hand at 71 columns" in window.message_bar.label.text()
    assert "Edit ▸ Join Wrapped Lines" in window.message_bar.label.text()
    window.resize(1200, 700)
    qtbot.waitUntil(lambda: not window.message_bar.isVisible())  # the column holds the lines now
    window.resize(700, 600)
    window.open_path(book)
    qtbot.waitUntil(window.message_bar.isVisible)
    window.join_action.trigger()
    assert not window.message_bar.isVisible()  # done: the notice goes
    assert "\n\n" + " ".join(FIRST.split("\n")) + "\n\n" in window.editor.plain_text()


def _triple_click(window, qtbot, position: int) -> str:
    """A triple-click on the character at ``position``, as the writer makes it: what it selected."""
    from PySide6.QtTest import QTest

    editor = window.editor
    cursor = editor.textCursor()
    cursor.setPosition(position)
    point = editor.cursorRect(cursor).center()
    QTest.mouseDClick(editor.viewport(), Qt.MouseButton.LeftButton, pos=point)
    QTest.mouseClick(editor.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.wait(50)  # the paragraph is selected once Qt has selected the line
    return editor.textCursor().selectedText().replace("\u2029", "\n")


def test_a_triple_click_selects_a_hand_wrapped_paragraph_and_a_verses_line(document_window, qtbot) -> None:
    verse = "Tyger Tyger, burning bright,\nIn the forests of the night;\nWhat immortal hand or eye,\n"
    window = document_window(text=HAND_WRAPPED + "\n" + verse)
    paragraph = HAND_WRAPPED.rstrip("\n")
    assert wrap_width(paragraph.split("\n"))
    assert _triple_click(window, qtbot, HAND_WRAPPED.index("swam slowly")) == paragraph  # not its third line
    verse_at = len(HAND_WRAPPED) + 1
    assert _triple_click(window, qtbot, verse_at + verse.index("forests")) == "In the forests of the night;\n"  # Qt's
