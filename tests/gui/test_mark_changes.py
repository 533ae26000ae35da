"""Edit ▸ Tracked Changes ▸ Mark Changes Since… in the real window (app/window/mark_changes.py): the writer's own
changes since the text was opened, or since a saved version, marked in the text as tracked changes signed with the
writer's name, as one undo step, then sent as Word's own tracked changes."""

from __future__ import annotations

import re
from pathlib import Path

import docx
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog
from test_rewrite import finish
from test_saved_versions_window import answer_versions, type_at_end
from test_word_open import answering

from app.dialogs.saved_versions import SavedVersionsDialog
from app.documents.critic_markup import marks, settle
from app.documents.word_import import read_word_document
from app.window.mark_changes import HOLDS_MARKS

MANUSCRIPT = "# The Keeper\n\nThe keeper climbed the stairs every evening.\n\nHe lit the lamp. The sea was calm.\n"
CTRL = Qt.KeyboardModifier.ControlModifier


def replace_words(window, old: str, new: str) -> None:
    """The writer selects ``old`` and types ``new`` over it."""
    text = window.editor.plain_text()
    window.editor.select_range(text.index(old), text.index(old) + len(old))
    QTest.keyClicks(window.editor, new)


def test_changes_since_opening_are_marked_signed_and_go_to_word_as_its_tracked_changes(
    document_window, qtbot, tmp_path: Path, monkeypatch
) -> None:
    manuscript = tmp_path / "manuscript.md"
    manuscript.write_text(MANUSCRIPT, encoding="utf-8")
    window = document_window(author_name="Maya Ruiz")
    assert window.open_path(manuscript)
    replace_words(window, "stairs", "steps")
    type_at_end(window, "\nA ship came in.\n")
    text = window.editor.plain_text()
    start = text.index("He lit the lamp. ")
    window.editor.select_range(start, start + len("He lit the lamp. "))
    QTest.keyClick(window.editor, Qt.Key.Key_Delete)
    edited = window.editor.plain_text()
    caret_block = window.editor.document().findBlock(edited.index("The sea"))
    window.editor.setTextCursor(QTextCursor(caret_block))

    seen: list[SavedVersionsDialog] = []
    answer_versions(0, seen)
    window.change_marker.action.trigger()
    assert seen and seen[0].listed[0].startswith("As you opened it, Today ")
    assert seen[0].restore_button.text() == "&Mark Changes"
    marked = window.editor.plain_text()
    found = marks(marked)
    assert [(mark.removed, mark.added) for mark in found] == [
        ("stairs", "steps"), ("He lit the lamp. ", ""), ("", "\n\nA ship came in.")  # a paragraph: from its break
    ]
    assert {mark.author for mark in found} == {"Maya Ruiz"}
    assert settle(marked, accept=True) == edited and settle(marked, accept=False) == MANUSCRIPT
    assert "3 changes since you opened it" in window.statusBar().currentMessage()
    assert "signed Maya Ruiz" in window.statusBar().currentMessage()
    caret = window.editor.textCursor().position()
    assert window.editor.text_between(caret, caret + 17) == "The sea was calm."  # the writer's place kept
    assert window.tracked_changes.in_text.count == 3  # stepped through as an editor's at once

    QTest.keyClick(window.editor, Qt.Key.Key_Z, CTRL)  # one step takes every mark out
    assert window.editor.plain_text() == edited
    QTest.keyClick(window.editor, Qt.Key.Key_Z, CTRL, delay=0)
    assert window.editor.plain_text() != edited  # then the writer's own edits, one by one as typed

    for _ in range(2):
        window.editor.redo()
    assert window.editor.plain_text() == marked
    answering(monkeypatch, "&Keep Tracked")
    target = tmp_path / "for the editor.docx"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(target), ""))
    assert window.export_word()
    body = docx.Document(str(target)).element.body.xml
    assert set(re.findall(r'<w:(?:ins|del) [^>]*w:author="([^"]*)"', body)) == {"Maya Ruiz"}
    after = read_word_document(target).text  # as Word shows it, every change made
    assert "steps" in after and "A ship came in." in after and "He lit" not in after
    before = read_word_document(target, accept_changes=False).text
    assert "stairs" in before and "He lit the lamp." in before and "A ship" not in before


