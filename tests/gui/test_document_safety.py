"""Autosave, recovery on start and files changed by other programs, in the real window (offscreen)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from gui_helpers import SIGNAL_TIMEOUT_MS, select
from PySide6.QtWidgets import QMessageBox

from app.dialogs.recovery import offer_recovery
from app.documents.autosave import Autosaver
from app.documents.disk_watch import DiskWatcher
from app.documents.recovery import RECORD_SUFFIX, RecoveryArea
from app.window.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def _record(area: RecoveryArea) -> dict[str, object] | None:
    assert area.folder is not None
    records = list(area.folder.glob("*" + RECORD_SUFFIX))
    if not records:
        return None
    head, _, body = records[0].read_bytes().partition(b"\n")
    return {**json.loads(head), "text": body.decode()}


def test_unsaved_text_is_recorded_and_a_save_removes_it(document_window: Callable[..., MainWindow], qtbot,
                                                        tmp_path: Path) -> None:
    window = document_window()
    area = RecoveryArea(tmp_path / "recovery")
    autosaver = Autosaver(window, area, interval_ms=50)
    window.editor.insertPlainText("Unsaved words. ")
    qtbot.waitUntil(lambda: area.folder is not None and _record(area) is not None, timeout=5000)
    record = _record(area)
    assert record is not None and record["text"] == window.editor.plain_text() and record["path"] is None
    assert window.save_to(tmp_path / "saved.md")
    autosaver.flush()
    assert _record(area) is None
    window.editor.insertPlainText("More. ")
    qtbot.waitUntil(lambda: _record(area) is not None, timeout=5000)
    assert autosaver.failed is False


def test_a_developing_rewrite_is_recorded_as_the_original(document_window: Callable[..., MainWindow], qtbot,
                                                          tmp_path: Path) -> None:
    window = document_window(pass_display_ms=400, max_denoising_steps=30)
    original = window.editor.plain_text()
    area = RecoveryArea(tmp_path / "recovery")
    autosaver = Autosaver(window, area, interval_ms=50)
    select(window, "climbed the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.passes >= 2, timeout=SIGNAL_TIMEOUT_MS)
    assert window.editor.plain_text() != original  # the span shows noise now
    window.editor.document().setModified(True)
    autosaver.write_now()
    autosaver.flush()
    record = _record(area)
    assert record is not None and record["text"] == original
    window.cancel_rewrite()


INSTANCE = """
import sys, time
from pathlib import Path

