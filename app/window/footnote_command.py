"""Format ▸ Footnote (Ctrl+Alt+F, Word's key for it): a Markdown footnote put in at the caret, its definition's
line opened for the writer to type the note, as one undo step (the rules: ``app/documents/footnotes.py``). The
same key on a footnote goes between its two halves: from ``[^2]`` in the text to its words, and back. The mouse
resting on ``[^2]`` shows its words, as a word processor shows a note's. Format ▸ Renumber Footnotes numbers them
in order again after a cut and paste or a moved section put them out of it."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction, QHelpEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import QStatusBar, QToolTip

from app.documents.footnotes import (
    DEFINITION,
    REFERENCE,
    TextEdit,
    add_footnote,
    apply_edits,
    definition_at,
    footnote_partner,
    footnote_words,
    renumbering,
)
from app.documents.markdown_format import is_markdown
from app.window.editor_widget import RewriteEditor
from app.window.hover_marks import mark_under
from app.window.live_span import index_at, utf16_length

KEYS = "Ctrl+Alt+F"
TOOLTIP_CHARACTERS = 60
TIP = "Add a footnote at the cursor and type its words at the end (on a footnote: go to its words, and back)"
WHILE_REWRITING = "A rewrite is open: accept or reject the draft first, then add the footnote."
RENUMBER_TIP = "Number the footnotes 1, 2, 3… in the order the text refers to them, and their lines so"
PLAIN_TEXT = "Footnotes are Markdown's ([^1]), and this is a plain-text file: save it as .md to add them."


class FootnoteWindow(Protocol):
    @property
    def editor(self) -> RewriteEditor: ...

    @property
    def path(self) -> Path | None: ...

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name


class FootnoteCommand(QObject):
    def __init__(self, window: FootnoteWindow, parent: QObject) -> None:
        super().__init__(parent)
        self.window = window
        self.action = QAction("&Footnote", parent)
        self.action.setShortcut(QKeySequence(KEYS))
        self.action.setToolTip(TIP)
        self.action.setStatusTip(TIP)
        self.action.triggered.connect(lambda _checked=False: self.run())
        self.renumber_action = QAction("&Renumber Footnotes", parent)
        self.renumber_action.setToolTip(RENUMBER_TIP)
        self.renumber_action.setStatusTip(RENUMBER_TIP)
        self.renumber_action.triggered.connect(lambda _checked=False: self.renumber())
        window.editor.viewport().installEventFilter(self)  # the mouse resting on a reference: its words

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            words = self.words_at(event.pos().x(), event.pos().y())
            if words is not None:
                # As rich text, which Qt's tooltip wraps (a note of a paragraph ran across the screen), in a
                # column of a short line's width where it is long (Qt wrapped it at a word or four a line).
                shown = html.escape(words)
                if len(words) > TOOLTIP_CHARACTERS:
                    width = self.window.editor.fontMetrics().averageCharWidth() * TOOLTIP_CHARACTERS
                    shown = f'<table width="{width}"><tr><td>{shown}</td></tr></table>'
                QToolTip.showText(event.globalPos(), f"<p>{shown}</p>", self.window.editor.viewport())
                return True
        return super().eventFilter(watched, event)

    def words_at(self, x: int, y: int) -> str | None:
        """What the tooltip says over the reference at the viewport's ``x``, ``y``: its note's words (or that it
        has none yet); None off a reference or in a plain text."""
        editor = self.window.editor
        if not is_markdown(self.window.path):
            return None
        reference = mark_under(editor, x, y, REFERENCE)
        definition = DEFINITION.match(reference.string) if reference is not None else None
        if reference is None or definition is not None and definition.start(1) == reference.start(1):
            return None  # a definition's own label
        label = reference.group(1)
        words = footnote_words(editor.plain_text(), label)
        if words is None:
            return f"Footnote {label} has no line of its words ([^{label}]: …): the exports print it as written."
        return f"Footnote {label}: {words}" if words else f"Footnote {label} has no words yet ({KEYS} goes there)."

    def run(self) -> bool:
        """Go to the other half of the footnote at the caret, or add one; whether the caret moved."""
        editor = self.window.editor
        if not is_markdown(self.window.path):
            self._say(PLAIN_TEXT)
            return False
        text = editor.plain_text()
        cursor = editor.textCursor()
        at = index_at(text, cursor.selectionEnd())
        partner = footnote_partner(text, at)
        on_definition = definition_at(text, at)
        if partner is not None:
            place, label = partner
            self._place(text, place)
            if on_definition is not None:
                self._say(f"Footnote {label} in the text. {KEYS} goes to its words again.")
            else:
                self._say(f"Footnote {label}'s words. {KEYS} goes back to the text.")
            return True
        if on_definition is not None:
            self._say(f"The text does not refer to footnote {on_definition}: type [^{on_definition}] where it belongs.")
            return False
        if editor.live_span is not None or editor.isReadOnly():
            self._say(WHILE_REWRITING)
            return False
        note = add_footnote(text, at)
        self._apply(text, note.edits)
        self._place(apply_edits(text, note.edits), note.caret)
        moved = f" The {note.renumbered} after it moved up by one." if note.renumbered > 1 else (
            " The one after it is now " + str(int(note.label) + 1) + "." if note.renumbered else "")
        self._say(f"Footnote {note.label}: type its words here.{moved} {KEYS} goes back to the text.")
        return True

    def renumber(self) -> bool:
        """Format ▸ Renumber Footnotes, as one undo step; whether anything changed."""
        editor = self.window.editor
        if not is_markdown(self.window.path):
            self._say(PLAIN_TEXT)
            return False
        if editor.live_span is not None or editor.isReadOnly():
            self._say(WHILE_REWRITING.replace("add the footnote", "renumber the footnotes"))
            return False
        text = editor.plain_text()
        edits = renumbering(text)
        if not edits:
            self._say("The footnotes are numbered in order already.")
            return False
        self._apply(text, edits)
        self._say("Footnotes numbered in the order the text refers to them (Ctrl+Z puts them back).")
        return True

    def _apply(self, text: str, edits: tuple[TextEdit, ...]) -> None:
        """``edits`` of ``text`` (the document's as it stands) as one undo step."""
        editor = self.window.editor
        cursors = []
        for edit in edits:  # each edit's place as a cursor, which earlier edits' insertions move along
            each = QTextCursor(editor.document())
            each.setPosition(utf16_length(text[: edit.start]))
            each.setPosition(utf16_length(text[: edit.end]), QTextCursor.MoveMode.KeepAnchor)
            cursors.append(each)
        with editor.writer_edit():
            for each, edit in zip(cursors, edits, strict=True):
                each.insertText(edit.text)

    def _place(self, text: str, index: int) -> None:
        editor = self.window.editor
        caret = editor.textCursor()
        caret.setPosition(utf16_length(text[:index]))
        editor.setTextCursor(caret)
        editor.ensureCursorVisible()

    def _say(self, message: str) -> None:
        self.window.statusBar().showMessage(message, 8000)
