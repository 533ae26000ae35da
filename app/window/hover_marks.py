"""What the mouse rests on in the text: a Markdown mark (a footnote's reference, a picture) found on the line
under the pointer, on its own letters, not anywhere past the line's end, where Qt's nearest position would put
it. The tooltips that say what a mark stands for (``footnote_command``, ``picture_command``) ask here."""

from __future__ import annotations

import re

from PySide6.QtCore import QPoint
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from app.window.live_span import index_at, utf16_length


def mark_under(editor: QPlainTextEdit, x: int, y: int, pattern: re.Pattern[str]) -> re.Match[str] | None:
    """The match of ``pattern`` on the line at the viewport's ``x``, ``y`` that the pointer is on, else None. A
    mark wrapped over two lines counts wherever the pointer is on its line."""
    cursor = editor.cursorForPosition(QPoint(x, y))
    block = cursor.block()
    line = block.text()
    at = index_at(line, cursor.positionInBlock())
    found = next((match for match in pattern.finditer(line) if match.start() <= at <= match.end()), None)
    if found is None:
        return None
    first, last = QTextCursor(block), QTextCursor(block)
    first.setPosition(block.position() + utf16_length(line[: found.start()]))
    last.setPosition(block.position() + utf16_length(line[: found.end()]))
    start, end = editor.cursorRect(first), editor.cursorRect(last)
    if start.top() == end.top() and not (start.left() <= x <= end.left() and start.top() <= y <= end.bottom()):
        return None
    return found
