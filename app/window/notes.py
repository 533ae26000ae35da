"""Edit ▸ Next Note (F8): the next ``<!-- … -->`` in the text, selected. A note is Markdown's note to self, which
the exports leave out (a Word export offers to keep them as comments); a Word or LibreOffice document's comments
come in as notes at their places, so this is how a writer goes through an editor's comments: each selected in
turn, to answer and then delete."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QObject, QRegularExpression
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QStatusBar

from app.window.editor_widget import RewriteEditor

NOTE = "<!--.*?-->"  # within a paragraph, as comments arrive; QTextDocument.find searches block by block
NONE_YET = "No notes in the text. A note is written <!-- like this -->; a Word document's comments arrive as notes."


class NotesWindow(Protocol):
    @property
    def editor(self) -> RewriteEditor: ...

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name


class Notes(QObject):
    def __init__(self, window: NotesWindow, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.window = window
        self.action = QAction("Next &Note", parent)
        self.action.setShortcut(QKeySequence("F8"))
        self.action.setStatusTip("Select the next note (<!-- … -->): a Word document's comments arrive as notes")
        self.action.triggered.connect(self.select_next)

    def select_next(self) -> bool:
        """Select the first note after the selection (from the top again past the last); whether there was one.
        The status bar says which of how many it is."""
        editor = self.window.editor
        document = editor.document()
        pattern = QRegularExpression(NOTE)
        found = document.find(pattern, editor.textCursor().selectionEnd())
        wrapped = found.isNull()
        if wrapped:
            found = document.find(pattern, 0)
        if found.isNull():
            self.window.statusBar().showMessage(NONE_YET, 6000)
            return False
        editor.setTextCursor(found)
        editor.ensureCursorVisible()
        starts = []
        each = document.find(pattern, 0)
        while not each.isNull():
            starts.append(each.selectionStart())
            each = document.find(pattern, each.selectionEnd())
        index = starts.index(found.selectionStart()) + 1
        where = ", from the top again" if wrapped and len(starts) > 1 else ""
        self.window.statusBar().showMessage(f"Note {index} of {len(starts)}{where}: Delete removes it.", 6000)
        return True
