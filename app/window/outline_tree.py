"""The Outline's rows (``outline.py``), which the writer drags to move a section: Qt's drag of a list's items, the
place shown and the drop taken only where ``app/documents/sections.can_place`` allows."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QMimeData, QPoint, Qt
from PySide6.QtGui import QDrag, QDragEnterEvent, QDragMoveEvent, QDropEvent, QPainter, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QTreeWidget, QTreeWidgetItem

from app.documents.sections import can_place

ROW_FORMAT = "application/x-redraft-outline-row"  # a row dragged: this panel's, so no other window's rows land


class OutlineTree(QTreeWidget):
    """The Outline's rows, which the writer drags to move a section: the line between two rows shows where it
    would go, only where a section of its level may stand (``can_place``), and ``dropped(row, before)`` moves it
    (``before`` the row whose heading it goes before, None after the last section). Qt's own move of the items
    is not used: the text moves, and the rows follow it."""

    def __init__(self, dropped: Callable[[int, int | None], object], levels: Callable[[], list[int]]) -> None:
        super().__init__()
        self.dropped = dropped
        self.levels = levels
        self.setDragEnabled(True)
        self.setAcceptDrops(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.setDropIndicatorShown(True)

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
            before = over if point.y() < self.visualItemRect(item).center().y() else over + 1
            before = None if before >= self.topLevelItemCount() else before
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
