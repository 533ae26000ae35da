"""Steering a rewrite from the editor (#37, app/rewrite/steering.py): kept words, gaps in a selection, the length of a
rewrite and the tone presets; real worker thread, real models, keys as the writer presses them."""

from __future__ import annotations

import re

from gui_helpers import DOCUMENT, place_cursor, select
from PySide6.QtCore import Qt
from test_rewrite import finish

from app.rewrite.worker import EditJob
from app.window.main_window import DEMO_CANNOT_INSTRUCT, MainWindow

CTRL = Qt.KeyboardModifier.ControlModifier
SENTENCE = "The lighthouse keeper climbed the stairs every evening."


def underlined(window: MainWindow) -> list[str]:
    """The text under each kept-words underline the editor draws, in order."""
    marks = sorted(
        (s.cursor.selectionStart(), s.cursor.selectionEnd())
        for s in window.editor.extraSelections()
        if s.format.fontUnderline()
    )
    return [window.editor.text_between(start, end) for start, end in marks]


def press(qtbot, window: MainWindow, key: Qt.Key, modifiers: Qt.KeyboardModifier) -> None:
    """A shortcut as the writer presses it: Qt delivers window shortcuts to the active window only."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.editor, key, modifiers)


def keep(qtbot, window: MainWindow, needle: str | None = None) -> None:
    """Select ``needle`` (if given) and press Ctrl+K."""
    if needle is not None:
        select(window, needle)
    press(qtbot, window, Qt.Key.Key_K, CTRL)


def sent_jobs(window: MainWindow) -> list[EditJob]:
    """The edits the window hands the model thread, as they go."""
    jobs: list[EditJob] = []
    window.service._editRequested.connect(jobs.append)
    return jobs


def test_marking_and_unmarking_kept_words_changes_neither_text_nor_history(document_window, qtbot) -> None:
    window = document_window(wait_for_model=False)
    editor = window.editor
    document = editor.document()
    keep(qtbot, window, "ighthouse kee")  # a selection cut inside words keeps the whole words
    assert underlined(window) == ["lighthouse keeper"]
    assert "lighthouse keeper" in window.statusBar().currentMessage()
    keep(qtbot, window, "stairs")
    assert underlined(window) == ["lighthouse keeper", "stairs"]
    assert editor.plain_text() == DOCUMENT and not document.isModified()
    assert not document.isUndoAvailable() and not document.isRedoAvailable()  # marking is no edit

    keep(qtbot, window, "keeper")  # Ctrl+K again on marked words unmarks them
    assert underlined(window) == ["lighthouse", "stairs"]
    place_cursor(window, DOCUMENT.index("house"))  # a caret inside a mark unmarks all of it
    keep(qtbot, window)
    assert underlined(window) == ["stairs"]
    assert editor.plain_text() == DOCUMENT and not document.isUndoAvailable()

    # Marks move with edits; text typed at a mark's edge stays outside it; deleting its words drops it.
    place_cursor(window, 0)
    qtbot.keyClicks(editor, "Old ")
    place_cursor(window, editor.plain_text().index("stairs") + len("stairs"))
    qtbot.keyClicks(editor, "way")
    assert underlined(window) == ["stairs"] and "stairsway" in editor.plain_text()
    select(window, "stairsway")
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    assert underlined(window) == []
    assert window.steering.marks.ranges() == []


def test_a_rewrite_keeps_the_marked_words_verbatim(document_window, qtbot) -> None:
    window = document_window(model="builtin", candidates=2, max_denoising_steps=12)
    editor = window.editor
    keep(qtbot, window, "lighthouse")
    keep(qtbot, window, "stairs")
    jobs = sent_jobs(window)
    start, end = select(window, SENTENCE)
    window.rewrite_selection()
    assert jobs[-1].request.keep == ((4, 14), (34, 40))  # offsets inside the selection
    assert underlined(window) == []  # set aside while the span develops
    result = finish(qtbot, window)
    for text in result.texts:  # every draft, not only the one shown
        assert re.search("lighthouse.*stairs", text, re.DOTALL), text

    qtbot.keyClick(editor, Qt.Key.Key_Escape)  # rejected: the original comes back with its marks
    assert editor.plain_text() == DOCUMENT and underlined(window) == ["lighthouse", "stairs"]

    assert editor.textCursor().selectedText() == SENTENCE  # selected again, as after any Esc
    window.rewrite_selection()
    assert jobs[-1].request.keep == ((4, 14), (34, 40))
    result = finish(qtbot, window)
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # accepted: the marks have done their work
    new = editor.plain_text()
    # The sentence's full stop stays in the document, outside the live span (model/edit/shape.py).
    assert new == DOCUMENT[:start] + result.text + DOCUMENT[end - 1 :] and underlined(window) == []
    assert "lighthouse" in result.text and "stairs" in result.text
    window.undo()  # one step, however many passes
    assert editor.plain_text() == DOCUMENT


def test_keeping_every_word_is_refused_in_words_before_anything_changes(document_window, qtbot) -> None:
    window = document_window()
    keep(qtbot, window, "climbed the stairs")
    select(window, "climbed the stairs")
    assert window.rewrite_selection() is None
    message = window.message_bar.label.text()
    assert "every word of the selection is kept" in message and message.endswith("Your text is unchanged.")
    assert window.editor.plain_text() == DOCUMENT and window.editor.live_span is None
    assert underlined(window) == ["climbed the stairs"]


def test_fill_gaps_in_selection_leaves_the_text_outside_the_gaps_byte_for_byte(document_window, qtbot) -> None:
    text = "The keeper ___ the stairs, and [...] the lamp — ☕ at dusk.\nShe wrote the letter twice.\n"
    window = document_window(text=text, candidates=2)
    editor = window.editor
    gaps, fill = window.steering.gaps_action, window.fill_action
    select(window, "She wrote")
    assert not gaps.isEnabled() and "no gap marks" in gaps.toolTip()
    assert fill.isEnabled()
    sentence = text.split("\n")[0]
    select(window, sentence)  # str offsets are Qt's: no character here is outside the BMP
    assert gaps.isEnabled() and not fill.isEnabled() and "Ctrl+Shift+F" in fill.toolTip()
    jobs = sent_jobs(window)
    press(qtbot, window, Qt.Key.Key_F, CTRL | Qt.KeyboardModifier.ShiftModifier)  # its own shortcut
    assert jobs and jobs[-1].request.mode == "gaps"
    result = finish(qtbot, window)
    held = ("The keeper", " the stairs, and", " the lamp — ☕ at dusk.")  # a gap takes the space before it
    pattern = "(.*)".join(re.escape(piece) for piece in held)
    for draft in result.texts:
        assert re.fullmatch(pattern, draft, re.DOTALL), draft
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.plain_text() == result.text + text[len(sentence) :]
    assert window.statusBar().currentMessage() == "Fill accepted (Ctrl+Z undoes it)."
    window.undo()  # one step
    assert editor.plain_text() == text and not editor.document().isUndoAvailable()


def test_the_length_is_remembered_and_sent(document_window, settings_store, qtbot) -> None:
    window = document_window(candidates=1)
    lengths = window.steering.length_actions
    assert lengths["same"].isChecked() and window.prefs.rewrite_length == "same"
    lengths["shorter"].trigger()
    assert settings_store.load().rewrite_length == "shorter"
    lengths["longer"].trigger()  # one choice at a time
    assert [v for v, action in lengths.items() if action.isChecked()] == ["longer"]
    assert settings_store.load().rewrite_length == "longer"

    jobs = sent_jobs(window)
    written = {}
    for value in ("longer", "shorter"):
        lengths[value].trigger()
        select(window, "She wrote the letter twice, then walked to the harbour instead.")
        window.rewrite_selection()
        written[value] = finish(qtbot, window)
        assert jobs[-1].request.length == value
        qtbot.keyClick(window.editor, Qt.Key.Key_Escape)
    # A random-weight model writes (nearly) every slot it is offered: 0.6x against 1.5x of the span's.
    assert len(written["shorter"].token_ids[0]) < len(written["longer"].token_ids[0])

    again = MainWindow(settings_store)  # a fresh start reads the choice back
    qtbot.addWidget(again)
    assert again.steering.length_actions["shorter"].isChecked()
    again.service.shutdown()


def test_tone_presets_are_shown_off_on_the_builtin_model_with_the_reason(make_window, qtbot) -> None:
    window = make_window(model="builtin")
    window.editor.setPlainText(DOCUMENT)
    select(window, SENTENCE)
    tones = window.steering.tone_menu.actions()
    assert [a.text() for a in tones] == [
        "&Simpler",
        "More &formal",
        "More &casual",
        "More &vivid",
        "S&horter",
        "Fix &grammar",
    ]
    for action in tones:
        assert not action.isEnabled() and action.toolTip() == DEMO_CANNOT_INSTRUCT
    assert not window.instruct_action.isEnabled()
    assert window.rewrite_action.isEnabled() and window.steering.keep_action.isEnabled()


def test_the_shortcuts_page_lists_the_steering_actions(make_window) -> None:
    window = make_window(wait_for_model=False)
    text = window.show_shortcuts().browser.toPlainText()
    rows = [row.strip() for row in text.splitlines()]
    keys = {name: rows[rows.index(name) + 1] for name in ("Keep Words", "Fill Gaps in Selection", "Fill Gap at Cursor")}
    assert keys == {
        "Keep Words": "Ctrl+K",
        "Fill Gaps in Selection": "Ctrl+Shift+F",
        "Fill Gap at Cursor": "Ctrl+Shift+G",
    }
