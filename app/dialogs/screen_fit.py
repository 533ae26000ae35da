"""Dialogs sized to the screen they open on, so that their buttons stay reachable on a small laptop, and the
main window back where the writer left it."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

# What a window manager adds around a window: a title bar (about 30-40 px) and thin borders.
FRAME_ALLOWANCE = QSize(16, 48)


def room_on_screen(widget: QWidget) -> QSize:
    """The largest size ``widget`` can take and still show whole, frame included, on its screen."""
    parent = widget.parentWidget()
    screen = (parent or widget).screen() or QGuiApplication.primaryScreen()
    available = screen.availableGeometry().size()
    return QSize(available.width() - FRAME_ALLOWANCE.width(), available.height() - FRAME_ALLOWANCE.height())


def fitted(widget: QWidget, preferred: QSize) -> QSize:
    """``preferred``, shrunk to the room on ``widget``'s screen but never below what its layout needs."""
    return preferred.boundedTo(room_on_screen(widget)).expandedTo(widget.minimumSizeHint())


def restore_place(window: QWidget, saved: str, preferred: QSize) -> None:
    """Put ``window`` where :func:`place_of` found it at its last close (Qt moves it onto a screen that is
    still there); the first time, or if that cannot be read, ``preferred`` fitted to its screen."""
    if not saved or not window.restoreGeometry(QByteArray.fromBase64(saved.encode("ascii"))):
        window.resize(fitted(window, preferred))


def place_of(window: QWidget) -> str:
    """``window``'s place, size and maximised state as :func:`restore_place` reads them. Full screen is not
    kept (a start in Focus Mode's full screen without its menus would look broken): the window as it was."""
    if window.windowState() & Qt.WindowState.WindowFullScreen:
        window.setWindowState(window.windowState() & ~Qt.WindowState.WindowFullScreen)
    return bytes(window.saveGeometry().toBase64().data()).decode("ascii")
