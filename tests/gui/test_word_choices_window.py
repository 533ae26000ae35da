"""Rewrite ▸ Words That Fit in the real window on the tiny model (app/rewrite/word_choices.py): Ctrl+F7 or the
right-click menu reads the word at the cursor on the model's thread, the list comes up under it, and a choice
goes in as one undo step; a word changed while it is read is left alone, and what is not one word is refused in
words."""

from __future__ import annotations

import shiboken6
from gui_helpers import DOCUMENT, SIGNAL_TIMEOUT_MS, place_cursor, select
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent, QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu
from test_rewrite import finish

from app.rewrite.word_choices import CHOICES, DEVELOPING, in_context, listed
from app.window.dictionary import ENGLISH, Dictionary
from model.edit.word_choices import WordChoice

CTRL = Qt.KeyboardModifier.ControlModifier


def _listed(qtbot, window) -> list[str]:
    """The words of the list once it is up (its first entry names the word they replace)."""
    words = window.word_choices
    qtbot.waitUntil(lambda: words.menu is not None and words.menu.isVisible(), timeout=SIGNAL_TIMEOUT_MS)
    entries = words.menu.actions()
    assert not entries[0].isEnabled()  # the heading
    return [entry.text() for entry in entries[1:]]


def test_ctrl_f7_lists_words_under_the_word_and_a_choice_goes_in_as_one_undo_step(document_window, qtbot) -> None:
    window = document_window()
    editor = window.editor
    place_cursor(window, DOCUMENT.index("stairs") + 3)  # the caret inside the word
    QTest.keyClick(editor, Qt.Key.Key_F7, CTRL)
    assert editor.textCursor().selectedText() == "stairs"  # the word read is shown
    listed = _listed(qtbot, window)
    assert listed and "stairs" not in listed
    assert window.word_choices.menu.actions()[0].text() == "In place of “stairs”:"
    assert len(listed) > 1
    chosen = listed[1]  # the likeliest is the active entry: Down, then Enter, as the writer chooses
    menu = window.word_choices.menu
    QTest.keyClick(menu, Qt.Key.Key_Down)
    # The line the choice would make, as the arrows reach it, in the status bar.
    assert window.statusBar().currentMessage() == f"…keeper climbed the {chosen} every evening. · Enter puts it in"
    QTest.keyClick(menu, Qt.Key.Key_Return)
    assert not menu.isVisible()
    assert editor.plain_text() == DOCUMENT.replace("stairs", chosen, 1)
    assert editor.textCursor().selectedText() == chosen
    assert window.statusBar().currentMessage() == f"“stairs” → “{chosen}” (Ctrl+Z undoes it)"
    QTest.keyClick(editor, Qt.Key.Key_Z, CTRL)
    assert editor.plain_text() == DOCUMENT  # one step
    first = window.word_choices.menu
    place_cursor(window, DOCUMENT.index("letter") + 1)
    QTest.keyClick(editor, Qt.Key.Key_F7, CTRL)
    assert _listed(qtbot, window)
    QTest.keyClick(window.word_choices.menu, Qt.Key.Key_Down)
    assert window.statusBar().currentMessage().endswith(" · Enter puts it in")
    QTest.keyClick(window.word_choices.menu, Qt.Key.Key_Escape)  # the writer's word stays, and the bar says so
    assert editor.plain_text() == DOCUMENT
    assert window.statusBar().currentMessage() == "“letter” kept."
    QTest.keyClick(editor, Qt.Key.Key_F7, CTRL)
    qtbot.waitUntil(lambda: window.word_choices.menu is not first, timeout=SIGNAL_TIMEOUT_MS)
    assert _listed(qtbot, window)
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # as the window's event loop does
    assert not shiboken6.isValid(first)  # one list kept, not one a word read


def test_the_right_click_offers_the_word_under_the_pointer_not_the_caret(document_window, qtbot) -> None:
    window = document_window()
    editor = window.editor
    place_cursor(window, 0)
    at = QTextCursor(editor.document())
    at.setPosition(DOCUMENT.index("letter") + 2)
    point = editor.cursorRect(at).center()
    entries: list[str] = []

    def read_menu() -> None:
        menu = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMenu) and w.isVisible())
        entry = next(a for a in menu.actions() if a.text().startswith("Words That Fit"))
        entries.append(entry.text())
        menu.close()
        entry.trigger()

    QTimer.singleShot(50, read_menu)
    QApplication.sendEvent(editor.viewport(), QContextMenuEvent(
        QContextMenuEvent.Reason.Mouse, point, editor.viewport().mapToGlobal(point)
    ))  # fmt: skip
    assert entries == ["Words That Fit “letter”…"]
    listed = _listed(qtbot, window)
    window.word_choices.menu.actions()[1].trigger()
    assert editor.plain_text() == DOCUMENT.replace("letter", listed[0], 1)


def test_a_word_changed_while_it_is_read_is_left_as_the_writer_made_it(document_window, qtbot) -> None:
    window = document_window()
    editor = window.editor
    place_cursor(window, DOCUMENT.index("harbour") + 1)
    assert window.word_choices.choose()
    place_cursor(window, DOCUMENT.index("harbour") + 4)
    QTest.keyClicks(editor, "xx")  # the writer types into the word before the model has answered
    changed = editor.plain_text()
    qtbot.waitUntil(lambda: "changed while it was read" in window.statusBar().currentMessage(),
                    timeout=SIGNAL_TIMEOUT_MS)  # fmt: skip
    assert window.word_choices.menu is None and editor.plain_text() == changed


