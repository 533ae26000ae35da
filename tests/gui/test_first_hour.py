"""A writer's first hour with the main window (issue #36): what they see, and that every dead end says why.

Real window, real worker thread, real models: the tiny random one, or the built-in demo model where what
is on screen depends on a real vocabulary (its noise, its name).
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from gui_helpers import DOCUMENT, SIGNAL_TIMEOUT_MS, PassRecorder, place_cursor, select
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QColor, QGuiApplication, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QLabel, QToolBar

from app.rewrite.worker import NOISE_WIDTH, Ink, _FrameBuilder
from app.window.main_window import MainWindow
from model import Pass

SPAN = "climbed the stairs"


def finish(qtbot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)


# -- 4: a fresh window has nothing to save ------------------------------------------------------------


def test_a_fresh_window_is_unmodified_and_closes_without_asking(make_window) -> None:
    window = make_window(wait_for_model=False)
    assert not window.editor.document().isModified()
    assert not window.isWindowModified()  # no "Untitled*"
    assert window.maybe_save()  # True at once: no "save your changes?" box (it would block this test)


# -- 5: the Fill popup stays on the screen ----------------------------------------------------------


def test_fill_popup_near_a_lines_end_stays_inside_the_screen(document_window, qtbot) -> None:
    window = document_window()
    area = QGuiApplication.primaryScreen().availableGeometry()
    place_cursor(window, DOCUMENT.index("\n"))  # the end of the first line

    def caret() -> QPoint:
        return window.editor.viewport().mapToGlobal(window.editor.cursorRect().bottomLeft())

    window.move(window.x() + area.right() - 40 - caret().x(), area.top())  # that line ends near the edge
    qtbot.waitUntil(lambda: abs(caret().x() - (area.right() - 40)) < 5)
    window.show_fill_popup()
    popup = window.fill_popup
    assert caret().x() + popup.width() > area.right()  # placed at the caret, part of it would be off screen
    frame = popup.frameGeometry()
    assert area.contains(frame.topLeft()) and area.contains(frame.bottomRight()), (frame, area)
    popup.close()


# -- 7: the notice bar ----------------------------------------------------------------------------


def test_a_load_error_banner_goes_once_a_model_loads(make_window, tiny_checkpoint, qtbot, tmp_path) -> None:
    window = make_window(wait_for_model=False, model=str(tmp_path / "no-such-model"))
    qtbot.waitUntil(window.message_bar.isVisible, timeout=SIGNAL_TIMEOUT_MS)
    assert "could not load the model" in window.message_bar.label.text()
    window.apply_preferences(replace(window.prefs, model=str(tiny_checkpoint)))
    qtbot.waitUntil(lambda: window.model_info is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert not window.message_bar.isVisible()


def test_a_notice_about_something_else_stays_after_a_load(make_window, qtbot) -> None:
    window = make_window()
    window.message_bar.show_message("The file is read-only; use Save As.")
    window.load_model()
    qtbot.waitUntil(lambda: window.model_info is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert window.message_bar.isVisible()  # only the condition a notice reports clears it


def _luminance(color: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def _contrast(first: QColor, second: QColor) -> float:
    light, dark = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _glyph_contrast(image: QImage) -> float:
    """The contrast between the commonest colour (the background) and the colour furthest from it."""
    counts: dict[int, int] = {}
    for y in range(image.height()):
        for x in range(image.width()):
            rgb = image.pixel(x, y) & 0xFFFFFF
            counts[rgb] = counts.get(rgb, 0) + 1
    background = QColor(max(counts, key=lambda rgb: counts[rgb]))
    return max(_contrast(background, QColor(rgb)) for rgb in counts)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_notice_bars_close_button_is_clearly_visible(make_window, qtbot, theme: str) -> None:
    window = make_window(wait_for_model=False)
    window.apply_preferences(replace(window.prefs, theme=theme))
    bar = window.message_bar
    bar.show_message("could not load the model: something")
    qtbot.waitUntil(bar.isVisible)
    button = bar.close_button
    image = bar.grab(button.geometry()).toImage()
    assert _glyph_contrast(image) >= 4.5  # WCAG AA for text
    window.apply_preferences(replace(window.prefs, theme="light"))


# -- 8: Fill Gap without a model, and what an accepted fill says ----------------------------------------


def test_fill_gap_without_a_model_is_off_and_its_shortcut_says_why(make_window, qtbot, tmp_path) -> None:
    window = make_window(wait_for_model=False, model=str(tmp_path / "no-such-model"))
    qtbot.waitUntil(window.message_bar.isVisible, timeout=SIGNAL_TIMEOUT_MS)
    assert not window.fill_action.isEnabled()
    assert "No model is loaded" in window.fill_action.toolTip()
    qtbot.keyClick(window.editor, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert "No model is loaded" in window.statusBar().currentMessage()
    assert window.run is None and "G" not in window.editor.plain_text()


def test_an_accepted_fill_says_fill_and_undo_replaces_the_message(document_window, qtbot) -> None:
    window = document_window(candidates=1)
    place_cursor(window, DOCUMENT.index(" every evening"))
    window.fill_gap(6)
    finish(qtbot, window)
    window.accept_rewrite()
    assert window.statusBar().currentMessage() == "Fill accepted (Ctrl+Z undoes it)."
    qtbot.keyClick(window.editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.editor.plain_text() == DOCUMENT
    message = window.statusBar().currentMessage()
    assert "accepted" not in message and message == "Fill undone; the original is back."


def test_typing_after_an_accept_drops_the_undo_hint(document_window, qtbot) -> None:
    window = document_window(candidates=1)
    select(window, SPAN)
    window.rewrite_selection()
    finish(qtbot, window)
    window.accept_rewrite()
    assert window.statusBar().currentMessage() == "Rewrite accepted (Ctrl+Z undoes it)."
    qtbot.keyClicks(window.editor, "x")
    assert window.statusBar().currentMessage() == ""


# -- 9: every action that cannot run says why -------------------------------------------------------


def test_ctrl_r_with_nothing_selected_says_to_select(document_window, qtbot) -> None:
    window = document_window()
    place_cursor(window, 5)
    assert not window.rewrite_action.isEnabled()
    qtbot.keyClick(window.editor, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    assert window.statusBar().currentMessage() == "Select some text to rewrite first."
    assert window.editor.plain_text() == DOCUMENT and window.run is None


def test_ctrl_i_with_the_demo_model_says_it_does_not_follow_instructions(make_window, qtbot) -> None:
    window = make_window(model="builtin")
    window.editor.setPlainText(DOCUMENT)
    select(window, SPAN)
    assert window.model_label.text().startswith("Demo model")  # the status bar names it plainly
    assert not window.instruct_action.isEnabled()
    qtbot.keyClick(window.editor, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier)
    message = window.statusBar().currentMessage()
    assert "demo model does not follow instructions" in message and "Settings ▸ Model" in message
    assert window.welcome is None  # the welcome never shows unless asked for (offer_welcome)


def test_regenerate_with_nothing_to_regenerate_says_why(document_window, qtbot) -> None:
    window = document_window()
    qtbot.keyClick(window.editor, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert "Nothing to regenerate" in window.statusBar().currentMessage()


# -- 10: a visible Cancel, and how far along it is ---------------------------------------------------


def test_a_developing_rewrite_shows_cancel_its_pass_and_the_time_left(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=40, pass_display_ms=40, candidates=1)
    select(window, SPAN)
    recorder = PassRecorder(window)
    assert not window.cancel_button.isVisible()
    job_id = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(job_id) >= 6, timeout=SIGNAL_TIMEOUT_MS)
    assert window.cancel_button.isVisible() and window.cancel_action.isEnabled()
    toolbar = window.findChild(QToolBar, "rewriteToolbar")
    assert toolbar is not None and window.cancel_action in toolbar.actions()
    message = window.statusBar().currentMessage()
    found = re.search(r"pass (\d+) of at most (\d+) · about (\d+) s left", message)
    assert found, message
    assert int(found[2]) >= 40  # the steps asked for (polish rounds come on top)
    qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
    assert window.run is None and window.editor.plain_text() == DOCUMENT
    assert not window.cancel_button.isVisible() and not window.cancel_action.isEnabled()


# -- 11: the noise ----------------------------------------------------------------------------------


def test_noise_is_printable_and_about_as_long_as_the_text(document_window, qtbot) -> None:
    sentence = "She wrote the letter twice, then walked to the harbour instead."
    window = document_window(model="builtin", candidates=1, max_denoising_steps=12)
    select(window, sentence)
    lengths: list[int] = []
    noise: list[str] = []

    def check(_job_id: int, painted) -> None:
        segments = painted.frames[painted.shown]
        noise.extend(segment.text for segment in segments if segment.ink is Ink.NOISE)
        lengths.append(sum(len(segment.text) for segment in segments))

    recorder = PassRecorder(window, check)
    window.rewrite_selection()
    finish(qtbot, window)
    assert recorder.passes and noise
    for text in noise:
        assert "\ufffd" not in text and "░" not in text and text.isprintable(), repr(text)
        assert len(text) <= NOISE_WIDTH
    assert lengths[0] <= 1.25 * len(sentence), (lengths[0], len(sentence))  # no line jump from the noise


def test_the_word_count_ignores_the_developing_noise(document_window, qtbot) -> None:
    window = document_window(candidates=2, max_denoising_steps=10)
    select(window, SPAN)
    expected = f"{len(DOCUMENT.split())} words · {len(DOCUMENT):,} characters"
    counted: list[str] = []

    def check(_job_id: int, _painted) -> None:
        window._update_counts()  # what the status bar's timer does 150 ms after each change
        counted.append(window.counts_label.text())

    recorder = PassRecorder(window, check)
    window.rewrite_selection()
    finish(qtbot, window)
    assert recorder.passes and set(counted) == {expected}


class CountedStarts(QTimer):
    """The status bar's count timer, counting what starts it."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.setSingleShot(True)
        self.setInterval(150)
        self.timeout.connect(window._update_counts)
        self.starts = 0

    def start(self, *args) -> None:
        self.starts += 1
        super().start(*args)


