"""A file dragged onto the editor opens, as File ▸ Open would open it, instead of its address landing in the
text as ``file:///…``, which is what a plain text editor does with a dropped file. Dragged text still drops as
text; so does a link from a browser (a web address, not a file here)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject
from PySide6.QtGui import QDropEvent


def dropped_file(mime: QMimeData) -> Path | None:
    """The first local file a drag carries (a folder is not one), or None."""
    for url in mime.urls() if mime.hasUrls() else ():
        if url.isLocalFile():
            path = Path(url.toLocalFile())
            if not path.is_dir():
                return path
    return None


class FileDrops(QObject):
    """Installed on the editor's viewport (where Qt delivers drags): a file's drop calls ``open_file``."""

    def __init__(self, open_file: Callable[[Path], object], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.open_file = open_file

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if isinstance(event, QDropEvent):  # drag enter and move are drop events too, in Qt's classes
            path = dropped_file(event.mimeData())
            if path is None:
                return False  # text and web links drop as the editor drops them
            event.acceptProposedAction()
            if event.type() == QEvent.Type.Drop:
                self.open_file(path)
            return True
        return False
