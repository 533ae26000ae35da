"""View ▸ Typewriter Scrolling (app/window/typewriter.py) in a real window: the line being written stays at
the middle of the view while keys move it, even at the document's end; a click leaves the view where it is."""

from __future__ import annotations

from gui_helpers import place_cursor
from PySide6.QtCore import QPoint, Qt

LINES = "\n".join(f"Line {n} of the keeper's log, with the weather and the ships that passed." for n in range(300))


def caret_offset_from_middle(window) -> float:
    """How far the caret's line is from the middle of the view, in lines."""
    editor = window.editor
    rect = editor.cursorRect()
    return (rect.center().y() - editor.viewport().height() / 2) / rect.height()


def test_the_written_line_stays_at_the_middle_while_it_is_on(document_window, qtbot) -> None:
    window = document_window(text=LINES)
    window.resize(900, 640)
    editor = window.editor
    place_cursor(window, LINES.index("Line 150"))
    editor.ensureCursorVisible()
    qtbot.keyClicks(editor, "x")
    qtbot.wait(20)
    assert caret_offset_from_middle(window) > 3  # off: the caret's line sits low, where it was scrolled to
    assert not window.prefs.typewriter_scrolling
    window.typewriter.action.trigger()
    assert abs(caret_offset_from_middle(window)) < 1 and window.prefs.typewriter_scrolling  # remembered
    for key in (Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Return):
        qtbot.keyClick(editor, key)
        qtbot.wait(20)
        assert abs(caret_offset_from_middle(window)) < 1
    qtbot.keyClick(editor, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    qtbot.wait(20)
    assert abs(caret_offset_from_middle(window)) < 1  # the last line too: the view scrolls past the end
    scrolled = editor.verticalScrollBar().value()
    qtbot.mouseClick(editor.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(40, 20))
    qtbot.wait(20)
    assert editor.verticalScrollBar().value() == scrolled  # a click moves the caret, not the text
    window.typewriter.action.trigger()
    assert not window.prefs.typewriter_scrolling and not editor.centerOnScroll()
