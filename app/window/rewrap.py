"""Edit ▸ Rewrap Paragraph: the paragraphs at the caret (or across the selection) wrapped again at their
document's width, as Emacs's fill-paragraph or Vim's gq do. A rewrite inside a hand-wrapped paragraph wraps
its own new text (model.edit.wrapping), but the writer's lines after it keep their breaks, so a longer or
shorter sentence leaves a ragged line; this mends the whole paragraph, as one undo step. A triple-click in a
hand-wrapped paragraph selects all of it (``ParagraphClicks``), not the line Qt's would."""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, SignalInstance
from PySide6.QtGui import QAction, QMouseEvent, QTextBlock, QTextCursor
from PySide6.QtWidgets import QApplication, QMainWindow, QMenu

from app.dialogs.message_bar import MessageBar
from app.window.editor_widget import RewriteEditor
from model.edit.wrapping import BLANK_LINES, DEFAULT_WRAP_WIDTH, prevailing_width, refill, unwrap, wrap_width


def _is_blank(block: QTextBlock) -> bool:
    return not block.text().strip()


def paragraph_range(editor: RewriteEditor, start: int, end: int) -> tuple[int, int]:
    """The document positions of the paragraphs (blank lines apart) that [start, end] touches; blank lines at
    its edges (a selection from one) are not theirs."""
    document = editor.document()
    first, last = document.findBlock(start), document.findBlock(end)
    while _is_blank(first) and first.blockNumber() < last.blockNumber():
        first = first.next()
    while _is_blank(last) and last.blockNumber() > first.blockNumber():
        last = last.previous()
    while first.previous().isValid() and not _is_blank(first.previous()) and not _is_blank(first):
        first = first.previous()
    while last.next().isValid() and not _is_blank(last.next()) and not _is_blank(last):
        last = last.next()
    return first.position(), last.position() + last.length() - 1


def left_ragged(editor: RewriteEditor, position: int, width: int) -> bool:
    """Whether the paragraph at ``position``, hand-wrapped at ``width`` before a rewrite inside it, no longer
    passes for hand-wrapped (model.edit.wrapping) and Rewrap Paragraph would change it: a line the rewrite
    left shorter than the others."""
    text = editor.text_between(*paragraph_range(editor, position, position))
    return not wrap_width(text.split("\n")) and refill(text, width) != text


def rewrap_paragraphs(editor: RewriteEditor) -> str:
    """Rewrap the paragraphs at the caret; what the status bar says of it."""
    selection = editor.textCursor()
    start, end = paragraph_range(editor, selection.selectionStart(), selection.selectionEnd())
    old = editor.text_between(start, end)
    if not old.strip():
        return "Put the cursor in a paragraph to rewrap it."
    span = editor.live_span
    if span is not None and start < span.end and end > span.start:
        return "That paragraph is being rewritten: accept or reject the draft first, then rewrap it."
    measured = prevailing_width(editor.plain_text())
    width = measured or DEFAULT_WRAP_WIDTH
    new = refill(old, width)
    why = "this document's wrapped paragraphs" if measured else "no paragraph here is wrapped to measure"
    if new == old:
        return f"Already wrapped at {width} columns ({why})."
    changed = _replace_paragraphs(editor, start, end, old, new)
    what = "the paragraph" if changed == 1 else f"{changed} paragraphs"
    return f"Rewrapped {what} at {width} columns ({why}). Ctrl+Z undoes it."


