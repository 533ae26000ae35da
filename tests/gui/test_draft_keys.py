"""The drafts from the keyboard (app/window/panes.py, app/rewrite/drafts_panel.py): F6 goes round the text, the
Outline and the drafts waiting (Shift+F6 the other way), Up and Down put a draft in the text, Enter accepts it,
Ctrl+C copies it, Esc goes back, and a screen reader hears each draft's number, score and words. The real worker
thread and the real tiny model."""

from __future__ import annotations

from gui_helpers import DOCUMENT, SIGNAL_TIMEOUT_MS, PassRecorder, select
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu

from app.rewrite.drafts_panel import KEYS_HINT, STILL_DEVELOPING, shown_scores

SPAN = "climbed the stairs"
BOOK = "# One\n\n" + DOCUMENT + "\n# Two\n\nThe end.\n"


def _rewritten(document_window, qtbot, text: str = DOCUMENT, **overrides):
    window = document_window(text=text, candidates=3, max_denoising_steps=6, **overrides)
    window.activateWindow()
    window.editor.setFocus()
    select(window, SPAN)
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    return window


def _keys_on(window) -> int | None:
    """The listed draft the keys are on, if they are on one."""
    return next((index for index, card in enumerate(window.drafts_panel.cards) if card.hasFocus()), None)


def _in_span(window) -> str:
    return window.editor.text_between(*window.editor.live_range())


