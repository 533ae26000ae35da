"""Rewrite ▸ Show Changes (#48, app/rewrite/tracked_changes.py): a finished draft as tracked changes in the real
window, on the built-in model, with real key events; whatever mix of changes lands is one undo step."""

from __future__ import annotations

from dataclasses import replace

import pytest
from gui_helpers import DOCUMENT, right_click, select
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtTest import QTest
from test_rewrite import finish
from test_steering_window import keep

from app.window.editor_widget import Phase
from app.window.main_window import MainWindow
from app.window.theme import build_palette, canvas_colors, change_colors
from model.edit.changes import apply_changes, word_changes

CTRL, ALT, SHIFT = (
    Qt.KeyboardModifier.ControlModifier,
    Qt.KeyboardModifier.AltModifier,
    Qt.KeyboardModifier.ShiftModifier,
)
SENTENCE = "The lighthouse keeper climbed the stairs every evening."


def key(qtbot, window: MainWindow, pressed: Qt.Key, modifiers: Qt.KeyboardModifier) -> None:
    """A key as the writer presses it, in the text (window shortcuts reach the active window only)."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    QTest.keyClick(window.editor, pressed, modifiers)


def span_runs(window: MainWindow) -> list[tuple[str, QTextCharFormat]]:
    """The live span's text, run by run, with each run's format."""
    editor = window.editor
    start, end = editor.live_range()
    runs: list[tuple[str, QTextCharFormat]] = []
    cursor = QTextCursor(editor.document())
    for position in range(start, end):
        cursor.setPosition(position + 1)
        character_format = cursor.charFormat()  # the format of the character before the cursor
        character = editor.text_between(position, position + 1)
        if runs and runs[-1][1] == character_format:
            runs[-1] = (runs[-1][0] + character, character_format)
        else:
            runs.append((character, character_format))
    return runs


def rewritten(qtbot, document_window, candidates: int = 1) -> MainWindow:
    """The sentence rewritten by the built-in model keeping two of its words, so the draft has several changes."""
    window = document_window(model="builtin", candidates=candidates, max_denoising_steps=12)
    keep(qtbot, window, "lighthouse")
    keep(qtbot, window, "stairs")
    select(window, SENTENCE)
    key(qtbot, window, Qt.Key.Key_R, CTRL)
    finish(qtbot, window)
    return window


def test_show_changes_next_accept_one_reject_one_then_enter_lands_the_mix_as_one_undo_step(
    document_window, qtbot
) -> None:
    window = rewritten(qtbot, document_window)
    editor, tracked = window.editor, window.tracked_changes
    start, _ = editor.live_range()
    original = editor.live_span.original
    draft = window.run.result.texts[window.run.candidate]
    changes = word_changes(original, draft)
    assert len(changes) >= 2, (original, draft)

    key(qtbot, window, Qt.Key.Key_E, CTRL | SHIFT)  # Rewrite ▸ Show Changes
    assert tracked.show_action.isChecked() and tracked.active() is not None
    runs = span_runs(window)
    struck = "".join(text for text, f in runs if f.fontStrikeOut())
    underlined = "".join(text for text, f in runs if f.fontUnderline())
    assert struck == "".join(c.removed(original) for c in changes)
    assert underlined == "".join(c.text for c in changes)
    colors = change_colors(dark=False)
    assert all(f.foreground().color() == colors.removed for text, f in runs if f.fontStrikeOut())
    assert all(f.foreground().color() == colors.added for text, f in runs if f.fontUnderline())
    assert window.saved_text() == DOCUMENT  # the recovery record sees the original while the rewrite waits
    current = [text for text, f in runs if f.background().color() == colors.current]
    assert "".join(current) == changes[0].removed(original) + changes[0].text  # the first change is current

    key(qtbot, window, Qt.Key.Key_Right, ALT)  # Next Change
    review = tracked.active()
    assert review is not None and review.current == 1
    current = [text for text, f in span_runs(window) if f.background().color() == colors.current]
    assert "".join(current) == changes[1].removed(original) + changes[1].text

    key(qtbot, window, Qt.Key.Key_Return, ALT)  # Accept Change: the second change, then the next undecided one
    assert review.decisions[1] is True and review.current == (2 if len(changes) > 2 else 0)
    rejected = review.current
    key(qtbot, window, Qt.Key.Key_Delete, ALT)  # Reject Change
    assert review.decisions[rejected] is False
    # Only the undecided changes are still struck through and underlined; the decided ones show what lands.
    undecided = [c for c, decision in zip(changes, review.decisions, strict=True) if decision is None]
    runs = span_runs(window)
    assert "".join(text for text, f in runs if f.fontStrikeOut()) == "".join(c.removed(original) for c in undecided)
    assert "".join(text for text, f in runs if f.fontUnderline()) == "".join(c.text for c in undecided)
    assert editor.phase is Phase.REVIEW and editor.caret_at_span()

    key(qtbot, window, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier)  # Enter: the span as it stands
    mix = apply_changes(original, [c for i, c in enumerate(changes) if i != rejected])
    landed = DOCUMENT[:start] + mix + DOCUMENT[start + len(original) :]
    assert window.run is None and editor.live_span is None
    assert editor.plain_text() == landed and window.saved_text() == landed
    assert mix != draft and mix != original
    # Recorded in Versions (and so in the recovery record), named for the draft it came from.
    versions = [(v["label"], v["text"]) for track in window.versions_record() for v in track["versions"]]
    assert (f"Draft, {len(changes) - 1} of {len(changes)} changes", mix) in versions

    key(qtbot, window, Qt.Key.Key_Z, CTRL)  # one step back to the original, byte for byte
    assert editor.plain_text() == DOCUMENT
    key(qtbot, window, Qt.Key.Key_Z, CTRL | SHIFT)  # and one step forward to the mix, not to a view's paint
    assert editor.plain_text() == landed


def test_a_click_on_a_change_offers_accept_and_reject_and_esc_rejects_the_whole_rewrite(document_window, qtbot) -> None:
    window = rewritten(qtbot, document_window, candidates=2)
    editor, tracked = window.editor, window.tracked_changes
    tracked.show_action.trigger()
    review = tracked.active()
    assert review is not None and len(review.changes) >= 2
    # The drafts panel shows every finished draft's changes the same way.
    bodies = [card.body.text() for card in window.drafts_panel.cards if card.isVisible()]
    assert len(bodies) == 2 and all("line-through" in body or "underline" in body for body in bodies), bodies

    # Decisions belong to their draft: the other draft (Alt+Down) comes with its own changes, all undecided.
    key(qtbot, window, Qt.Key.Key_Delete, ALT)  # Reject Change: the span no longer stands as the draft
    assert window.run.decided is not None
    key(qtbot, window, Qt.Key.Key_Down, ALT)  # Next Candidate
    review = tracked.active()
    assert review is not None and review.candidate == window.run.candidate and window.run.decided is None
    assert review.draft == window.run.result.texts[window.run.candidate] and set(review.decisions) == {None}

    # A click inside the change with the longest words as painted.
    clicked = max(range(len(review.changes)), key=lambda i: review.where[i][1] - review.where[i][0])
    span_start, _ = editor.live_range()
    left, right = (QTextCursor(editor.document()) for _ in range(2))
    left.setPosition(span_start + review.where[clicked][0])
    right.setPosition(span_start + review.where[clicked][0] + 1)
    point = (editor.cursorRect(left).center() + editor.cursorRect(right).center()) / 2  # its first character
    QTest.mouseClick(editor.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
    menu = tracked.menu
    assert menu is not None and menu.isVisible()
    assert [a.text() for a in menu.actions()] == ["Acc&ept Change", "Reject C&hange"]
    assert review.current == clicked
    menu.actions()[1].trigger()  # Reject Change
    menu.close()
    assert review.decisions[clicked] is False

    # A right-click on another change: it becomes the current one, its own Accept and Reject above the draft's.
    other = next(i for i in range(len(review.changes)) if i != clicked)
    seen: list[str] = []
    current: list[int] = []

    def accept_change(menu) -> None:
        seen.extend(a.text().split("\t")[0] for a in menu.actions())
        current.append(review.current)
        menu.actions()[0].trigger()

    right_click(editor, span_start + review.where[other][0] + 1, accept_change)
    assert seen[:4] == ["Acc&ept Change", "Reject C&hange", "", "&Accept"], seen
    assert current == [other] and review.decisions[other] is True  # (then the next undecided one is current)

    # Dark: the view takes the dark theme's colours.
    window.apply_preferences(replace(window.prefs, theme="dark"))
    qtbot.waitUntil(lambda: any(f.fontStrikeOut() for _, f in span_runs(window)))
    dark = change_colors(dark=True)
    qtbot.waitUntil(
        lambda: all(f.foreground().color() == dark.removed for _, f in span_runs(window) if f.fontStrikeOut())
    )

    key(qtbot, window, Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier)  # the whole rewrite rejected
    assert editor.plain_text() == DOCUMENT and window.run is None and tracked.active() is None


def test_change_keys_with_nothing_to_decide_say_why_and_type_nothing(document_window, qtbot) -> None:
    window = document_window()
    window.editor.moveCursor(QTextCursor.MoveOperation.End)
    key(qtbot, window, Qt.Key.Key_Return, ALT)
    key(qtbot, window, Qt.Key.Key_Delete, ALT)
    assert window.editor.plain_text() == DOCUMENT
    assert "Show Changes" in window.statusBar().currentMessage()
    assert not window.tracked_changes.accept_action.isEnabled()
    texts = [a.text() for a in window.rewrite_menu.actions()]
    for text in ("Sh&ow Changes", "Ne&xt Change", "Previo&us Change", "Acc&ept Change", "Reject C&hange"):
        assert texts.count(text) == 1, texts
    assert QColor(change_colors(dark=False).removed) != QColor(change_colors(dark=True).removed)


def _luminance(color: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def _on(paper: QColor, tint: QColor) -> QColor:
    """``tint`` laid on ``paper`` at its alpha, as the screen shows it."""
    share = tint.alphaF()
    return QColor(*(round(a + (b - a) * share) for a, b in (
        (paper.red(), tint.red()), (paper.green(), tint.green()), (paper.blue(), tint.blue()))))  # fmt: skip


@pytest.mark.parametrize("dark", [False, True])
def test_removed_and_added_words_keep_a_4_5_contrast_wherever_they_show(dark: bool) -> None:
    changes, span = change_colors(dark), canvas_colors(dark)
    palette = build_palette(dark)
    text, panel = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Window)
    for ink in (changes.removed, changes.added):
        for background in (_on(text, span.review), _on(text, changes.current), panel):
            light, darker = sorted((_luminance(ink), _luminance(background)), reverse=True)
            assert (light + 0.05) / (darker + 0.05) >= 4.5, (dark, ink.name(), background.name())
