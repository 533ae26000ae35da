"""A writer's keys and words go where the writer means around a rewrite (#46): the real window, the real tiny
model and real key events (QTest.keyClick), one test per way the trial saw them misplaced or lost."""

from __future__ import annotations

from gui_helpers import DOCUMENT, SIGNAL_TIMEOUT_MS, PassRecorder, place_cursor, right_click, select
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QContextMenuEvent, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox
from test_rewrite import finish

from app.window.action_states import span_locked
from app.window.editor_widget import Phase
from app.window.headings import headings

SPAN = "climbed the stairs"
CTRL = Qt.KeyboardModifier.ControlModifier


def _draft_waiting(document_window, qtbot, text: str = DOCUMENT):
    """A window holding ``text`` whose SPAN was rewritten, its drafts finished and waiting; the window, the result
    and the rewrite's job id."""
    window = document_window(text)
    select(window, SPAN)
    job_id = window.rewrite_selection()
    return window, finish(qtbot, window), job_id


def test_enter_typed_elsewhere_is_a_new_line_and_the_draft_stays_pending(document_window, qtbot) -> None:
    window, result, _job = _draft_waiting(document_window, qtbot)
    editor = window.editor
    draft = result.texts[window.run.candidate]
    place_cursor(window, editor.end_position())  # the writer goes on at the end of the document
    QTest.keyClicks(editor, "Then she ran.")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    QTest.keyClicks(editor, "P.S.")
    assert window.run is not None and editor.phase is Phase.REVIEW  # still pending, still shown
    assert editor.plain_text().endswith("Then she ran.\nP.S.")  # typed where the caret was, line and all
    assert draft in editor.plain_text()
    assert window.saved_text() == DOCUMENT + "Then she ran.\nP.S."
    # Enter at the draft accepts it; the writer's typing and the rewrite are separate undo steps.
    start, end = editor.live_range()
    place_cursor(window, end)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert window.run is None and editor.phase is Phase.IDLE
    accepted = editor.plain_text()
    assert draft in accepted and accepted.endswith("Then she ran.\nP.S.")
    QTest.keyClick(editor, Qt.Key.Key_Z, CTRL)
    assert editor.plain_text() == DOCUMENT + "Then she ran.\nP.S."  # the rewrite alone undone
    # Then the writer's own typing, in the steps Qt gives typing with no rewrite about (words, not letters:
    # each keystroke lifts and repaints the draft, which used to make every letter a step of its own).
    for expected in ("Then she ran.\n", "Then she ran.", ""):
        QTest.keyClick(editor, Qt.Key.Key_Z, CTRL)
        assert editor.plain_text() == DOCUMENT + expected


def test_tab_away_from_the_draft_types_a_tab_and_accepts_nothing(document_window, qtbot) -> None:
    window = document_window()
    editor = window.editor
    select(window, SPAN)
    window.rewrite_selection()
    finish(qtbot, window)
    place_cursor(window, 0)
    QTest.keyClick(editor, Qt.Key.Key_Tab)
    assert window.run is not None and editor.plain_text().startswith("\tThe lighthouse")


def test_a_second_ctrl_r_on_the_developing_span_restarts_it(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=40, pass_display_ms=60)
    editor = window.editor
    select(window, SPAN)
    recorder = PassRecorder(window)
    first = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(first) >= 1, timeout=SIGNAL_TIMEOUT_MS)
    QTest.keyClick(editor, Qt.Key.Key_R, CTRL)
    assert window.run is not None and window.run.job_id != first  # a new run of the same span
    assert "Select the text" not in window.statusBar().currentMessage()
    finish(qtbot, window)
    assert window.drafts_panel.job_id == window.run.job_id  # the panel follows the new run, not frozen
    window.reject_rewrite()
    assert editor.plain_text() == DOCUMENT


def test_ctrl_r_away_from_an_open_rewrite_keeps_it_and_says_why(document_window, qtbot) -> None:
    window, result, job_id = _draft_waiting(document_window, qtbot)
    editor = window.editor
    select(window, "wrote the letter")
    QTest.keyClick(editor, Qt.Key.Key_R, CTRL)
    assert window.run is not None and window.run.job_id == job_id and window.run.result is result
    assert "accept" in window.statusBar().currentMessage()


