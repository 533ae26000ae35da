"""Helpers shared by the GUI tests."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QMimeData, QObject, QPoint, QTimer, Slot
from PySide6.QtGui import QAccessible, QContextMenuEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QScrollBar,
    QTextEdit,
    QWidget,
)

from app.window.main_window import MainWindow

SIGNAL_TIMEOUT_MS = 60_000
DOCUMENT = (
    "The lighthouse keeper climbed the stairs every evening.\n"
    "She wrote the letter twice, then walked to the harbour instead.\n"
)
HAND_WRAPPED = (  # Alice, chapter 2, as Project Gutenberg wraps it (71 columns at most)
    "So she called softly after it, 'Mouse dear! Do come back again, and we\n"
    "won't talk about cats or dogs either, if you don't like them!' When the\n"
    "Mouse heard this, it turned round and swam slowly back to her: its face\n"
    "was quite pale (with passion, Alice thought), and it said in a low\n"
    "trembling voice, 'Let us get to the shore, and then I'll tell you my\n"
    "history, and you'll understand why it is I hate cats and dogs.'\n"
)


class PassRecorder(QObject):
    """Receives the worker's signals in the GUI thread, after the window has painted them."""

    def __init__(self, window: MainWindow, check: Callable[[int, Any], None] | None = None) -> None:
        super().__init__()
        self.passes: list[tuple[int, Any]] = []
        self.cancelled: list[int] = []
        self.finished: list[int] = []
        self.check = check
        worker = window.service.worker
        worker.passReady.connect(self.on_pass)
        worker.editCancelled.connect(self.on_cancelled)
        worker.editFinished.connect(self.on_finished)

    @Slot(int, object)
    def on_pass(self, job_id: int, painted: Any) -> None:
        self.passes.append((job_id, painted))
        if self.check is not None:
            self.check(job_id, painted)

    @Slot(int)
    def on_cancelled(self, job_id: int) -> None:
        self.cancelled.append(job_id)

    @Slot(int, object)
    def on_finished(self, job_id: int, _result: Any) -> None:
        self.finished.append(job_id)

    def count(self, job_id: int) -> int:
        return sum(1 for job, _ in self.passes if job == job_id)


def select(window: MainWindow, needle: str) -> tuple[int, int]:
    """Select the first occurrence of ``needle`` (ASCII documents: str offsets equal Qt positions)."""
    text = window.editor.plain_text()
    start = text.index(needle)
    window.editor.select_range(start, start + len(needle))
    return start, start + len(needle)


def place_cursor(window: MainWindow, position: int) -> None:
    cursor = window.editor.textCursor()
    cursor.setPosition(position)
    window.editor.setTextCursor(cursor)


CONTROLS = (QAbstractButton, QLineEdit, QComboBox, QAbstractSpinBox, QAbstractSlider, QAbstractItemView, QPlainTextEdit,
            QTextEdit)


def unnamed_controls(top: QWidget) -> list[str]:
    """The controls shown in ``top`` whose accessible name has no letter: none, or a glyph ("✕", "↑")."""
    found = []
    for widget in [top, *top.findChildren(QWidget)]:
        if not isinstance(widget, CONTROLS) or isinstance(widget, QScrollBar) or not widget.isVisibleTo(top):
            continue  # a scroll bar is known by its role
        if widget.objectName().startswith("qt_") or isinstance(widget.parent(), QLineEdit):
            continue  # Qt's own (a toolbar's overflow arrow, a dock's float button, a line's clear button)
        interface = QAccessible.queryAccessibleInterface(widget)
        name = interface.text(QAccessible.Text.Name) if interface is not None else ""
        if not re.search(r"[^\W\d_]", name):
            found.append(f"{type(widget).__name__} {name!r} in {type(widget.parent()).__name__}")
    return found


def drop_on_editor(window: MainWindow, mime: QMimeData, at: QPoint | None = None) -> bool:
    """A drag of ``mime`` entering the editor and dropped on it (at ``at`` in its viewport, else near its top
    left), as a desktop sends it; whether it was taken."""
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QDragEnterEvent, QDropEvent

    point = at or QPoint(5, 5)

    viewport = window.editor.viewport()
    action, buttons = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton
    enter = QDragEnterEvent(point, action, mime, buttons, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(viewport, enter)
    drop = QDropEvent(QPointF(point), action, mime, buttons, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(viewport, drop)
    return drop.isAccepted()


def pieces(preview: QPlainTextEdit) -> list[tuple[str, str]]:
    """The preview's text in runs, each ``kept``, ``removed`` (struck through) or ``added`` (underlined)."""
    runs: list[tuple[str, str]] = []
    first = block = preview.document().begin()
    while block.isValid():
        if block != first:
            runs.append(("\n", "kept"))
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            look = fragment.charFormat()
            kind = "removed" if look.fontStrikeOut() else "added" if look.fontUnderline() else "kept"
            runs.append((fragment.text(), kind))
            fragments += 1
        block = block.next()
    merged: list[tuple[str, str]] = []
    for text, kind in runs:
        if merged and merged[-1][1] == kind:
            merged[-1] = (merged[-1][0] + text, kind)
        else:
            merged.append((text, kind))
    return merged


def right_click(editor: QPlainTextEdit, position: int, answer: Callable[[QMenu], object]) -> None:
    """Right-click at ``position`` (a Qt position); ``answer`` gets the menu while it is up, and closes it."""
    at = editor.textCursor()
    at.setPosition(position)
    place = editor.cursorRect(at).center()

    def in_menu() -> None:
        menu = QApplication.activePopupWidget()
        answer(menu)
        menu.close()

    QTimer.singleShot(0, in_menu)
    editor.contextMenuEvent(QContextMenuEvent(QContextMenuEvent.Reason.Mouse, place, editor.mapToGlobal(place)))


# Buttons that need no letter: Enter and Esc press them.
ENTER_OR_ESC = {"OK", "Cancel", "Close"}


def letters_in(top: QWidget) -> tuple[list[str], list[str]]:
    """The buttons and check boxes shown in ``top`` that have no letter (Alt+it), and the letters two of them
    share, as lists of their labels."""
    letterless, taken = [], {}
    for button in top.findChildren(QAbstractButton):
        label = button.text()
        if not button.isVisibleTo(top) or not label or label.replace("&", "") in ENTER_OR_ESC:
            continue
        found = re.search(r"&([^&])", label)
        if found is None:
            letterless.append(label)
        else:
            taken.setdefault(found.group(1).lower(), []).append(label)
    return letterless, [" / ".join(labels) for labels in taken.values() if len(labels) > 1]
