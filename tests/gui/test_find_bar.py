"""Edit ▸ Find and Replace in a real window: the bar above the text that searches as the writer types, steps
through the matches with the keys, replaces one or all as one undo step each, leaves a rewrite in progress alone,
and gives the keys back to the text."""

from __future__ import annotations

from gui_helpers import SIGNAL_TIMEOUT_MS, place_cursor, select
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont

from app.window.find_bar import LAYER, LONG_TEXT, MARKED, REFRESH_MS, TYPED_MS, matches_in
from app.window.highlights import layer, set_layer

TEXT = (
    "The keeper climbed the stairs. The lamp was lit.\n\n"
    "the keepers slept; THE keeper did not. Then the keeper wrote.\n"
)


def _selected(window) -> str:
    return window.editor.textCursor().selectedText()


def test_matches_are_qt_positions_case_and_whole_words_as_asked() -> None:
    assert matches_in("a Cat, a cat, catalogue", "cat", match_case=False, whole_words=False) == [(2, 5), (9, 12),
                                                                                                  (14, 17)]  # fmt: skip
    assert matches_in("a Cat, a cat, catalogue", "cat", match_case=True, whole_words=True) == [(9, 12)]
    # A character beyond the Basic Multilingual Plane takes two of Qt's positions: what follows it shifts.
    assert matches_in("🌊 sea, 𒃦 sea", "sea", match_case=False, whole_words=False) == [(3, 6), (11, 14)]
    assert matches_in("a.b a-b", ".", match_case=False, whole_words=False) == [(1, 2)]  # the needle's signs are signs
    assert matches_in("anything", "", match_case=False, whole_words=False) == []


