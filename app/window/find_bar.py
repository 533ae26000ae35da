"""Edit ▸ Find (Ctrl+F) and Replace (Ctrl+H): a bar above the text, as browsers and writing apps have, rather than
a window over it that the keys have to find their way into.

It searches as the writer types, from where the caret was, marks every match and says which is selected ("3 of
12"). Enter or F3 goes to the next, Shift+Enter or Shift+F3 to the one before, round the text's end; Esc closes it
and gives the keys back to the text with the match selected. Opened on a passage (a selection over a paragraph's
end), it finds and replaces in that passage alone until the writer unticks In selection. Replace and Replace All
are one undo step each and never touch a developing rewrite's words. The matches follow the text as it changes
while the bar is open.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QKeyEvent, QPalette, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTextEdit,
    QToolButton,
    QWidget,
)

from app.window.editor_widget import RewriteEditor
from app.window.highlights import set_layer
from app.window.live_span import ASTRAL, index_at

LAYER = "find"
MARKED = 2000  # matches marked in the text at most: more is a search for a letter, and marking costs
LONG_TEXT = 200_000  # characters: in a text this long, searching waits for TYPED_MS without a keystroke
TYPED_MS = 150
CONTEXT_CHARS = 60  # a screen reader is told the match's line, this far either side of it
REFRESH_MS = 250  # after the text changes: a novel's matches are some milliseconds, a pass comes every 35


def matches_in(text: str, needle: str, match_case: bool, whole_words: bool) -> list[tuple[int, int]]:
    """Where ``needle`` occurs in ``text`` (not overlapping), as [start, end) in Qt's positions (UTF-16 units)."""
    if not needle:
        return []
    pattern = re.escape(needle)
    if whole_words:  # a word's own letters may not go on either side, whatever the needle's ends are
        pattern = rf"(?<!\w){pattern}(?!\w)"
    found = re.compile(pattern, 0 if match_case else re.IGNORECASE)
    astral = [match.start() for match in ASTRAL.finditer(text)]
    if not astral:  # Python's positions are Qt's: a letter's search in a novel finds 300,000
        return [match.span() for match in found.finditer(text)]

    def units(index: int) -> int:
        return index + bisect_left(astral, index)

    return [(units(match.start()), units(match.end())) for match in found.finditer(text) if match.end() > match.start()]


def _range_cursor(document: QTextDocument, start: int, end: int) -> QTextCursor:
    cursor = QTextCursor(document)
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    return cursor


