"""View ▸ Typewriter Scrolling: the line being written stays at the middle of the view, as a typewriter's
platen keeps it, instead of sinking to the bottom edge while the writer types. Keys move it there (typing, the
arrows, Enter); a click does not, so the text never jumps away from under the mouse. The last lines can be
centred too: the view scrolls past the end. Remembered."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeyEvent

from app.window.editor_widget import RewriteEditor

Key = Qt.Key
MODIFIER_KEYS = frozenset({Key.Key_Shift, Key.Key_Control, Key.Key_Alt, Key.Key_Meta, Key.Key_AltGr, Key.Key_CapsLock})


class Typewriter(QObject):
    """The View menu's toggle and the key presses that centre the caret's line while it is on."""

    def __init__(self, editor: RewriteEditor, on: bool, parent: QObject) -> None:
        super().__init__(parent)
        self.editor = editor
        self.action = QAction("&Typewriter Scrolling", parent)
        self.action.setCheckable(True)
        self.action.setStatusTip("Keep the line you are writing at the middle of the view")
        self.action.toggled.connect(self._toggled)
        self.action.setChecked(on)
        editor.installEventFilter(self)

    @property
    def on(self) -> bool:
        return self.action.isChecked()

    def _toggled(self, on: bool) -> None:
        self.editor.setCenterOnScroll(on)  # room below the last line, so that it too can sit at the middle
        if on:
            self.editor.centerCursor()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.editor and event.type() == QEvent.Type.KeyPress and self.on:
            assert isinstance(event, QKeyEvent)
            if event.key() not in MODIFIER_KEYS:
                QTimer.singleShot(0, self._centre)  # after the editor has handled the key
        return False

    def _centre(self) -> None:
        if self.on:
            self.editor.centerCursor()