def _replace_paragraphs(editor: RewriteEditor, start: int, end: int, old: str, new: str) -> int:
    """Put ``new`` in place of [start, end] (``old``) as one undo step, the caret before the same word as it was
    (as many non-space characters before it as there were); how many paragraphs changed."""
    caret = editor.textCursor().position()
    inked = sum(not char.isspace() for char in editor.text_between(start, max(start, min(caret, end))))
    before_a_word = caret < end and not editor.text_between(caret, caret + 1).isspace()
    cursor = QTextCursor(editor.document())
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    cursor.beginEditBlock()  # one undo step
    cursor.insertText(new)
    cursor.endEditBlock()
    seen, offset = 0, 0
    while offset < len(new) and seen < inked:
        seen += not new[offset].isspace()
        offset += 1
    while before_a_word and offset < len(new) and new[offset].isspace():
        offset += 1
    cursor.setPosition(start + len(new[:offset].encode("utf-16-le")) // 2)
    editor.setTextCursor(cursor)
    return sum(a != b for a, b in zip(BLANK_LINES.split(old), BLANK_LINES.split(new), strict=False))


def join_wrapped_lines(editor: RewriteEditor) -> str:
    """Edit ▸ Join Wrapped Lines: join each hand-wrapped paragraph of the selection, or of the whole text where
    nothing is selected, into one line, which the window wraps at its own width (a hand-wrapped text in a
    window narrower than its lines breaks every other line short); what the status bar says of it."""
    selection = editor.textCursor()
    if selection.hasSelection():
        start, end = paragraph_range(editor, selection.selectionStart(), selection.selectionEnd())
    else:
        start, end = 0, editor.end_position()
    span = editor.live_span
    if span is not None and start < span.end and end > span.start:
        return "A rewrite is in the text there: accept or reject the draft first, then join the lines."
    old = editor.text_between(start, end)
    new = unwrap(old, prevailing_width(editor.plain_text()))
    if new == old:
        return "No paragraph here is wrapped by hand: no lines to join."
    joined = _replace_paragraphs(editor, start, end, old, new)
    what = "1 paragraph" if joined == 1 else f"{joined:,} paragraphs"
    return f"Joined the lines of {what} (verse and lists keep theirs). Ctrl+Z undoes it."


def add_join_action(window: QMainWindow, editor: RewriteEditor, menu: QMenu, before: QAction, notices: MessageBar,
                    replaced: SignalInstance) -> QAction:  # fmt: skip
    """Edit ▸ Join Wrapped Lines, beside Rewrap Paragraph; and a notice, when a text comes in (``replaced``)
    wrapped by hand wider than the window's column, that says it is there."""
    narrow = NarrowColumn(editor, notices)

    def join() -> None:
        window.statusBar().showMessage(join_wrapped_lines(editor), 8000)
        notices.resolve(NARROW_TOPIC)

    action = QAction("&Join Wrapped Lines", window)
    action.setStatusTip("Join each hand-wrapped paragraph (of the selection, or of the whole text) into one line")
    action.triggered.connect(join)
    menu.insertAction(before, action)
    replaced.connect(lambda text: QTimer.singleShot(0, lambda: narrow.check(text)))
    return action


NARROW_TOPIC = "hand-wrapped"  # the notice's topic: joining the lines, or a column grown wide enough, resolves it
MEASURED_CHARS = 200_000  # of a text, to find its wrapping width: a novel's first chapters say it (5 ms, not 80)


class NarrowColumn(QObject):
    """A text wrapped by hand at more columns than the window's column holds breaks every other line short: the
    notice that says so, and what mends it, up until the column holds the lines (the window widened, a side panel
    closed)."""

    def __init__(self, editor: RewriteEditor, notices: MessageBar) -> None:
        super().__init__(editor)
        self.editor, self.notices = editor, notices
        self.width = 0  # the text's hand-wrapped width, while the notice may be up
        editor.viewport().installEventFilter(self)

    def room(self) -> int:
        return self.editor.viewport().width() // max(1, self.editor.fontMetrics().averageCharWidth())

    def check(self, text: str) -> None:
        """A text came in: say so if it is too wide, unless another notice (an import's) is up."""
        self.width = prevailing_width(text[:MEASURED_CHARS])
        if self.width and self.room() < self.width and not self.notices.isVisible():
            self.notices.show_message(
                f"This text is wrapped by hand at {self.width} columns, more than the window's column holds, so its "
                "lines break short. Edit ▸ Join Wrapped Lines makes each paragraph one line (verse and lists keep "
                "theirs; Ctrl+Z undoes it), or hide the side panels.", "info", topic=NARROW_TOPIC,
            )  # fmt: skip

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self.notices.topic == NARROW_TOPIC and self.room() >= self.width:
            self.notices.resolve(NARROW_TOPIC)
        return False


class ParagraphClicks(QObject):
    """A triple-click selects the paragraph, as a word processor's does: in a text wrapped by hand (a Project
    Gutenberg book, Markdown typed at 72 columns) Qt's selects one of its lines, and a rewrite of it broke the
    sentence the line cut. Verse, lists and paragraphs of one line keep Qt's line."""

    def __init__(self, editor: RewriteEditor) -> None:
        super().__init__(editor)
        self.editor = editor
        self._double_click: tuple[float, QPoint] | None = None  # when and where the last double-click was
        editor.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if not isinstance(event, QMouseEvent) or event.button() != Qt.MouseButton.LeftButton:
            return False
        point = event.position().toPoint()
        if event.type() == QEvent.Type.MouseButtonDblClick:
            self._double_click = (time.monotonic(), point)
        elif event.type() == QEvent.Type.MouseButtonPress and self._double_click is not None:
            at, where = self._double_click
            self._double_click = None
            near = (point - where).manhattanLength() < QApplication.startDragDistance()
            if near and time.monotonic() - at < QApplication.doubleClickInterval() / 1000:
                QTimer.singleShot(0, self._whole_paragraph)  # once Qt has selected the line
        return False

    def _whole_paragraph(self) -> None:
        cursor = self.editor.textCursor()
        document = self.editor.document()
        block = document.findBlock(cursor.selectionStart())
        line_end = block.position() + block.length()  # Qt's line takes its line break with it
        if cursor.selectionStart() != block.position() or cursor.selectionEnd() not in (line_end - 1, line_end):
            return  # not Qt's line (a live span refused it, the caret moved on)
        if _is_blank(block):
            return
        start, end = paragraph_range(self.editor, cursor.selectionStart(), cursor.selectionStart())
        span = self.editor.live_span
        if end - start <= block.length() - 1 or span is not None and start < span.end and end > span.start:
            return
        if not wrap_width(self.editor.text_between(start, end).split("\n")):
            return  # verse, a list, lines typed a sentence each: a line is what was meant
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        self.editor.setTextCursor(cursor)
