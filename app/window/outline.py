"""View ▸ Outline (Ctrl+Shift+L): a panel beside the text listing the document's headings (``headings.py``: a
Markdown document's # lines, a plain text's chapter lines), indented by level, each with the words of its
section (a part's with its chapters'), the one the caret is in marked as the writer moves. A click puts the caret
at a heading, mid-view, and leaves the keys with the text (typing goes where the writer looks); F6 sends them
to the rows and back (``outline_tree.py``). It follows the text a moment after the typing stops, and widens for
long titles into the margins beside the text's column, never into the column.

Edit ▸ Move Section Up and Down (Alt+Shift+Up/Down, and a right-click on a heading in the panel) move a section,
everything under its heading, past its neighbour of the same level, as one undo step (app/documents/sections); a
row dragged in the panel moves its section to where it is dropped, between rows where a section of its level may
stand."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QPalette, QResizeEvent, QTextCursor
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QMenu,
    QStackedWidget,
    QStatusBar,
    QTreeWidgetItem,
)

from app.dialogs.side_panel import SidePanel
from app.documents.footnotes import notes_start, renumbering
from app.documents.markdown_format import is_markdown
from app.documents.sections import (
    SectionMove,
    has_sections_under,
    hidden_by_folds,
    move_section,
    place_section,
    section_end,
    sibling,
)
from app.documents.word_count import WordCounter
from app.window.editor_widget import RewriteEditor
from app.window.headings import Heading, heading_keys, headings
from app.window.live_span import index_at, positions_are_indices, utf16_length
from app.window.outline_tree import FOLD_ROLE, LEVEL_ROLE, OutlineTree, row_title
from app.window.section_words import section_words

REFRESH_MS = 400  # after the last keystroke: a novel's outline is some milliseconds, every keystroke is too often
PANEL_WIDTH = 210  # the Drafts panel's is wider: a draft's sentence, where this holds titles
WIDEST = 380  # what the panel grows to for long titles, where the window has room: a longer one reads cut short
ROW_ROOM = 24  # a row's margins and the gap between its title and its count
UNFITTED = object()  # the panel not yet fitted to any document's titles
WHOLE_TEXT = 2000  # characters in or out at once: no keystroke, so the outline need not wait for a pause
EMPTY_MARKDOWN = "No headings yet. A line that starts with # is one (Format ▸ Heading, Ctrl+1…6)."
WHILE_REWRITING = "A rewrite is open: accept or reject the draft first, then move the section."
NO_SECTION = "The cursor is in no section: a heading starts one."
KEYS_HINT = "In the Outline: Up and Down choose a heading, Enter goes there, Left and Right fold, Esc goes back."
EMPTY_PLAIN = "No chapters yet. Lines such as “CHAPTER I”, “Part Two” or “XIV” alone are listed here."


class OutlineWindow(Protocol):
    @property
    def editor(self) -> RewriteEditor: ...

    @property
    def path(self) -> Path | None: ...

    @property
    def word_counter(self) -> WordCounter: ...

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name


@contextmanager
def _joined(cursor: QTextCursor) -> Iterator[None]:
    """An edit that joins the undo step before it."""
    cursor.joinPreviousEditBlock()
    try:
        yield
    finally:
        cursor.endEditBlock()


class OutlinePanel(SidePanel):
    """The Outline dock; ``shownByWriter`` when the writer shows or hides it (to be remembered)."""

    def __init__(self, window: OutlineWindow, parent: QMainWindow) -> None:
        areas = Qt.DockWidgetArea.LeftDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea
        super().__init__("Outline", parent, "&Outline", "Ctrl+Shift+L", PANEL_WIDTH, areas)
        self.setObjectName("outlinePanel")
        self.host = window  # not self.window: QWidget.window() is Qt's
        self.found: list[Heading] = []
        self.words: list[int] = []  # each heading's section's, as the rows show them
        self.tree = OutlineTree(self.place_section, self.levels, self.fold, self.go_to, self.give_keys_back)
        # The headings folded, by level, title and which of that name (the third "Notes"): these outlive edits.
        self.folded: set[tuple[int, str, int]] = set()
        self._folds_for: Path | None = None  # the document they were folded in: another opens unfolded
        self.tree.setColumnCount(2)
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(False)
        self.tree.setIndentation(0)
        self.tree.setUniformRowHeights(True)
        self.tree.setAccessibleName("Outline")
        self.tree.itemClicked.connect(lambda item, _column: self.go_to(self.tree.indexOfTopLevelItem(item)))
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, header.ResizeMode.Stretch)
        header.setSectionResizeMode(1, header.ResizeMode.ResizeToContents)
        self.empty = QLabel()
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.empty.setContentsMargins(8, 8, 8, 8)
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.tree)
        self.stack.addWidget(self.empty)
        self.setWidget(self.stack)
        self.setMinimumWidth(160)
        self._sized = False
        self._fitted_for: object = UNFITTED  # the document whose titles the width was fitted to
        self._whole_text = False  # the change being announced put in or took out a whole text
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)
        editor = window.editor
        editor.document().contentsChange.connect(self._measure)
        editor.document().contentsChanged.connect(self._later)
        editor.cursorPositionChanged.connect(self.mark_current)
        self.visibilityChanged.connect(self._shown)
        self.toggle_action.setStatusTip("The document's headings beside the text, each section's words counted")
        self.move_actions: list[QAction] = []
        for text, keys, up in (("M&ove Section Up", "Alt+Shift+Up", True), ("Move Section &Down", "Alt+Shift+Down",
                                                                              False)):  # fmt: skip
            action = QAction(text, parent)
            action.setShortcut(QKeySequence(keys))
            way = "up" if up else "down"
            action.setStatusTip(f"Move the section the cursor is in, with all under its heading, {way} past the next")
            action.triggered.connect(lambda _checked=False, up=up: self.move_section(self._keys_heading(), up))
            self.move_actions.append(action)
        self.select_action = QAction("Se&lect Section", parent)
        self.select_action.setStatusTip("Select the section the cursor is in, to copy, cut or rewrite it")
        self.select_action.triggered.connect(lambda: self.select_section(self._keys_heading()))
        self.edit_actions = [self.select_action, *self.move_actions]  # Edit ▸, after Go to Heading…
        bar = window.statusBar()  # the keys' hint goes with the keys: it said Enter went there after it had
        self.tree.keysLeft.connect(lambda: bar.clearMessage() if bar.currentMessage() == KEYS_HINT else None)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._offer_moves)
        # The window grown (maximised after a book opened): room for its titles, once the layout has settled (a
        # window's resize reaches the text in steps, its margins set at each).
        self.refit = QTimer(self)
        self.refit.setSingleShot(True)
        self.refit.setInterval(100)
        self.refit.timeout.connect(self.fit_titles)
        editor.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if (watched is self.host.editor and isinstance(event, QResizeEvent)
                and event.size().width() > event.oldSize().width() > 0 and self.found):  # fmt: skip
            self.refit.start()
        return super().eventFilter(watched, event)

    def _shown(self, visible: bool) -> None:
        if not visible:
            if self.tree.hasFocus():
                self.host.editor.setFocus()  # not wherever Qt's focus chain goes next (a button of the toolbar)
            return
        main = self.parentWidget()
        if not self._sized and isinstance(main, QMainWindow):  # its width, not what its hint text would take
            main.resizeDocks([self], [PANEL_WIDTH], Qt.Orientation.Horizontal)
            self._sized = True
        self._fitted_for = UNFITTED
        self.refresh()  # hidden, it did not follow the text

    def _measure(self, _position: int, removed: int, added: int) -> None:
        """How much the change about to be announced (``contentsChanged``) takes out or puts in."""
        self._whole_text = max(removed, added) >= WHOLE_TEXT

    def _later(self) -> None:
        if self.isVisible() and not self.host.editor.painting:  # a pass painted is not the writer's change: the
            # span's end is (accepted, or the original back). A whole text come in (a file opened, a long paste)
            # is shown at once: the panel said "No headings yet" beside a book's first page while it waited. At
            # once, but after the change's own work: an opened file's name (a .txt's chapters, not # lines) is
            # set after its text.
            if self._whole_text:
                self.timer.stop()
                QTimer.singleShot(0, self.refresh)
            else:
                self.timer.start()
        self._whole_text = False

    def refresh(self) -> None:
        """The headings again, from the text as it stands (a rewrite developing reads as its text does now)."""
        self.timer.stop()
        text = self.host.editor.plain_text()
        markdown = is_markdown(self.host.path)
        found = headings(text, markdown)
        if self._folds_for != self.host.path:
            self._folds_for = self.host.path
            self.folded.clear()
        words = section_words(text, found, markdown, self.host.word_counter)
        self.found, self.words = found, words
        # The count column sized to its contents once, after the rows are in: sized at every row cleared and
        # added, War and Peace's 760 headings took 2.2 s (the delegate's sizeHint asked 316,794 times).
        header = self.tree.header()
        header.setSectionResizeMode(1, header.ResizeMode.Fixed)
        self._fill(found, words)
        header.setSectionResizeMode(1, header.ResizeMode.ResizeToContents)
        self.empty.setText(EMPTY_MARKDOWN if markdown else EMPTY_PLAIN)
        self.stack.setCurrentWidget(self.tree if found else self.empty)
        self.mark_current()
        if self._fitted_for != self.host.path and found:  # once a document, after Qt has laid the rows out
            self._fitted_for = self.host.path
            QTimer.singleShot(0, self.fit_titles)

    def fit_titles(self) -> None:
        """Wider, up to WIDEST, where the longest title and its count need it and the margins beside the text's
        column have the room: the column never narrows for it, and a panel the writer made wider stays so."""
        main = self.parentWidget()
        if not isinstance(main, QMainWindow) or not self.isVisible() or self.isFloating():
            return
        tree = self.tree
        metrics = tree.fontMetrics()
        titles = (row_title(heading.level, heading.title) for heading in self.found)  # as the rows show them
        widest = max(map(metrics.horizontalAdvance, titles), default=0)
        scroll_bar = tree.verticalScrollBar().sizeHint().width() if tree.verticalScrollBar().isVisible() else 0
        needed = widest + tree.header().sectionSize(1) + 2 * tree.frameWidth() + scroll_bar + ROW_ROOM
        margins = self.host.editor.viewportMargins()
        width = min(needed, WIDEST, self.width() + margins.left() + margins.right())
        if width > self.width():
            main.resizeDocks([self], [width], Qt.Orientation.Horizontal)

    def _fill(self, found: list[Heading], words: list[int]) -> None:
        """The rows for ``found``, changed in place: a pause in the typing changes one section's count, and the
        list cleared and made again took 80-380 ms of War and Peace's refresh."""
        tree = self.tree
        faint = self.palette().color(QPalette.ColorRole.PlaceholderText)  # the theme may have changed since
        added = []
        levels = [heading.level for heading in found]
        folds = [key in self.folded if has_sections_under(levels, index) else None
                 for index, key in enumerate(heading_keys(found))]  # fmt: skip
        for index, (heading, count) in enumerate(zip(found, words, strict=True)):
            title, counted = row_title(heading.level, heading.title), f"{count:,}"
            item = tree.topLevelItem(index)
            if item is None:
                item = QTreeWidgetItem(["", ""])
                item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsDropEnabled)  # dropped between rows, not on one
                added.append(item)
            if item.text(0) != title:
                item.setText(0, title)
                item.setToolTip(0, heading.title)
            if item.text(1) != counted:
                item.setText(1, counted)
                item.setToolTip(1, f"{counted} word{'s' if count != 1 else ''} in this section")
            if item.foreground(1).color() != faint:
                item.setForeground(1, faint)
            if item.data(0, LEVEL_ROLE) != heading.level or item.data(0, FOLD_ROLE) != folds[index]:
                item.setData(0, LEVEL_ROLE, heading.level)
                item.setData(0, FOLD_ROLE, folds[index])
            # For a screen reader, which says a row's title: not its indent, its arrow's picture or the count beside.
            state = {None: "", True: ", folded", False: ", open"}[folds[index]]
            described = f"level {heading.level}{state}, {counted} word{'s' if count != 1 else ''}"
            if item.data(0, Qt.ItemDataRole.AccessibleDescriptionRole) != described:
                item.setData(0, Qt.ItemDataRole.AccessibleDescriptionRole, described)
            if item.data(0, Qt.ItemDataRole.AccessibleTextRole) != heading.title:
                item.setData(0, Qt.ItemDataRole.AccessibleTextRole, heading.title)
        while tree.topLevelItemCount() > len(found):
            tree.takeTopLevelItem(tree.topLevelItemCount() - 1)
        tree.addTopLevelItems(added)
        for index, hidden in enumerate(hidden_by_folds(levels, [fold is True for fold in folds])):
            item = tree.topLevelItem(index)
            if item is not None and item.isHidden() != hidden:
                item.setHidden(hidden)

    def fold_all(self, fold: bool) -> None:
        """Every heading with headings under it folded (a book's parts down to their lines), or none."""
        levels = self.levels()
        self.folded = {key for index, key in enumerate(heading_keys(self.found))
                       if fold and has_sections_under(levels, index)}  # fmt: skip
        self._refold(self.tree.current_row())

    def fold(self, index: int) -> None:
        """Heading ``index``'s headings folded away under it, or shown again."""
        if not 0 <= index < len(self.found):
            return
        key = heading_keys(self.found)[index]
        self.folded.symmetric_difference_update({key})
        self._refold(index)
        if self.tree.hasFocus():  # from the keys: said, as the arrow's turn is not
            self.host.statusBar().showMessage(f"“{key[1]}” {'folded' if key in self.folded else 'open'}", 4000)

    def _refold(self, row: int) -> None:
        """The rows shown as the folds are now; with the keys in the panel, they stay on ``row`` (or on the part it
        was folded into), else the caret's section is marked."""
        self._fill(self.found, self.words)
        if not self.tree.hasFocus() or row < 0:
            self.mark_current()
            return
        self.tree.choose(row, shown=True)

    def current_index(self) -> int:
        """The heading whose section the caret is in; -1 above the first."""
        caret = self.host.editor.textCursor().position()
        return bisect.bisect_right([heading.position for heading in self.found], caret) - 1

    def mark_current(self) -> None:
        if not self.isVisible() or not self.found:
            return
        index = self.current_index()
        if index < 0:  # above the first heading
            self.tree.clearSelection()
        else:
            self.tree.choose(index, shown=True)  # in a folded part: the part's row

    def go_to(self, index: int) -> None:
        """The caret to the start of heading ``index``'s line, that line in the middle of the view, the keys to the
        text."""
        if not 0 <= index < len(self.found):
            return
        if self.timer.isActive():  # typed since the last refresh: the positions first, the same heading found again
            title = self.found[index].title
            self.refresh()
            index = next((i for i, heading in enumerate(self.found) if heading.title == title), -1)
            if index < 0:
                return
        editor = self.host.editor
        cursor = editor.textCursor()
        cursor.setPosition(min(self.found[index].position, editor.end_position()))
        editor.setTextCursor(cursor)
        editor.centerCursor()
        editor.setFocus()

    # -- moving a section -------------------------------------------------------------------------------------

    def _fresh(self) -> None:
        """The headings as the text stands: typed since the last refresh (or hidden, so never refreshed), again."""
        if self.timer.isActive() or not self.isVisible():
            self.refresh()

    def _keys_heading(self) -> int:
        """The heading Alt+Shift+Up/Down moves: the Outline's row where the keys are in it, else the caret's."""
        self._fresh()
        return self.tree.current_row() if self.tree.hasFocus() else self.current_index()

    def has_keys(self) -> bool:
        return self.tree.hasFocus()

    def can_take_keys(self) -> bool:
        """Shown, with headings to choose (F6's round, ``panes.py``)."""
        if not self.isVisible():
            return False
        self._fresh()
        return bool(self.found)

    def take_keys(self) -> None:
        """F6: the keys to the Outline (shown, if it was not), on the caret's heading."""
        if not self.isVisible():
            self.show()
            self.shownByWriter.emit(True)  # remembered, as View ▸ Outline would be
        self._fresh()
        if not self.found:  # the panel says how a heading is made; the keys stay with the text to make one
            self.host.statusBar().showMessage(self.empty.text(), 6000)
            return
        self.mark_current()
        row = max(self.tree.current_row(), 0)  # above the first heading: the first
        self.tree.choose(row)
        self.tree.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.host.statusBar().showMessage(KEYS_HINT, 8000)  # said, too: where the keys went and what they do
        QTimer.singleShot(0, lambda: self.tree.choose(row, again=True))  # once the keys are there, the panel laid out

    def give_keys_back(self) -> None:
        """Esc in the rows, or F6 on from them: the keys back to the text, the caret where it was and its section
        marked again."""
        self.host.editor.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.mark_current()

    def _offer_moves(self, point: QPoint) -> None:
        """A right-click on a heading: Move Section Up and Down for that section; on a heading or below the rows,
        Fold All and Unfold All."""
        self._fresh()  # typed since the rows were made: the rows as the text stands, before one is chosen
        keyed = self.tree.hasFocus()  # from the keys (the menu key): they stay on the row after the menu
        item = self.tree.itemAt(point)
        levels = self.levels()
        menu = QMenu(self.tree)
        if item is not None:
            index = self.tree.indexOfTopLevelItem(item)
            menu.addAction("&Select Section", lambda: self.select_section(index))
            for action, up in zip(self.move_actions, (True, False), strict=True):
                entry = menu.addAction(action.text())
                entry.triggered.connect(lambda _checked=False, up=up: self.move_section(index, up))
                entry.setShortcut(action.shortcut())
                entry.setEnabled(sibling(levels, index, up) is not None)
            menu.addSeparator()
        foldable = [index for index in range(len(levels)) if has_sections_under(levels, index)]
        for text, fold in (("&Fold All", True), ("&Unfold All", False)):
            entry = menu.addAction(text)
            entry.triggered.connect(lambda _checked=False, fold=fold: self.fold_all(fold))
            entry.setEnabled(bool(foldable) and (fold or bool(self.folded)))
        menu.exec(self.tree.viewport().mapToGlobal(point))
        if not keyed:
            self.mark_current()  # the right-click marked its row; the caret's section is the one to show

    def levels(self) -> list[int]:
        """The headings' levels, as last found."""
        return [heading.level for heading in self.found]

    def _places(self, text: str) -> tuple[list[int], list[int], int]:
        """The headings' positions (Qt's), their starts in ``text`` (Python's indices), and where the sections end:
        a Markdown text's notes at its end stay there, outside every section."""
        positions = [heading.position for heading in self.found]
        starts = positions if positions_are_indices(text) else [index_at(text, at) for at in positions]
        return positions, starts, notes_start(text) if is_markdown(self.host.path) else len(text)

    def select_section(self, index: int) -> None:
        """Heading ``index``'s section selected, its heading to the next of its level or above (a part with its
        chapters; a Markdown text's notes at its end left out), the keys back to the text: to copy, cut or rewrite."""
        if not 0 <= index < len(self.found):
            self.host.statusBar().showMessage(NO_SECTION, 6000)  # Edit ▸ Select Section above the first heading
            return
        editor = self.host.editor
        text = editor.plain_text()
        positions, starts, last = self._places(text)
        end = section_end(starts, self.levels(), index, last)
        end = starts[index] + len(text[starts[index] : end].rstrip())  # to its last word, not the blank lines
        cursor = editor.textCursor()
        cursor.setPosition(positions[index])
        cursor.setPosition(positions[index] + utf16_length(text[starts[index] : end]), QTextCursor.MoveMode.KeepAnchor)
        editor.setTextCursor(cursor)
        editor.setFocus()

    def move_section(self, index: int, up: bool) -> bool:
        """Section ``index`` of the headings as last found (the heading's, with everything under it) past its
        neighbour of its level before it (``up``) or after it, as one undo step, the caret on its heading; whether
        it moved."""
        title = self.found[index].title if 0 <= index < len(self.found) else ""
        where = "first" if up else "last"
        refused = f"“{title}” is the {where} section under its heading: it moves no {'higher' if up else 'lower'}."
        return self._move(index, lambda text, starts, levels, end: move_section(text, starts, levels, index, up, end),
                          "up" if up else "down", refused)  # fmt: skip

    def place_section(self, index: int, before: int | None) -> bool:
        """Section ``index`` put before heading ``before`` (None: after the last section), as a row dropped."""
        shown = [(heading.title, heading.level) for heading in self.found]
        self._fresh()  # typed (or undone) since the rows were made: their places in the text as it stands now
        if [(heading.title, heading.level) for heading in self.found] != shown:
            self.host.statusBar().showMessage("The headings changed while you dragged: drag the row again.", 6000)
            return False
        if before is not None and not 0 <= before < len(self.found):
            return False
        where = "to the end" if before is None else f"before “{self.found[before].title}”"
        return self._move(index, lambda text, starts, levels, end: place_section(text, starts, levels, index, before,
                                                                                  end), where, "")  # fmt: skip

    def _move(self, index: int, plan: Callable[[str, list[int], list[int], int], SectionMove | None], where: str,
              refused: str) -> bool:  # fmt: skip
        editor = self.host.editor
        say = self.host.statusBar().showMessage
        if editor.live_span is not None or editor.isReadOnly():
            say(WHILE_REWRITING, 6000)
            return False
        if not 0 <= index < len(self.found):
            say(NO_SECTION, 6000)
            return False
        text = editor.plain_text()
        positions, starts, notes = self._places(text)
        move = plan(text, starts, self.levels(), notes)
        title = self.found[index].title
        if move is None:
            if refused:
                say(refused, 6000)
            return False
        first = positions[starts.index(move.start)]
        indices = positions_are_indices(text)

        def qt_position(at: int) -> int:  # an index of the old text as Qt counts (UTF-16 units)
            return at if indices else first + utf16_length(text[move.start : at])

        # The smaller block out and in again, not the two rewritten; two edit blocks, one undo step: in one, Qt
        # announced a change from the first edit to the last, and the highlighter read every line between them.
        cursor = QTextCursor(editor.document())
        for number, (start, end, words) in enumerate(move.edits):
            with editor.writer_edit() if number == 0 else _joined(cursor):
                cursor.setPosition(qt_position(start))
                cursor.setPosition(qt_position(end), QTextCursor.MoveMode.KeepAnchor)
                cursor.insertText(words)
        caret = editor.textCursor()
        caret.setPosition(first + utf16_length(move.text[: move.moved_to - move.start]))
        editor.setTextCursor(caret)
        editor.undo_carets.remember(positions[index], caret.position())  # undone: on its heading, not past it
        editor.centerCursor()
        self.refresh()
        moved = text[: move.start] + move.text + text[move.end :]
        hint = " Its footnotes are out of order now: Format ▸ Renumber Footnotes." if is_markdown(
            self.host.path) and "[^" in move.text and renumbering(moved) else ""  # fmt: skip
        say(f"Moved “{title}” {where} (Ctrl+Z puts it back).{hint}", 8000)
        return True