class FindBar(QFrame):
    """The bar; :meth:`open` shows it (with the replace row where asked), Esc or its ✕ hides it."""

    # What a screen reader is to say of a search the writer ran (app/window/announce.py): the count, with the
    # line of the match shown; at once (a step, a replace) or once the typing pauses.
    counted = Signal(str, bool)

    def __init__(self, editor: RewriteEditor, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setAutoFillBackground(True)
        self.editor = editor
        self.matches: list[tuple[int, int]] = []
        self.current = -1
        self.origin = 0  # where the search starts from: the caret when the bar opened, then the match last shown
        self.find_text = QLineEdit()
        self.find_text.setPlaceholderText("Find")
        self.find_text.setAccessibleName("Find")  # a placeholder is no name to a screen reader
        self.find_text.setClearButtonEnabled(True)
        self.replace_text = QLineEdit()
        self.replace_text.setPlaceholderText("Replace with")
        self.replace_text.setAccessibleName("Replace with")
        self.match_case = QCheckBox("Match case")
        self.whole_words = QCheckBox("Whole words")
        self.in_selection = QCheckBox("In selection")
        self.in_selection.setToolTip("Find and replace only in the passage selected when the bar opened")
        self.in_selection.setEnabled(False)
        self.scope: QTextCursor | None = None  # that passage; Qt moves it with the text as it changes
        self.count = QLabel()
        self.count.setMinimumWidth(self.count.fontMetrics().horizontalAdvance("2,000+ matches") + 8)
        self.previous_button = self._tool("↑", "Previous match", "The match before (Shift+Enter, Shift+F3)",
                                          lambda: self.step(-1))  # fmt: skip
        self.next_button = self._tool("↓", "Next match", "The next match (Enter, F3)", lambda: self.step(+1))
        self.close_button = self._tool("✕", "Close the find bar", "Close the find bar (Esc)", self.close_bar)
        self.replace_button = QPushButton("Replace")
        self.replace_button.setToolTip("Replace the selected match and go to the next")
        self.replace_button.clicked.connect(self.replace_one)
        self.replace_all_button = QPushButton("Replace All")
        self.replace_all_button.setToolTip("Replace every match outside a rewrite in progress, as one undo step")
        self.replace_all_button.clicked.connect(self.replace_all)
        self.replace_row = QWidget()
        replace_layout = QHBoxLayout(self.replace_row)
        replace_layout.setContentsMargins(0, 0, 0, 0)
        replace_layout.addWidget(self.replace_text, 1)
        replace_layout.addWidget(self.replace_button)
        replace_layout.addWidget(self.replace_all_button)
        replace_layout.addStretch(1)  # the buttons beside the line, not stretched along a wide screen
        grid = QGridLayout(self)
        grid.setContentsMargins(10, 6, 6, 6)
        grid.setVerticalSpacing(4)
        find_row = QHBoxLayout()
        for widget in (self.previous_button, self.next_button, self.count, self.match_case, self.whole_words,
                       self.in_selection):  # fmt: skip
            find_row.addWidget(widget)
        grid.addWidget(self.find_text, 0, 0)
        grid.addLayout(find_row, 0, 1)
        grid.addWidget(self.close_button, 0, 3, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(self.replace_row, 1, 0, 1, 2)
        # On a wide screen the lines stop at a search's width; the room left goes before the close button.
        char = self.find_text.fontMetrics().averageCharWidth()
        for line in (self.find_text, self.replace_text):
            line.setMinimumWidth(char * 20)
            line.setMaximumWidth(char * 48)
        grid.setColumnStretch(0, 10)  # the line takes the room first, up to its widest
        grid.setColumnStretch(2, 1)
        self.refresh_timer = QTimer(self)
        self.refresh_timer.setSingleShot(True)
        self.refresh_timer.setInterval(REFRESH_MS)
        self.refresh_timer.timeout.connect(lambda: self.search(select=False))
        # In a long text the search waits for a pause in the typing: "N", "Na", "Nat" each found 10,000s of matches.
        self.typed_timer = QTimer(self)
        self.typed_timer.setSingleShot(True)
        self.typed_timer.setInterval(TYPED_MS)
        self.typed_timer.timeout.connect(self.search)
        self.find_text.textChanged.connect(lambda _text: self._typed())
        self.match_case.toggled.connect(lambda _on: self.search())
        self.whole_words.toggled.connect(lambda _on: self.search())
        self.in_selection.toggled.connect(lambda _on: self.search())
        editor.textChanged.connect(self._text_changed)
        for line in (self.find_text, self.replace_text):
            line.installEventFilter(self)
        order = (self.find_text, self.replace_text, self.replace_button, self.replace_all_button, self.match_case,
                 self.whole_words, self.in_selection)  # fmt: skip
        for first, then in zip(order, order[1:], strict=False):
            QWidget.setTabOrder(first, then)
        self.hide()

    def _tool(self, glyph: str, name: str, tip: str, slot: Callable[[], None]) -> QToolButton:
        button = QToolButton()
        button.setText(glyph)
        button.setAccessibleName(name)  # a screen reader would read the glyph: "up arrow", "multiplication x"
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys have Enter, F3 and Esc; Tab goes line to line
        button.clicked.connect(slot)
        return button

    # -- opening and closing ------------------------------------------------------------------------

    def open(self, replace: bool = False) -> None:
        """Show the bar with the keys in its find line, holding the selection where it is one line and searching
        in it where it is a passage (over a paragraph's end); ``replace``: with the replace row (kept if it is
        showing already)."""
        cursor = self.editor.textCursor()
        selected = cursor.selectedText()
        self.origin = cursor.selectionStart()
        if "\u2029" in selected:  # "he" to "she" in this chapter
            self.scope = QTextCursor(cursor)
        elif not self.isVisible():
            self.scope = None
        self.in_selection.setEnabled(self.scope is not None)
        self.in_selection.setChecked(self.scope is not None)
        self.replace_row.setVisible(replace or (self.isVisible() and self.replace_row.isVisible()))
        self.show()
        if selected and "\u2029" not in selected and selected != self.find_text.text():
            self.find_text.setText(selected)  # searches
        else:
            self.search()
        (self.replace_text if replace and self.find_text.text() else self.find_text).setFocus()
        self.find_text.selectAll()

    def forget_passage(self) -> None:
        """Another document is in the editor: the passage selected in the last one is no place to search."""
        self.scope = None
        self.in_selection.setChecked(False)
        self.in_selection.setEnabled(False)

    def close_bar(self) -> None:
        self.hide()
        self.refresh_timer.stop()
        self.typed_timer.stop()
        self.matches, self.current = [], -1
        set_layer(self.editor, LAYER, [])
        self.editor.setFocus()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter and Shift+Enter step through the matches (Enter in the replace line replaces); Esc closes."""
        if isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress:
            if event.key() == Qt.Key.Key_Escape:
                self.close_bar()
                return True
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                backward = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
                if watched is self.replace_text and not backward:
                    self.replace_one()
                else:
                    self.step(-1 if backward else +1)
                return True
        return super().eventFilter(watched, event)

    # -- searching ----------------------------------------------------------------------------------

    def search(self, select: bool = True) -> None:
        """Find every match again; ``select``: show the first at or after ``origin`` (round to the top), else
        keep the one shown where it still is (the text changed under an open bar)."""
        self.typed_timer.stop()
        if not self.isVisible():
            return
        shown = self.matches[self.current] if 0 <= self.current < len(self.matches) else None
        self.matches = self._all_matches()
        if select:
            self.current = self._first_from(self.origin) % len(self.matches) if self.matches else -1
            if self.matches:
                self._show(self.current)
        else:
            self.current = self.matches.index(shown) if shown in self.matches else -1
        self._mark()
        if select:
            self._tell(at_once=False)

    def _all_matches(self) -> list[tuple[int, int]]:
        found = matches_in(self.editor.plain_text(), self.find_text.text(), self.match_case.isChecked(),
                           self.whole_words.isChecked())  # fmt: skip
        if self.scope is None or not self.in_selection.isChecked():
            return found
        first, last = self.scope.selectionStart(), self.scope.selectionEnd()
        return [(start, end) for start, end in found if first <= start and end <= last]

    def _typed(self) -> None:
        if self.editor.document().characterCount() > LONG_TEXT:
            self.typed_timer.start()
        else:
            self.search()

    def _caught_up(self) -> bool:
        """Run the search a pause in the typing still waits for; whether there was one (its first match is shown)."""
        if not self.typed_timer.isActive():
            return False
        self.search()
        return True

    def _text_changed(self) -> None:
        if self.isVisible() and self.find_text.text():
            self.refresh_timer.start()

    def step_or_open(self, direction: int) -> None:
        """Edit ▸ Find Next (F3) or Find Previous (Shift+F3): the bar opens where it is closed."""
        if self.isVisible() and self.find_text.text():
            self.step(direction)
        else:
            self.open()

    def step(self, direction: int) -> None:
        """The next match (``direction`` +1) or the one before (-1), from the one shown or else the caret."""
        if self._caught_up():  # typed a moment ago: the first match of what was typed, as it would have shown
            return
        if not self.matches:
            self.search()
            return
        if self.current < 0:  # none shown (the text changed under it): from the caret
            later = self._first_from(self.editor.textCursor().selectionStart())
            self.current = (later if direction > 0 else later - 1) % len(self.matches)
        else:
            self.current = (self.current + direction) % len(self.matches)
        self._show(self.current)
        self._mark()
        self._tell(at_once=True)

    def _tell(self, at_once: bool) -> None:
        """Say the count, and the line around the match shown: unseen, the count alone tells little."""
        said = self.count.text()
        if 0 <= self.current < len(self.matches):
            start, end = self.matches[self.current]
            block = self.editor.document().findBlock(start)
            line = block.text()
            offset = index_at(line, start - block.position())  # Qt's offsets count an emoji twice
            # About a sentence around the match, from word edges.
            first = line.rfind(" ", 0, max(0, offset - CONTEXT_CHARS)) + 1 if offset > CONTEXT_CHARS else 0
            last = line.find(" ", offset + (end - start) + CONTEXT_CHARS)
            said += ": " + ("…" if first else "") + line[first : last if last >= 0 else len(line)]
            said += "…" if last >= 0 else ""
        self.counted.emit(said, at_once)

    def _first_from(self, position: int) -> int:
        """The index of the first match that starts at ``position`` or after (the count of them: none does)."""
        return bisect_left(self.matches, position, key=lambda match: match[0])

    def _show(self, index: int) -> None:
        """Select match ``index``; one out of view is brought to the middle of it, with the lines around it to
        read, not to the view's edge."""
        start, end = self.matches[index]
        editor = self.editor
        in_view = editor.viewport().rect().contains(editor.cursorRect(_range_cursor(editor.document(), start, end)))
        editor.select_range(start, end)
        if not in_view:
            editor.centerCursor()
        self.origin = start

    def _mark(self) -> None:
        """Tint every match (up to MARKED) and say which is shown of how many."""
        total = len(self.matches)
        if not self.find_text.text():
            self.count.setText("")
        elif not total:
            self.count.setText("No matches")
        else:
            place = f"{self.current + 1:,} of " if self.current >= 0 else ""
            self.count.setText(f"{place}{total:,} match{'es' if total != 1 else ''}")
        # The MARKED matches around the one shown (a letter's search in a novel: those in view, not the first pages').
        first = max(0, min(self.current - MARKED // 2, total - MARKED)) if self.current >= 0 else 0
        ranges = [(start, end, 70) for start, end in self.matches[first : first + MARKED]]
        if self.scope is not None and self.in_selection.isChecked():  # the passage searched, fainter, beneath
            ranges.insert(0, (self.scope.selectionStart(), self.scope.selectionEnd(), 22))
        highlight = self.editor.palette().color(QPalette.ColorRole.Highlight)
        looks: dict[int, QTextCharFormat] = {}  # one format for every match: thousands made cost 0.1 s
        selections = []
        for start, end, alpha in ranges:
            if alpha not in looks:
                tint = QColor(highlight)
                tint.setAlpha(alpha)
                looks[alpha] = QTextCharFormat()
                looks[alpha].setBackground(tint)
            selection = QTextEdit.ExtraSelection()
            selection.format = looks[alpha]  # type: ignore[misc]
            selection.cursor = _range_cursor(self.editor.document(), start, end)  # type: ignore[misc]
            selections.append(selection)
        set_layer(self.editor, LAYER, selections)

    # -- replacing ----------------------------------------------------------------------------------

    def _cursors(self, ranges: list[tuple[int, int]]) -> tuple[list[QTextCursor], int]:
        """A cursor over each range outside a developing rewrite (Qt moves them with the text as the rewrite is
        lifted for the edit), and how many ranges touch the rewrite."""
        span = self.editor.live_span
        cursors, held = [], 0
        for start, end in ranges:
            if span is not None and span.touches(start, end):
                held += 1
                continue
            cursors.append(_range_cursor(self.editor.document(), start, end))
        return cursors, held

    def replace_one(self) -> None:
        """Replace the match that is selected, then show the next; where none is selected, show one first."""
        self.search(select=False)  # the matches as the text is now, not as it was a moment ago
        selection = self.editor.textCursor()
        chosen = (selection.selectionStart(), selection.selectionEnd())
        if chosen not in self.matches:
            self.step(+1)
            return
        cursors, held = self._cursors([chosen])
        if held:
            self.count.setText("That match is in the rewrite in progress")
            self.counted.emit(self.count.text(), True)
            return
        with self.editor.writer_edit():
            cursors[0].insertText(self.replace_text.text())
        self.origin = cursors[0].position()
        self.search()

    def replace_all(self) -> int:
        """Replace every match outside a developing rewrite as one undo step; how many were replaced."""
        cursors, held = self._cursors(self._all_matches())
        if cursors:  # held: a character's name replaced through a novel is highlighted after, not at once
            with self.editor.highlighter.held(), self.editor.writer_edit():
                for cursor in cursors:
                    cursor.insertText(self.replace_text.text())
        self.search(select=False)
        said = f"Replaced {len(cursors):,}" if cursors else "Nothing replaced"
        self.count.setText(said + (f", {held:,} left in the rewrite in progress" if held else ""))
        self.counted.emit(self.count.text(), True)
        return len(cursors)