def test_changes_since_a_saved_version_take_in_every_save_after_it(document_window, tmp_path: Path) -> None:
    story = tmp_path / "story.md"
    story.write_text(MANUSCRIPT, encoding="utf-8")
    window = document_window()  # no name in Settings: the marks go unsigned, and the status bar says where to sign
    assert window.open_path(story)
    type_at_end(window, "The storm came.\n")
    assert window.save()
    window.change_marker.remember()  # as if opened again now: the first save is the version to compare with
    type_at_end(window, "Then the rain.\n")
    assert window.save()
    seen: list[SavedVersionsDialog] = []
    answer_versions(3, seen)  # as opened, then the saves newest first: the second, the first, the file before them
    window.change_marker.action.trigger()
    assert len(seen[0].listed) == 4 and "what the editor holds now" in seen[0].listed[1]
    marked = window.editor.plain_text()
    assert settle(marked, accept=False) == MANUSCRIPT
    assert [mark.added for mark in marks(marked)] == ["\nThe storm came.\nThen the rain."]  # from its break
    assert marks(marked)[0].author == ""
    assert "your name in Settings ▸ Documents signs them" in window.statusBar().currentMessage()


def test_marking_is_refused_in_words_where_it_cannot_help(document_window, qtbot) -> None:
    window = document_window("The keeper climbed the stairs.\n")
    window.editor.select_range(4, 10)
    window.rewrite_selection()
    finish(qtbot, window)  # a draft waits: it is no change yet, and marking does not drop it unasked
    assert window.change_marker.mark() is None and window.run is not None
    assert window.statusBar().currentMessage().startswith("A rewrite is open: accept or reject its draft first")
    window.reject_rewrite()
    window = document_window("The keeper {++quickly ++}{>>Ed<<}climbed.\n")
    window.change_marker.remember()
    assert window.change_marker.mark() is None
    assert window.statusBar().currentMessage() == HOLDS_MARKS
    window.editor.setPlainText("The keeper climbed.\n")
    window.change_marker.remember()
    assert window.change_marker.mark() is None  # nothing changed since it was opened
    assert window.statusBar().currentMessage() == "Nothing to mark: the text is as you opened it."
    assert window.editor.plain_text() == "The keeper climbed.\n"
    window.editor.setPlainText("The keeper {++quickly ++}climbed.\n")  # opened with a change still marked
    window.change_marker.remember()
    window.editor.setPlainText("The keeper quickly climbed the stairs.\n")  # decided, and written on
    answer_versions(0, [])
    window.change_marker.action.trigger()
    assert window.statusBar().currentMessage().startswith("That version holds tracked-change signs of its own")
    assert window.editor.plain_text() == "The keeper quickly climbed the stairs.\n"  # nothing marked, nothing lost


def test_marking_again_takes_in_the_writers_earlier_marks(document_window, tmp_path: Path) -> None:
    manuscript = tmp_path / "manuscript.md"
    manuscript.write_text(MANUSCRIPT, encoding="utf-8")
    window = document_window(author_name="Maya Ruiz")
    assert window.open_path(manuscript)
    replace_words(window, "stairs", "steps")
    answer_versions(0, [])
    window.change_marker.action.trigger()
    once = window.editor.plain_text()
    assert [mark.added for mark in marks(once)] == ["steps"]
    type_at_end(window, "\nA ship came in.\n")  # more written after the marks
    seen: list[SavedVersionsDialog] = []
    answer_versions(0, seen)
    window.change_marker.action.trigger()
    again = window.editor.plain_text()
    assert [(mark.removed, mark.added, mark.author) for mark in marks(again)] == [
        ("stairs", "steps", "Maya Ruiz"), ("", "\n\nA ship came in.", "Maya Ruiz")
    ]
    assert settle(again, accept=False) == MANUSCRIPT and "{++" not in settle(again, accept=True)
    assert "2 changes since you opened it" in window.statusBar().currentMessage()
    window.editor.undo()  # one step back: the first marks and the words typed after them
    assert window.editor.plain_text() == once + "\nA ship came in.\n"