def test_text_typed_before_the_word_while_it_is_read_moves_it_and_the_choice_lands_on_it(
    document_window, qtbot
) -> None:
    window = document_window()
    editor = window.editor
    place_cursor(window, DOCUMENT.index("evening") + 2)
    assert window.word_choices.choose()
    place_cursor(window, 0)
    QTest.keyClicks(editor, "At dusk ")
    listed = _listed(qtbot, window)
    window.word_choices.menu.actions()[1].trigger()
    assert editor.plain_text() == "At dusk " + DOCUMENT.replace("evening", listed[0], 1)


def test_what_is_not_one_word_is_refused_in_words_and_nothing_is_read(document_window, qtbot) -> None:
    window = document_window()
    select(window, "climbed the stairs")
    assert not window.word_choices.choose()
    assert window.statusBar().currentMessage().startswith("Words That Fit reads one word")
    place_cursor(window, DOCUMENT.index("\n") + 1)
    cursor = window.editor.textCursor()
    cursor.setPosition(DOCUMENT.index("evening") + len("evening"))
    cursor.setPosition(DOCUMENT.index("evening") + len("evening."), QTextCursor.MoveMode.KeepAnchor)
    window.editor.setTextCursor(cursor)  # the full stop alone
    assert not window.word_choices.choose()
    assert window.statusBar().currentMessage().startswith("Put the cursor in a word")
    select(window, " stairs ")  # one word, spaces round it: read
    assert window.word_choices.choose()
    assert _listed(qtbot, window)
    assert window.editor.plain_text() == DOCUMENT


def test_while_a_rewrite_develops_the_action_says_why_it_waits(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=64, pass_display_ms=200)
    select(window, "climbed the stairs")
    window.rewrite_selection()
    assert not window.word_choices.action.isEnabled()
    assert window.word_choices.action.toolTip() == DEVELOPING
    place_cursor(window, DOCUMENT.index("harbour") + 1)
    QTest.keyClick(window.editor, Qt.Key.Key_F7, CTRL)
    assert window.statusBar().currentMessage() == DEVELOPING
    passes = window.run.passes
    qtbot.wait(700)  # passes go on, each with its progress: the reason stays to be read
    assert window.run.passes > passes and window.statusBar().currentMessage() == DEVELOPING
    window.cancel_rewrite()
    qtbot.waitUntil(lambda: window.run is None, timeout=SIGNAL_TIMEOUT_MS)
    assert window.word_choices.action.isEnabled()
    select(window, "climbed the stairs")
    window.rewrite_selection()
    finish(qtbot, window)  # a draft waiting: the word inside it is the draft's, not the writer's yet
    start, _end = window.editor.live_range()
    place_cursor(window, start + 1)
    assert not window.word_choices.choose()
    said = window.statusBar().currentMessage()
    assert said.startswith("“") and said.endswith(
        "” is in the draft waiting: Enter accepts it, Esc rejects it; then Words That Fit can read it."
    )
    # A word outside the draft is the writer's: it changes, and Ctrl+Z takes the waiting draft back first.
    shown = window.editor.plain_text()
    place_cursor(window, shown.index("harbour") + 1)
    assert window.word_choices.choose()
    choice = _listed(qtbot, window)[0]
    QTest.keyClick(window.word_choices.menu, Qt.Key.Key_Return)
    assert window.editor.plain_text() == shown.replace("harbour", choice)
    assert window.statusBar().currentMessage() == f"“harbour” → “{choice}”"  # no "Ctrl+Z undoes it" here
    QTest.keyClick(window.editor, Qt.Key.Key_Z, CTRL)
    assert window.run is None and window.editor.plain_text() == DOCUMENT.replace("harbour", choice)
    QTest.keyClick(window.editor, Qt.Key.Key_Z, CTRL)
    assert window.editor.plain_text() == DOCUMENT


def test_only_words_are_listed_a_word_piece_is_not_and_a_name_of_the_story_is(tmp_path) -> None:
    dictionary = Dictionary(tmp_path / "words.txt", ENGLISH)
    dictionary.load()
    offered = [WordChoice(word, share) for word, share in
               (("Qu", 0.3), ("Tavisha", 0.2), ("Found", 0.1), ("Zorblat", 0.05), ("took", 0.04))]  # fmt: skip
    assert [c.word for c in listed(offered, dictionary, {"Tavisha", "storm"})] == ["Tavisha", "Found", "took"]
    assert [c.word for c in listed(offered, dictionary, set())] == ["Found", "took"]
    many = [WordChoice(word, 0.01) for word in ("a", "an", "the", "this", "that", "his", "her", "its", "my", "our")]
    assert len(listed(many, dictionary, set())) == CHOICES


def test_a_choice_is_shown_among_the_words_either_side_cut_between_words() -> None:
    assert in_context("It was a ", "great", " day.") == "It was a great day."
    before = "The storm came in from the west just after dusk. Mara "
    after = " it from the lamp room, counting the seconds."
    assert in_context(before, "found", after, room=20) == "…after dusk. Mara found it from the lamp…"
