"""Start the editor: QApplication, a qasync event loop, the main window."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import qasync
from PySide6.QtWidgets import QApplication

from app.main_window import MainWindow
from app.settings import APPLICATION, ORGANIZATION, SettingsStore


def run_editor(model_spec: str | None = None, file: Path | None = None) -> int:
    """Show Redraft's window and run until it closes; returns the process exit code."""
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

    window = MainWindow(SettingsStore(), model_spec=model_spec)
    window.show()  # the model loads in its thread; the window does not wait for it
    if file is not None:
        window.open_path(Path(file), ask_encoding=True)
    with loop:
        loop.run_until_complete(closed.wait())
    return 0
