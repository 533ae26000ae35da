"""The recovery dialog tells a writer what a crash would have lost: each autosaved text against its file as it is
on disk now, the unsaved words marked and in view, and the words counted as the status bar counts them."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from gui_helpers import pieces

from app.dialogs.recovery import RecoveryDialog, against_disk, recover_into
from app.documents.recovery import RecoveredDocument

SAVED = "---\ntitle: The Keeper\n---\n# One\n\nThe storm came in from the west.\n\n# Two\n\nThe boat appeared.\n"
TYPED = " Mara ran down the stairs."
AUTOSAVED_AT = 1_800_000_000.0


def recovered(path: Path | None, text: str) -> RecoveredDocument:
    title = path.name if path is not None else "Untitled"
    return RecoveredDocument(record=Path("unused.record"), text=text, path=path, title=title, written_at=AUTOSAVED_AT)


def on_disk(path: Path, text: str, modified_at: float = AUTOSAVED_AT - 60) -> Path:
    path.write_text(text, encoding="utf-8")
    os.utime(path, (modified_at, modified_at))
    return path


def test_the_words_a_crash_would_have_lost_are_marked_and_in_view(qtbot, tmp_path: Path) -> None:
    chapter = on_disk(tmp_path / "chapter.md", SAVED)
    autosaved = SAVED.replace("The boat appeared.", "The boat appeared." + TYPED)
    dialog = RecoveryDialog([recovered(chapter, autosaved)])
    qtbot.addWidget(dialog)
    # The title page's words are not counted, as the status bar leaves them out once it is recovered.
    assert dialog.list.item(0).text().startswith("chapter.md: 17 words, autosaved ")
    told = dialog.against.text()
    assert told.startswith("Its text against chapter.md on disk (5 words more). 1 change: "), told
    assert "changed on disk" not in told
    assert [piece for piece in pieces(dialog.preview) if piece[1] != "kept"] == [(TYPED, "added")]
    assert dialog.preview.textCursor().block().text() == "The boat appeared." + TYPED
    # Each answer has its letter (Alt+R, Alt+D, Alt+L).
    assert [b.text() for b in (dialog.recover_button, dialog.discard_button, dialog.later_button)] == [
        "&Recover", "&Discard All", "&Later",
    ]  # fmt: skip


def test_a_file_saved_again_after_the_crash_is_named_and_its_own_words_struck_through(qtbot, tmp_path: Path) -> None:
    saved_later = SAVED.replace("The storm came in from the west.", "The storm came in from the sea.")
    chapter = on_disk(tmp_path / "chapter.md", saved_later, modified_at=AUTOSAVED_AT + 60)
    dialog = RecoveryDialog([recovered(chapter, SAVED)])
    qtbot.addWidget(dialog)
    told = dialog.against.text()
    assert "(as many words)" in told and "chapter.md changed on disk after this was autosaved." in told, told
    assert [piece for piece in pieces(dialog.preview) if piece[1] != "kept"] == [("sea", "removed"), ("west", "added")]


def test_with_nothing_on_disk_to_compare_the_dialog_says_this_copy_is_the_only_one(qtbot, tmp_path: Path) -> None:
    dialog = RecoveryDialog([
        recovered(None, "Never saved."),
        recovered(tmp_path / "gone.md", "Its file was deleted."),
        recovered(on_disk(tmp_path / "same.md", SAVED), SAVED),
        recovered(on_disk(tmp_path / "report.docx", "PK\x03\x04\x00\x00binary"), "Imported words."),
    ])  # fmt: skip
    qtbot.addWidget(dialog)
    said = []
    for row in range(4):
        dialog.list.setCurrentRow(row)
        said.append(dialog.against.text())
        assert all(kind == "kept" for _text, kind in pieces(dialog.preview))
    assert said[0] == "Its text (never saved: this copy is the only one):"
    assert said[1] == "Its text (gone.md is no longer on disk: this copy is the only one):"
    assert said[2] == "Its text, the same as same.md on disk: discarding it loses nothing."
    assert said[3].startswith("Its text (report.docx could not be read to compare: "), said[3]
    assert dialog.preview.toPlainText() == "Imported words."
    imported = replace(recovered(None, "Words from Word."), imported_from=tmp_path / "report.docx")
    said_of_import = "Its text (opened from report.docx, never saved: this copy is the only one):"
    assert against_disk(imported) == (None, said_of_import)


def test_recovering_puts_the_caret_where_the_writer_left_off(document_window, tmp_path: Path) -> None:
    # It was at the top: the next words typed went into the title page.
    chapter = on_disk(tmp_path / "chapter.md", SAVED)
    autosaved = SAVED.replace("from the west.", "from the west." + TYPED)
    window = document_window()
    assert recover_into(window, recovered(chapter, autosaved))
    caret = window.editor.textCursor()
    assert not caret.hasSelection() and window.editor.plain_text()[: caret.position()].endswith("west." + TYPED)
    untitled = document_window()
    assert recover_into(untitled, recovered(None, "Never saved.\nIts last line."))
    assert untitled.editor.textCursor().position() == len("Never saved.\nIts last line.")  # its end
