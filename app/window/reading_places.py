"""A file opens where the writer left off: the caret's place in each of the last files opened is kept in the
settings (``reading_places``) when another document takes the window or the window closes, and put back when
the file opens again, its line in the middle of the view (a file another program shortened opens at its end).
The place is noted once the caret rests, so a document's text being replaced never notes its caret at the top.
A new or imported document opens at its start; a recovered one where recovery puts the caret."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QTimer, SignalInstance
from PySide6.QtWidgets import QWidget

from app.settings import MAX_READING_PLACES
from app.window.editor_widget import RewriteEditor

REST_MS = 300  # the caret still this long is a place


def _key(path: Path) -> str:
    return str(path.resolve())


class ReadingPlaces(QObject):
    """Notes the caret of ``window``'s file (``path_of()``) as it rests, keeps it among the ``places`` kept
    (read afresh each time: another window keeps its file's too) with ``keep`` when another document replaces
    it (``replaced``) or the window closes, and puts a file's place back as it opens."""

    def __init__(
        self, window: QWidget, editor: RewriteEditor, path_of: Callable[[], Path | None], replaced: SignalInstance,
        places: Callable[[], tuple[str, ...]], keep: Callable[[tuple[str, ...]], None],
    ) -> None:  # fmt: skip
        super().__init__(window)
        self.editor, self.path_of, self.stored, self.keep = editor, path_of, places, keep
        self.noted: tuple[str, int] | None = None  # this window's file and its caret's place, as it last rested
        self._rest = QTimer(self, singleShot=True, interval=REST_MS)
        self._rest.timeout.connect(self.note)
        editor.cursorPositionChanged.connect(self._rest.start)
        replaced.connect(self._replaced)
        window.installEventFilter(self)  # its closing keeps the places

    @property
    def places(self) -> dict[str, int]:
        """Every file's place kept, by its path, the newest first, this window's noted one among them."""
        places: dict[str, int] = {}
        for entry in self.stored():
            position, _tab, path = entry.partition("\t")
            if position.isdigit() and path:
                places.setdefault(path, int(position))
        if self.noted is not None:
            places.pop(self.noted[0], None)
            places = {self.noted[0]: self.noted[1], **places}
        return places

    def note(self) -> None:
        """The caret's place, now, as the open file's."""
        path = self.path_of()
        if path is not None:
            self.noted = (_key(path), self.editor.textCursor().position())

    def kept(self) -> tuple[str, ...]:
        return tuple(f"{position}\t{path}" for path, position in list(self.places.items())[:MAX_READING_PLACES])

    def _replaced(self, _text: str) -> None:
        self._rest.stop()
        self.keep(self.kept())  # the last document's place, noted as its caret rested
        self.noted = None
        path = self.path_of()
        position = self.places.get(_key(path)) if path is not None else None
        if position:
            cursor = self.editor.textCursor()
            cursor.setPosition(min(position, self.editor.end_position()))
            self.editor.setTextCursor(cursor)
            QTimer.singleShot(0, self.editor, self.editor.centerCursor)  # once the window is laid out

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Close:
            self.note()
            self.keep(self.kept())
        return False