def test_closing_mid_rewrite_and_choosing_cancel_changes_nothing(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=40, pass_display_ms=60)
    editor = window.editor
    place_cursor(window, editor.end_position())
    QTest.keyClicks(editor, "More.")  # unsaved: closing asks
    select(window, SPAN)
    recorder = PassRecorder(window)
    job_id = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(job_id) >= 1, timeout=SIGNAL_TIMEOUT_MS)
    asked: list[str] = []

    def answer_cancel() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            asked.append(box.text())
            QTest.keyClick(box, Qt.Key.Key_Escape)  # Esc is the box's Cancel
        else:
            QTimer.singleShot(50, answer_cancel)

    QTimer.singleShot(50, answer_cancel)
    assert window.close() is False
    assert asked and "unsaved changes" in asked[0]
    assert window.run is not None and window.run.job_id == job_id and editor.live_span is not None
    result = finish(qtbot, window)  # it went on to the end
    assert result.texts and "Developing" not in window.statusBar().currentMessage()
    window.reject_rewrite()
    assert editor.plain_text() == DOCUMENT + "More."


def test_closing_mid_rewrite_without_changes_asks_nothing(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=40, pass_display_ms=60)
    select(window, SPAN)
    recorder = PassRecorder(window)
    job_id = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(job_id) >= 1, timeout=SIGNAL_TIMEOUT_MS)
    assert window.editor.document().isModified()  # the passes are painted in ...
    assert window.close() is True  # ... but the writer's text is unchanged: no question
    assert window.editor.plain_text() == DOCUMENT


def test_a_click_on_a_draft_gives_the_keyboard_back_to_the_text(document_window, qtbot) -> None:
    window = document_window(candidates=3)
    editor = window.editor
    window.activateWindow()
    editor.setFocus()
    select(window, SPAN)
    window.rewrite_selection()
    finish(qtbot, window)
    panel = window.drafts_panel
    qtbot.waitUntil(lambda: len(panel.order) == 3, timeout=SIGNAL_TIMEOUT_MS)
    card = next(card for card in panel.cards if card.candidate == panel.order[2])
    QTest.mouseClick(card, Qt.MouseButton.LeftButton)
    assert window.run is not None and window.run.candidate == panel.order[2]
    assert editor.hasFocus() or QApplication.focusWidget() is editor
    QTest.keyClick(QApplication.focusWidget() or editor, Qt.Key.Key_Escape)  # Esc reaches the text: rejects
    assert window.run is None and editor.plain_text() == DOCUMENT
    QTest.keyClicks(QApplication.focusWidget() or editor, "typed")
    assert "typed" in editor.plain_text()


def test_a_fill_after_the_last_sentence_continues_its_paragraph(document_window, qtbot) -> None:
    window = document_window(candidates=2)
    editor = window.editor
    end_of_first = DOCUMENT.index("\n")  # right after "every evening."
    place_cursor(window, end_of_first)
    window.fill_gap(8)
    result = finish(qtbot, window)
    QTest.keyClick(editor, Qt.Key.Key_Return)  # the caret sits at the fill: Enter accepts
    text = editor.plain_text()
    filled = text[end_of_first : len(text) - (len(DOCUMENT) - end_of_first)]
    assert filled == result.texts[result.ranking[0]] or filled in result.texts
    assert filled.startswith(" ") and not filled.startswith("  ") and "\n" not in filled, repr(filled)
    assert text.endswith(DOCUMENT[end_of_first:])  # the paragraph break and the next paragraph untouched


def test_the_right_click_menus_undo_and_redo_are_the_edit_menus(document_window, qtbot) -> None:
    window = document_window()
    editor = window.editor
    start, _ = select(window, SPAN)
    window.rewrite_selection()
    finish(qtbot, window)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert window.run is None and editor.plain_text() != DOCUMENT
    window.redo_action.setShortcut("Ctrl+Shift+Z")  # a platform whose Redo keys Qt lists otherwise
    labels: list[str] = []

    def in_menu() -> None:
        menu = QApplication.activePopupWidget()
        labels.extend(action.text() for action in menu.actions())
        next(action for action in menu.actions() if action.objectName() == "edit-undo").trigger()
        menu.close()

    QTimer.singleShot(0, in_menu)
    place = editor.cursorRect().center()
    editor.contextMenuEvent(QContextMenuEvent(QContextMenuEvent.Reason.Mouse, place, editor.mapToGlobal(place)))
    keys = QKeySequence.SequenceFormat.NativeText
    assert f"&Redo\t{window.redo_action.shortcut().toString(keys)}" in labels
    assert f"&Undo\t{window.undo_action.shortcut().toString(keys)}" in labels
    # Undone as Edit ▸ Undo does it: the original back, the caret where the text changed, not at the top.
    assert editor.plain_text() == DOCUMENT
    assert editor.textCursor().position() >= start


