"""File ▸ Saved Versions… in a real window: what each save keeps, and a version back in the editor as one undo
step, the file itself untouched until the writer saves."""

from __future__ import annotations

import os
from datetime import date, datetime
from pathlib import Path

from gui_helpers import pieces, unnamed_controls
from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QFileDialog, QPushButton

from app.dialogs.saved_versions import SavedVersionsDialog, when_saved
from app.documents.saved_versions import SavedVersions
from app.userdirs import user_dirs

WRITTEN_ELSEWHERE = "The keeper climbed the stairs.\nThe lamp was lit.\n"


def answer_versions(choose_row: int, seen: list[SavedVersionsDialog]) -> None:
    """When the dialog opens: note it and what it lists, pick ``choose_row`` (newest first) and Restore (Mark Changes
    Since's list: its text as opened first, then the saves, and its button Mark Changes)."""

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, SavedVersionsDialog):
            QTimer.singleShot(10, answer)
            return
        seen.append(dialog)
        dialog.listed = [dialog.list.item(row).text() for row in range(dialog.list.count())]
        dialog.opened_at_row = dialog.list.currentRow()
        dialog.opened_at_position = dialog.preview.textCursor().position()
        dialog.list.setCurrentRow(choose_row)
        dialog.restore_button.click()

    QTimer.singleShot(0, answer)


def type_at_end(window, words: str) -> None:
    cursor = window.editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    window.editor.setTextCursor(cursor)
    window.editor.insertPlainText(words)


def test_each_save_is_kept_and_one_comes_back_as_one_undo_step(document_window, tmp_path: Path) -> None:
    story = tmp_path / "story.txt"
    story.write_text(WRITTEN_ELSEWHERE, encoding="utf-8")
    os.utime(story, (1_700_000_000, 1_700_000_000))  # written by another program, long ago
    window = document_window()
    assert window.open_path(story)
    type_at_end(window, "The sea was calm.\n")
    assert window.save()
    type_at_end(window, "Then the storm came.\n")
    assert window.save()
    saved = story.read_text("utf-8")
    versions = window.saved_versions.versions(story)
    # The file as another program left it (first saved over now), then each save, newest first.
    assert [v.text() for v in versions] == [saved, WRITTEN_ELSEWHERE + "The sea was calm.\n", WRITTEN_ELSEWHERE]
    assert versions[-1].at.timestamp() == 1_700_000_000
    assert versions[0].file.is_relative_to(user_dirs().data / "saved versions")
    seen: list[SavedVersionsDialog] = []
    answer_versions(2, seen)
    window.saved_versions_action.trigger()
    (dialog,) = seen
    assert dialog.list.count() == 3 and dialog.list.item(0).text().startswith(when_saved(versions[0].at))
    assert dialog.opened_at_row == 1  # the newest that is not the editor's text
    assert dialog.list.item(0).text().endswith("· 17 words · what the editor holds now")
    assert dialog.list.item(2).text().endswith("· 9 words · 8 fewer words than now")
    assert window.editor.plain_text() == WRITTEN_ELSEWHERE  # in the editor
    assert story.read_text("utf-8") == saved and window.editor.document().isModified()  # the file: not yet
    assert window.statusBar().currentMessage().endswith("is in the editor: Save keeps it, Ctrl+Z undoes it.")
    window.undo()
    assert window.editor.plain_text() == saved  # one step
    assert not window.editor.document().isModified()


def test_a_versions_day_reads_as_a_writer_says_it() -> None:
    today = date(2026, 11, 28)
    assert when_saved(datetime(2026, 11, 28, 14, 5), today) == "Today 14:05"
    assert when_saved(datetime(2026, 11, 27, 9, 12), today) == "Yesterday 09:12"
    assert when_saved(datetime(2026, 11, 23, 18, 40), today) == "Mon 23 Nov 18:40"
    assert when_saved(datetime(2024, 11, 28, 8, 0), today) == "Thu 28 Nov 2024 08:00"


def test_a_preview_marks_what_restoring_would_change_and_marking_would_write(qtbot, tmp_path: Path) -> None:
    story = tmp_path / "story.md"
    first = "---\ntitle: The Keeper\n---\nThe sea 🌊 was calm.\nThe keeper climbed the stairs.\n"
    now = first.replace("climbed", "ran up")
    kept = SavedVersions(tmp_path / "versions")
    kept.keep(story, first, datetime(2026, 12, 1, 9, 0))
    kept.keep(story, now, datetime(2026, 12, 1, 10, 0))
    versions = kept.versions(story)
    restore = SavedVersionsDialog("story.md", versions, now, QFont())
    qtbot.addWidget(restore)
    # Counted as the status bar counts a Markdown text: the title page's words are none of them.
    assert restore.list.item(1).text().endswith("· 9 words · 1 fewer word than now")
    assert restore.list.currentRow() == 1  # the newest that is not the editor's text
    assert [piece for piece in pieces(restore.preview) if piece[1] != "kept"] == [
        ("ran up", "removed"), ("climbed", "added"),
    ]  # fmt: skip
    assert restore.preview.textCursor().block().text() == "The keeper ran upclimbed the stairs."
    marking = SavedVersionsDialog("story.md", versions, now, QFont(), marks_since=True)
    qtbot.addWidget(marking)
    assert [piece for piece in pieces(marking.preview) if piece[1] != "kept"] == [
        ("climbed", "removed"), ("ran up", "added"),
    ]  # fmt: skip


