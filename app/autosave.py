"""Autosave: a window's unsaved text reaches the recovery area a few seconds after it changes.

The record holds the window's *consistent* text (``saved_text``): while a span develops, the span's
original stands in for the noise, so a crash mid-rewrite never recovers half a rewrite. Nothing is
written when the text is what the record already holds (app/recovery.py compares digests), and a
saved or unmodified document has no record at all.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QPlainTextEdit

from app.fileio import TextDocument
from app.recovery import RecoveryArea

log = logging.getLogger(__name__)

# At most this long after the first unsaved change, the record holds it (a throttle, not a debounce:
# a writer typing without pause is still recorded every interval).
AUTOSAVE_INTERVAL_MS = 2000


class AutosavedWindow(Protocol):
    @property
    def editor(self) -> QPlainTextEdit: ...

    @property
    def path(self) -> Path | None: ...

    @property
    def file_format(self) -> TextDocument: ...

    def saved_text(self) -> str: ...


class Autosaver(QObject):
    """Keeps one window's record in ``area`` up to date."""

    def __init__(self, window: AutosavedWindow, area: RecoveryArea, interval_ms: int = AUTOSAVE_INTERVAL_MS) -> None:
        super().__init__()
        self.window = window
        self.area = area
        self.document_id = uuid.uuid4().hex
        self.failed = False
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.write_now)
        document = window.editor.document()
        document.contentsChanged.connect(self._changed)
        document.modificationChanged.connect(self._modification_changed)

    def _changed(self) -> None:
        if not self.timer.isActive():
            self.timer.start()

    def _modification_changed(self, modified: bool) -> None:
        if not modified:  # saved, opened, or undone back to the saved text: nothing to recover
            self.timer.stop()
            self.area.remove(self.document_id)

    def write_now(self) -> None:
        """Record the consistent text now if the document has unsaved changes (also on shutdown paths)."""
        window = self.window
        if not window.editor.document().isModified():
            self.area.remove(self.document_id)
            return
        title = window.path.name if window.path is not None else "Untitled"
        form = window.file_format
        try:
            self.area.write(
                self.document_id, window.saved_text(), path=window.path, title=title, encoding=form.encoding,
                bom=form.bom, newline=form.newline,
            )  # fmt: skip
        except OSError:
            # Autosave is a safety net: a full disk must not stop the writer; it is logged and retried
            # at the next change.
            log.exception("could not write the recovery record")
            self.failed = True
        else:
            self.failed = False
