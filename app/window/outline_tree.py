"""The Outline's rows (``outline.py``), which the writer drags to move a section: Qt's drag of a list's items, the
place shown and the drop taken only where ``app/documents/sections.can_place`` allows. A heading with headings
under it shows an arrow before its title, and a click on the arrow folds them away (or shows them again).

The rows take the keys only when the writer sends them there (F6, ``outline.py``), never at a click: Up and Down
choose a heading (or its first letters typed), Enter goes to it, Left and Right fold and unfold a part (or step to
the part a chapter is in and back), the menu key or Shift+F10 opens the row's menu, Esc gives the keys back."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QMimeData, QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QDrag,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QFocusEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPalette,
    QPixmap,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from app.documents.sections import can_place, heading_over
from app.window.headings import INDENT

ROW_FORMAT = "application/x-redraft-outline-row"  # a row dragged: this panel's, so no other window's rows land
LEVEL_ROLE = Qt.ItemDataRole.UserRole  # a row's heading level
FOLD_ROLE = Qt.ItemDataRole.UserRole + 1  # None: nothing under it to fold; True: folded; False: open
SOFT = 0.3  # how much of the highlight the caret's row keeps while the keys are with the text
ARROW_ROOM = "    "  # before every title, so that titles of a level line up whether or not theirs has an arrow


def row_title(level: int, title: str) -> str:
    """A heading's title as its row shows it: indented by level, after the arrow's room."""
    return INDENT * (level - 1) + ARROW_ROOM + title


def arrow_rect(widget: QWidget, row: QRect, level: int) -> QRect:
    """Where a row's arrow is drawn, and a press on it folds: the room before its title."""
    metrics = widget.fontMetrics()
    margin = widget.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1  # Qt's text's
    left = row.left() + margin + metrics.horizontalAdvance(INDENT * (level - 1))
    return QRect(left, row.top(), metrics.horizontalAdvance(ARROW_ROOM), row.height())


def soft_highlight(colours: QPalette) -> QColor:
    """The theme's highlight mixed SOFT into the rows' background: a row marked, not where the keys are."""
    strong, base = colours.color(QPalette.ColorRole.Highlight), colours.color(QPalette.ColorRole.Base)
    return QColor.fromRgbF(*((1 - SOFT) * getattr(base, part)() + SOFT * getattr(strong, part)()
                             for part in ("redF", "greenF", "blueF")))  # fmt: skip