import pytest
from app.documents.recovery import RECORD_SUFFIX, RecoveryArea
area = RecoveryArea(Path(sys.argv[1]))
area.write("doc", "Recovered chapter.\\r\\nSecond line.", path=Path(sys.argv[2]), title="chapter.md", newline="\\r\\n")
print("written", flush=True)
time.sleep(600)
"""


def killed_instance_wrote(script: str, root: Path, path: Path) -> RecoveryArea:
    """Run ``script`` (an instance writing its record under ``root`` for ``path``), kill it once it has written,
    and claim this process's own folder there, as a later start does."""
    dead = subprocess.Popen([sys.executable, "-c", script, str(root), str(path)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert dead.stdout is not None and dead.stdout.readline().strip() == "written"
    dead.send_signal(signal.SIGKILL)
    dead.wait()
    area = RecoveryArea(root)
    area.claim()
    return area


def test_work_of_a_killed_instance_is_offered_and_recovered(document_window: Callable[..., MainWindow], qtbot,
                                                            tmp_path: Path) -> None:
    root, path = tmp_path / "recovery", tmp_path / "chapter.md"
    window = document_window()
    area = killed_instance_wrote(INSTANCE, root, path)
    dialog = offer_recovery(window, area, window)
    assert dialog is not None and dialog.list.count() == 1
    assert "chapter.md" in dialog.list.item(0).text() and "Recovered chapter." in dialog.preview.toPlainText()
    dialog.recover_button.click()
    assert window.editor.plain_text() == "Recovered chapter.\nSecond line."
    assert window.path == path and window.file_format.newline == "\r\n"
    assert window.editor.document().isModified()
    assert area.orphans() == [] and offer_recovery(window, area, window) is None
    assert not window.message_bar.isHidden() and "It is not saved yet" in window.message_bar.label.text()
    assert window.save_to(path)
    assert path.read_bytes() == b"Recovered chapter.\r\nSecond line."
    assert window.message_bar.isHidden()  # "not saved yet" is said no more once it is


def test_recovering_leaves_the_file_opened_at_start_as_it_is_on_disk(
    document_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    essay = tmp_path / "essay.md"
    essay.write_bytes(b"The essay, saved.\n")
    window = document_window()
    assert window.open_path(essay)  # as `redraft essay.md` opens it before the offer
    area = killed_instance_wrote(INSTANCE, tmp_path / "recovery", tmp_path / "chapter.md")
    dialog = offer_recovery(window, area, window)
    assert dialog is not None
    dialog.recover_button.click()
    assert window.editor.plain_text() == "Recovered chapter.\nSecond line." and window.path == tmp_path / "chapter.md"
    said = window.message_bar.label.text()
    assert "Recovered chapter.md" in said and "essay.md is as it was on disk" in said
    assert essay.read_bytes() == b"The essay, saved.\n"


@pytest.mark.parametrize("answer", [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Discard],
                         ids=["cancel", "discard"])
def test_recovering_asks_before_it_replaces_unsaved_words(document_window: Callable[..., MainWindow], monkeypatch,
                                                          tmp_path: Path, answer: QMessageBox.StandardButton) -> None:
    window = document_window()
    window.editor.insertPlainText("Words typed while the offer waited.")
    typed = window.editor.plain_text()
    asked: list[str] = []
    labels: list[list[str]] = []

    def ask(box: QMessageBox) -> QMessageBox.StandardButton:
        asked.append(box.text())
        labels.append(sorted(button.text() for button in box.buttons()))
        return answer

    monkeypatch.setattr(QMessageBox, "exec", ask)
    area = killed_instance_wrote(INSTANCE, tmp_path / "recovery", tmp_path / "chapter.md")
    dialog = offer_recovery(window, area, window)
    assert dialog is not None
    dialog.recover_button.click()
    assert len(asked) == 1 and "unsaved changes" in asked[0]
    assert labels[0] == ["&Discard", "&Save", "Cancel"]  # each with its letter; Cancel has Esc
    if answer == QMessageBox.StandardButton.Cancel:  # the typed words stay, and the autosave waits for next time
        assert window.editor.plain_text() == typed
        assert [document.title for document in area.orphans()] == ["chapter.md"]
        assert "offered again at the next start" in window.message_bar.label.text()
    else:
        assert window.editor.plain_text() == "Recovered chapter.\nSecond line." and area.orphans() == []


def test_an_unmodified_document_reloads_when_its_file_changes(document_window: Callable[..., MainWindow], qtbot,
                                                               tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("First version.\n")
    window = document_window()
    watcher = DiskWatcher(window)
    assert window.open_path(path)
    changes: list[str] = []
    watcher.changedOnDisk.connect(changes.append)
    window.save_to(path)  # our own save is not a change by someone else
    path.write_text("Their version.\n")
    qtbot.waitUntil(lambda: changes == ["changed"], timeout=5000)
    assert window.editor.plain_text() == "Their version.\n"
    assert not window.editor.document().isModified()


def test_unsaved_changes_ask_before_a_file_changed_on_disk_replaces_them(
    document_window: Callable[..., MainWindow], qtbot, tmp_path: Path
) -> None:
    path = tmp_path / "notes.md"
    path.write_text("First version.\n")
    window = document_window()
    watcher = DiskWatcher(window)
    assert window.open_path(path)
    window.editor.insertPlainText("My edit. ")
    mine = window.editor.plain_text()
    path.write_text("Their version.\n")
    qtbot.waitUntil(lambda: watcher.prompt is not None, timeout=5000)
    assert isinstance(watcher.prompt, QMessageBox) and "notes.md" in watcher.prompt.text()
    watcher.keep_button.click()
    assert window.editor.plain_text() == mine and window.editor.document().isModified()
    path.write_text("Their second version.\n")
    qtbot.waitUntil(lambda: watcher.prompt is not None, timeout=5000)
    watcher.reload_button.click()
    assert window.editor.plain_text() == "Their second version.\n"


def test_a_deleted_file_keeps_the_text_and_marks_it_unsaved(document_window: Callable[..., MainWindow], qtbot,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("Keep me.\n")
    window = document_window()
    watcher = DiskWatcher(window)
    assert window.open_path(path)
    changes: list[str] = []
    watcher.changedOnDisk.connect(changes.append)
    path.unlink()
    qtbot.waitUntil(lambda: changes == ["deleted"], timeout=5000)
    assert window.editor.plain_text() == "Keep me.\n" and window.editor.document().isModified()
    assert "was deleted or moved" in window.message_bar.label.text()
    assert window.save_to(path) and path.read_text() == "Keep me.\n"


def test_a_failed_save_keeps_the_document_open_and_unsaved(document_window: Callable[..., MainWindow],
                                                           tmp_path: Path) -> None:
    path = tmp_path / "locked.md"
    path.write_text("On disk.\n")
    path.chmod(0o444)
    window = document_window()
    window.editor.insertPlainText("New words. ")
    text = window.editor.plain_text()
    assert not window.save_to(path)
    assert "is read-only; use Save As" in window.message_bar.label.text()
    assert window.editor.plain_text() == text and window.editor.document().isModified()
    assert path.read_text() == "On disk.\n"



IMPORTED_INSTANCE = """
import sys, time
from pathlib import Path

import pytest
from app.documents.recovery import RecoveryArea
area = RecoveryArea(Path(sys.argv[1]))
area.write("doc", "Her chapter, revised.", path=None, title="from the agent.docx (imported)",
           imported_from=Path(sys.argv[2]))
print("written", flush=True)
time.sleep(600)
"""


def test_an_imported_document_is_recorded_and_recovered_under_its_name(document_window: Callable[..., MainWindow],
                                                                       qtbot, tmp_path: Path, monkeypatch) -> None:
    import docx
    from PySide6.QtWidgets import QFileDialog

    word = tmp_path / "from the agent.docx"
    document = docx.Document()
    document.add_paragraph("Her chapter, as the agent sent it.")
    document.save(str(word))
    window = document_window()
    assert window.open_path(word)
    area = RecoveryArea(tmp_path / "own")
    Autosaver(window, area, interval_ms=50)
    window.editor.insertPlainText("Unsaved words. ")
    qtbot.waitUntil(lambda: area.folder is not None and _record(area) is not None, timeout=5000)
    record = _record(area)
    assert record is not None and record["path"] is None and record["imported_from"] == str(word)
    assert record["title"] == "from the agent.docx (imported)"

    later = document_window()
    recovery = killed_instance_wrote(IMPORTED_INSTANCE, tmp_path / "recovery", word)
    dialog = offer_recovery(later, recovery, later)
    assert dialog is not None
    dialog.recover_button.click()
    assert later.editor.plain_text() == "Her chapter, revised." and later.path is None
    assert later.windowTitle() == "from the agent.docx (imported)[*] — Redraft"
    offered: list[str] = []

    def save_dialog(_parent, _title, suggested, _filters):
        offered.append(suggested)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    later.save()
    assert offered == [str(tmp_path / "from the agent.md")]  # beside the .docx, as before the crash
