"""The Outline's rows (``outline.py``), which the writer drags to move a section: Qt's drag of a list's items, the
place shown and the drop taken only where ``app/documents/sections.can_place`` allows. A heading with headings
under it shows an arrow before its title, and a click on the arrow folds them away (or shows them again)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QMimeData, QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QDrag, QDragEnterEvent, QDragMoveEvent, QDropEvent, QMouseEvent, QPainter, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from app.documents.sections import can_place
from app.window.headings import INDENT

ROW_FORMAT = "application/x-redraft-outline-row"  # a row dragged: this panel's, so no other window's rows land
LEVEL_ROLE = Qt.ItemDataRole.UserRole  # a row's heading level
FOLD_ROLE = Qt.ItemDataRole.UserRole + 1  # None: nothing under it to fold; True: folded; False: open
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


class OutlineRows(QStyledItemDelegate):
    """Rows a little taller than Qt's tightest, to click in a list of titles (a style sheet would do it, but one on
    the list drew it white in the dark theme: the sheet's style paints the background, not the palette), and the
    style's own branch arrow before a title that has headings under it."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return super().sizeHint(option, index) + QSize(0, 4)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
              ) -> None:  # fmt: skip
        super().paint(painter, option, index)
        folded = index.data(FOLD_ROLE)
        widget = option.widget  # type: ignore[attr-defined]  # QStyleOption's member, missing from the stubs
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

    def __init__(self, dropped: Callable[[int, int | None], object], levels: Callable[[], list[int]],
                 fold: Callable[[int], object] = lambda _row: None) -> None:  # fmt: skip
        super().__init__()
        self.dropped = dropped
        self.levels = levels
        self.fold = fold
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