class OutlineRows(QStyledItemDelegate):
    """Rows a little taller than Qt's tightest, to click in a list of titles (a style sheet would do it, but one on
    the list drew it white in the dark theme: the sheet's style paints the background, not the palette), and the
    style's own branch arrow before a title that has headings under it. The marked row is drawn in the theme's
    highlight only while the keys are in the rows, and softly while they are with the text: the writer sees where the
    keys are."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return super().sizeHint(option, index) + QSize(0, 4)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
              ) -> None:  # fmt: skip
        widget = option.widget  # type: ignore[attr-defined]  # QStyleOption's member, missing from the stubs
        selected = option.state & QStyle.StateFlag.State_Selected  # type: ignore[attr-defined]
        if selected and widget is not None and not widget.hasFocus():
            option = QStyleOptionViewItem(option)
            colours = option.palette  # type: ignore[attr-defined]
            colours.setColor(QPalette.ColorRole.Highlight, soft_highlight(colours))
            colours.setColor(QPalette.ColorRole.HighlightedText, colours.color(QPalette.ColorRole.Text))
        super().paint(painter, option, index)
        folded = index.data(FOLD_ROLE)
        if index.column() != 0 or folded is None or widget is None:
            return
        branch = QStyleOptionViewItem(option)
        branch.rect = arrow_rect(widget, option.rect, int(index.data(LEVEL_ROLE)))  # type: ignore[attr-defined]
        open_state = QStyle.StateFlag.State_Open if not folded else QStyle.StateFlag.State_None
        branch.state = option.state | QStyle.StateFlag.State_Children | open_state  # type: ignore[attr-defined]
        widget.style().drawPrimitive(QStyle.PrimitiveElement.PE_IndicatorBranch, branch, painter, widget)


class OutlineTree(QTreeWidget):
    """The Outline's rows, which the writer drags to move a section: the line between two rows shows where it
    would go, only where a section of its level may stand (``can_place``), and ``dropped(row, before)`` moves it
    (``before`` the row whose heading it goes before, None after the last section). Qt's own move of the items
    is not used: the text moves, and the rows follow it."""

    keysLeft = Signal()  # the keys went elsewhere (to the text, a menu, another window)

    def __init__(self, dropped: Callable[[int, int | None], object], levels: Callable[[], list[int]],
                 fold: Callable[[int], object] = lambda _row: None, go: Callable[[int], object] = lambda _row: None,
                 leave: Callable[[], object] = lambda: None) -> None:  # fmt: skip
        super().__init__()
        self.dropped = dropped
        self.levels = levels
        self.fold = fold
        self.go = go  # Enter on a row: the caret to its heading, the keys to the text
        self.leave = leave  # Esc: the keys back to the text, the caret where it was
        self._typed = ""  # the first letters of a title typed so far, and when the last came
        self._typed_at = 0.0
        self._menu_open = False
        # Keys only when sent here (F6): a click goes to the text and leaves the keys there.
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.setItemDelegate(OutlineRows(self))
        self.setDragEnabled(True)
        self.setAcceptDrops(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.setDropIndicatorShown(True)

    def arrow_at(self, point: QPoint) -> int | None:
        """The row whose arrow is at ``point``, if one is."""
        item = self.itemAt(point)
        if item is None or item.data(0, FOLD_ROLE) is None:
            return None
        rect = arrow_rect(self, self.visualItemRect(item), int(item.data(0, LEVEL_ROLE)))
        return self.indexOfTopLevelItem(item) if rect.contains(point) else None

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        row = self.arrow_at(event.position().toPoint()) if event.button() == Qt.MouseButton.LeftButton else None
        if row is None:
            super().mousePressEvent(event)
            return
        event.accept()  # a fold, not a click on the heading: the caret stays where it is
        self.fold(row)

    # -- the keys ---------------------------------------------------------------------------------------------

    def current_row(self) -> int:
        item = self.currentItem()
        return -1 if item is None else self.indexOfTopLevelItem(item)

    def choose(self, row: int, shown: bool = False, again: bool = False) -> None:
        """Row ``row`` the current one, where the keys are (and what a screen reader says); ``shown``: or the
        heading it is folded under, where it is; ``again``: chosen anew while the keys are on it, for a screen
        reader, which hears the row that becomes current with the keys in the rows, not the one they came to."""
        if again:
            if not self.hasFocus() or self.current_row() != row:
                return
            self.setCurrentIndex(QModelIndex())
        while shown and self.isRowHidden(row, QModelIndex()) and (over := heading_over(self.levels(), row)) != row:
            row = over
        item = self.topLevelItem(row)
        if item is not None:
            self.setCurrentItem(item)
            self.scrollToItem(item)

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: N802 - Qt's name
        super().focusOutEvent(event)
        self.keysLeft.emit()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        key, row = event.key(), self.current_row()
        plain = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier == Qt.KeyboardModifier.NoModifier
        if plain and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and row >= 0:
            self.go(row)
        elif plain and key == Qt.Key.Key_Escape:
            self.leave()
        elif plain and key in (Qt.Key.Key_Left, Qt.Key.Key_Right) and row >= 0:
            self._sideways(row, key == Qt.Key.Key_Right)
        elif key == Qt.Key.Key_F10 and event.modifiers() == Qt.KeyboardModifier.ShiftModifier:
            self._menu_at_row()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def _sideways(self, row: int, right: bool) -> None:
        """Right unfolds a folded part, or steps into an open one; Left folds an open part, or steps out to the
        heading a chapter is under: as a tree of folders does."""
        item = self.topLevelItem(row)
        folded = None if item is None else item.data(0, FOLD_ROLE)
        if folded is right:  # Right on a folded part unfolds it, Left on an open one folds it
            self.fold(row)
        elif right and folded is False:
            self.choose(row + 1)  # a heading with headings under it: the next row is the first of them
        elif not right:
            self.choose(heading_over(self.levels(), row))

    def keyboardSearch(self, search: str) -> None:  # noqa: N802 - Qt's name
        """Letters typed choose the next heading whose title starts with them (the rows' own text starts with its
        indent, which Qt's search would match first); the same letter again goes on to the next."""
        now = time.monotonic()
        if now - self._typed_at > QApplication.keyboardInputInterval() / 1000:
            self._typed = ""
        self._typed_at = now
        self._typed += search
        typed = self._typed.casefold()
        again = len(set(typed)) == 1  # "ccc": on to the third title starting with c, not one starting with "ccc"
        wanted = typed[0] if again else typed
        count, start = self.topLevelItemCount(), self.current_row()
        start = start + 1 if again or start < 0 else start
        for step in range(count):
            row = (start + step) % count
            item = self.topLevelItem(row)
            title = str(item.data(0, Qt.ItemDataRole.AccessibleTextRole) or "") if item is not None else ""
            if title.casefold().startswith(wanted) and item is not None and not item.isHidden():
                self.choose(row)
                return

    def _menu_at_row(self) -> None:
        """The row's right-click menu, from the keys: under the current row, as a right-click there opens it."""
        item = self.currentItem()
        if self._menu_open:  # one key press, one menu (a platform may send the menu key's event as well)
            return
        place = self.visualItemRect(item).center() if item is not None else QPoint(0, 0)
        self._menu_open = True
        try:
            self.customContextMenuRequested.emit(place)
        finally:
            self._menu_open = False

    def event(self, event: QEvent) -> bool:
        # The menu key: Qt gives the point of the view's frame, not the row's, and asks the frame's menu.
        if isinstance(event, QContextMenuEvent) and event.reason() == QContextMenuEvent.Reason.Keyboard:
            self._menu_at_row()
            event.accept()
            return True
        return super().event(event)

    def mimeTypes(self) -> list[str]:  # noqa: N802 - Qt's name
        return [ROW_FORMAT]  # Qt draws the line between rows only for a drag of a kind the list takes

    def row_data(self, row: int) -> QMimeData:
        """What a drag of ``row`` carries: the row, and which panel it came from."""
        data = QMimeData()
        data.setData(ROW_FORMAT, f"{id(self)}:{row}".encode())
        return data

    def startDrag(self, supportedActions: Qt.DropAction) -> None:  # noqa: N802 - Qt's name
        item = self.currentItem()
        if item is None:
            return
        drag = QDrag(self)
        drag.setMimeData(self.row_data(self.indexOfTopLevelItem(item)))
        drag.setPixmap(self._picture(item))
        drag.setHotSpot(QPoint(-16, -14))  # the row's picture below and right of the pointer, off the line it shows
        drag.exec(Qt.DropAction.MoveAction)  # the drop moved the text itself; nothing of Qt's to remove after

    def _picture(self, item: QTreeWidgetItem) -> QPixmap:
        """The dragged row's title, a little faint: what the pointer carries."""
        rect = self.visualItemRect(item)
        rect.setWidth(min(rect.width(), self.fontMetrics().horizontalAdvance(item.text(0)) + 12))
        grabbed = self.viewport().grab(rect)
        picture = QPixmap(grabbed.size())
        picture.setDevicePixelRatio(grabbed.devicePixelRatio())
        picture.fill(Qt.GlobalColor.transparent)
        painter = QPainter(picture)
        painter.setOpacity(0.75)
        painter.drawPixmap(0, 0, grabbed)
        painter.end()
        return picture

    def dragged_row(self, data: QMimeData) -> int | None:
        panel, _, row = bytes(data.data(ROW_FORMAT).data()).decode().partition(":")
        return int(row) if panel == str(id(self)) and row.isdigit() else None

    def place_for(self, event: QDragMoveEvent | QDropEvent) -> tuple[int, int | None] | None:
        """The dragged row and the row it would go before (None: after the last), where it may go."""
        row = self.dragged_row(event.mimeData())
        if row is None:
            return None
        point = event.position().toPoint()
        item = self.itemAt(point)
        if item is None:  # below the last row (the list is shorter than the panel): at the end
            before: int | None = None if point.y() > 0 else 0
        else:
            over = self.indexOfTopLevelItem(item)
            if point.y() < self.visualItemRect(item).center().y():
                before = over
            else:  # below a folded part: before the next row shown, not among the part's hidden chapters
                later = range(over + 1, self.topLevelItemCount())
                before = next((shown for shown in later if not self.isRowHidden(shown, QModelIndex())), None)
        return (row, before) if can_place(self.levels(), row, before) else None

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt's name
        if self.dragged_row(event.mimeData()) is None:
            event.ignore()
            return
        super().dragEnterEvent(event)
        event.acceptProposedAction()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802 - Qt's name
        allowed = self.place_for(event) is not None
        self.setDropIndicatorShown(allowed)  # no line where it may not go: the writer sees the place or none
        super().dragMoveEvent(event)
        if allowed:
            event.setDropAction(Qt.DropAction.MoveAction)
            event.accept()
        else:
            event.ignore()
        self.viewport().update()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        place = self.place_for(event)
        self.setDropIndicatorShown(True)
        self.setState(QAbstractItemView.State.NoState)
        self.viewport().update()
        if place is None:
            event.ignore()
            return
        event.setDropAction(Qt.DropAction.CopyAction)  # Qt removes a moved item's row itself on MoveAction
        event.accept()
        self.dropped(*place)
