"""Opens Redraft's window and every dialog and popup it opens, and measures them, for test_screen_fit.py.

    QT_QPA_PLATFORM=offscreen:configfile=SCREEN.json python tests/gui/screen_fit_driver.py MODEL OUT.json

Run on a screen the size of a laptop's available area (test_screen_fit.py makes one of 1366x728: a
1366x768 screen less a 40 px taskbar). Each window is measured as a writer would meet it: the main
window after its model loaded, the Settings dialog on each page, then every menu command whose name
ends in "…" and everything in the Help menu, with whatever window or popup that opens. For each it
writes the size hints, the size and position it took, and what a writer could not reach: a button outside the
window, or a control without a name a screen reader can say.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gui_helpers import unnamed_controls
from PySide6.QtCore import QRect, QSettings, QSize, QTimer
from PySide6.QtGui import QAction, QTextCursor
from PySide6.QtPrintSupport import QPrintDialog, QPrintPreviewDialog
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QApplication,
    QDialog,
    QFileDialog,
    QFrame,
    QMainWindow,
    QMenu,
    QScrollArea,
    QWidget,
)

from app.dialogs.popups import FillGapPopup, InstructionPopup
from app.dialogs.recovery import RecoveryDialog
from app.dialogs.screen_fit import FRAME_ALLOWANCE
from app.dialogs.settings import SettingsDialog
from app.documents.recovery import RecoveredDocument
from app.settings import SettingsStore
from app.window.main_window import MainWindow

LONG_PATH = Path("/home/writer/Documents/" + "/".join(["a rather long folder name"] * 8) + "/chapter-one.md")


def _fits(size: QSize, room: QSize) -> bool:
    return size.width() <= room.width() and size.height() <= room.height()


def _reachable(widget: QWidget, top: QWidget) -> str | None:
    """Why a writer cannot get at ``widget`` in ``top``, or None: inside the window, or a scroll away."""
    scroll = next((a for a in _ancestors(widget, top) if isinstance(a, QScrollArea)), None)
    if scroll is not None:
        scroll.ensureWidgetVisible(widget, 0, 0)
        QApplication.processEvents()
        viewport = scroll.viewport()
        if not _inside(viewport, top):
            return "its scrolling area is cut off"
        if not viewport.rect().contains(QRect(widget.mapTo(viewport, widget.rect().topLeft()), widget.size())):
            return "cannot be scrolled into view"
        return None
    return None if _inside(widget, top) else "outside the window"


def _ancestors(widget: QWidget, top: QWidget) -> list[QWidget]:
    found, parent = [], widget.parentWidget()
    while parent is not None and parent is not top:
        found.append(parent)
        parent = parent.parentWidget()
    return found


def _inside(widget: QWidget, top: QWidget) -> bool:
    return top.rect().contains(QRect(widget.mapTo(top, widget.rect().topLeft()), widget.size()))


def measure(name: str, top: QWidget) -> dict[str, Any]:
    QApplication.processEvents()
    screen = top.screen().availableGeometry()
    room = QSize(screen.width() - FRAME_ALLOWANCE.width(), screen.height() - FRAME_ALLOWANCE.height())
    problems = []
    least = top.minimumSizeHint().expandedTo(top.minimumSize())
    for what, size in (("size hint", top.sizeHint()), ("minimum size", least), ("size", top.size())):
        if not _fits(size, room):
            problems.append(f"{what} {size.width()}x{size.height()} exceeds {room.width()}x{room.height()}")
    if not screen.contains(top.geometry()):
        problems.append(f"placed at {top.geometry().getRect()}, off the screen {screen.getRect()}")
    buttons = [b for b in top.findChildren(QAbstractButton) if b.isVisibleTo(top) and b.window() is top]
    for button in buttons:
        why = _reachable(button, top)
        if why is not None:
            problems.append(f"button {button.text() or button.toolTip() or type(button).__name__!r}: {why}")
    for area in top.findChildren(QAbstractScrollArea):
        if area.isVisibleTo(top) and area.window() is top and area.horizontalScrollBar().maximum() > 0:
            problems.append(f"{type(area).__name__} scrolls sideways by {area.horizontalScrollBar().maximum()} px")
    if isinstance(top, QMainWindow) and not _inside(top.statusBar(), top):
        problems.append("the status bar is cut off")
    # A control a screen reader cannot name is one a writer who listens cannot reach either.
    if not isinstance(top, QPrintDialog | QPrintPreviewDialog):  # Qt's own, not ours to name
        problems += [f"{control}: no name a screen reader can say" for control in unnamed_controls(top)]
    return {"name": name, "kind": type(top).__name__, "hint": top.sizeHint().toTuple(),
            "minimum": top.minimumSizeHint().toTuple(), "geometry": top.geometry().getRect(),
            "buttons": len(buttons), "problems": problems}  # fmt: skip


def settle(seconds: float = 0.2) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)


def main() -> None:
    model, out = sys.argv[1], Path(sys.argv[2])
    app = QApplication(sys.argv)
    scratch = Path(tempfile.mkdtemp(prefix="redraft-fit-"))
    store = SettingsStore(QSettings(str(scratch / "redraft.ini"), QSettings.Format.IniFormat))
    store.update(model=model, device="cpu")
    window = MainWindow(store)
    window.show()
    deadline = time.monotonic() + 120
    while window.model_info is None and time.monotonic() < deadline:
        settle(0.05)
    assert window.model_info is not None, "the model did not load: the status bar would not show what it does"
    window.editor.setPlainText("The lighthouse keeper climbed the stairs every evening.\n" * 3)
    window.editor.document().setModified(False)
    cursor = window.editor.textCursor()
    cursor.setPosition(4)
    cursor.setPosition(20, cursor.MoveMode.KeepAnchor)  # a selection, so that every command can open
    window.editor.setTextCursor(cursor)
    settle()
    results = [measure("main window", window)]
    window.find_bar.open(replace=True)  # Edit ▸ Replace…: the bar above the text, both its rows
    settle()
    results.append(measure("main window with the find bar", window))
    window.find_bar.close_bar()

    settings = SettingsDialog(window.prefs, window)
    settings.show()
    for page in settings.pages:
        settings.show_page(page)
        results.append(measure(f"Settings ▸ {page}", settings))
    settings.close()
    recovery = RecoveryDialog(
        [RecoveredDocument(record=scratch / "a.record", text="Chapter one. " * 300, path=LONG_PATH,
                           title=LONG_PATH.name, written_at=time.time() - 3600),
         RecoveredDocument(record=scratch / "b.record", text="An untitled draft.", path=None, title="Untitled",
                           written_at=time.time())], window)  # fmt: skip
    recovery.show()
    results.append(measure("Recovery", recovery))
    recovery.close()

    menus = [action.menu() for action in window.menuBar().actions() if isinstance(action.menu(), QMenu)]
    commands: list[tuple[str, QAction]] = []
    for menu in menus:
        assert isinstance(menu, QMenu)
        in_help = menu.title().replace("&", "") == "Help"
        for action in menu.actions():
            text = action.text().replace("&", "")
            if action.menu() is None and not action.isSeparator() and (text.endswith("…") or in_help):
                commands.append((f"{menu.title().replace('&', '')} ▸ {text}", action))
    for name, action in commands:
        before = {w for w in app.topLevelWidgets() if w.isVisible()}

        def modal(name: str = name) -> None:  # a dialog run with exec(): measure it, then close it
            dialog = QApplication.activeModalWidget()
            if dialog is not None and not isinstance(dialog, QFileDialog):  # file dialogs are the system's
                results.append(measure(name, dialog))
            if dialog is not None:
                dialog.close()

        if not action.isEnabled():  # a fill wants the caret, not a selection
            window.editor.moveCursor(QTextCursor.MoveOperation.End)
            settle(0.05)
        if not action.isEnabled():  # the tiny model follows no instruction: its popup is shown below
            results.append({"name": name, "kind": "disabled", "problems": []})
            window.editor.setTextCursor(cursor)
            continue
        QTimer.singleShot(300, modal)
        action.trigger()
        settle(0.4)
        for widget in {w for w in app.topLevelWidgets() if w.isVisible()} - before:
            if isinstance(widget, QDialog | QFrame) and not isinstance(widget, QFileDialog):
                results.append(measure(name, widget))
            widget.close()
        settle(0.1)
        window.editor.setTextCursor(cursor)
    measured = {result["kind"] for result in results}
    for popup in (FillGapPopup(window, window.prefs.fill_max_tokens), InstructionPopup(window, ("Shorter",))):
        if type(popup).__name__ not in measured:  # its command was disabled for this model
            popup.move(window.editor.mapToGlobal(window.editor.cursorRect().bottomLeft()))
            popup.show()
            results.append(measure(type(popup).__name__, popup))
            popup.close()
    window.editor.document().setModified(False)
    window.close()
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