def test_passes_start_no_count_and_the_writers_edits_and_the_accepted_draft_do(
    document_window, qtbot, monkeypatch
) -> None:
    """A long book's count at every pass stalled the window 60-100 ms a pass: a pass changes no counted word."""
    window = document_window(candidates=1, max_denoising_steps=10)
    timer = CountedStarts(window)
    monkeypatch.setattr(window, "_count_timer", timer)
    select(window, SPAN)
    starts: list[int] = []
    recorder = PassRecorder(window, lambda _job, _painted: starts.append(timer.starts))
    window.rewrite_selection()
    finish(qtbot, window)
    assert len(recorder.passes) >= 3 and len(set(starts)) == 1  # none between the first pass and the last
    place_cursor(window, len(window.editor.plain_text()))
    qtbot.keyClicks(window.editor, " Then")  # the writer's words elsewhere, the draft still waiting
    assert timer.starts >= starts[-1] + 5
    qtbot.waitUntil(lambda: window.counts_label.text().startswith(f"{len(DOCUMENT.split()) + 1} words"))
    before = timer.starts
    window.accept_rewrite()
    assert timer.starts > before
    accepted = len(window.editor.plain_text().split())
    qtbot.waitUntil(lambda: window.counts_label.text().startswith(f"{accepted} word"), timeout=SIGNAL_TIMEOUT_MS)


