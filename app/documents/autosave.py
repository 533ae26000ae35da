"""Autosave: a window's unsaved text reaches the recovery area a few seconds after it changes.

The record holds the window's *consistent* text (``saved_text``): while a span develops, the span's
original stands in for the noise, so a crash mid-rewrite never recovers half a rewrite. Nothing is
written when the text is what the record already holds (app/documents/recovery.py compares digests), and a
saved or unmodified document has no record at all.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QPlainTextEdit

from app.documents.fileio import TextDocument
from app.documents.recovery import RecoveryArea

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

    def document_name(self) -> str: ...

    @property
    def imported_from(self) -> Path | None: ...

    def versions_record(self) -> list[dict[str, Any]]: ...


class Autosaver(QObject):
    """Keeps one window's record in ``area`` up to date.

    The GUI thread only takes the text (a few ms for 10 MB); encoding, hashing and writing happen on
    one background thread, in order, so a large document does not stall typing.
    """

    def __init__(self, window: AutosavedWindow, area: RecoveryArea, interval_ms: int = AUTOSAVE_INTERVAL_MS) -> None:
        # A child of the window: its timer and writer go with the window, never outliving the editor.
        super().__init__(window if isinstance(window, QObject) else None)
        self.window = window
        self.area = area
        self.document_id = uuid.uuid4().hex
        self.failed = False
        self._discarded = False  # its window closed (discard)
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="redraft-autosave")
        self._pending: Future[object] | None = None
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.write_now)
        self.destroyed.connect(lambda: self._writer.shutdown(wait=True))
        document = window.editor.document()
        document.contentsChanged.connect(self._changed)
        document.modificationChanged.connect(self._modification_changed)

    def _changed(self) -> None:
        if not self.timer.isActive():
            self.timer.start()

    def _modification_changed(self, modified: bool) -> None:
        if not modified:  # saved, opened, or undone back to the saved text: nothing to recover
            self.timer.stop()
            self._submit(self.area.remove, self.document_id)

    def _submit(self, task: Callable[..., object], *args: Any, **kwargs: Any) -> None:
        if self._discarded:
            return  # its window closed: nothing of it is kept any more
        self._pending = self._writer.submit(task, *args, **kwargs)
        self._pending.add_done_callback(self._done)

    def _done(self, future: Future[object]) -> None:
        error = future.exception()
        # Autosave is a safety net: a full disk must not stop the writer; it is logged and retried at
        # the next change.
        if error is not None:
            log.error("could not write the recovery record: %s", error)
        self.failed = error is not None

    def write_now(self) -> None:
        """Record the consistent text if the document has unsaved changes (written in the background)."""
        window = self.window
        if not window.editor.document().isModified():
            self._submit(self.area.remove, self.document_id)
            return
        title = window.document_name()  # a recovered document is offered under the name the writer knew it by
        form = window.file_format
        self._submit(
            self.area.write, self.document_id, window.saved_text(), path=window.path, title=title,
            encoding=form.encoding, bom=form.bom, newline=form.newline, versions=window.versions_record(),
            imported_from=window.imported_from,
        )  # fmt: skip

    def flush(self) -> None:
        """Wait until every record asked for so far is on disk."""
        if self._pending is not None:
            with contextlib.suppress(Exception):  # already logged by _done
                self._pending.result()

    def shutdown(self) -> None:
        """Finish pending writes and stop the writer thread (before the area is released on exit)."""
        self.timer.stop()
        self._writer.shutdown(wait=True)

    def discard(self) -> None:
        """The window closed, its document saved or let go: its record goes, and the writer thread with it."""
        self.timer.stop()
        self._submit(self.area.remove, self.document_id)
        self._discarded = True
        self._writer.shutdown(wait=True)
