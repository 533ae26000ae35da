"""Noticing when another program changes or deletes the file a window has open.

The window remembers a digest of the bytes it last read or wrote; a change on disk with the same
digest (our own save) is ignored. An unmodified document simply reloads, in the encoding it was opened
with; one with unsaved changes asks whether to reload (losing them) or keep the writer's version. A
reload that fails (their bytes are not valid in that encoding) says so and leaves the older text marked
unsaved, with ``window.unreloaded`` set: Save then refuses, so it cannot silently write the older text
over theirs (Save As can). A deleted file leaves the text as it is, marked unsaved, so closing asks and
Save puts the file back.
"""

from __future__ import annotations

import codecs
import hashlib
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal
from PySide6.QtWidgets import QMessageBox, QPlainTextEdit, QWidget

from app.documents.fileio import FileError, TextDocument, read_document

# Editors and sync tools often save by deleting and re-creating a file: look a moment after the
# notification, when the new file is there, and take a burst of notifications as one.
SETTLE_MS = 250


class NoticeBar(Protocol):
    def show_message(self, text: str, kind: str = "error") -> None: ...


class WatchedWindow(Protocol):
    @property
    def editor(self) -> QPlainTextEdit: ...

    @property
    def path(self) -> Path | None: ...

    @property
    def message_bar(self) -> NoticeBar: ...

    @property
    def file_format(self) -> TextDocument: ...

    unreloaded: str | None  # why Save must not write over the file on disk (None: it may)

    def open_path(self, path: Path, encoding: str | None = None, ask_encoding: bool = False) -> bool: ...


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class DiskWatcher(QObject):
    """Watches ``window.path``; ``prompt`` is the open question while the writer has not answered."""

    changedOnDisk = Signal(str)  # "changed" or "deleted", after the window has been told

    def __init__(self, window: WatchedWindow) -> None:
        super().__init__(window if isinstance(window, QObject) else None)  # goes with its window
        self.window = window
        self.watched: Path | None = None
        self.digest: str | None = None
        self.prompt: QMessageBox | None = None
        self.settle = QTimer(self)
        self.settle.setSingleShot(True)
        self.settle.setInterval(SETTLE_MS)
        self.settle.timeout.connect(self.check)
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(lambda _path: self.settle.start())
        if isinstance(window, QWidget):  # the title names the file: it changes when the path does
            window.windowTitleChanged.connect(lambda _title: self.follow())
        window.editor.document().modificationChanged.connect(self._modification_changed)
        self.follow()

    def follow(self) -> None:
        """Watch the window's current file (after open, Save As, New)."""
        path = self.window.path
        if path == self.watched:
            return
        if self.watcher.files():
            self.watcher.removePaths(self.watcher.files())
        self.watched = path
        self.window.unreloaded = None
        self.digest = None if path is None else _digest(path)
        if path is not None and path.exists():
            self.watcher.addPath(str(path))

    def _modification_changed(self, modified: bool) -> None:
        if not modified and self.watched is not None:
            # Saved or opened: what is on disk now is the writer's own text.
            self.window.unreloaded = None
            self.follow()
            self.digest = _digest(self.watched)
            self._rewatch()

    def _rewatch(self) -> None:
        # A file replaced by a rename is a new file: the watch on the old one is gone.
        if self.watched is not None and self.watched.exists() and str(self.watched) not in self.watcher.files():
            self.watcher.addPath(str(self.watched))

    def check(self) -> None:
        """Compare the file on disk with what the window last read or wrote, and act on a difference."""
        path = self.watched
        if path is None or self.prompt is not None:
            return
        self._rewatch()
        digest = _digest(path)
        if digest == self.digest:
            return
        document = self.window.editor.document()
        self.digest = digest
        if digest is None:
            document.setModified(True)  # closing asks, and Save writes it back
            self.window.message_bar.show_message(
                f"{path.name} was deleted or moved by another program. Your text is still here: "
                "Save puts the file back."
            )
            self.changedOnDisk.emit("deleted")
            return
        live = getattr(self.window.editor, "live_span", None) is not None
        if not document.isModified() and not live:
            if self._reload(path):
                self.window.message_bar.show_message(f"{path.name} changed on disk and was reloaded.", "info")
            self.changedOnDisk.emit("changed")
            return
        self._ask(path)

    def _reload(self, path: Path) -> bool:
        """Open ``path`` again in the document's encoding; on failure say so and guard theirs from Save."""
        form = self.window.file_format
        # UTF-8 is what open finds by itself (a BOM too); any other encoding was the writer's choice.
        encoding = None if codecs.lookup(form.encoding).name == "utf-8" else form.encoding
        if self.window.open_path(path, encoding):
            return True
        try:
            read_document(path, encoding)
            reason = "it could not be read"
        except FileError as error:
            reason = str(error)
        self.window.editor.document().setModified(True)  # closing asks
        self.window.unreloaded = (
            f"{path.name} was changed by another program and could not be reloaded, so Save would write this "
            "older text over their version; use Save As to keep yours, or close it and open theirs"
        )
        self.window.message_bar.show_message(
            f"{path.name} changed on disk, but could not be reloaded as {form.encoding} ({reason}). The text here "
            "is the older version, marked unsaved; Save will not replace their file: use Save As to keep this "
            "text, or open theirs again and choose its encoding."
        )
        return False

    def _ask(self, path: Path) -> None:
        parent = self.window if isinstance(self.window, QWidget) else None
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "File changed on disk",
            f"{path.name} was changed by another program.\n\nReload it and lose your unsaved changes, "
            "or keep your version (saving it will replace theirs)?",
            QMessageBox.StandardButton.NoButton,
            parent,
        )
        self.reload_button = box.addButton("&Reload", QMessageBox.ButtonRole.DestructiveRole)
        self.keep_button = box.addButton("&Keep Mine", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(self.keep_button)
        box.finished.connect(lambda _result: self._answered(box, path))
        self.prompt = box
        box.open()
        self.changedOnDisk.emit("changed")

    def _answered(self, box: QMessageBox, path: Path) -> None:
        self.prompt = None
        if box.clickedButton() is self.reload_button:
            self._reload(path)
            self.digest = _digest(path)
        else:
            self.window.unreloaded = None  # the writer chose: Save replaces theirs
            self.window.editor.document().setModified(True)  # theirs is on disk, ours is not
