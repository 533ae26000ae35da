"""The popups at the cursor that ask what a rewrite needs: a gap's longest length, an instruction."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, Qt, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

# A gap's longest length as a writer thinks of it; the model counts tokens (about 3/4 of a word each).
FILL_LENGTHS = {
    "short (a few words)": 8,
    "medium (a sentence)": 24,
    "long (a few sentences)": 64,
}


def words_for(tokens: int) -> int:
    """Roughly how many English words ``tokens`` tokens hold."""
    return max(1, round(tokens * 0.75))


def show_within_screen(popup: QWidget, below: QPoint, above: QPoint | None = None) -> None:
    """Show ``popup`` with its top-left at ``below``, moved left and, if need be, above the caret (its top
    at ``above`` is the popup's bottom) so that all of it is on the screen's available area."""
    popup.move(below)
    popup.show()  # shown first: its size is final only then
    screen = QGuiApplication.screenAt(below) or QGuiApplication.primaryScreen()
    area: QRect = screen.availableGeometry()
    size = popup.frameGeometry().size()
    x = min(below.x(), area.right() + 1 - size.width())
    y = below.y()
    if y + size.height() > area.bottom() + 1:
        y = (above.y() if above is not None else area.bottom() + 1) - size.height()
    popup.move(max(area.left(), x), max(area.top(), y))

# One-click tones (the Instruct popup, Rewrite ▸ Tone): the instruction each sends, under a label whose letter
# (Alt+it in the popup) is its own in both.
INSTRUCTION_PRESETS = {
    "&Simpler": "Make this simpler and easier to read.",
    "More &formal": "Make this more formal.",
    "More &casual": "Make this more casual and conversational.",
    "More &vivid": "Make this more vivid, with concrete detail.",
    "S&horter": "Make this shorter.",
    "Fix &grammar": "Fix the grammar and spelling; change nothing else.",
}


class FillGapPopup(QFrame):
    """A small popup at the cursor: how long the gap may grow, in words (``chosen`` emits tokens)."""

    chosen = Signal(int)

    def __init__(self, parent: QWidget, default_tokens: int) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.length = QComboBox()
        for label, tokens in FILL_LENGTHS.items():
            self.length.addItem(label, tokens)
        if default_tokens not in FILL_LENGTHS.values():  # a length set in Settings stays on offer
            self.length.addItem(f"up to about {words_for(default_tokens)} words", default_tokens)
        self.length.setCurrentIndex(self.length.findData(default_tokens))
        button = QPushButton("Fill")
        button.setDefault(True)
        button.clicked.connect(self._choose)
        layout = QHBoxLayout(self)
        layout.addWidget(QLabel("Fill the gap:"))
        layout.addWidget(self.length)
        layout.addWidget(button)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._choose()
            return
        super().keyPressEvent(event)

    def _choose(self) -> None:
        self.close()
        self.chosen.emit(int(self.length.currentData()))


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
        self.prompt.setAccessibleName("Instruction")  # a placeholder is no name to a screen reader
        line.setAccessibleName("Instruction")
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