def test_the_veil_differs_from_one_request_to_the_next() -> None:
    # A veil covers a server's drafts while its request runs (local drafts show live, app/rewrite/drafts.py):
    # the same waiting pass veils differently for two requests (the job is the salt).
    waiting = Pass(step=0, block=0, blocks=1, tokens=[[5] * 6] * 2, accepted=[[False] * 6] * 2,
                   entropy=[[0.0] * 6] * 2, pieces=[["x"] * 6] * 2, committed=["", ""], finished=[False, False],
                   ms=1.0, waiting=True)  # fmt: skip
    veils = [
        _FrameBuilder(set(), lambda ids: "".join(chr(97 + i % 26) for i in ids), 500, salt=job).veil(waiting, 1)
        for job in (1, 2)
    ]
    assert all(veil.veiled and veil.frames[0][0].ink is Ink.NOISE for veil in veils)
    assert veils[0].frames != veils[1].frames


# -- 13: a device that is not there ----------------------------------------------------------------


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a CUDA GPU")
def test_cuda_without_a_gpu_says_so_in_words_and_keeps_the_traceback_for_the_log(
    make_window, qtbot, caplog
) -> None:
    caplog.set_level(logging.DEBUG, logger="app")
    window = make_window(wait_for_model=False, device="cuda")
    qtbot.waitUntil(window.message_bar.isVisible, timeout=SIGNAL_TIMEOUT_MS)
    assert "could not load the model" in window.message_bar.label.text()
    failures = [record for record in caplog.records if record.name == "app.rewrite.worker"]
    assert failures and all(record.exc_info for record in failures)  # the detail, for the log file
    assert all(record.levelno < logging.WARNING for record in failures)  # nothing Python prints on stderr


def test_the_editors_log_file_holds_the_detail(monkeypatch, tmp_path: Path) -> None:
    from app.gui import log_to_file

    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path))
    handler = log_to_file()
    assert handler is not None
    try:
        try:
            raise RuntimeError("no CUDA GPU here")
        except RuntimeError:
            logging.getLogger("app.rewrite.worker").info("loading the model failed", exc_info=True)
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    text = (tmp_path / "logs" / "redraft.log").read_text(encoding="utf-8")
    assert "loading the model failed" in text and "Traceback" in text and "no CUDA GPU here" in text


# -- the Deliver list: the welcome, words not tokens, the Help menu -----------------------------------


def _close_modal_settings() -> None:
    dialog = QApplication.activeModalWidget()
    assert isinstance(dialog, QDialog) and dialog.windowTitle() == "Settings"
    dialog.reject()