def test_ctrl_f_searches_as_the_writer_types_and_the_keys_step_through(document_window, qtbot) -> None:
    window = document_window(text=TEXT)
    window.show()
    place_cursor(window, TEXT.index("slept"))
    qtbot.keyClick(window.editor, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = window.find_bar
    assert bar.isVisible() and not bar.replace_row.isVisible()
    assert bar.find_text.hasFocus()  # the keys are in the bar, not in the text
    qtbot.keyClicks(bar.find_text, "keeper")
    assert window.editor.plain_text() == TEXT  # nothing typed into the text
    assert bar.count.text() == "3 of 4 matches"  # from the caret: "THE keeper" after "slept"
    assert window.editor.textCursor().selectionStart() == TEXT.index("keeper did")
    assert len(layer(window.editor, LAYER)) == 4  # every match tinted
    qtbot.keyClick(bar.find_text, Qt.Key.Key_Return)
    assert bar.count.text() == "4 of 4 matches" and _selected(window) == "keeper"
    qtbot.keyClick(bar.find_text, Qt.Key.Key_Return)  # round the end to the first
    assert bar.count.text() == "1 of 4 matches" and window.editor.textCursor().selectionStart() == 4
    qtbot.keyClick(bar.find_text, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)  # and back round
    assert bar.count.text() == "4 of 4 matches"
    bar.whole_words.setChecked(True)  # "keepers" is another word
    assert bar.count.text().endswith("of 3 matches")
    bar.match_case.setChecked(True)
    qtbot.keyClicks(bar.find_text, "z")
    assert bar.count.text() == "No matches"
    qtbot.keyClick(bar.find_text, Qt.Key.Key_Backspace)
    qtbot.keyClick(bar.find_text, Qt.Key.Key_Escape)
    assert not bar.isVisible() and window.editor.hasFocus() and layer(window.editor, LAYER) == []
    assert _selected(window) == "keeper"  # the match shown stays selected, to type over or copy


def test_a_selection_is_what_ctrl_f_looks_for_and_f3_goes_on_with_the_bar_closed(document_window, qtbot) -> None:
    window = document_window(text=TEXT)
    window.show()
    select(window, "lamp")
    window.find_action.trigger()
    bar = window.find_bar
    assert bar.find_text.text() == "lamp" and bar.find_text.selectedText() == "lamp"  # typing replaces it
    assert bar.count.text() == "1 of 1 match"
    bar.find_text.setText("the")
    bar.close_bar()
    place_cursor(window, 0)
    window.find_next_action.trigger()  # F3, the bar closed: it opens on the last search
    assert bar.isVisible() and bar.find_text.text() == "the" and bar.count.text().startswith("1 of")
    window.find_next_action.trigger()
    assert bar.count.text().startswith("2 of")
    window.find_previous_action.trigger()
    assert bar.count.text().startswith("1 of")
    assert (window.find_next_action.shortcut().toString(), window.find_previous_action.shortcut().toString()) == (
        "F3", "Shift+F3")  # fmt: skip


def test_replace_one_and_all_each_one_undo_step(document_window, qtbot) -> None:
    window = document_window(text=TEXT)
    window.show()
    place_cursor(window, 0)
    window.replace_action.trigger()
    bar = window.find_bar
    assert bar.replace_row.isVisible() and bar.find_text.hasFocus()
    qtbot.keyClick(bar.find_text, Qt.Key.Key_Tab)
    assert bar.replace_text.hasFocus()  # Tab goes from line to line, past the arrows
    bar.find_text.setText("keeper")
    bar.whole_words.setChecked(True)
    bar.replace_text.setText("warden")
    assert bar.count.text() == "1 of 3 matches"
    bar.replace_one()
    assert window.editor.plain_text().startswith("The warden climbed")
    assert bar.count.text() == "1 of 2 matches" and _selected(window) == "keeper"  # the next one shown
    assert bar.replace_all() == 2
    assert bar.count.text() == "Replaced 2"
    assert window.editor.plain_text() == TEXT.replace("the keepers", "#").replace("keeper", "warden").replace(
        "#", "the keepers")  # fmt: skip
    window.undo()  # Replace All, whole
    assert window.editor.plain_text() == TEXT.replace("The keeper", "The warden", 1)
    window.undo()  # the one replaced alone
    assert window.editor.plain_text() == TEXT


def test_the_matches_follow_the_text_and_a_rewrite_in_progress_is_left_alone(document_window, qtbot) -> None:
    window = document_window(text=TEXT)
    window.show()
    editor = window.editor
    bar = window.find_bar
    window.find_action.trigger()
    bar.find_text.setText("keeper")
    start, end = TEXT.index("the keepers slept"), TEXT.index(" Then")
    editor.begin_live_span(start, end)
    editor.show_result("a draft 🌊 twice as long as the words it took the place of, with a keeper in it;")
    qtbot.waitUntil(lambda: bar.count.text().endswith("3 matches"), timeout=REFRESH_MS * 20)  # as it reads now
    bar.replace_text.setText("warden")
    assert bar.replace_all() == 2
    assert bar.count.text() == "Replaced 2, 1 left in the rewrite in progress"
    assert "with a keeper in it;" in editor.plain_text()  # the draft as it was
    editor.restore_live_span()  # rejected: the original comes back, the writer's replacements around it kept
    assert editor.plain_text() == TEXT.replace("The keeper", "The warden").replace("Then the keeper", "Then the warden")
    place_cursor(window, 0)
    qtbot.keyClicks(editor, "keeper ")  # typed in the text: the bar's count follows
    qtbot.waitUntil(lambda: bar.count.text() == "3 matches" or bar.count.text().endswith("of 3 matches"),
                    timeout=REFRESH_MS * 20)  # fmt: skip


def test_find_and_keep_words_marks_are_drawn_together(document_window) -> None:
    window = document_window(text=TEXT)
    editor = window.editor
    window.find_action.trigger()
    window.find_bar.find_text.setText("lamp")
    select(window, "stairs")
    window.steering.keep_action.trigger()  # Rewrite ▸ Keep Words marks "stairs"
    assert len(editor.extraSelections()) == 2  # the kept words' mark and the match: neither wiped the other
    set_layer(editor, LAYER, [])
    assert len(editor.extraSelections()) == 1


def test_replace_in_a_selected_passage_alone(document_window) -> None:
    text = "He left early.\n\nHe said he would. He did.\n\nHe came back.\n"
    window = document_window(text=text)
    window.show()
    start = text.index("He said")
    window.editor.select_range(start, text.index("He came"))  # the middle paragraph and its break
    window.replace_action.trigger()
    bar = window.find_bar
    assert bar.in_selection.isEnabled() and bar.in_selection.isChecked()
    bar.find_text.setText("he")
    bar.whole_words.setChecked(True)
    bar.replace_text.setText("she")
    assert bar.count.text() == "1 of 3 matches"  # He, he, He: the passage's alone
    tints = layer(window.editor, LAYER)
    assert len(tints) == 4 and tints[0].cursor.selectedText() == text[start:text.index("He came")].replace(
        "\n", "\u2029")  # the passage searched, beneath its matches  # fmt: skip
    assert bar.replace_all() == 3
    assert window.editor.plain_text() == "He left early.\n\nshe said she would. she did.\n\nHe came back.\n"
    bar.in_selection.setChecked(False)  # the whole text again
    assert bar.count.text().endswith("2 matches")
    window.undo()
    assert window.editor.plain_text() == text
    bar.close_bar()
    window.find_action.trigger()  # opened again on a caret: the whole text, nothing to search in
    assert not bar.in_selection.isEnabled() and not bar.in_selection.isChecked()
    window.editor.select_range(start, text.index("He came"))
    window.replace_action.trigger()
    assert bar.in_selection.isChecked()
    window.new_document()  # another document: the passage of the last one is forgotten
    assert not bar.in_selection.isEnabled() and not bar.in_selection.isChecked()


def test_in_a_novel_the_search_waits_for_a_pause_in_the_typing_and_tints_the_matches_in_view(
    document_window, qtbot
) -> None:
    """In War and Peace each of "N", "Na", "Nat" found 10,000s of matches as it was typed (0.3 s a key), and only
    the first pages' 2,000 matches were tinted, none where the writer was looking."""
    chapter = "The keeper climbed the stairs and lit the lamp at dusk. " * 10 + "\n\n"
    text = chapter * (LONG_TEXT // len(chapter) + 1)
    window = document_window(text=text)
    bar = window.find_bar
    bar.open()
    qtbot.keyClicks(bar.find_text, "lam")
    assert bar.matches == [] and bar.typed_timer.isActive()  # nothing searched while the keys come
    qtbot.keyClick(bar.find_text, Qt.Key.Key_Return)  # Enter at once: the first match of what was typed
    assert len(bar.matches) == text.count("lamp") > MARKED and bar.current == 0 and _selected(window) == "lam"
    qtbot.keyClicks(bar.find_text, "p")
    qtbot.waitUntil(lambda: not bar.typed_timer.isActive(), timeout=TYPED_MS * 20)
    assert bar.count.text() == f"1 of {text.count('lamp'):,} matches"
    place_cursor(window, len(text) * 9 // 10)
    bar.open()  # searched from near the end: the tints go with the match shown
    assert bar.current > MARKED
    caret, view = window.editor.cursorRect(), window.editor.viewport().rect()
    assert view.height() / 4 < caret.center().y() < view.height() * 3 / 4  # out of view, it came to the middle
    shown = window.editor.textCursor().selectionStart()
    tinted = [selection.cursor.selectionStart() for selection in layer(window.editor, LAYER)]
    assert len(tinted) == MARKED and tinted[0] < shown < tinted[-1]


def _bold_at(window, block_number: int) -> bool:
    formats = window.editor.document().findBlockByNumber(block_number).layout().formats()
    return any(part.format.fontWeight() == QFont.Weight.Bold for part in formats)


def test_replace_all_through_a_novel_and_its_undo_highlight_the_view_at_once_and_the_rest_after(
    document_window, qtbot
) -> None:
    """Qt highlighted every block between the first replacement and the last as the edit ended: 2.6 s for a
    character's 1,964 names in War and Peace, and 1.9 s to undo it."""
    text = "The **keeper** lit the lamp.\n\n" * 600
    window = document_window(text=text)
    highlighter, last = window.editor.highlighter, 2 * 600 - 2
    bar = window.find_bar
    bar.open(replace=True)
    bar.find_text.setText("lamp")
    bar.replace_text.setText("lantern")
    assert bar.replace_all() == 600
    top = window.editor.firstVisibleBlock().blockNumber()
    assert highlighter.showing_again and _bold_at(window, top + top % 2)  # the view's at once, the rest after
    qtbot.waitUntil(lambda: not highlighter.showing_again, timeout=SIGNAL_TIMEOUT_MS)
    assert _bold_at(window, last) and window.editor.plain_text() == text.replace("lamp", "lantern")
    window.undo()
    top = window.editor.firstVisibleBlock().blockNumber()  # where the caret went: the last change undone
    assert window.editor.plain_text() == text and top > 600 and _bold_at(window, top + top % 2)
    qtbot.waitUntil(lambda: not highlighter.showing_again, timeout=SIGNAL_TIMEOUT_MS)
    assert all(_bold_at(window, number) for number in range(0, last + 1, 2))