def test_save_as_over_another_text_keeps_that_text(document_window, tmp_path: Path, monkeypatch) -> None:
    other = tmp_path / "other.md"
    other.write_text("Someone else's chapter.\n", encoding="utf-8")
    window = document_window()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(other), ""))
    assert window.save_as()
    assert [v.text() for v in window.saved_versions.versions(other)] == [
        window.editor.plain_text(), "Someone else's chapter.\n",
    ]  # fmt: skip


def test_a_save_stands_where_no_copy_can_be_kept_and_says_so(document_window, tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "data").write_text("a file where the data folder should be")
    monkeypatch.setenv("REDRAFT_HOME", str(home))
    story = tmp_path / "story.txt"
    story.write_text(WRITTEN_ELSEWHERE, encoding="utf-8")
    window = document_window()
    assert window.open_path(story)
    type_at_end(window, "More.\n")
    assert window.save()
    assert story.read_text("utf-8") == WRITTEN_ELSEWHERE + "More.\n"
    said = window.statusBar().currentMessage()
    assert said.startswith("Saved story.txt, but no copy went to Saved Versions: "), said


def test_with_nothing_kept_the_menu_says_why(document_window, tmp_path: Path) -> None:
    window = document_window()
    window.saved_versions_action.trigger()  # untitled
    assert window.statusBar().currentMessage().startswith("No saved versions yet: Redraft keeps one each time")
    story = tmp_path / "new.txt"
    story.write_text("Fresh.\n", encoding="utf-8")
    assert window.open_path(story)
    window.saved_versions_action.trigger()
    assert window.statusBar().currentMessage().startswith("No saved versions of new.txt yet")


def test_a_history_follows_its_file_through_save_as_and_a_rename(document_window, tmp_path: Path, monkeypatch) -> None:
    draft = tmp_path / "draft.md"
    draft.write_text("The first line.\n", encoding="utf-8")
    window = document_window()
    assert window.open_path(draft)
    type_at_end(window, "A second.\n")
    assert window.save()
    final = tmp_path / "final.md"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(final), ""))
    type_at_end(window, "A third.\n")
    assert window.save_as()
    texts = [v.text() for v in window.saved_versions.versions(final)]
    assert texts == [final.read_text("utf-8"), draft.read_text("utf-8"), "The first line.\n"]  # goes on from draft's
    assert window.statusBar().currentMessage() == "Saved final.md"

    renamed = tmp_path / "final, renamed in the file manager.md"
    final.rename(renamed)
    assert window.open_path(renamed)
    assert [v.text() for v in window.saved_versions.versions(renamed)] == texts  # found again by its text
    seen: list[SavedVersionsDialog] = []
    answer_versions(2, seen)
    window.saved_versions_action.trigger()
    assert seen and seen[0].list.count() == 3
    assert window.editor.plain_text() == "The first line.\n"


def test_each_choosing_dialog_names_its_parts_and_enter_chooses(qtbot, tmp_path: Path) -> None:
    # A default set on a button before its box was in the dialog was lost, and Qt made Cancel the default: Enter
    # anywhere but in the list (its preview, say) cancelled, and Cancel was drawn as the button Enter presses.
    from PySide6.QtWidgets import QWidget

    from app.dialogs.help import WelcomeDialog
    from app.dialogs.recovery import RecoveryDialog
    from app.dialogs.versions import VersionsDialog
    from app.documents.recovery import RecoveredDocument
    from app.rewrite.versions import Version

    host = QWidget()
    qtbot.addWidget(host)
    untitled = RecoveredDocument(record=tmp_path / "r", text="Unsaved.", path=None, title="Untitled", written_at=0.0)
    opened = (datetime(2026, 12, 1, 9, 0), "As opened.\n")
    dialogs = {
        "Restore": SavedVersionsDialog("story.md", [], "Now.\n", QFont(), host, opened=opened),
        "Mark Changes": SavedVersionsDialog("story.md", [], "Now.\n", QFont(), host, opened=opened,
                                            verb="Mark Changes", marks_since=True),  # fmt: skip
        "Put Back": VersionsDialog([Version("Original", "One.", 0.0), Version("Draft 1", "Two.", 1.0)], "Two.", host),
        "Recover": RecoveryDialog([untitled], host),
        "Try the demo": WelcomeDialog(host),
    }
    versions = dialogs["Put Back"]
    assert isinstance(versions, VersionsDialog) and pieces(versions.preview) == [("Two.", "kept")]  # in the text
    versions.list.setCurrentRow(0)  # the original: what putting it back would change, marked
    assert pieces(versions.preview) == [("Two", "removed"), ("One", "added"), (".", "kept")]
    for wanted, dialog in dialogs.items():
        dialog.show()
        assert unnamed_controls(dialog) == [], wanted  # a screen reader names the list and the preview too
        defaults = [b.text().replace("&", "") for b in dialog.findChildren(QPushButton) if b.isDefault()]
        assert defaults == [wanted], (wanted, defaults)
        dialog.close()
