"""Open and save through the window: encodings, line endings, binary refusal, atomic writes."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest
from gui_helpers import drop_on_editor

from app.documents.fileio import (
    BinaryFileError,
    FileError,
    TextDocument,
    UnknownEncodingError,
    read_document,
    save_document,
)

NON_ASCII = "Café owners in Zürich argue — naïvely — about the weather. 😀\nA\u00a0no-break space stays.\n"


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        (NON_ASCII.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF8 + NON_ASCII.replace("\n", "\r\n").encode("utf-8"), "utf-8 with BOM and CRLF"),
        (codecs.BOM_UTF16_LE + NON_ASCII.encode("utf-16-le"), "utf-16 with BOM"),
    ],
)
def test_open_save_round_trip_keeps_every_byte(
    document_window, tmp_path: Path, raw: bytes, label: str
) -> None:
    window = document_window()
    source = tmp_path / "source.md"
    source.write_bytes(raw)
    assert window.open_path(source), label
    assert window.editor.plain_text() == NON_ASCII  # no-break space and emoji intact, "\n" inside
    assert "source.md" in window.windowTitle()
    assert not window.editor.document().isModified()

    copy = tmp_path / "copy.md"
    assert window.save_to(copy)
    assert copy.read_bytes() == raw
    assert window.prefs.recent_files[0] == str(copy.resolve())


def test_edit_then_save_marks_and_clears_modified(document_window, tmp_path: Path, qtbot) -> None:
    window = document_window()
    path = tmp_path / "note.txt"
    path.write_text("hello\n", encoding="utf-8")
    window.open_path(path)
    window.editor.moveCursor(window.editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(window.editor, "world")
    window.editor.insertPlainText(" ö")
    assert window.isWindowModified()
    assert window.save()
    assert not window.isWindowModified()
    assert path.read_text(encoding="utf-8") == "hello\nworld ö"


def test_binary_file_is_refused_and_document_kept(document_window, tmp_path: Path) -> None:
    window = document_window()
    before = window.editor.plain_text()
    binary = tmp_path / "picture.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    assert not window.open_path(binary)
    assert window.message_bar.isVisible()
    assert "binary" in window.message_bar.label.text()
    assert window.editor.plain_text() == before
    assert window.path is None


def test_non_utf8_needs_an_explicit_encoding(document_window, tmp_path: Path) -> None:
    window = document_window()
    legacy = tmp_path / "legacy.txt"
    raw = "Crème brûlée, naïve café\n".encode("cp1252")
    legacy.write_bytes(raw)
    with pytest.raises(UnknownEncodingError):
        read_document(legacy)
    assert not window.open_path(legacy)  # no guessing: it asks (here: nobody to ask)
    assert "not UTF-8" in window.message_bar.label.text()
    assert window.open_path(legacy, encoding="cp1252")
    assert window.editor.plain_text() == "Crème brûlée, naïve café\n"
    assert window.save_to(legacy)
    assert legacy.read_bytes() == raw  # saved back in the encoding it came in


def test_save_is_atomic_and_keeps_the_old_file_on_failure(tmp_path: Path) -> None:
    path = tmp_path / "doc.txt"
    path.write_bytes(b"old")
    os.chmod(path, 0o640)
    save_document(path, TextDocument("new text\n"))
    assert path.read_bytes() == b"new text\n"
    assert path.stat().st_mode & 0o777 == 0o640
    with pytest.raises(FileError, match="cannot be written in latin-1"):
        save_document(path, TextDocument("emoji 😀", encoding="latin-1"))
    assert path.read_bytes() == b"new text\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.txt"]  # no temporary file left behind


def test_binary_detection() -> None:
    with pytest.raises(BinaryFileError):
        read_document_bytes(b"abc\x00def")
    assert read_document_bytes(b"").text == ""
    assert read_document_bytes(b"tab\tand\fform feed\n").text == "tab\tand\fform feed\n"


def read_document_bytes(data: bytes) -> TextDocument:
    from app.documents.fileio import decode_document

    return decode_document(data)


def test_a_file_dropped_on_the_text_opens_and_dropped_words_stay_words(document_window, tmp_path: Path) -> None:
    from PySide6.QtCore import QMimeData, QUrl

    window = document_window("Kept words.\n")
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nDropped in.\n", encoding="utf-8")
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(tmp_path)), QUrl.fromLocalFile(str(notes))])  # a folder is skipped
    files.setText(QUrl.fromLocalFile(str(notes)).toString())  # what a file manager also offers
    assert drop_on_editor(window, files)
    assert window.path == notes and window.editor.plain_text() == "# Notes\n\nDropped in.\n"  # not its address

    words = QMimeData()
    words.setText("more ")
    drop_on_editor(window, words)
    assert "more " in window.editor.plain_text() and window.path == notes  # text still drops as text