def test_f6_takes_the_keys_to_the_drafts_where_up_and_down_choose_and_esc_comes_back(document_window, qtbot) -> None:
    window = _rewritten(document_window, qtbot)
    editor, panel, bar = window.editor, window.drafts_panel, window.statusBar()
    result, order = window.run.result, panel.order
    assert not window.outline.isVisible() and panel.isVisible()  # the Outline hidden: F6 passes it by
    QTest.keyClick(editor, Qt.Key.Key_F6)
    assert _keys_on(window) == 0 and bar.currentMessage() == KEYS_HINT  # on the draft in the text: the best
    card = panel.cards[0]
    assert card.accessibleName() == f"Draft 1 of 3, score {shown_scores(result.scores)[order[0]]}, in the text"
    assert card.accessibleDescription() == result.texts[order[0]].strip()
    QTest.keyClick(card, Qt.Key.Key_Down)
    assert window.run.candidate == order[1] and _in_span(window) == result.texts[order[1]]
    assert _keys_on(window) == 1 and panel.cards[1].accessibleName().endswith(", in the text")
    QTest.keyClick(panel.cards[1], Qt.Key.Key_End)
    assert window.run.candidate == order[2] and _keys_on(window) == 2
    QTest.keyClick(panel.cards[2], Qt.Key.Key_Down)  # the last stays the last
    assert _keys_on(window) == 2
    QTest.keyClick(panel.cards[2], Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == result.texts[order[2]].strip()
    QTest.keyClick(panel.cards[2], Qt.Key.Key_Home)
    assert window.run.candidate == order[0] and _keys_on(window) == 0
    QTest.keyClick(panel.cards[0], Qt.Key.Key_Escape)  # back to the text; the draft still waits
    assert editor.hasFocus() and window.run is not None and window.run.candidate == order[0]
    assert bar.currentMessage() != KEYS_HINT  # the hint went with the keys
    QTest.keyClick(editor, Qt.Key.Key_F6)
    QTest.keyClick(panel.cards[0], Qt.Key.Key_F6)  # F6 on from the drafts: round to the text
    assert editor.hasFocus()
    # A click on a draft puts it in the text and leaves the keys there, as before.
    QTest.mouseClick(panel.cards[1], Qt.MouseButton.LeftButton)
    assert window.run.candidate == order[1] and editor.hasFocus() and _keys_on(window) is None


def test_enter_in_the_drafts_accepts_the_one_the_keys_are_on(document_window, qtbot) -> None:
    window = _rewritten(document_window, qtbot, text=BOOK)
    editor, panel = window.editor, window.drafts_panel
    result, order = window.run.result, panel.order
    QTest.keyClick(editor, Qt.Key.Key_F6)
    QTest.keyClick(panel.cards[0], Qt.Key.Key_Tab)  # Tab goes on to the next draft, as Down does
    assert _keys_on(window) == 1 and window.run.candidate == order[1]
    QTest.keyClick(panel.cards[1], Qt.Key.Key_Return)
    assert window.run is None and editor.hasFocus()  # accepted, and the keys back in the text
    before, after = BOOK.split(SPAN)
    assert editor.plain_text() == before + result.texts[order[1]] + after
    assert window.statusBar().currentMessage().startswith("Rewrite accepted")
    QTest.keyClick(editor, Qt.Key.Key_F6)  # no drafts wait now: F6 goes to the Outline, as it always did
    assert window.outline.isVisible() and window.outline.tree.hasFocus()
    window.undo()
    assert editor.plain_text() == BOOK  # one step


def test_f6_goes_round_the_text_the_outline_and_the_drafts_and_shift_f6_the_other_way(document_window, qtbot) -> None:
    window = _rewritten(document_window, qtbot, text=BOOK)
    window.outline.toggle_action.trigger()
    editor, tree = window.editor, window.outline.tree
    QTest.keyClick(editor, Qt.Key.Key_F6)
    assert tree.hasFocus() and tree.current_row() == 0  # the caret's heading, One
    QTest.keyClick(tree, Qt.Key.Key_F6)
    assert _keys_on(window) == 0
    QTest.keyClick(window.drafts_panel.cards[0], Qt.Key.Key_F6)
    assert editor.hasFocus()
    QTest.keyClick(editor, Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)  # backwards: the drafts first
    assert _keys_on(window) == 0
    QTest.keyClick(window.drafts_panel.cards[0], Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)
    assert tree.hasFocus()
    QTest.keyClick(tree, Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)
    assert editor.hasFocus()
    window.drafts_panel.toggle_action.trigger()  # a panel hidden is passed by
    QTest.keyClick(editor, Qt.Key.Key_F6)
    QTest.keyClick(tree, Qt.Key.Key_F6)
    assert editor.hasFocus() and window.run is not None


def test_the_keys_stay_on_the_draft_in_the_text_while_they_develop_and_are_ranked(document_window, qtbot) -> None:
    window = document_window(candidates=3, max_denoising_steps=60, pass_display_ms=50)
    window.activateWindow()
    editor, panel = window.editor, window.drafts_panel
    editor.setFocus()
    select(window, SPAN)
    recorder = PassRecorder(window)
    job = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(job) >= 2, timeout=SIGNAL_TIMEOUT_MS)
    QTest.keyClick(editor, Qt.Key.Key_F6)
    on = _keys_on(window)
    assert on is not None and window.run.result is None
    assert "% settled" in panel.cards[on].accessibleName()
    target = on + 1 if on < 2 else 0
    QTest.keyClick(panel.cards[on], Qt.Key.Key_Down if target else Qt.Key.Key_Home)
    assert window.run.pinned == panel.order[target] and _keys_on(window) == target  # the span follows it now
    QTest.keyClick(panel.cards[target], Qt.Key.Key_Return)
    assert window.run is not None and window.statusBar().currentMessage() == STILL_DEVELOPING
    qtbot.waitUntil(lambda: window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    # Ranked, the cards list the drafts anew: the keys are on the card of the one the text shows, wherever it is.
    assert window.run.candidate == panel.order[target] or window.run.candidate == window.run.pinned
    assert panel.order[_keys_on(window)] == window.run.candidate


def test_the_menu_key_opens_a_drafts_menu(document_window, qtbot) -> None:
    window = _rewritten(document_window, qtbot)
    QTest.keyClick(window.editor, Qt.Key.Key_F6)
    seen: list[list[str]] = []

    def read_and_close() -> None:
        menu = QApplication.activePopupWidget()
        if isinstance(menu, QMenu):
            seen.append([action.text() for action in menu.actions()])
            menu.close()

    QTimer.singleShot(200, read_and_close)
    QTest.keyClick(window.drafts_panel.cards[0], Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    assert seen == [["&Copy Draft"]]
    assert _keys_on(window) == 0  # the menu closed, the keys are where they were
