"""F6 and Shift+F6 (View ▸ Next Pane, Previous Pane): the writer's keys round the window's panes, as F6 goes round
Word's and LibreOffice's: the text, the Outline's rows (``outline.py``), the drafts while some wait
(``app/rewrite/drafts_panel.py``). A pane that is hidden, or has nothing to choose (no headings, no drafts), is
passed by. Where no pane but the text would take the keys, F6 shows the Outline and goes there (or the Outline
says how a heading is made), as it did before the drafts joined the round.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow


class Pane(Protocol):
    """A panel the keys visit: whether they are in it, whether it would take them now, and take them."""

    def has_keys(self) -> bool: ...
    def can_take_keys(self) -> bool: ...
    def take_keys(self) -> None: ...


class OutlinePane(Pane, Protocol):
    def give_keys_back(self) -> None: ...  # to the text, the caret's section marked again


class PaneKeys(QObject):
    """The round: the text first, then ``outline``, then ``drafts``; the Outline gives the keys back to the text."""

    def __init__(self, window: QMainWindow, outline: OutlinePane, drafts: Pane) -> None:
        super().__init__(window)
        self.outline = outline
        self.panes: list[Pane] = [outline, drafts]
        self.next_action = QAction("Next &Pane", window)
        self.next_action.setShortcut(QKeySequence("F6"))
        self.next_action.setStatusTip("The keys to the next pane: the Outline's headings, the drafts waiting, the text")
        self.next_action.triggered.connect(lambda: self.go(+1))
        self.previous_action = QAction("Pre&vious Pane", window)
        self.previous_action.setShortcut(QKeySequence("Shift+F6"))
        self.previous_action.setStatusTip("The keys to the pane before: the drafts waiting, the Outline, the text")
        self.previous_action.triggered.connect(lambda: self.go(-1))
        self.actions = [self.next_action, self.previous_action]

    def where(self) -> int:
        """Where the keys are in the round: 0 the text (or anywhere else), 1 the Outline, 2 the drafts."""
        return next((number for number, pane in enumerate(self.panes, 1) if pane.has_keys()), 0)

    def go(self, step: int) -> None:
        """The keys ``step`` panes on (+1) or back (-1), passing by those that would not take them."""
        here = self.where()
        round_ = [None, *self.panes]
        for distance in range(1, len(round_) + 1):
            pane = round_[(here + step * distance) % len(round_)]
            if pane is None:
                if here == 0:
                    break  # round and back to the text: no pane would take the keys
                self.outline.give_keys_back()
                return
            if pane.can_take_keys():
                pane.take_keys()
                return
        self.outline.take_keys()  # shows it; without headings it says how one is made, the keys left in the text
