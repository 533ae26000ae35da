"""The popups at the cursor that ask what a rewrite needs: a gap's longest length, an instruction."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget

INSTRUCTION_PRESETS = {
    "Shorter": "Make this shorter.",
    "Simpler": "Make this simpler and easier to read.",
    "More formal": "Make this more formal.",
    "Fix grammar": "Fix the grammar and spelling; change nothing else.",
}


class FillGapPopup(QFrame):
    """A small popup at the cursor: the longest gap the model may write."""

    chosen = Signal(int)

    def __init__(self, parent: QWidget, default_tokens: int) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.tokens = QSpinBox()
        self.tokens.setRange(1, 1024)
        self.tokens.setValue(default_tokens)
        self.tokens.setSuffix(" tokens at most")
        button = QPushButton("Fill")
        button.setDefault(True)
        button.clicked.connect(self._choose)
        layout = QHBoxLayout(self)
        layout.addWidget(QLabel("Fill the gap with up to"))
        layout.addWidget(self.tokens)
        layout.addWidget(button)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._choose()
            return
        super().keyPressEvent(event)

    def _choose(self) -> None:
        self.close()
        self.chosen.emit(self.tokens.value())


class InstructionPopup(QFrame):
    """A prompt box with presets and history, for instruction-tuned checkpoints."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget, history: tuple[str, ...]) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumWidth(420)
        self.prompt = QComboBox()
        self.prompt.setEditable(True)
        self.prompt.addItems(list(history))
        self.prompt.setCurrentText("")
        line = self.prompt.lineEdit()
        assert line is not None
        line.setPlaceholderText("Tell the model how to rewrite the selection…")
        line.returnPressed.connect(self._choose)
        presets = QHBoxLayout()
        for label, instruction in INSTRUCTION_PRESETS.items():
            button = QPushButton(label)
            button.setFlat(True)
            button.clicked.connect(lambda _checked=False, text=instruction: self._choose(text))
            presets.addWidget(button)
        go = QPushButton("Rewrite")
        go.setDefault(True)
        go.clicked.connect(lambda: self._choose())
        row = QHBoxLayout()
        row.addWidget(self.prompt, 1)
        row.addWidget(go)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addLayout(presets)

    def _choose(self, text: str | None = None) -> None:
        instruction = (text if text is not None else self.prompt.currentText()).strip()
        if not instruction:
            return
        self.close()
        self.chosen.emit(instruction)
