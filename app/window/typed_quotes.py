"""Quotation marks typed as the document has them: in a text of curly marks (‘ ’ “ ”), ' and " type curly ones.

Nothing to set: the kind is read from the text around the caret (model.edit.typography.quote_style, the same
reading that gives a draft the document's marks), so a document of straight marks, one that mixes both and a new
one keep what the keys type. Each mark is turned by what stands beside it: “ after a space, ” after a word, ’
inside one. The writer's own key presses only: a paste, a rewrite's passes and the shortcuts are left alone, and
a key that would touch a developing rewrite goes on to the editor, which refuses it as it refuses any.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent

from app.window.editor_widget import RewriteEditor
from model.edit.typography import STRAIGHT, curly_mark, quote_style

CONTEXT_CHARS = 4000  # either side of the caret: enough to tell the kind, little to read on every key
COMMAND_KEYS = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.MetaModifier


class TypedQuotes(QObject):
    """Curls the quotation marks typed into ``editor`` where its text has curly ones (an event filter)."""

    def __init__(self, editor: RewriteEditor) -> None:
        super().__init__(editor)
        self.editor = editor
        editor.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is not self.editor or event.type() != QEvent.Type.KeyPress:
            return False
        assert isinstance(event, QKeyEvent)
        mark = event.text()
        if mark not in STRAIGHT or not mark or event.modifiers() & COMMAND_KEYS or self.editor.isReadOnly():
            return False
        cursor = self.editor.textCursor()
        first, last = cursor.selectionStart(), cursor.selectionEnd()
        live = self.editor.live_range()
        if live is not None and first <= live[1] and last >= live[0]:
            return False  # the editor's to refuse
        if quote_style(self.around(first, last)) != "curly":
            return False
        document = self.editor.document()
        before = document.characterAt(first - 1) if first > 0 else ""
        cursor.insertText(curly_mark(mark, before, document.characterAt(last)))
        self.editor.setTextCursor(cursor)
        self.editor.ensureCursorVisible()
        return True

    def around(self, first: int, last: int) -> str:
        """Up to ``CONTEXT_CHARS`` of the text either side of the selection, whole paragraphs at a time."""
        document = self.editor.document()
        parts: list[str] = []
        block, gathered = document.findBlock(first), 0
        while block.isValid() and gathered < CONTEXT_CHARS:
            parts.insert(0, block.text())
            gathered += block.length()
            block = block.previous()
        block, gathered = document.findBlock(last).next(), 0
        while block.isValid() and gathered < CONTEXT_CHARS:
            parts.append(block.text())
            gathered += block.length()
            block = block.next()
        return "\n".join(parts)

