"""A file in a chosen encoding changed by another program: reloaded in that encoding, or, when their
bytes do not read in it, left alone and guarded so that Save cannot write the older text over theirs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.documents.disk_watch import DiskWatcher
from app.window.main_window import MainWindow


def _open_cp1252(document_window: Callable[..., MainWindow], path: Path) -> tuple[MainWindow, list[str]]:
    path.write_bytes("Café au lait.\n".encode("cp1252"))
    window = document_window()
    watcher = DiskWatcher(window)
    assert window.open_path(path, "cp1252")
    changes: list[str] = []
    watcher.changedOnDisk.connect(changes.append)
    return window, changes


def test_a_cp1252_document_reloads_in_cp1252(document_window: Callable[..., MainWindow], qtbot,
                                             tmp_path: Path) -> None:
    path = tmp_path / "menu.txt"
    window, changes = _open_cp1252(document_window, path)
    path.write_bytes("Crème brûlée — 5 €.\n".encode("cp1252"))
    qtbot.waitUntil(lambda: changes == ["changed"], timeout=5000)
    assert window.editor.plain_text() == "Crème brûlée — 5 €.\n"
    assert not window.editor.document().isModified() and window.file_format.encoding == "cp1252"
    assert "was reloaded" in window.message_bar.label.text()


def test_a_reload_that_fails_says_so_and_save_cannot_replace_theirs(document_window: Callable[..., MainWindow],
                                                                     qtbot, tmp_path: Path) -> None:
    path = tmp_path / "menu.txt"
    window, changes = _open_cp1252(document_window, path)
    theirs = b"Their bytes \x81\x8d are not cp1252.\n"
    path.write_bytes(theirs)
    qtbot.waitUntil(lambda: changes == ["changed"], timeout=5000)
    said = window.message_bar.label.text()
    assert "could not be reloaded as cp1252" in said and "was reloaded" not in said
    assert window.editor.plain_text() == "Café au lait.\n" and window.editor.document().isModified()
    assert not window.save()  # Ctrl+S
    assert "could not be reloaded" in window.message_bar.label.text() and path.read_bytes() == theirs
    elsewhere = tmp_path / "mine.txt"
    assert window.save_to(elsewhere)  # Save As still keeps the writer's text
    assert elsewhere.read_bytes() == "Café au lait.\n".encode("cp1252") and path.read_bytes() == theirs
    assert window.unreloaded is None


def test_a_file_with_mixed_line_endings_says_so_once_on_open(document_window: Callable[..., MainWindow],
                                                             tmp_path: Path) -> None:
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"one\r\ntwo\rthree\r\n")
    window = document_window()
    assert window.open_path(path)
    assert "mixes line endings (2 Windows (CRLF), 1 old Mac (CR))" in window.message_bar.label.text()
