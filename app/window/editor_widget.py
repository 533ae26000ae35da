"""The text widget, and the live span a rewrite develops in.

How a rewrite lives in the document, and in its undo history:

* Every pass is painted into the document where the span was, inside one edit block: the first paint opens it with
  ``beginEditBlock``, later paints extend it with ``joinPreviousEditBlock``. So however many passes run, the rewrite
  is one undo step, and undo is never switched off.
* The span is tracked by two cursors, so it keeps its place while text before it changes: the start cursor moves
  with text typed at the boundary (that text lands before the span), the end cursor keeps its position on insert
  (text typed there lands after it).
* Reject and cancel undo that one block, which restores the original text byte for byte, and then drop the undone
  block from the redo stack: the history is exactly as it was before the rewrite.
* The rest of the document stays editable. So that an edit elsewhere never ends up inside (or under) the rewrite's
  block, it is made with the block lifted: undo the block, apply the writer's edit as its own undo step, then paint
  the current pass again as a fresh block on top.
* Edits that would change the developing span itself are refused (keys, paste, input methods, cut).

Near 500 lines on purpose: painting, lifting and refusing keep the one invariant above, so they stay in one class;
the Markdown cues are in ``markdown_highlighter.py``, formatted copy and paste in ``markdown_clipboard.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum

from PySide6.QtCore import QMargins, QMimeData, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QDropEvent,
    QFont,
    QFontDatabase,
    QInputMethodEvent,
    QKeyEvent,
    QKeySequence,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QApplication, QMenu, QPlainTextEdit, QWidget

from app.rewrite.worker import Segment
from app.window.live_span import LiveSpan, pass_runs, positions, shared_ends, text_format, utf16_length
from app.window.markdown_clipboard import MarkdownClipboard
from app.window.markdown_highlighter import MarkdownHighlighter
from app.window.theme import CanvasColors, canvas_colors, prose_families, recolored
from app.window.undo_carets import UndoCarets

Move = QTextCursor.MoveOperation
Anchor = QTextCursor.MoveMode.KeepAnchor
Key = Qt.Key
StandardKey = QKeySequence.StandardKey
# A book's line (60 to 80 characters), measured on a sentence: 84 n's let 105 in. Centred in a wider window.
COLUMN_CHARACTERS, SAMPLE = 78, "The storm came in from the west just after dusk, and Mara watched it from the lamp."
_DELETE_MOVES: dict[StandardKey, tuple[Move, ...]] = {
    StandardKey.DeleteStartOfWord: (Move.PreviousWord,),
    StandardKey.DeleteEndOfWord: (Move.NextWord,),
    StandardKey.DeleteEndOfLine: (Move.EndOfBlock,),
    StandardKey.DeleteCompleteLine: (Move.StartOfBlock, Move.EndOfBlock),
}
def _as_saved(text: str) -> str:
    """Qt's paragraph and line separators as "\n" (str.replace: 17x faster than translate on 10 MB)."""
    return text.replace("\u2029", "\n").replace("\u2028", "\n")


class Phase(Enum):
    IDLE = "idle"
    DEVELOPING = "developing"
    REVIEW = "review"


