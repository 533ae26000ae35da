"""Room for the status bar's message: while a message shows that the figures at the bar's right leave no room for
("Change 2 of 4 (undecided) · Alt+Return accepts it, Alt+Delete rejects it · Enter: the text as it stands · Esc:
the original"), the least needed of them step aside, one by one, until it fits, and come back when it clears.

Qt paints a status message only up to the first permanent widget and cuts it off there: in a window 1,100 pixels
wide, a tracked change's keys were cut off after "Enter: the text as it stanc". The figures are squeezed to no
width, not hidden, so that whoever shows or hides them (a rewrite hides the counts while it develops) keeps doing
so undisturbed.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QSizeGrip, QStatusBar, QWidget

UNSQUEEZED = 16_777_215  # Qt's QWIDGETSIZE_MAX: no maximum width
# Qt's message area: 6 pixels in from the bar's left, 2 short of the first permanent widget, at most 12 short of
# the bar's right end.
MESSAGE_LEFT_PX, MESSAGE_GAP_PX, MESSAGE_RIGHT_PX = 6, 2, 12


class MessageRoom(QObject):
    """Makes room for ``bar``'s messages by squeezing ``expendable`` (permanent widgets, least needed first)."""

    def __init__(self, bar: QStatusBar, expendable: Sequence[QWidget]) -> None:
        super().__init__(bar)
        self.bar = bar
        self.expendable = list(expendable)
        self.squeezed: list[QWidget] = []
        bar.messageChanged.connect(self._make_room)
        bar.installEventFilter(self)  # a narrower window has less room for the same message

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self.bar and event.type() == QEvent.Type.Resize and self.bar.currentMessage():
            self._make_room(self.bar.currentMessage())
        return False

    def fits(self, message: str) -> bool:
        """Whether ``message`` fits in the room the permanent widgets leave it now."""
        return self.bar.fontMetrics().horizontalAdvance(message) <= self.room()

    def room(self) -> int:
        """The message area's width in pixels, as Qt's status bar paints it (up to its first permanent widget)."""
        layout = self.bar.layout()
        if layout is not None:
            layout.activate()  # the widgets' places after a squeeze, now rather than at the next event loop
        right = self.bar.width() - MESSAGE_RIGHT_PX
        for child in self.bar.findChildren(QWidget):
            if child.parent() is self.bar and child.isVisibleTo(self.bar) and not isinstance(child, QSizeGrip):
                right = min(right, child.x() - MESSAGE_GAP_PX)
        return right - MESSAGE_LEFT_PX

    def _make_room(self, message: str) -> None:
        for widget in self.squeezed:
            widget.setMaximumWidth(UNSQUEEZED)
        self.squeezed = []
        if message:
            for widget in self.expendable:
                if self.fits(message):
                    break
                if widget.isVisibleTo(self.bar) and widget.sizeHint().width() > 0:
                    widget.setMaximumWidth(0)
                    self.squeezed.append(widget)
        self.bar.update()
