"""Quotation marks and dashes typed as the document has them. In a text of curly marks (‘ ’ “ ”), ' and " type
curly ones (low ones „ “ in a German text of them, guillemets « » in a French one, with its inner space);
in a text whose dashes are em dashes (—), a second hyphen typed after a word's makes one.
A ‘ typed before a word it shortens ('Tis, 'twas, 'em, 'n', '90s) becomes ’ as the word ends, as a word
processor's autocorrect does; Ctrl+Z after the space gives back the ‘ before the space itself.

Nothing to set: the kinds are read from the text around the caret (model.edit.typography, the same reading that
gives a draft the document's marks and dashes), so a document of straight marks or of -- dashes and one that mixes
both keep what the keys type. A text with no quotation marks yet gets those of its language (the one spelling
checks): “ ” in English, „ “ in German, « » in French, as a word processor's do, and an English text with no dashes
yet makes -- an em dash; the first is a step of its own, so Ctrl+Z right after it gives back what was typed, and
with it a text of straight marks or of -- dashes. Each quotation mark is turned by what stands beside it: “ after
a space, ” after a word, ’ inside one. Two hyphens at a line's start stay (a Markdown list or rule begins so).
The writer's own key presses only: a paste, a rewrite's passes and the shortcuts are left alone, and so is
Markdown code (a `span` or a fenced block), whose marks are a program's; a key that would touch a developing
rewrite goes on to the editor, which refuses it as it refuses any.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import QEvent, QLocale, QObject, QRegularExpression, Qt
from PySide6.QtGui import QKeyEvent, QTextBlock, QTextCursor
from PySide6.QtWidgets import QStatusBar

from app.documents.markdown_format import FENCE
from app.window.editor_widget import RewriteEditor
from model.edit.typography import (
    EM_DASH,
    QUOTE_MARKS,
    STRAIGHT,
    curly_mark,
    elided_opening,
    has_dashes,
    has_quotes,
    typed_dash_style,
    typed_quote_style,
)

CONTEXT_CHARS = 4000  # either side of the caret: enough to tell the kind, little to read on every key
CODE_SPAN = re.compile(r"`[^`]*`")
FENCE_LINE = QRegularExpression(FENCE.pattern)  # a fenced code block's opening or closing line
STATUS_MS = 8000  # long enough to read what the first mark became, and the way back
COMMAND_KEYS = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.MetaModifier


class TypedMarks(QObject):
    """Curls the quotation marks typed into ``editor`` where its text has curly ones (or none yet, in a
    ``language`` that prints them), and makes a typed -- an em dash where its text has those (an event filter).
    ``status`` says for a while what the first mark of a new text became, and how to have a straight one."""

    def __init__(self, editor: RewriteEditor, language: Callable[[], str] = lambda: "",
                 status: QStatusBar | None = None) -> None:  # fmt: skip
        super().__init__(editor)
        self.editor = editor
        self.language = language
        self.status = status
        editor.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is not self.editor or event.type() != QEvent.Type.KeyPress:
            return False
        assert isinstance(event, QKeyEvent)
        mark = event.text()
        if event.modifiers() & COMMAND_KEYS or self.editor.isReadOnly():
            return False
        if len(mark) == 1 and not mark.isalnum() and mark not in STRAIGHT:
            self.turn_elision()  # a word ends here (the key itself goes on below)
        if mark not in (*STRAIGHT, "-"):
            return False
        cursor = self.editor.textCursor()
        first, last = cursor.selectionStart(), cursor.selectionEnd()
        live = self.editor.live_range()
        reach = first - 1 if mark == "-" else first  # a dash replaces the hyphen before it
        if live is not None and reach <= live[1] and last >= live[0]:
            return False  # the editor's to refuse
        document = self.editor.document()
        before = document.characterAt(first - 1) if first > 0 else ""
        if mark == "-":
            # A second hyphen after a word's (not a line's start, not a third, not a table's rule or an HTML
            # comment's <!--): the two are one em dash.
            two_back = document.characterAt(first - 2) if first > 1 else "\u2029"
            comment = first > 2 and document.characterAt(first - 3) + two_back == "<!"
            if before != "-" or first != last or two_back in "-|\u2029" or comment or self.in_code(first):
                return False  # the cheap tests first: most hyphens are a word's
            if typed_dash_style(context := self.around(first, last), self.language()) != "em":
                return False
            if has_dashes(context):
                cursor.beginEditBlock()  # one step: Ctrl+Z gives the hyphen back, as a word processor's does
                cursor.deletePreviousChar()
                cursor.insertText(EM_DASH)
                cursor.endEditBlock()
            else:  # the text's first dash: both hyphens typed, then made one as a step of its own
                self.turn_first(cursor, "--", EM_DASH)
        elif self.in_code(first):
            return False  # a program's marks: as typed
        elif (typed := typed_quote_style(context := self.around(first, last), self.language()))[0] in QUOTE_MARKS:
            turned = curly_mark(mark, before, document.characterAt(last), *typed)
            if has_quotes(context):
                cursor.insertText(turned)
            else:  # the text's first mark: the straight one typed, then turned as a step of its own
                self.turn_first(cursor, mark, turned)
        else:
            return False
        self.editor.setTextCursor(cursor)
        self.editor.ensureCursorVisible()
        return True

    def turn_first(self, cursor: QTextCursor, typed: str, turned: str) -> None:
        """The text's first quotation mark or dash: ``typed`` as the keys gave it (a hyphen before the caret
        already), then made ``turned`` as a step of its own, so that Ctrl+Z gives back what was typed; said."""
        cursor.insertText(typed[-1])
        cursor.beginEditBlock()
        cursor.movePosition(QTextCursor.MoveOperation.Left, QTextCursor.MoveMode.KeepAnchor, len(typed))
        cursor.insertText(turned)
        cursor.endEditBlock()
        if self.status is not None:
            name = QLocale.languageToString(QLocale(self.language()).language())
            self.status.showMessage(f"Typed {turned.strip()} as {name} text prints it (Ctrl+Z makes it {typed})",
                                    STATUS_MS)  # fmt: skip

    def turn_elision(self) -> None:
        """The ‘ before the word the caret ends made ’ where the word is one it shortens (its own undo step)."""
        cursor = self.editor.textCursor()
        if cursor.hasSelection():
            return
        block = cursor.block()
        index = elided_opening(block.text()[: cursor.positionInBlock()])
        if index is None:
            return
        position = block.position() + index
        live = self.editor.live_range()
        if live is not None and live[0] <= position < live[1]:
            return  # a developing rewrite's text is the rewrite's
        mark = QTextCursor(self.editor.document())
        mark.setPosition(position)
        mark.setPosition(position + 1, QTextCursor.MoveMode.KeepAnchor)
        mark.insertText("’")  # same length: the writer's caret stays where it was

    def in_code(self, position: int) -> bool:
        """Whether ``position`` is in Markdown code: inside a `span` on its line, or a fenced block."""
        block = self.editor.document().findBlock(position)
        if block.text()[: position - block.position()].count("`") % 2:
            return True
        return bool(FENCE.match(block.text())) or self.fenced_before(block)

    def fenced_before(self, block: QTextBlock) -> bool:
        """Whether ``block`` is inside a fenced code block: an odd number of fences above it (found by Qt's
        search, so a text with none costs nothing)."""
        document = self.editor.document()
        fenced, found = False, document.find(FENCE_LINE)
        while not found.isNull() and found.block().position() < block.position():
            fenced = not fenced
            found = document.find(FENCE_LINE, found.block().next().position())
        return fenced

    def around(self, first: int, last: int) -> str:
        """Up to ``CONTEXT_CHARS`` of the text either side of the selection, whole paragraphs at a time, its
        Markdown code left out: a program's straight marks say nothing of the prose's."""
        document = self.editor.document()
        blocks: list[QTextBlock] = []
        block, gathered = document.findBlock(first), 0
        while block.isValid() and gathered < CONTEXT_CHARS:
            blocks.insert(0, block)
            gathered += block.length()
            block = block.previous()
        block, gathered = document.findBlock(last).next(), 0
        while block.isValid() and gathered < CONTEXT_CHARS:
            blocks.append(block)
            gathered += block.length()
            block = block.next()
        parts: list[str] = []
        fenced = self.fenced_before(blocks[0])
        for block in blocks:
            if FENCE.match(text := block.text()):
                fenced = not fenced
            elif not fenced:
                parts.append(CODE_SPAN.sub("", text))
        return "\n".join(parts)

