"""File ▸ New Window (app/window/window_family.py): more windows on the one model thread, real windows and the
real tiny model. One load serves them all; each window's rewrite is its own; the model thread outlives the
window that started it; Quit asks about every window's unsaved words; settings are one; and the process
protects each new window's document as it does the first's (app/gui.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import shiboken6
from gui_helpers import DOCUMENT, SIGNAL_TIMEOUT_MS, select
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QApplication, QMenu
from test_document_safety import INSTANCE, killed_instance_wrote

from app.cli import build_parser
from app.dialogs.recovery import offer_recovery
from app.documents.recovery import RECORD_SUFFIX, RecoveryArea
from app.gui import open_files, protect_windows
from app.window.editor_widget import Phase
from app.window.main_window import MainWindow
from app.window.theme import canvas_colors
from app.window.window_family import cascaded


@pytest.fixture()
def second_window() -> Iterator[Callable[[MainWindow], MainWindow]]:
    """File ▸ New Window from a window; those still open when the test ends closed without a question (Qt
    deletes a closed one: it has no document left to close)."""
    made: list[MainWindow] = []

    def make(first: MainWindow) -> MainWindow:
        made.append(first.family.new_window())
        return made[-1]

    yield make
    for window in made:
        if shiboken6.isValid(window) and window.isVisible():
            window.editor.document().setModified(False)
            window.close()


def reviewed(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.editor.phase is Phase.REVIEW, timeout=SIGNAL_TIMEOUT_MS)


def test_a_new_window_shares_the_loaded_model_and_each_rewrite_is_its_own(
    document_window, qtbot, second_window
) -> None:
    first = document_window()
    loads: list[object] = []
    first.service.load_model = lambda spec: loads.append(spec)  # type: ignore[method-assign]
    second = second_window(first)
    assert second.service is first.service and second.model_info is first.model_info
    assert loads == []  # no second load, no second copy of the model
    assert [a.text() for a in first.file_menu.actions()[:3]] == ["&New", "New W&indow", "&Open…"]
    second.editor.setPlainText(DOCUMENT)
    select(second, "climbed the stairs")
    select(first, "walked to the harbour")
    second.rewrite_selection()
    first.rewrite_selection()  # the second window's waits its turn: neither cancels the other
    reviewed(qtbot, second)
    reviewed(qtbot, first)
    second.accept_rewrite()
    assert "climbed the stairs" not in second.editor.plain_text()
    assert first.editor.phase is Phase.REVIEW  # still waiting for the writer in its own window


def test_the_model_thread_outlives_the_window_that_started_it(document_window, qtbot, second_window) -> None:
    first = document_window()
    second = second_window(first)
    service = first.service
    assert first.close()
    assert service.model_thread.isRunning() and service.parent() is None  # not deleted with its first window
    second.editor.setPlainText(DOCUMENT)
    select(second, "climbed the stairs")
    second.rewrite_selection()
    reviewed(qtbot, second)  # served after the first window went
    second.reject_rewrite()
    assert second.close()
    qtbot.waitUntil(lambda: not service.model_thread.isRunning(), timeout=SIGNAL_TIMEOUT_MS)  # the last one ended it


def test_quit_asks_the_windows_with_unsaved_words_first_and_a_cancel_keeps_every_window(
    document_window, qtbot, monkeypatch, second_window
) -> None:
    first = document_window()
    second = second_window(first)
    third = second_window(first)
    second.editor.insertPlainText("Words not saved yet.")
    asked: list[object] = []
    answer = [False]

    def maybe_save(window):
        asked.append(window)
        return answer[0] or not window.editor.document().isModified()

    monkeypatch.setattr(type(first), "maybe_save", maybe_save)
    first.family.quit_action.trigger()  # Ctrl+Q in the first window
    assert asked == [second]  # the one with words to lose, first; Cancel: nothing closed
    assert first.isVisible() and second.isVisible() and third.isVisible()
    answer[0] = True
    first.family.quit_action.trigger()
    assert not first.isVisible() and not second.isVisible() and not third.isVisible()


def test_a_setting_changed_in_one_window_is_every_windows(document_window, settings_store, second_window) -> None:
    first = document_window()
    second = second_window(first)
    try:
        first.apply_preferences(replace(first.prefs, theme="dark"))
        assert second.prefs.theme == "dark" and second.editor.colors == canvas_colors(dark=True)
        second.zoom(2)  # saves the second window's copy of the settings: the theme is kept in it
        assert settings_store.load().theme == "dark" and first.prefs.zoom == 2
    finally:
        first.apply_preferences(replace(first.prefs, theme="light"))


def test_a_model_loaded_in_one_window_stops_anothers_rewrite_and_says_so(document_window, qtbot, second_window) -> None:
    first = document_window()
    second = second_window(first)
    second.prefs = replace(second.prefs, pass_display_ms=400)  # slow passes: still developing below
    second.editor.setPlainText(DOCUMENT)
    select(second, "climbed the stairs")
    second.rewrite_selection()
    qtbot.waitUntil(lambda: second.rewrites.run is not None and second.rewrites.run.passes > 0,
                    timeout=SIGNAL_TIMEOUT_MS)  # fmt: skip
    first.load_model()  # Settings ▸ Model in the first window
    assert second.model_loading and second.model_info is None  # shown loading in both
    qtbot.waitUntil(lambda: second.editor.live_span is None, timeout=SIGNAL_TIMEOUT_MS)
    assert second.editor.plain_text() == DOCUMENT
    assert "another window changed the model" in second.message_bar.label.text()
    qtbot.waitUntil(lambda: second.model_info is not None and first.model_info is not None, timeout=SIGNAL_TIMEOUT_MS)


def test_each_new_window_is_protected_and_its_record_goes_when_it_closes(
    document_window, qtbot, tmp_path, monkeypatch, second_window
) -> None:
    first = document_window()
    area = RecoveryArea(tmp_path / "recovery")
    autosavers = protect_windows(first, area)
    second = second_window(first)
    assert len(autosavers) == 2 and second.autosaver in autosavers
    second.editor.insertPlainText("Typed in the second window.")
    second.autosaver.write_now()
    second.autosaver.flush()
    record = area.folder / f"{second.autosaver.document_id}{RECORD_SUFFIX}"
    assert record.is_file()  # a crash now would offer it back
    chapter = tmp_path / "chapter.md"
    chapter.write_text("The chapter.\n", encoding="utf-8")
    first.open_path(chapter)
    third = second_window(first)
    third.editor.setPlainText("Another text.")
    assert third.save_to(chapter)  # saved over the file the first window shows
    assert "also open in another Redraft window" in third.message_bar.label.text()
    monkeypatch.setattr(type(second), "maybe_save", lambda _window: True)  # Discard
    assert second.close()
    assert not record.exists() and len(autosavers) == 2  # let go: nothing of it to recover
    first.editor.insertPlainText("Typed, then let go.")
    assert first.close() and len(autosavers) == 1
    first.editor.document().setModified(False)  # a closed window's document changing writes nothing, fails nothing
    assert not any(area.folder.glob(f"{first.autosaver.document_id}*"))


def test_a_new_window_steps_aside_but_stays_on_the_screen() -> None:
    room = QRect(0, 0, 1366, 740)
    assert cascaded(QRect(100, 50, 900, 600), room) == QPoint(132, 82)
    assert cascaded(QRect(133, 12, 1100, 740), room) == QPoint(165, 0)  # as tall as the room: steps right only
    assert cascaded(QRect(466, 0, 900, 740), room) == QPoint(466, 0)  # at the right edge already


def test_a_word_added_or_ignored_in_one_window_is_known_in_the_others(
    document_window, qtbot, monkeypatch, tmp_path, second_window
) -> None:
    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path / "home"))  # the writer's own words: this test's
    text = "Quillworth climbed to Brannigrove.\n"
    first = document_window(text, spelling_language="en")
    second = second_window(first)
    second.editor.setPlainText(text)
    for window in (first, second):
        window.spelling.wait_loaded()
        qtbot.waitUntil(lambda w=window: spelled_wrong(w) == ["Quillworth", "Brannigrove"], timeout=SIGNAL_TIMEOUT_MS)
    offered = QMenu()
    cursor = QTextCursor(first.editor.document())
    cursor.setPosition(2)
    first.spelling.offer(offered, cursor)
    next(a for a in offered.actions() if a.text() == "Add “Quillworth” to Dictionary").trigger()
    ignoring = QMenu()
    cursor.setPosition(text.index("Brannigrove") + 2)
    second.spelling.offer(ignoring, cursor)
    next(a for a in ignoring.actions() if a.text().startswith("Ignore")).trigger()
    assert spelled_wrong(first) == spelled_wrong(second) == []  # in the other window too, at once


def spelled_wrong(window: MainWindow) -> list[str]:
    """The words the window's text shows underlined as misspelled."""
    block, found = window.editor.document().firstBlock(), []
    while block.isValid():
        found += [block.text()[part.start : part.start + part.length] for part in block.layout().formats()
                  if part.format.underlineStyle() == QTextCharFormat.UnderlineStyle.SpellCheckUnderline]
        block = block.next()
    return found


