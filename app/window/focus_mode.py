"""View ▸ Focus Mode (F11): the text alone on the screen. The window goes full screen and its menu bar, toolbar
and Drafts panel step aside; the status bar stays, since it says how a rewrite develops and which keys take
it. Every shortcut keeps working. F11 again, or Esc while no rewrite is open (Esc there rejects or cancels the
rewrite, as always), brings the window back as it was. Not remembered: each start is in the usual window."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMenu, QMenuBar, QStatusBar, QToolBar, QWidget

from app.window.editor_widget import RewriteEditor

FOCUS_KEY = QKeySequence("F11")


class FocusWindow(Protocol):
    """What focus mode uses of the main window (a QMainWindow)."""

    @property
    def editor(self) -> RewriteEditor: ...

    def menuBar(self) -> QMenuBar: ...

    def statusBar(self) -> QStatusBar: ...

    def windowState(self) -> Qt.WindowState: ...

    def setWindowState(self, state: Qt.WindowState) -> None: ...

    def addAction(self, action: QAction) -> None: ...


class FocusMode(QObject):
    """The window's Focus Mode and what it put aside, to be put back."""

    def __init__(self, window: FocusWindow, toolbar: QToolBar, panels: list[QDockWidget], parent: QObject) -> None:
        super().__init__(parent)
        self.window = window
        self.toolbar = toolbar
        self.panels = panels  # the Drafts panel and the Outline: aside while it is on
        self.action = QAction("&Focus Mode", parent)
        self.action.setCheckable(True)
        # F11 everywhere, and the platform's own keys for full screen where it has any: Qt lists none for X11
        # outside KDE and GNOME, where F11 did nothing.
        standard = QKeySequence.keyBindings(QKeySequence.StandardKey.FullScreen)
        self.action.setShortcuts([FOCUS_KEY, *(keys for keys in standard if keys != FOCUS_KEY)])
        self.action.setStatusTip("The text alone, full screen (F11 or Esc leaves)")
        self.action.toggled.connect(self._toggled)
        self._put_aside: list[QWidget] = []
        self._state = Qt.WindowState.WindowNoState
        window.editor.installEventFilter(self)

    @property
    def on(self) -> bool:
        return self.action.isChecked()

    def _toggled(self, on: bool) -> None:
        window = self.window
        if on:
            self._state = window.windowState()
            # The menus' shortcuts live on in the window itself: a hidden menu bar's do not fire.
            for action in menu_entries(window.menuBar().actions()):
                window.addAction(action)
            self._put_aside = [w for w in (window.menuBar(), self.toolbar, *self.panels) if w.isVisible()]
            for widget in self._put_aside:
                widget.hide()
            window.setWindowState(self._state | Qt.WindowState.WindowFullScreen)
            keys = self.action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            window.statusBar().showMessage(f"Focus mode: {keys} or Esc (with no rewrite open) leaves it.", 6000)
        else:
            window.setWindowState(self._state & ~Qt.WindowState.WindowFullScreen)
            for widget in self._put_aside:
                widget.show()
            self._put_aside = []
            if window.statusBar().currentMessage().startswith("Focus mode: "):  # how to leave: it is left
                window.statusBar().clearMessage()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Esc leaves focus mode where no rewrite would take it."""
        escape = isinstance(event, QKeyEvent) and event.key() == Qt.Key.Key_Escape and not event.modifiers()
        if event.type() == QEvent.Type.KeyPress and escape and self.on and self.window.editor.live_span is None:
            self.action.setChecked(False)
            return True
        return super().eventFilter(watched, event)


def menu_entries(actions: list[QAction]) -> list[QAction]:
    """The actions of these menus and of their submenus, not the menus themselves nor separators."""
    found: list[QAction] = []
    for action in actions:
        menu = action.menu()
        if isinstance(menu, QMenu):
            found += menu_entries(menu.actions())
        elif not action.isSeparator():
            found.append(action)
    return found
