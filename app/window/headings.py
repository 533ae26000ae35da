"""Edit ▸ Go to Heading… (Ctrl+Shift+O): a long document's headings in a list at the top of the text, narrowed as
the writer types; Enter puts the caret at the one chosen, in the middle of the view. A Markdown document's
headings are its # lines (not those inside a fenced code block); a plain text's are its chapter lines, as novels
and Project Gutenberg set them ("CHAPTER III. A Caucus-Race", "Part Two", "XIV": app.documents.chapters)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import NamedTuple, Protocol

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QStatusBar,
    QVBoxLayout,
    QWidget,
)

from app.dialogs.popups import show_within_screen
from app.documents.chapters import chapters
from app.documents.front_matter import front_matter_end
from app.documents.markdown_format import FENCE, is_markdown
from app.window.editor_widget import RewriteEditor
from app.window.live_span import positions_are_indices, utf16_length

MARKDOWN_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
INDENT = "    "  # a level deeper in the list
VISIBLE_ROWS = 16


class Heading(NamedTuple):
    position: int  # where its line starts, in Qt's positions
    level: int  # 1 for #, 2 for ##…; a plain text's outermost kind of chapter line is 1
    title: str


def heading_keys(found: list[Heading]) -> list[tuple[int, str, int]]:
    """Each heading's level, title and how many of that level and title come before it: which heading it is across
    edits that move every position (the Outline's folds are kept by it)."""
    seen: Counter[tuple[int, str]] = Counter()
    keys = []
    for heading in found:
        keys.append((heading.level, heading.title, seen[heading.level, heading.title]))
        seen[heading.level, heading.title] += 1
    return keys


def headings(text: str, markdown: bool) -> list[Heading]:
    """``text``'s headings in order: its Markdown # lines, or in plain text its chapter lines."""
    return list(each_heading(text, markdown))


def each_heading(text: str, markdown: bool) -> Iterator[Heading]:
    """:func:`headings` one by one, as far as they are wanted (a PDF's title needs the first only). A Markdown
    document's front matter is not its text: a YAML comment there is no heading."""
    if not markdown:
        lines = text.split("\n")
        lengths = map(len, lines) if positions_are_indices(text) else map(utf16_length, lines)
        starts = list(accumulate((length + 1 for length in lengths), initial=0))  # Qt's positions
        yield from (Heading(starts[chapter.line], chapter.level, chapter.title) for chapter in chapters(lines))
        return
    front = front_matter_end(text)
    at = utf16_length(text[:front])  # the line's start in Qt's positions, which count UTF-16 units
    fenced = False
    for line in text[front:].split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (heading := MARKDOWN_HEADING.match(line)):
            yield Heading(at, len(heading.group(1)), heading.group(2))
        at += utf16_length(line) + 1


class HeadingsWindow(Protocol):
    """What Go to Heading uses of the main window."""

    @property
    def editor(self) -> RewriteEditor: ...

    def statusBar(self) -> QStatusBar: ...

    @property
    def path(self) -> Path | None: ...


class HeadingsPopup(QFrame):
    """The list, with a line above it that narrows it as the writer types; ``chosen`` emits a heading's
    position."""

    chosen = Signal(int)

    def __init__(self, parent: QWidget, found: list[Heading]) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumWidth(420)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Type to narrow the headings…")
        self.list = QListWidget()
        for heading in found:
            item = QListWidgetItem(INDENT * (heading.level - 1) + heading.title)
            item.setData(Qt.ItemDataRole.UserRole, heading.position)
            self.list.addItem(item)
        self.list.setCurrentRow(0)
        self.row_height = max(self.list.sizeHintForRow(0), self.list.fontMetrics().height())  # row 0 may hide later
        self._fit(self.list.count())
        self.list.itemActivated.connect(lambda _item: self.choose())
        self.filter.textChanged.connect(self._narrow)
        self.filter.installEventFilter(self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.list)

    def _narrow(self, words: str) -> None:
        wanted = words.casefold()
        for row in range(self.list.count()):
            item = self.list.item(row)
            item.setHidden(wanted not in item.text().casefold())
        visible = [row for row in range(self.list.count()) if not self.list.item(row).isHidden()]
        self.list.setCurrentRow(visible[0] if visible else -1)
        self._fit(len(visible))

    def _fit(self, shown: int) -> None:
        """As tall as the headings it shows, up to a point: narrowed to two, no box of empty rows below them."""
        rows = max(1, min(shown, VISIBLE_ROWS))
        self.list.setFixedHeight(self.row_height * rows + 2 * self.list.frameWidth() + 4)
        if (layout := self.layout()) is not None:
            layout.activate()  # the new height in its size hint before the popup takes it
            self.resize(self.width(), self.sizeHint().height())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Up, Down and Enter in the line work the list."""
        if watched is self.filter and isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress:
            if event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
                QApplication.sendEvent(self.list, event)
                return True
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.choose()
                return True
        return super().eventFilter(watched, event)

    def choose(self) -> None:
        item = self.list.currentItem()
        self.close()
        if item is not None and not item.isHidden():
            self.chosen.emit(int(item.data(Qt.ItemDataRole.UserRole)))


class GoToHeading(QObject):
    """Edit ▸ Go to Heading…"""

    def __init__(self, window: HeadingsWindow, parent: QWidget) -> None:
        super().__init__(parent)
        self.window = window
        self.parent_widget = parent
        self.action = QAction("&Go to Heading…", parent)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+O"))
        self.action.setStatusTip("Jump to one of the document's headings or chapters")
        self.action.triggered.connect(self.show)
        self.popup: HeadingsPopup | None = None

    def show(self) -> None:
        editor = self.window.editor
        found = headings(editor.plain_text(), is_markdown(self.window.path))
        if not found:
            self.window.statusBar().showMessage(
                "No headings here: Markdown's # lines, or a plain text's chapter lines (CHAPTER I, Part Two, XIV).",
                6000,
            )
            return
        self.popup = HeadingsPopup(self.parent_widget, found)
        self.popup.chosen.connect(self._go)
        viewport = editor.viewport()
        show_within_screen(self.popup, viewport.mapToGlobal(QPoint(viewport.width() // 6, 12)))
        self.popup.filter.setFocus()

    def _go(self, position: int) -> None:
        editor = self.window.editor
        cursor = editor.textCursor()
        cursor.setPosition(min(position, editor.end_position()))
        editor.setTextCursor(cursor)
        editor.centerCursor()
        editor.setFocus()
