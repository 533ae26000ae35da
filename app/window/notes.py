"""Edit ▸ Next Note (F8): the next ``<!-- … -->`` in the text, selected. A note is Markdown's note to self, which
the exports leave out (a Word export offers to keep them as comments); a Word or LibreOffice document's comments
come in as notes at their places, so this is how a writer goes through an editor's comments: each selected in
turn, to answer and then delete. Edit ▸ New Note (Ctrl+Alt+M, Word's and Google Docs' key for a comment) writes
one: its marks put in at the caret, or after the words selected, the caret between them to type it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, QRegularExpression
from PySide6.QtGui import QAction, QKeySequence, QTextCursor
from PySide6.QtWidgets import QStatusBar

from app.documents.markdown_format import is_markdown
from app.window.action_states import span_locked
from app.window.editor_widget import RewriteEditor
from app.window.live_span import index_at, utf16_length

NOTE = "<!--.*?-->"  # within a paragraph, as comments arrive; QTextDocument.find searches block by block
NONE_YET = "No notes in the text. A note is written <!-- like this -->; a Word document's comments arrive as notes."
NEW_TIP = "Write a note at the cursor (<!-- … -->): left out of every export, a Word export can send it as a comment"
PLAIN_TEXT = "Notes are Markdown's (<!-- … -->), and this is a plain-text file, where they would print as typed."


class NotesWindow(Protocol):
    @property
    def editor(self) -> RewriteEditor: ...

    @property
    def path(self) -> Path | None: ...

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name


class Notes(QObject):
    def __init__(self, window: NotesWindow, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.window = window
        self.action = QAction("Next &Note", parent)
        self.action.setShortcut(QKeySequence("F8"))
        self.action.setStatusTip("Select the next note (<!-- … -->): a Word document's comments arrive as notes")
        self.action.triggered.connect(self.select_next)
        self.new_action = QAction("New Note", parent)  # every letter of it is the Edit menu's already: Ctrl+Alt+M
        self.new_action.setShortcut(QKeySequence("Ctrl+Alt+M"))
        self.new_action.setStatusTip(NEW_TIP)
        self.new_action.triggered.connect(lambda _checked=False: self.write_new())

    def write_new(self) -> bool:
        """Put a note's marks in at the caret (after the selection), the caret between them, as one undo step;
        whether they went in. Refused in a plain text, inside a note, and in or at a rewrite's span."""
        window, editor = self.window, self.window.editor
        status = window.statusBar()
        if not is_markdown(window.path):
            status.showMessage(PLAIN_TEXT, 8000)
            return False
        at = editor.textCursor().selectionEnd()
        block = editor.document().findBlock(at)
        line = block.text()
        inside = index_at(line, at - block.position())  # Python's characters; Qt counts an emoji as two
        while 0 < inside < len(line) and line[inside - 1].isalnum() and line[inside].isalnum():
            inside += 1  # never inside a word: after it
        at = block.position() + utf16_length(line[:inside])
        if any(m.start() < inside < m.end() for m in re.finditer(NOTE, line)):
            status.showMessage("The cursor is inside a note already: type there, or put it after the note.", 6000)
            return False
        span = editor.live_span
        if span is not None and span.touches(at, at) or editor.isReadOnly():
            status.showMessage(span_locked(editor.phase), 6000)
            return False
        cursor = QTextCursor(editor.document())
        cursor.setPosition(at)
        with editor.writer_edit():
            cursor.insertText("<!--  -->")
        cursor.setPosition(cursor.position() - len(" -->"))
        editor.setTextCursor(cursor)
        status.showMessage("Type the note. Exports leave it out; Export as Word Document can send it as your "
                           "comment. F8 goes from note to note.", 8000)  # fmt: skip
        return True

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
