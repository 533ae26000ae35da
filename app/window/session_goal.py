"""View ▸ Session Word Goal…: how many words to write in this sitting, and the status bar counting towards it
("312 of 500 words this session"), as writing apps keep a session target.

A session is this document since it was opened (or since the goal was first set): the count is the words the
document has gained since then, net of those cut, so a rewrite that adds words counts them and a cut paragraph
takes its words back. Reaching the goal is said once in the status bar. The goal itself is a preference, kept
for the next session; 0 turns it off and the count leaves the status bar.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QLabel, QSpinBox, QStatusBar, QWidget

MAX_GOAL = 100_000
GOAL_TITLE = "Session Word Goal"
TITLE_ROOM = 1.2  # a title bar's bold face is wider than the dialog's
FRAME_BUTTONS_PX = 120  # minimize, maximize, close and the frame's margins


class GoalWindow(Protocol):
    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name


class SessionGoal(QObject):
    def __init__(self, window: GoalWindow, goal: int, store: Callable[[int], None], parent: QWidget) -> None:
        super().__init__(parent)
        self.window = window
        self.goal = goal
        self.store = store  # keeps a new goal in the preferences
        self.start: int | None = None  # the document's words when the session began (set at the first count)
        self.written = 0
        self.reached = False
        self.label = QLabel("")
        self.label.setContentsMargins(6, 0, 6, 0)
        self.label.setToolTip("Words written in this document since it was opened (View ▸ Session Word Goal…)")
        self.label.setVisible(goal > 0)
        self.action = QAction("Session Word &Goal…", parent)
        self.action.setStatusTip("How many words to write in this sitting; the status bar counts towards it")
        self.action.triggered.connect(self.ask)

    def begin(self, words: int | None = None) -> None:
        """A new session: another document in the editor (``words`` it holds; None: counted at the next count)."""
        self.start, self.written, self.reached = words, 0, False
        self._show()

    def counted(self, words: int) -> None:
        """The document holds ``words`` now (the status bar's count)."""
        if self.start is None:
            self.start = words
        self.written = max(0, words - self.start)
        self._show()
        if self.goal and self.written >= self.goal and not self.reached:
            self.reached = True
            self.window.statusBar().showMessage(f"Session goal reached: {self.written:,} words written.", 8000)

    def set_goal(self, goal: int) -> None:
        self.goal = max(0, min(goal, MAX_GOAL))
        self.reached = self.goal > 0 and self.written >= self.goal  # a goal already met is not announced again
        self.store(self.goal)
        self._show()

    def ask(self) -> QInputDialog:
        window = self.parent()
        assert isinstance(window, QWidget)
        dialog = QInputDialog(window)
        dialog.setWindowTitle(GOAL_TITLE)
        dialog.setLabelText("Words to write in this sitting (0: no goal):")
        dialog.setInputMode(QInputDialog.InputMode.IntInput)
        dialog.setIntRange(0, MAX_GOAL)
        dialog.setIntStep(50)
        dialog.setIntValue(self.goal or 500)
        # Wide enough for its title beside the frame's buttons: a window manager cut it to "Session Wo… l". The
        # dialog's layout sets its size from its parts, so the field is made that wide.
        title = window.fontMetrics().horizontalAdvance(f"{GOAL_TITLE} — Redraft")
        field = dialog.findChild(QSpinBox)
        if field is not None:
            field.setMinimumWidth(round(title * TITLE_ROOM) + FRAME_BUTTONS_PX)
        if dialog.exec() == QInputDialog.DialogCode.Accepted:
            self.set_goal(dialog.intValue())
        return dialog

    def _show(self) -> None:
        self.label.setVisible(self.goal > 0)
        if self.goal > 0:
            done = "✓ " if self.written >= self.goal else ""
            self.label.setText(f"{done}{self.written:,} of {self.goal:,} words this session")