def test_each_window_keeps_its_files_place_and_none_forgets_anothers(
    document_window, tmp_path, monkeypatch, second_window
) -> None:
    chapters = []
    for name in ("one.md", "two.md"):
        chapters.append(tmp_path / name)
        chapters[-1].write_text("The keeper climbed the stairs.\n" * 40, encoding="utf-8")
    first = document_window()
    second = second_window(first)
    for window, chapter, place in ((first, chapters[0], 300), (second, chapters[1], 600)):
        window.open_path(chapter)
        cursor = window.editor.textCursor()
        cursor.setPosition(place)
        window.editor.setTextCursor(cursor)
    monkeypatch.setattr(type(first), "maybe_save", lambda _window: True)
    assert first.close() and second.close()  # the second, opened before the first closed, closes last
    third = document_window()
    for chapter, place in zip(chapters, (300, 600), strict=True):
        third.open_path(chapter)
        assert third.editor.textCursor().position() == place  # both kept, neither window's lost


def test_recover_all_puts_each_document_a_crash_left_in_a_window_of_its_own(
    document_window, tmp_path, second_window
) -> None:
    root = tmp_path / "recovery"
    killed_instance_wrote(INSTANCE, root, tmp_path / "one.md")
    area = killed_instance_wrote(INSTANCE, root, tmp_path / "two.md")  # two windows' work, say
    first = document_window()
    made: list[MainWindow] = []
    dialog = offer_recovery(first, area, first, lambda: made.append(second_window(first)) or made[-1])
    assert dialog is not None and dialog.list.count() == 2 and dialog.recover_all_button.isVisibleTo(dialog)
    chosen = dialog.documents[dialog.list.currentRow()]
    dialog.recover_all_button.click()
    assert first.path == chosen.path  # the one chosen, here
    assert [window.path for window in made] == [d.path for d in dialog.documents if d is not chosen]
    assert all(window.editor.plain_text() == "Recovered chapter.\nSecond line." for window in (first, *made))
    assert area.orphans() == []


