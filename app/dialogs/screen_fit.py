"""Dialogs sized to the screen they open on, so that their buttons stay reachable on a small laptop."""

from __future__ import annotations

from PySide6.QtCore import QSize
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
