"""The notice bar above the text."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

# Background, text (and the close button's glyph, which must read as clearly as the text) per kind and
# theme; every pair has a contrast ratio above 7:1.
_COLORS = {
    ("error", False): ("#f6dcd8", "#7a2a22"),
    ("info", False): ("#dde8f6", "#1f3f6b"),
    ("error", True): ("#4a2421", "#ffd9d3"),
    ("info", True): ("#1f3350", "#d6e6ff"),
}

# The topic of a notice about the document's unsaved state (a failed save, a recovered or imported text that
# Save keeps): the next save that succeeds resolves it, so "It is not saved yet" never outlives the save.
UNTIL_SAVED = "until saved"


class MessageBar(QFrame):
    """An inline notice above the text: errors reach the writer without a modal dialog in the way.

    A notice may name the condition it reports (``topic``); :meth:`resolve` hides it once that condition
    is gone (a model that loads clears "could not load the model"), so no stale error stays up.
    """

    shown = Signal(str, str)  # a notice's text and kind, as it shows (said to a screen reader)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = QToolButton()
        self.close_button.setObjectName("messageBarClose")
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss this notice")
        self.close_button.setAccessibleName("Dismiss this notice")  # not "multiplication x"
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(14, 8, 8, 8)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button)
        self.kind = "info"
        self.topic = ""
        self.hide()

    def show_message(self, text: str, kind: str = "error", topic: str = "") -> None:
        self.kind = kind
        self.topic = topic
        self.restyle()
        self.label.setText(text)
        self.show()
        self.shown.emit(text, kind)

    def resolve(self, topic: str) -> None:
        """The condition ``topic`` is resolved: hide its notice if that is the one showing."""
        if topic and self.topic == topic:
            self.topic = ""
            self.hide()

    def restyle(self) -> None:
        """Colours for the current kind and theme (called again when the theme changes)."""
        # The application's palette: this widget's own takes the notice's background from the style sheet.
        dark = QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128
        background, ink = _COLORS[(self.kind, dark)]
        self.setStyleSheet(
            f"#messageBar {{ background: {background}; }} QLabel {{ color: {ink}; }}"
            f" #messageBarClose {{ color: {ink}; font-weight: bold; border: 1px solid {ink};"
            f" border-radius: 3px; padding: 1px 5px; background: transparent; }}"
            f" #messageBarClose:hover {{ background: {ink}; color: {background}; }}"
        )