def test_focus_mode_leaves_the_text_alone_and_every_key_still_works(document_window, qtbot) -> None:
    window = document_window()
    editor = window.editor
    chrome = (window.menuBar(), window.toolbar, window.drafts_panel)
    assert all(widget.isVisible() for widget in chrome)
    QTest.keyClick(editor, Qt.Key.Key_F11)
    assert window.focus_mode.on and window.isFullScreen()
    assert not any(widget.isVisible() for widget in chrome)
    assert window.statusBar().isVisible() and "F11" in window.statusBar().currentMessage()
    # The menus' keys work with the menu bar out of sight; Esc rejects the rewrite and stays in focus mode.
    select(window, SPAN)
    QTest.keyClick(editor, Qt.Key.Key_R, CTRL)
    finish(qtbot, window)
    QTest.keyClick(editor, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)  # a draft chosen with its panel hidden
    assert window.run.candidate == window.run.result.ranking[1]
    QTest.keyClick(editor, Qt.Key.Key_Escape)
    assert window.run is None and editor.plain_text() == DOCUMENT and window.focus_mode.on
    QTest.keyClick(editor, Qt.Key.Key_Escape)  # no rewrite open: Esc leaves, and everything is back
    assert not window.focus_mode.on and not window.isFullScreen()
    assert all(widget.isVisible() for widget in chrome) and window.prefs.drafts_panel
    # A panel the writer had closed stays closed after focus mode.
    window.drafts_panel.toggle_action.trigger()
    QTest.keyClick(editor, Qt.Key.Key_F11)
    assert window.statusBar().currentMessage().startswith("Focus mode: ")
    QTest.keyClick(editor, Qt.Key.Key_F11)
    assert window.statusBar().currentMessage() == ""  # how to leave it, said no longer once it is left
    assert not window.focus_mode.on and window.menuBar().isVisible() and not window.drafts_panel.isVisible()


def test_the_window_opens_where_and_as_large_as_it_was_left_never_full_screen(make_window, qtbot) -> None:
    window = make_window()
    window.resize(703, 511)
    qtbot.waitUntil(lambda: window.size().toTuple() == (703, 511))
    window.focus_mode.action.setChecked(True)  # closed in Focus Mode
    assert window.isFullScreen()
    window.close()
    again = make_window()  # the writer's next start: the same settings file
    assert again.prefs.window_geometry and again.size().toTuple() == (703, 511)
    assert not again.isFullScreen() and not again.focus_mode.on and again.menuBar().isVisible()


def test_go_to_heading_narrows_the_list_as_the_writer_types_and_jumps(document_window, qtbot) -> None:
    body = "A paragraph of the story that goes on for a while.\n\n" * 40
    text = f"# The Lighthouse 🗼\n\n{body}## Part one\n\n{body}```\n# not a heading\n```\n\n## Part two\n\n{body}"
    assert [(h.level, h.title) for h in headings(text, markdown=True)] == [
        (1, "The Lighthouse 🗼"), (2, "Part one"), (2, "Part two"),
    ]  # fmt: skip
    plain = "CHAPTER I. Down the Rabbit-Hole\n\nAlice was beginning.\n\nCHAPTER II. The Pool of Tears\n"
    assert [h.title for h in headings(plain, markdown=False)] == ["CHAPTER I. Down the Rabbit-Hole",
                                                                   "CHAPTER II. The Pool of Tears"]  # fmt: skip
    assert headings(plain, markdown=True) == [] and headings(text, markdown=False) == []
    window = document_window(text)  # untitled: Markdown
    editor = window.editor
    QTest.keyClick(editor, Qt.Key.Key_O, CTRL | Qt.KeyboardModifier.ShiftModifier)
    popup = window.go_to_heading.popup
    assert popup is not None and popup.isVisible() and popup.list.count() == 3
    tall = popup.height()
    QTest.keyClicks(popup.filter, "two")
    assert [popup.list.item(row).isHidden() for row in range(3)] == [True, True, False]
    assert popup.height() < tall  # as tall as the one heading it shows
    QTest.keyClick(popup.filter, Qt.Key.Key_Return)
    assert not popup.isVisible() and editor.hasFocus()
    block = editor.textCursor().block()
    assert block.text() == "## Part two" and editor.textCursor().positionInBlock() == 0  # after an emoji: UTF-16
    assert editor.viewport().rect().contains(editor.cursorRect())  # in view
    # A document without headings says so.
    window.editor.setPlainText("Just a paragraph.")
    window.go_to_heading.action.trigger()
    assert "No headings here" in window.statusBar().currentMessage()