def test_several_files_named_at_start_open_each_in_a_window(document_window, tmp_path) -> None:
    assert build_parser().parse_args(["edit", "one.md", "two.md"]).files == [Path("one.md"), Path("two.md")]
    files = []
    for number in ("one", "two", "three"):
        files.append(tmp_path / f"{number}.md")
        files[-1].write_text(f"Chapter {number}.\n", encoding="utf-8")
    first = document_window()
    windows = open_files(first, files)
    try:
        assert windows[0] is first and len(windows) == 3 and [window.path for window in windows] == files
        assert all(window.service is first.service and window.isVisible() for window in windows)
        assert [window.editor.plain_text() for window in windows] == [
            f"Chapter {n}.\n" for n in ("one", "two", "three")]
    finally:
        for window in windows[1:]:
            window.close()


def test_the_window_menu_lists_the_windows_and_brings_one_forward(document_window, qtbot, second_window) -> None:
    first = document_window()
    second = second_window(first)
    second.editor.insertPlainText("Unsaved.")
    menus = [action.text() for action in first.menuBar().actions()]
    assert menus[-3:] == ["&Model", "&Window", "&Help"]
    first.family.menu.aboutToShow.emit()
    entries = [action for action in first.family.menu.actions() if action.isCheckable()]
    assert [entry.text() for entry in entries] == ["&1 Untitled", "&2 Untitled*"]
    assert [entry.isChecked() for entry in entries] == [True, False]  # this one ticked
    first.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is first)
    entries[1].trigger()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is second)
    qtbot.keyClick(second.editor, Qt.Key.Key_F6, Qt.KeyboardModifier.ControlModifier)  # Next Window: round
    qtbot.waitUntil(lambda: QApplication.activeWindow() is first)


def test_opening_a_file_another_window_shows_brings_that_window_forward(
    document_window, qtbot, tmp_path, second_window
) -> None:
    chapter = tmp_path / "chapter.md"
    chapter.write_text("The chapter.\n", encoding="utf-8")
    first = document_window()
    assert first.open_path(chapter)
    second = second_window(first)
    qtbot.waitUntil(lambda: QApplication.activeWindow() is second)
    second.editor.setPlainText("Notes.")
    assert second.open_path(tmp_path / "." / "chapter.md")  # File ▸ Open, Open Recent, a drop
    qtbot.waitUntil(lambda: QApplication.activeWindow() is first)
    assert second.path is None and second.editor.plain_text() == "Notes."  # not opened twice, nothing replaced
    assert first.statusBar().currentMessage() == "chapter.md is open in this window."