class RewriteEditor(MarkdownClipboard):
    """A plain-text / Markdown editor that can host one developing span at a time."""

    acceptRequested = Signal()
    escapeRequested = Signal()  # cancel while developing, reject while reviewing
    interrupted = Signal(bool)  # undo (True) or redo asked for while a span is live: the controller ends it first
    spanLocked = Signal()  # an edit inside the developing span was refused

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._span: LiveSpan | None = None
        self.phase = Phase.IDLE
        self.colors: CanvasColors = canvas_colors(dark=False)
        self.shade_hesitation = False  # View ▸ Shade Hesitant Words: a developing word's background deepens
        self.hesitant = QColor(205, 72, 44)
        self.zoom_level = 0
        self.painting = False  # a pass or a draft going into the span: the textChanged then is no writer's edit
        self.setFrameShape(QPlainTextEdit.Shape.NoFrame)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTabChangesFocus(False)
        base_size = QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont).pointSizeF()
        font = QFont()
        font.setStyleHint(QFont.StyleHint.Serif)
        font.setPointSizeF(max(base_size, 10.5) + 2)
        self.setFont(font)
        self.set_prose_font("")
        self.highlighter = MarkdownHighlighter(self.document(), self.firstVisibleBlock)
        self.document().setDocumentMargin(28)
        self.undo_carets = UndoCarets(self.document())  # where a section moved puts the caret back (undo_in_place)
        self.document().setModified(False)  # Qt counted the margin as a change: a fresh window must not ask to save
        self.setCursorWidth(2)
        # Where the writer's last keystroke beside a live span left the caret (and that span): the next one
        # there joins its undo step, as typing does in Qt when no rewrite is in between (see writer_edit).
        self._typed_to: tuple[LiveSpan, int] | None = None
        # Each adds to (or mends) the right-click menu: spelling's offers, the window's shortcuts on Qt's entries.
        self.context_menu_extras: list[Callable[[QMenu, QTextCursor], None]] = []
        self.setPlaceholderText("Start writing, or open a document. Select a sentence and press Ctrl+R to redraft it.")

    # -- text access ----------------------------------------------------------------------------

    def plain_text(self) -> str:
        """The document as saved: block breaks become "\\n"; unlike toPlainText, no-break spaces survive."""
        return _as_saved(self.document().toRawText())

    def text_between(self, start: int, end: int) -> str:
        """The text in [start, end), an end past the last character read as the text's end (Qt's contentsChange
        counts the document's closing paragraph separator, which no cursor can reach)."""
        last = self.document().characterCount() - 1
        cursor = QTextCursor(self.document())
        cursor.setPosition(min(start, last))
        cursor.setPosition(min(end, last), Anchor)
        return _as_saved(cursor.selectedText())

    def line_around(self, start: int, end: int) -> tuple[int, str]:
        """The column ``start`` is in (characters from its line's start) and the rest of ``end``'s line."""
        document = self.document()
        first, last = document.findBlock(start), document.findBlock(end)
        return (len(self.text_between(first.position(), start)),
                self.text_between(end, last.position() + last.length() - 1))  # fmt: skip

    def end_position(self) -> int:
        return self.document().characterCount() - 1  # where Move.End puts a cursor: before the closing separator

    def select_range(self, start: int, end: int) -> None:
        """Select from ``start`` to ``end`` (Qt positions), the caret at ``end``, as a drag would."""
        cursor = self.textCursor()
        cursor.setPosition(start)
        cursor.setPosition(end, Anchor)
        self.setTextCursor(cursor)

    def set_colors(self, colors: CanvasColors, heading: QColor | None = None) -> None:
        old, self.colors = self.colors, colors
        self.highlighter.heading_color = heading or colors.ink
        self.highlighter.show_again()
        if self._span is not None:
            self._span.last_paint = [(text, recolored(fmt, old, colors)) for text, fmt in self._span.last_paint]
        if self._span is not None and self._span.painted:
            self.repaint_live_span()

    def set_prose_font(self, family: str) -> None:
        """The text's typeface (Settings ▸ Appearance; "": the book serifs of PROSE_FONTS), at its zoomed size."""
        font = self.font()
        font.setFamilies(prose_families(family))
        self.setFont(font)
        self._center_column()  # the column is so many characters wide

    def apply_zoom(self, level: int) -> None:
        self.zoomIn(level - self.zoom_level)
        self.zoom_level = level
        self._center_column()

    # -- the live span --------------------------------------------------------------------------

    @property
    def live_span(self) -> LiveSpan | None:
        return self._span

    def live_range(self) -> tuple[int, int] | None:
        return None if self._span is None else (self._span.start, self._span.end)

    def has_unsaved_changes(self) -> bool:
        """Whether the writer's text (a live span counted as its original) differs from what was saved."""
        span = self._span
        return self.document().isModified() if span is None else span.modified_beneath

    def mark_saved(self) -> None:
        """The writer's text was saved; a live span's passes still count as changes of the document's."""
        if self._span is None:
            self.document().setModified(False)
        else:
            self._span.modified_beneath = False

    def caret_at_span(self) -> bool:
        """Whether the caret (and any selection) lies inside the live span or at its edges: only there do
        Enter and Tab accept a finished draft; elsewhere they type, as always."""
        span = self._span
        cursor = self.textCursor()
        return span is not None and span.start <= cursor.selectionStart() and cursor.selectionEnd() <= span.end

    def begin_live_span(self, start: int, end: int) -> LiveSpan:
        """Lock [start, end) for a rewrite; the original text fades at once to show it is developing."""
        if self._span is not None:
            raise RuntimeError("a span is already developing")
        span = LiveSpan(self.document(), start, end, self.text_between(start, end))
        self._span = span
        self.phase = Phase.DEVELOPING
        cursor = self.textCursor()
        cursor.setPosition(end)  # at the span's edge (Enter accepts there), moving with it as passes paint
        self.setTextCursor(cursor)
        if span.original:
            self._paint([(span.original, text_format(self.colors.noise, self.colors.canvas))])
        return span

    def paint_pass(self, segments: list[Segment], waiting: str = "", follow: bool = False) -> None:
        """Paint a pass's frame, then ``waiting`` (``app.rewrite.run.waiting_original``) faded as at the start. A
        caret at the span stays at the developing edge; ``follow`` (a block's first pass) brings the edge into
        view if the writer was watching it (not if they scrolled away to read)."""
        at_span = self.caret_at_span() and not self.textCursor().hasSelection()
        watched = self.viewport().rect().intersects(self.cursorRect())
        self._paint(pass_runs(segments, waiting, self.colors, self.hesitant if self.shade_hesitation else None))
        if at_span:  # setTextCursor scrolls the caret to the view's edge: the view is kept, or centred below
            kept = self.verticalScrollBar().value()
            cursor = self.textCursor()
            cursor.setPosition(self._require_span().end - utf16_length(waiting))
            self.setTextCursor(cursor)
            self.verticalScrollBar().setValue(kept)
            if follow and watched and not self.viewport().rect().contains(self.cursorRect()):
                self.centerCursor()

    def show_result(self, text: str) -> None:
        """Paint the finished text, marked as waiting for Accept or Reject."""
        self.phase = Phase.REVIEW
        self._paint([(text, text_format(self.colors.ink, self.colors.review))])

    def show_runs(self, runs: list[tuple[str, QTextCharFormat]]) -> None:
        """Paint a finished draft as formatted runs (Rewrite ▸ Show Changes), waiting as ``show_result``'s."""
        self.phase = Phase.REVIEW
        self._paint(runs)

    def repaint_live_span(self) -> None:
        span = self._require_span()
        self._paint(span.last_paint, whole=True)

    def accept_live_span(self, text: str) -> tuple[int, int]:
        """Keep ``text`` in plain ink. The whole rewrite stays one undo step from the original."""
        span = self._require_span()
        if text == span.original:
            return self.restore_live_span()  # nothing changed: leave no undo step behind
        at_span = self.caret_at_span()
        self._paint([(text, QTextCharFormat())])
        start, end = span.start, span.end
        self._end_session()
        if at_span:  # the caret after the accepted text; a writer typing elsewhere keeps their place
            cursor = self.textCursor()
            cursor.setPosition(end)
            self.setTextCursor(cursor)
        return start, end

    def restore_live_span(self, select_original: bool = True) -> tuple[int, int]:
        """Put the original back exactly and leave the undo history as it was before the rewrite.

        ``select_original`` selects it again (after Esc); a new request keeps the writer's selection.
        """
        span = self._require_span()
        if span.painted:
            start = span.start
            if span.block_on_top():
                self.document().undo()
                self.document().clearUndoRedoStacks(QTextDocument.Stacks.RedoStack)
            else:  # defensive: something edited the document behind our back; keep the text at least
                cursor = QTextCursor(self.document())
                cursor.setPosition(span.start)
                cursor.setPosition(span.end, Anchor)
                cursor.insertText(span.original, QTextCharFormat())
            span.place(start, start + span.original_length)
        start, end = span.start, span.end
        self._end_session()
        if select_original:
            cursor = self.textCursor()
            cursor.setPosition(start)
            cursor.setPosition(end, Anchor)
            self.setTextCursor(cursor)
        return start, end

    def _end_session(self) -> None:
        self._span = None
        self.phase = Phase.IDLE
        self.viewport().update()

    def _require_span(self) -> LiveSpan:
        if self._span is None:
            raise RuntimeError("no span is developing")
        return self._span

    def _paint(self, runs: list[tuple[str, QTextCharFormat]], whole: bool = False) -> None:
        """Paint ``runs`` over the span, as one undo block with the span's earlier paints. Runs equal to the last
        paint's at either end stay in place (a long rewrite's finished blocks and waiting words: a chapter
        re-inserted every pass took ~37 ms a pass); ``whole`` repaints all (the formats changed)."""
        span = self._require_span()
        document = self.document()
        start, end = span.start, span.end
        cursor = QTextCursor(document)
        on_top = span.block_on_top()
        old = span.last_paint if on_top and not whole and start + positions(span.last_paint) == end else []
        head, tail = shared_ends(old, runs)
        if on_top:
            cursor.joinPreviousEditBlock()
        else:
            cursor.beginEditBlock()
        cursor.setPosition(start + positions(runs[:head]))
        cursor.setPosition(end - positions(old[len(old) - tail:]), Anchor)
        cursor.removeSelectedText()
        for text, run_format in runs[head:len(runs) - tail]:
            if text:
                cursor.insertText(text, run_format)
        self.painting = True  # for the textChanged that closing the block sends
        cursor.endEditBlock()
        self.painting = False
        span.place(start, start + positions(runs))
        span.painted = True
        span.undo_steps_after_paint = document.availableUndoSteps()
        span.last_paint = runs

    def _lift(self, span: LiveSpan) -> None:
        """Take our block out of the document (the original is back) so the writer's edit goes under it."""
        start = span.start
        self.document().undo()
        span.place(start, start + span.original_length)
        span.painted = False

    @contextmanager
    def writer_edit(self, typing: bool = False) -> Iterator[None]:
        """Run an edit of the writer's outside the span, as its own undo step, below the rewrite.

        ``typing`` (a printable key, no selection) that goes on where the last one ended joins its undo
        step: every keystroke lifts and repaints the rewrite, which puts the draft's text between two
        keystrokes in the document's buffer, so Qt no longer merges them and each letter was a step."""
        span = self._span
        lifted = span is not None and span.block_on_top()
        if span is not None and lifted:
            self._lift(span)
        group = QTextCursor(self.document())
        if span is not None and typing and self._typed_to == (span, self.textCursor().position()):
            group.joinPreviousEditBlock()
        else:
            group.beginEditBlock()
        try:
            yield
        finally:
            group.endEditBlock()
            self._typed_to = (span, self.textCursor().position()) if span is not None and typing else None
            if span is not None and span is self._span:
                if span.end < span.start:  # text typed into an empty gap lands before it
                    span.place(span.start, span.start)
                if lifted:  # the span's block is out: the document's flag is the writer's text alone
                    span.modified_beneath = self.document().isModified()
                else:
                    span.modified_beneath = True
                if lifted:
                    self._paint(span.last_paint)

    def _refuse(self) -> None:
        QApplication.beep()
        self.spanLocked.emit()

    # -- input: lock the span, lift the block for edits elsewhere ---------------------------------

    def _range_edited_by(self, event: QKeyEvent) -> tuple[int, int] | None:
        """The document range a key press would change, or None for keys that change nothing."""
        cursor = self.textCursor()
        first, last = cursor.selectionStart(), cursor.selectionEnd()
        key = event.key()
        if event.matches(StandardKey.Cut):
            return (first, last) if first != last else None
        if event.matches(StandardKey.Paste):
            return first, last
        moves: tuple[Move, ...] | None = None
        for sequence, sequence_moves in _DELETE_MOVES.items():
            if event.matches(sequence):
                moves = sequence_moves
        if moves is None and key == Key.Key_Backspace:
            moves = (Move.PreviousCharacter,)
        if moves is None and key == Key.Key_Delete:
            moves = (Move.NextCharacter,)
        if moves is not None:
            if first != last:
                return first, last
            probe = QTextCursor(cursor)
            for move in moves:
                probe.movePosition(move, Anchor if move is moves[-1] else QTextCursor.MoveMode.MoveAnchor)
            return min(probe.anchor(), probe.position(), first), max(probe.anchor(), probe.position(), last)
        text = event.text()
        typing = key in (Key.Key_Return, Key.Key_Enter, Key.Key_Tab) or (
            bool(text) and all(character.isprintable() for character in text)
        )
        if typing and not (event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            return first, last
        return None

    def keyPressEvent(self, event: QKeyEvent) -> None:
        span = self._span
        if span is None:
            super().keyPressEvent(event)
            return
        key = event.key()
        plain = not (event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier)
        if key == Key.Key_Escape:
            self.escapeRequested.emit()
            event.accept()
            return
        accepting = plain and key in (Key.Key_Return, Key.Key_Enter, Key.Key_Tab)
        if self.phase is Phase.REVIEW and accepting and self.caret_at_span():
            self.acceptRequested.emit()
            event.accept()
            return
        if event.matches(StandardKey.Undo):
            # The rewrite is the newest change: one Ctrl+Z takes it back, and only it (the writer's own
            # edits, before or beside it, are steps of their own).
            self.interrupted.emit(True)
            event.accept()
            return
        if event.matches(StandardKey.Redo):
            self.interrupted.emit(False)  # the controller restores the original; then redo as usual
            super().keyPressEvent(event)
            return
        edited = self._range_edited_by(event)
        if edited is None:
            super().keyPressEvent(event)
        elif span.touches(*edited):
            self._refuse()
            event.accept()
        else:
            typing = event.text().isprintable() and bool(event.text()) and not self.textCursor().hasSelection()
            with self.writer_edit(typing):
                super().keyPressEvent(event)

    def insertFromMimeData(self, source: QMimeData) -> None:
        span = self._span
        if span is None:  # a novel pasted whole: its spelling is underlined after it is in, as an opened one's
            with self.highlighter.text_going_in(self.highlighter.markdown, source.text().count("\n")):
                super().insertFromMimeData(source)
            return
        cursor = self.textCursor()
        if span.touches(cursor.selectionStart(), cursor.selectionEnd()):
            self._refuse()
            return
        with self.writer_edit():
            super().insertFromMimeData(source)

    def inputMethodEvent(self, event: QInputMethodEvent) -> None:
        span = self._span
        if span is None or not (event.commitString() or event.preeditString()):
            super().inputMethodEvent(event)
            return
        cursor = self.textCursor()
        if span.touches(cursor.selectionStart(), cursor.selectionEnd()):
            self._refuse()
            event.accept()
            return
        with self.writer_edit():
            super().inputMethodEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        if self._span is not None:  # a drag-move could take text out of the span; not while it develops
            event.ignore()
            self._refuse()
            return
        super().dropEvent(event)

    def cut(self) -> None:
        span = self._span
        cursor = self.textCursor()
        if span is not None and span.touches(cursor.selectionStart(), cursor.selectionEnd()):
            self._refuse()
            return
        with self.writer_edit():
            super().cut()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.createStandardContextMenu(event.pos())
        for entry in menu.actions() if self._span is not None else []:  # Qt's own would reach past the span's lock
            if entry.objectName() in ("edit-delete", "edit-undo", "edit-redo") or entry.menu() is not None:
                menu.removeAction(entry)
            elif entry.objectName() == "edit-cut":  # Paste is the editor's own already (insertFromMimeData)
                entry.triggered.disconnect()
                entry.triggered.connect(self.cut)
        for extra in self.context_menu_extras:  # each leaves the span alone (the window's Accept, Reject… on it)
            extra(menu, self.cursorForPosition(event.pos()))
        menu.exec(event.globalPos())

    # -- layout ---------------------------------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        # Margins first, from the widget's own width: QAbstractScrollArea forwards the viewport's
        # resize here too, and the base class re-wraps the text to whatever viewport is left.
        self._center_column()
        super().resizeEvent(event)

    def _center_column(self) -> None:
        """Centre a prose-width column; the margins beside it stay paper."""
        column = round(self.fontMetrics().horizontalAdvance(SAMPLE) * COLUMN_CHARACTERS / len(SAMPLE)) + 56
        spare = max(0, self.width() - self.verticalScrollBar().sizeHint().width() - column)
        margins = QMargins(spare // 2, 0, spare - spare // 2, 0)
        if margins != self.viewportMargins():
            self.setViewportMargins(margins)