def test_a_key_typed_into_the_developing_span_or_at_its_edge_says_why_and_the_passes_leave_that_on_show(
    document_window, qtbot
) -> None:
    """Each pass's progress took the status bar within 60 ms of the refusal, so the writer never read it."""
    window = document_window(max_denoising_steps=64, pass_display_ms=150)
    editor = window.editor
    select(window, SPAN)
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.passes > 0, timeout=SIGNAL_TIMEOUT_MS)
    locked = span_locked(Phase.DEVELOPING)
    # Where Ctrl+R leaves the caret, the span's end: a letter or Enter there would join the developing words
    # (before the stairs' " every evening." it went between them and the text after).
    for key in ("x", "\r"):
        QTest.keyClicks(editor, key)
        assert window.statusBar().currentMessage() == locked
    start, end = editor.live_range()
    assert editor.plain_text()[end:].startswith(" every evening.")
    place_cursor(window, start + 2)
    QTest.keyClicks(editor, "x")
    assert window.statusBar().currentMessage() == locked
    passes = window.run.passes
    qtbot.wait(600)
    assert window.run.passes > passes and window.statusBar().currentMessage() == locked
    window.cancel_rewrite()
    assert editor.plain_text() == DOCUMENT


def test_a_letter_at_a_waiting_drafts_edge_is_refused_and_enter_there_still_accepts(document_window, qtbot) -> None:
    window, result, _job = _draft_waiting(document_window, qtbot)
    editor = window.editor
    draft = result.texts[window.run.candidate]
    shown = editor.plain_text()
    start, end = editor.live_range()
    for edge in (start, end):
        place_cursor(window, edge)
        QTest.keyClicks(editor, "x")
        assert editor.plain_text() == shown  # not "xclimbed" nor "stairsx every evening"
        assert window.statusBar().currentMessage() == span_locked(Phase.REVIEW) == (
            "That draft is waiting: Enter accepts it, Esc rejects it; then it is yours to edit."
        )
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert window.run is None and draft in editor.plain_text()


def test_a_right_click_while_a_draft_waits_offers_its_keys_and_the_edit_menu_reaching_past_it_only(
    document_window, qtbot
) -> None:
    text = "The lighthouse keeper climbed the stairs every evening.\nShe wrote the lettr twice, then walked.\n"
    window, _result, _job = _draft_waiting(document_window, qtbot, text)
    editor = window.editor
    start, end = editor.live_range()
    draft = editor.text_between(start, end)
    seen: dict[str, list[str]] = {}

    def read(name: str):
        return lambda menu: seen.setdefault(name, [a.text().split("\t")[0] for a in menu.actions()])

    # Every line read as one misspelled word: the draft's words would be offered "mended" but for the span's lock.
    window.spelling.misspellings = lambda text, _at, hold_typed=True: [(0, len(text))]
    right_click(editor, start + 2, read("in the draft"))
    assert seen["in the draft"][:5] == ["&Accept", "Re&ject", "Re&generate", "&Previous Candidate", "&Next Candidate"]
    assert "Cu&t" in seen["in the draft"] and "&Copy" in seen["in the draft"]
    assert not {"&Undo", "&Redo", "Delete"} & set(seen["in the draft"])  # they would reach past the draft's lock
    assert not any(entry.startswith(("Add “", "Words That Fit")) for entry in seen["in the draft"])  # the model's yet
    misspelled = editor.plain_text().index("lettr") + 2
    right_click(editor, misspelled, read("elsewhere"))
    assert any(entry.startswith("Add “She wrote") for entry in seen["elsewhere"])  # beyond the draft, as ever

    def accept_from_menu(menu) -> None:
        next(a for a in menu.actions() if a.text().startswith("&Accept")).trigger()

    editor.select_range(start, start + 3)  # the draft's first letters selected: Cut refuses them
    right_click(editor, start + 1, lambda menu: next(a for a in menu.actions() if a.objectName() == "edit-cut")
                 .trigger())  # fmt: skip
    assert editor.text_between(start, end) == draft and window.run is not None
    right_click(editor, start + 1, accept_from_menu)
    assert window.run is None and editor.plain_text() == text.replace(SPAN, draft, 1)