def test_the_welcome_shows_once_and_opens_settings(make_window, qtbot, settings_store) -> None:
    window = make_window(wait_for_model=False, model="builtin")
    assert window.welcome is None  # never on its own: app.gui asks for it at start-up
    welcome = window.offer_welcome()
    assert welcome is not None and welcome.isVisible()
    text = welcome.findChildren(QLabel)[0].text()
    assert "demo model" in text and "does not write well" in text
    assert "Settings ▸ Model" in text and "Settings ▸ Server" in text
    opened: list[bool] = []
    QTimer.singleShot(0, lambda: (_close_modal_settings(), opened.append(True)))
    qtbot.mouseClick(welcome.server_button, Qt.MouseButton.LeftButton)
    assert opened == [True]
    assert window.offer_welcome() is None  # once
    again = MainWindow(settings_store)
    qtbot.addWidget(again)
    assert again.offer_welcome() is None  # and remembered in the settings


def test_no_welcome_for_a_writers_own_checkpoint(make_window) -> None:
    window = make_window(wait_for_model=False)
    assert window.offer_welcome() is None


def test_the_fill_popup_speaks_of_lengths_not_tokens(document_window, qtbot) -> None:
    window = document_window()
    place_cursor(window, DOCUMENT.index(" every evening"))
    window.show_fill_popup()
    popup = window.fill_popup
    texts = [popup.length.itemText(i) for i in range(popup.length.count())]
    assert any(text.startswith("short") for text in texts) and any(text.startswith("long") for text in texts)
    assert not any("token" in text for text in texts)
    chosen: list[int] = []
    popup.chosen.disconnect()
    popup.chosen.connect(chosen.append)
    popup.length.setCurrentIndex(texts.index(next(text for text in texts if text.startswith("short"))))
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert chosen and chosen[0] < window.prefs.fill_max_tokens  # short asks for fewer than the default


def test_a_finished_rewrite_says_drafts_and_seconds(document_window, qtbot) -> None:
    window = document_window(candidates=2)
    select(window, SPAN)
    window.rewrite_selection()
    finish(qtbot, window)
    assert re.fullmatch(r"2 drafts · \d+\.\d s", window.figures_label.text())
    assert "tokens/pass" in window.figures_label.toolTip() and "ms/pass" in window.figures_label.toolTip()


def test_help_keyboard_shortcuts_lists_every_action_with_its_keys(make_window) -> None:
    window = make_window(wait_for_model=False)
    text = window.show_shortcuts().browser.toPlainText()
    for action in (window.rewrite_action, window.fill_action, window.regenerate_action, window.find_action):
        name = action.text().replace("&", "").rstrip("…")
        line = next((row for row in text.splitlines() if name in row), "")
        assert action.shortcut().toString() in line or action.shortcut().toString() in text, name
    assert "Ctrl+R" in text and "Rewrite Selection" in text and "Esc" in text


def test_help_how_it_works_and_where_files_are(make_window, monkeypatch, tmp_path: Path, qtbot) -> None:
    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path))
    window = make_window(wait_for_model=False)
    how = window.show_how_it_works().browser.toPlainText()
    for words in ("pass", "noise", "drafts", "Enter", "Esc", "Ctrl+Z"):
        assert words in how
    files = window.show_files().browser.toPlainText()
    assert str(tmp_path / "recovery") in files and str(tmp_path / "logs") in files
    menu_texts = [action.text() for action in window.menuBar().actions()[-1].menu().actions()]
    assert {"&Keyboard Shortcuts", "&How Redraft Works", "&Where Your Files Are", "&About Redraft"} <= set(
        menu_texts
    )
    window.help_page.close()
    QApplication.processEvents()
    assert window.help_page is None
    window.activateWindow()  # the page had the keys: back to the text, as closing it gives them
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    QTest.keyClick(window.editor, Qt.Key.Key_F1)  # F1, as on every desktop: How Redraft Works
    assert window.help_page is not None and window.help_page.windowTitle().startswith("How Redraft Works")


def test_a_wide_window_sets_prose_at_a_readable_measure(document_window, qtbot) -> None:
    """On a wide screen (focus mode, a maximised window) the text stands in a centred column whose lines hold
    about as many characters as a book's, not the 115 a column measured in n's let through."""
    paragraph = ("The storm came in from the west just after dusk, and Mara watched it from the lamp room, counting "
                 "the seconds between the flashes and the thunder while the boats ran for the harbour. ") * 4
    window = document_window(paragraph.strip() + "\n")
    window.resize(1900, 1000)
    qtbot.waitUntil(lambda: window.editor.width() > 1200)
    QApplication.processEvents()
    layout = window.editor.document().firstBlock().layout()
    widths = [layout.lineAt(i).textLength() for i in range(layout.lineCount() - 1)]  # the last line runs short
    assert widths and 66 <= max(widths) <= 84, widths
    assert window.editor.viewportMargins().left() > 200  # the paper beside the column, both sides
