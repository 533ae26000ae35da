"""A panel beside the text that the writer shows and hides, and Redraft remembers: the Drafts panel on the right,
the Outline on the left. Its View-menu entry (``toggle_action``) and its close button say so through
``shownByWriter``; its keyboard focus stays with the text (a click in it must not take the keys: typing after
choosing a draft or a heading goes where the writer looks)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QCloseEvent, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow


class SidePanel(QDockWidget):
    shownByWriter = Signal(bool)  # the writer showed or hid the panel (View menu, its close button)

    def __init__(self, title: str, window: QMainWindow, menu_text: str, keys: str, width: int,
                 areas: Qt.DockWidgetArea) -> None:  # fmt: skip
        super().__init__(title, window)
        self.panel_width = width
        self.setAllowedAreas(areas)
        self.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetClosable | QDockWidget.DockWidgetFeature.DockWidgetMovable
        )
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.toggle_action = self.toggleViewAction()
        self.toggle_action.setText(menu_text)
        self.toggle_action.setShortcut(QKeySequence(keys))
        self.toggle_action.triggered.connect(lambda _checked=False: self.shownByWriter.emit(self.isVisibleTo(window)))

    def sizeHint(self) -> QSize:
        return QSize(self.panel_width, super().sizeHint().height())

    def closeEvent(self, event: QCloseEvent) -> None:
        super().closeEvent(event)
        if event.isAccepted():
            self.shownByWriter.emit(False)
