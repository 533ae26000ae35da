"""View ▸ Session Word Goal… in a real window: the status bar counts the words written since the document was
opened towards the goal, says once when it is reached, and the goal is kept for the next session."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QInputDialog


def type_at_end(window, words: str) -> None:
    cursor = window.editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    window.editor.setTextCursor(cursor)
    window.editor.insertPlainText(words)
    window._update_counts()  # what the status bar's timer does 150 ms after each change


def test_the_words_written_this_session_count_towards_the_goal(make_window, tmp_path: Path, monkeypatch) -> None:
    chapter = tmp_path / "chapter.md"
    chapter.write_text("Ten words were here before this session began, all of them.\n", encoding="utf-8")
    window = make_window(wait_for_model=False)
    assert not window.session_goal.label.isVisible()  # no goal: nothing counted in the status bar
    assert window.open_path(chapter)
    window.statusBar().clearMessage()  # "Opened chapter.md"
    asked: list[int] = []

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QInputDialog):
            QTimer.singleShot(10, answer)
            return
        asked.append(dialog.intValue())
        room.append(dialog.width() - dialog.fontMetrics().horizontalAdvance("Session Word Goal — Redraft"))
        dialog.setIntValue(12)
        dialog.accept()

    room: list[int] = []
    QTimer.singleShot(0, answer)
    window.session_goal.action.trigger()
    assert asked == [500]  # a first goal is offered at 500
    assert room[0] > 100  # its title fits beside the frame's buttons (openbox cut it to "Session Wo… l")
    assert window.prefs.session_goal == 12 and window.settings.load().session_goal == 12  # kept
    window._update_counts()
    assert window.session_goal.label.text() == "0 of 12 words this session"
    type_at_end(window, "The keeper climbed the stairs every evening. ")
    assert window.session_goal.label.text() == "7 of 12 words this session"
    assert window.statusBar().currentMessage() == ""
    type_at_end(window, "He lit the lamp, and then")
    assert window.session_goal.label.text() == "✓ 13 of 12 words this session"
    assert window.statusBar().currentMessage() == "Session goal reached: 13 words written."
    window.statusBar().clearMessage()
    cursor = window.editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    cursor.movePosition(cursor.MoveOperation.Left, cursor.MoveMode.KeepAnchor, len("the lamp, and then"))
    cursor.removeSelectedText()  # cut again: the count is net
    window._update_counts()
    assert window.session_goal.label.text() == "9 of 12 words this session"
    type_at_end(window, "it shone out. ")
    assert window.statusBar().currentMessage() == ""  # reached once a session: said once

    other = tmp_path / "other.md"
    other.write_text("A different text altogether.\n", encoding="utf-8")
    assert window.open_path(other)  # another document: another session
    window._update_counts()
    assert window.session_goal.label.text() == "0 of 12 words this session"
    window.session_goal.set_goal(0)
    assert not window.session_goal.label.isVisible() and window.settings.load().session_goal == 0


def test_a_session_counts_the_words_the_status_bar_counts(make_window, tmp_path: Path) -> None:
    """The session starts from the status bar's own count: front matter, marks and undecided changes are counted
    alike at the start and after, so the first words typed count from the first."""
    chapter = tmp_path / "chapter.md"
    chapter.write_text("---\ntitle: The Salt Road\nauthor: Maya Okafor\n---\n\n# One\n\nShe {++quietly ++}left.\n"
                       "\n* * *\n", encoding="utf-8")  # fmt: skip
    window = make_window(wait_for_model=False)
    assert window.open_path(chapter)
    window.session_goal.set_goal(10)
    window._update_counts()
    assert window.counts_label.text().startswith("4 words")  # One, She, quietly, left.
    assert window.session_goal.label.text() == "0 of 10 words this session"
    type_at_end(window, "\nThe tide — at last — turned. ")
    assert window.counts_label.text().startswith("9 words")  # the dashes are no words
    assert window.session_goal.label.text() == "5 of 10 words this session"
