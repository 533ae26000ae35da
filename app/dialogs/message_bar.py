"""The notice bar above the text."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget


class MessageBar(QFrame):
    """An inline notice above the text: errors reach the writer without a modal dialog in the way."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(14, 8, 8, 8)
        layout.addWidget(self.label, 1)
        layout.addWidget(close)
        self.kind = "info"
        self.hide()

    def show_message(self, text: str, kind: str = "error") -> None:
        self.kind = kind
        colors = {"error": ("#f6dcd8", "#7a2a22"), "info": ("#dde8f6", "#1f3f6b")}[kind]
        self.setStyleSheet(f"#messageBar {{ background: {colors[0]}; }} QLabel {{ color: {colors[1]}; }}")
        self.label.setText(text)
        self.show()
