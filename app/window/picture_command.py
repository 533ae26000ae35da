"""Format ▸ Picture… and a picture file dropped on the text: ``![its name in words](images/map.png)`` put in as a
paragraph of its own, as one undo step, the caption selected to type over (the rules:
``app/documents/picture_links.py``). A picture pasted (a screenshot) is kept as a PNG in an ``images`` folder
beside the document, as Markdown editors keep them, and put in the same way. The text shows Markdown, not the
picture, so the mouse resting on a picture's line shows it, as the exports will set it, or says the file is not
where the text says."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, QUrl
from PySide6.QtGui import QAction, QDropEvent, QHelpEvent, QImage, QImageReader, QTextCursor
from PySide6.QtWidgets import QFileDialog, QStatusBar, QToolTip, QWidget

from app.documents.markdown_format import is_markdown
from app.documents.picture_links import (
    PICTURE,
    PICTURE_SUFFIXES,
    caption_of,
    is_picture_file,
    picture_insertion,
    picture_name,
)
from app.window.editor_widget import RewriteEditor
from app.window.export_pictures import picture_path
from app.window.file_drops import dropped_file
from app.window.hover_marks import mark_under
from app.window.live_span import index_at, utf16_length

TIP = "Put a picture in, as a paragraph of its own: every export sets it in the text"
PLAIN_TEXT = "Pictures go in a Markdown document (.md): save this one as .md (File ▸ Save As…) to add them."
WHILE_REWRITING = "A rewrite is open: accept or reject the draft first, then add the picture."
THUMBNAIL = 320  # the most pixels a side of the picture shown under the mouse takes
PICTURES_FOLDER = "images"  # beside the document: where a pasted picture is kept
UNSAVED = "Save the document first: a pasted picture is kept as a file in an images folder beside it."


class PictureWindow(Protocol):
    @property
    def editor(self) -> RewriteEditor: ...

    @property
    def path(self) -> Path | None: ...

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name


class PictureCommand(QObject):
    def __init__(self, window: PictureWindow, parent: QWidget) -> None:
        super().__init__(parent)
        self.window = window
        self.dialog_parent = parent
        self.action = QAction("&Picture…", parent)
        self.action.setToolTip(TIP)
        self.action.setStatusTip(TIP)
        self.action.triggered.connect(lambda _checked=False: self.choose())
        # After the file drops' filter, so it is asked first: a picture dropped goes in, other files open.
        window.editor.viewport().installEventFilter(self)
        window.editor.paste_picture = self.paste

    def folder(self) -> Path | None:
        path = self.window.path
        return None if path is None else path.parent

    def choose(self) -> bool:
        """Ask for a picture file and put it in at the caret's paragraph; whether one went in."""
        if not self._may_insert():
            return False
        kinds = " ".join(f"*{suffix}" for suffix in sorted(PICTURE_SUFFIXES))
        start = str(self.folder() or Path.home())
        chosen, _ = QFileDialog.getOpenFileName(self.dialog_parent, "Add a Picture", start, f"Pictures ({kinds})")
        return bool(chosen) and self.insert(Path(chosen), self.window.editor.textCursor().position())

    def paste(self, image: QImage) -> bool:
        """A picture pasted: kept as ``images/<document>-<n>.png`` beside the document and put in at the caret's
        paragraph; whether it went in. An unsaved document has no beside yet: it says so."""
        folder = self.folder()
        if not self._may_insert():
            return False
        if folder is None or self.window.path is None:
            self._say(UNSAVED)
            return False
        kept = folder / PICTURES_FOLDER
        number = 1
        while (kept / f"{self.window.path.stem}-{number}.png").exists():
            number += 1
        target = kept / f"{self.window.path.stem}-{number}.png"
        try:
            kept.mkdir(exist_ok=True)
        except OSError as error:
            self._say(f"The pasted picture could not be kept: {error.strerror or error} ({kept}).")
            return False
        if not image.save(str(target)):  # PNG, by its name
            self._say(f"The pasted picture could not be written to {target}: is the folder writable?")
            return False
        said = f"The pasted picture is kept as {PICTURES_FOLDER}/{target.name} beside the document: type its caption."
        return self.insert(target, self.window.editor.textCursor().position(), said)

    def _may_insert(self) -> bool:
        editor = self.window.editor
        if not is_markdown(self.window.path):
            self._say(PLAIN_TEXT)
            return False
        if editor.live_span is not None or editor.isReadOnly():
            self._say(WHILE_REWRITING)
            return False
        return True

    def insert(self, picture: Path, position: int, said: str = "") -> bool:
        """``picture`` in at the paragraph of the document position ``position``, its caption selected; the status
        bar says ``said``, or how the picture is named."""
        if not self._may_insert():
            return False
        if not QImageReader(str(picture)).canRead():
            self._say(f"{picture.name} is not a picture Redraft can read (PNG, JPEG, GIF, BMP, WebP, SVG or TIFF).")
            return False
        editor = self.window.editor
        text = editor.plain_text()
        caption = caption_of(picture)
        markdown = f"![{caption}]({picture_name(picture, self.folder())})"
        insertion = picture_insertion(text, index_at(text, position), markdown, caption)
        cursor = QTextCursor(editor.document())
        cursor.setPosition(utf16_length(text[: insertion.position]))
        with editor.writer_edit():
            cursor.insertText(insertion.text)
        new_text = text[: insertion.position] + insertion.text + text[insertion.position :]
        selection = editor.textCursor()
        selection.setPosition(utf16_length(new_text[: insertion.caption_start]))
        selection.setPosition(utf16_length(new_text[: insertion.caption_end]), QTextCursor.MoveMode.KeepAnchor)
        editor.setTextCursor(selection)
        editor.ensureCursorVisible()
        where = "beside the document" if self.folder() else "by its full path (the document is not saved yet)"
        self._say(said or f"Picture added, named {where}: type its caption. The exports set it in the text.")
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(event, QDropEvent):  # drag enter and move are drop events too, in Qt's classes
            path = dropped_file(event.mimeData())
            if path is None or not is_picture_file(path):
                return False  # text, and other files (opened as File ▸ Open opens them)
            event.acceptProposedAction()
            if event.type() == QEvent.Type.Drop:
                self.insert(path, self.window.editor.cursorForPosition(event.position().toPoint()).position())
            return True
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            shown = self.shown_at(event.pos().x(), event.pos().y())
            if shown is not None:
                QToolTip.showText(event.globalPos(), shown, self.window.editor.viewport())
                return True
        return super().eventFilter(watched, event)

    def shown_at(self, x: int, y: int) -> str | None:
        """What the tooltip shows over the picture at the viewport's ``x``, ``y``: the picture, scaled to a
        thumbnail, or where it was looked for; None off a picture or in a plain text."""
        if not is_markdown(self.window.path):
            return None
        found = mark_under(self.window.editor, x, y, PICTURE)
        if found is None:
            return None
        name = found.group("bracketed") or found.group("bare")
        path = picture_path(name, self.folder())
        if path is None:
            return f"<p>{html.escape(name)}: on the web or, in an unsaved document, beside nothing yet</p>"
        reader = QImageReader(str(path))
        size = reader.size()
        if not path.is_file() or not reader.canRead() or size.isEmpty():
            return f"<p>No picture Redraft can read at {html.escape(str(path))}</p>"  # rich: a name's & stays &
        scale = min(1.0, THUMBNAIL / max(size.width(), size.height()))
        width, height = max(1, round(size.width() * scale)), max(1, round(size.height() * scale))
        source = QUrl.fromLocalFile(str(path)).toString()
        caption = html.escape(found.group("caption") or path.name)
        return f'<img src="{html.escape(source)}" width="{width}" height="{height}"><br>{caption}'

    def _say(self, message: str) -> None:
        self.window.statusBar().showMessage(message, 8000)
