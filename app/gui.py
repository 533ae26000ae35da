"""Start the editor: QApplication, a qasync event loop, the main window."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.dialogs.recovery import offer_recovery
from app.documents.autosave import Autosaver
from app.documents.disk_watch import DiskWatcher
from app.documents.recovery import RecoveryArea
from app.rewrite.outliving import end_process_if_outlived
from app.settings import APPLICATION, ORGANIZATION, SettingsStore
from app.userdirs import LOG_LIMIT, LOG_NAME, user_dirs
from app.window.main_window import MainWindow
from app.window.window_family import bring_forward

if TYPE_CHECKING:
    from app.window.handover import Door

log = logging.getLogger(__name__)


def run_editor(model_spec: str | None = None, files: Sequence[Path] = ()) -> int:
    """Show Redraft's window, ``files`` in it (the first; each other in a window of its own, on the same model),
    and run until the last window closes; returns the process exit code."""
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName(APPLICATION)
    app.setDesktopFileName("redraft")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    closed = asyncio.Event()
    app.aboutToQuit.connect(closed.set)

    # The door later starts hand their files in through (app/window/handover.py), open before the window is made
    # so that one knocking meanwhile waits; a --model start keeps to itself (``redraft edit`` hands none to it).
    door = opened_door(app) if model_spec is None else None

    # This instance's recovery folder, locked for its life; a clean exit removes it (aboutToQuit).
    area = RecoveryArea(user_dirs().recovery)
    try:
        area.claim()
    except OSError as error:  # no recovery area is no reason to refuse to write
        log.warning("autosave is off: %s", error)

    log_to_file()
    window = MainWindow(SettingsStore(), model_spec=model_spec)
    autosavers = protect_windows(window, area)
    app.aboutToQuit.connect(lambda: shut_down(autosavers))  # pending records first,
    app.aboutToQuit.connect(area.release)  # then the folder goes
    window.show()  # the model loads in its thread; the window does not wait for it
    open_files(window, files)
    if door is not None:
        door.filesArrived.connect(lambda handed: open_handed_over(window, handed))
        app.aboutToQuit.connect(door.close)  # a start from now on is a Redraft of its own
    QTimer.singleShot(0, lambda: offer_recovery(window, area, window, window.family.new_window))
    QTimer.singleShot(0, window.offer_welcome)
    with loop:
        loop.run_until_complete(closed.wait())
    end_process_if_outlived(0)  # a load still running: Python's teardown would crash on its thread
    return 0


def open_files(window: MainWindow, files: Sequence[Path]) -> list[MainWindow]:
    """``files`` opened (``redraft a.md b.md``, or several chosen in a file manager): the first in ``window``,
    each other in a new window of its own on the same model; the windows they opened in."""
    windows = [window if index == 0 else window.family.new_window() for index in range(len(files))]
    for shown, file in zip(windows, files, strict=True):
        shown.open_path(Path(file), ask_encoding=True)
    return windows


def opened_door(app: QApplication) -> Door | None:
    """The door later starts knock at, listening; None where another Redraft holds it or Qt's network library
    cannot load here (each start a Redraft of its own then, as before)."""
    try:
        from app.window.handover import Door
    except ImportError as error:
        log.warning("later starts will not open in this Redraft: %s", error)
        return None
    door = Door(app)
    return door if door.open() else None


def open_handed_over(window: MainWindow, files: Sequence[Path]) -> list[MainWindow]:
    """A later start's ``files`` (a file manager's Open, ``redraft notes.md`` in a terminal), opened in this
    process: a file a window shows already brings that window forward; any other opens in a window of its own
    beside the writer's (an empty, untitled one takes the first); no files: a new window. The windows shown."""
    shown = [member for member in window.family.members() if member.isVisible()]  # the first may be closed
    front = max(shown, key=lambda member: member.family.born, default=window)
    windows: list[MainWindow] = []
    wanted: list[Path | None] = [*files] or [None]
    for file in wanted:
        showing = front.family.bring_forward_showing(file, this_one_too=True) if file is not None else None
        if showing is not None:  # the windows read afresh: one opened for this start's earlier file counts
            windows.append(showing)
            continue
        blank = not front.editor.document().isModified() and front.path is None and not front.editor.plain_text()
        target = front if blank and front not in windows else front.family.new_window()
        if file is not None:
            target.open_path(file, ask_encoding=True)
        bring_forward(target)
        windows.append(target)
    return windows


def log_to_file() -> logging.Handler | None:
    """Redraft's own log records (INFO and up, tracebacks included) into ``logs/redraft.log``.

    What went wrong is told to the writer in words (the notice bar); the detail belongs in the log, where
    Where Your Files Are (Help menu) points, not in a terminal. None where the folder cannot be written.
    """
    path = user_dirs().logs / LOG_NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_LIMIT and not _writes_to(path):
            path.replace(path.with_name(LOG_NAME + ".1"))
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError as error:
        log.warning("no log file: %s", error)
        return None
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    for name in ("app", "model"):
        logging.getLogger(name).setLevel(logging.INFO)
    return handler


def _writes_to(path: Path) -> bool:
    """Whether stderr already is ``path`` (a windowless start, app.userdirs.log_when_windowless)."""
    return getattr(sys.stderr, "name", None) == str(path)


def protect_windows(window: MainWindow, area: RecoveryArea) -> list[Autosaver]:
    """Protect ``window``'s document (:func:`protect_document`), and each window File ▸ New Window makes from it
    or from those; the autosavers of the windows open now (a closed window's record goes with it)."""
    autosavers: list[Autosaver] = []

    def protect(made: MainWindow) -> None:
        autosaver = protect_document(made, area)
        autosavers.append(autosaver)
        made.windowMade.connect(protect)

        def closed() -> None:
            autosavers.remove(autosaver)
            autosaver.discard()
            with contextlib.suppress(OSError):
                area.note_open(None, autosaver.document_id)

        made.closed.connect(closed)

    protect(window)
    return autosavers


def shut_down(autosavers: list[Autosaver]) -> None:
    for autosaver in autosavers:
        autosaver.shutdown()


def protect_document(window: MainWindow, area: RecoveryArea) -> Autosaver:
    """Autosave the window's unsaved text into ``area`` and watch its file for changes by others."""
    autosaver = Autosaver(window, area)
    window.autosaver = autosaver  # type: ignore[attr-defined]
    window.disk_watcher = DiskWatcher(window)  # type: ignore[attr-defined]
    checked: list[Path | None] = [None]

    def opened(_title: str) -> None:
        """A file opened or saved under a new name: say so for other instances, and warn if one has it open."""
        if window.path == checked[0]:
            return
        checked[0] = window.path
        try:
            area.note_open(window.path, autosaver.document_id)
            other = None if window.path is None else area.open_elsewhere(window.path)
        except OSError as error:
            log.warning("could not compare open files with other Redraft windows: %s", error)
            return
        if window.path is None:
            return
        here = any(sibling.path == window.path for sibling in window.family.siblings())  # File ▸ New Window's
        if other is not None or here:
            window.message_bar.show_message(
                f"{window.path.name} is also open in another Redraft window{'' if here else f' (process {other})'}."
                " Changes made in one do not show in the other, and saving in both loses one side's: close it in "
                "one of them.",
                "info",
            )

    window.windowTitleChanged.connect(opened)  # the title names the file: it changes when the path does
    return autosaver
