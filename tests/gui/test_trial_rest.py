"""The rest of what the new-writer trial met (#46): wording, themes, files, keys and fit, each seen in a real
window (offscreen, on the tiny model)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from gui_helpers import DOCUMENT, SIGNAL_TIMEOUT_MS, PassRecorder, place_cursor, select
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QAction, QColor, QFont, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QMenu, QMenuBar, QMessageBox, QToolBar, QToolButton

from app.rewrite.drafts_panel import EMPTY_HINT, hesitant_color
from app.rewrite.worker import PaintedPass
from app.window.main_window import MainWindow
from app.window.theme import build_palette, canvas_colors


def test_counts_say_one_character_not_one_characters(document_window: Callable[..., MainWindow]) -> None:
    window = document_window("a")
    window._update_counts()
    assert window.counts_label.text() == "1 word · 1 character"
    window.editor.setPlainText("ab cd")
    window._update_counts()
    assert window.counts_label.text() == "2 words · 5 characters"
    window.editor.select_range(0, 2)  # a selection: its own counts beside the document's
    window._update_counts()
    assert window.counts_label.text() == "1 of 2 words · 2 of 5 characters"
    window.editor.select_range(2, 2)
    window._update_counts()
    assert window.counts_label.text() == "2 words · 5 characters"


def test_a_failed_save_says_could_not_save_once(document_window: Callable[..., MainWindow], tmp_path: Path) -> None:
    window = document_window()
    window.editor.insertPlainText("New words. ")
    assert not window.save_to(tmp_path / "gone" / "story.md")  # a folder that is not there
    said = window.message_bar.label.text()
    assert said.startswith("Could not save story.md: ") and said.lower().count("could not save") == 1, said
    assert window.save_to(tmp_path / "story.md")  # the folder it can save in: the failure is over, and said no more
    assert window.message_bar.isHidden()


def test_about_names_the_installed_version(make_window: Callable[..., MainWindow]) -> None:
    from importlib import metadata

    window = make_window(wait_for_model=False)
    box = window.show_about()
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert f"Redraft {metadata.version('redraft')}" in box.text()
    box.close()


def test_every_shortcut_belongs_to_one_action_and_help_lists_each_once(make_window) -> None:
    window = make_window(wait_for_model=False)
    owners: dict[str, list[str]] = {}
    # Enter and Esc are the editor's own keys (shown on Accept, Reject and Cancel, one state each), not shortcuts.
    editor_keys = [a for a in window.findChildren(QAction) if a.shortcutContext() == Qt.ShortcutContext.WidgetShortcut]
    assert {a.shortcut().toString() for a in editor_keys} == {"Return", "Esc"}
    for action in set(window.findChildren(QAction)) - set(editor_keys):
        for keys in action.shortcuts():
            owners.setdefault(keys.toString(), []).append(action.text())
    clashes = {keys: names for keys, names in owners.items() if len(set(names)) > 1}
    assert not clashes, clashes
    rows = [row.strip() for row in window.show_shortcuts().browser.toPlainText().splitlines()]
    listed = [row for row in rows if row in owners and row not in ("Return", "Esc")]
    assert len(listed) == len(set(listed)), sorted(row for row in listed if listed.count(row) > 1)
    assert rows[rows.index("Fill Gaps in Selection") + 1] != rows[rows.index("Fill Gap at Cursor") + 1]


def test_each_menus_letters_are_its_own(make_window) -> None:
    # Alt+E, then W: Paste Without Formatting and Rewrap Paragraph shared the letter, so it took two presses and
    # an Enter; File's Saved Versions and Print Preview, EPUB and PDF, and View's Zoom Out and Outline did too.
    window = make_window(wait_for_model=False)

    def clashes(menu: QMenu | QMenuBar, path: str) -> list[str]:
        letters: dict[str, list[str]] = {}
        found = []
        for action in menu.actions():
            if (letter := re.search(r"&([^&])", action.text())) is not None:
                letters.setdefault(letter.group(1).lower(), []).append(action.text())
            if action.menu() is not None:
                found += clashes(action.menu(), f"{path} ▸ {action.text()}")
        return found + [f"{path}: {names}" for names in letters.values() if len(names) > 1]

    top = [action.menu() for action in window.menuBar().actions()]
    assert [clash for menu in top for clash in clashes(menu, menu.title())] == []
    assert clashes(window.menuBar(), "menu bar") == []

    def letterless(menu: QMenu) -> list[str]:
        found = []
        for action in menu.actions():
            if not action.isSeparator() and re.search(r"&([^&])", action.text()) is None:
                found.append(action.text())
            if action.menu() is not None:
                found += letterless(action.menu())
        return found

    # Each entry is reached from the keyboard by its letter (Alt+R, then O: Show Changes); Edit's letters are
    # all taken, and New Note has its keys (Ctrl+Alt+M).
    assert [name for menu in top for name in letterless(menu)] == ["New Note"]


def _formats(window: MainWindow, line: int) -> list[tuple[str, QTextCharFormat]]:
    """(text, format) of each run the highlighter gave ``line``."""
    block = window.editor.document().findBlockByNumber(line)
    return [(block.text()[r.start : r.start + r.length], QTextCharFormat(r.format)) for r in block.layout().formats()]


def _bold(runs: list[tuple[str, QTextCharFormat]]) -> list[str]:
    return [text for text, fmt in runs if fmt.fontWeight() >= QFont.Weight.Bold]


def _italic(runs: list[tuple[str, QTextCharFormat]]) -> list[str]:
    return [text for text, fmt in runs if fmt.fontItalic()]


def test_markdown_cues_only_in_markdown_files_and_gap_marks_are_never_bold(
    make_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    text = "She took ___ and [...] home, *slowly*, __twice__.\n"
    window = make_window(wait_for_model=False)
    for name in ("notes.txt", "story.md", "story.markdown", "README"):
        (tmp_path / name).write_text(text)
    assert window.open_path(tmp_path / "notes.txt")
    runs = _formats(window, 0)
    assert _bold(runs) == [] and _italic(runs) == []  # plain text: the writer's * and _ are characters
    gaps = [(t, fmt) for t, fmt in runs if t in ("___", "[...]")]
    assert [t for t, _ in gaps] == ["___", "[...]"]  # the gap cue is there in plain text too
    assert all(fmt.background().style() != Qt.BrushStyle.NoBrush for _, fmt in gaps)
    for markdown in ("story.md", "story.markdown"):
        assert window.open_path(tmp_path / markdown)
        runs = _formats(window, 0)
        assert _bold(runs) == ["__twice__"] and _italic(runs) == ["*slowly*"], runs  # never the gap mark
        assert {t for t, fmt in runs if fmt.background().style() != Qt.BrushStyle.NoBrush} == {"___", "[...]"}
    assert window.open_path(tmp_path / "README")
    assert _bold(_formats(window, 0)) == []


def test_a_note_to_self_is_quiet_in_markdown(make_window: Callable[..., MainWindow], tmp_path: Path) -> None:
    window = make_window(wait_for_model=False)
    (tmp_path / "returned.md").write_text("Every evening<!-- Ed: every one? --> he climbed.\n")
    assert window.open_path(tmp_path / "returned.md")
    runs = dict(_formats(window, 0))
    note = runs["<!-- Ed: every one? -->"]
    assert note.fontItalic() and note.foreground().color() == window.palette().color(QPalette.ColorRole.PlaceholderText)
    assert "Every evening" not in runs  # the words around it as they are


def test_the_canonical_gap_marker_is_read_and_the_old_ones_still_are() -> None:
    from model.edit.request import GAP_MARK, GAP_MARKER

    assert GAP_MARKER == "[...]"
    assert [m.group() for m in GAP_MARK.finditer(f"a {GAP_MARKER} b ___ c […] d ____")] == [
        "[...]", "___", "[…]", "____"
    ]


def _luminance(color: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def _contrast(first: QColor, second: QColor) -> float:
    light, dark = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _over(paper: QColor, tint: QColor, amount: float | None = None) -> QColor:
    """``tint`` laid on ``paper`` at its alpha (or ``amount``), as the screen shows it."""
    share = tint.alphaF() if amount is None else amount
    return QColor(*(round(a + (b - a) * share) for a, b in (
        (paper.red(), tint.red()), (paper.green(), tint.green()), (paper.blue(), tint.blue()))))  # fmt: skip


@pytest.mark.parametrize("dark", [False, True])
def test_the_inks_on_the_span_and_drafts_backgrounds_keep_a_4_5_contrast(dark: bool) -> None:
    colors = canvas_colors(dark)
    palette = build_palette(dark)
    for role in (QPalette.ColorRole.Base, QPalette.ColorRole.Window):  # the text, the drafts panel
        paper = palette.color(role)
        for name in ("canvas", "fresh", "review"):
            ratio = _contrast(colors.ink, _over(paper, getattr(colors, name)))
            assert ratio >= 4.5, (dark, role, name, round(ratio, 2))
        for share in (0.6, 0.55):  # the most hesitant word's shade in the text and in the panel
            ratio = _contrast(colors.ink, _over(paper, hesitant_color(dark), share))
            assert ratio >= 4.5, (dark, role, "hesitant", round(ratio, 2))


def _span_colors(window: MainWindow) -> set[tuple[str, str]]:
    start, end = window.editor.live_range()
    cursor = QTextCursor(window.editor.document())
    seen = set()
    for position in range(start + 1, end + 1):
        cursor.setPosition(position)
        fmt = cursor.charFormat()
        seen.add((fmt.background().color().name(QColor.NameFormat.HexArgb), fmt.foreground().color().name()))
    return seen


def test_dark_to_light_repaints_the_waiting_draft_and_the_drafts_panel(document_window, qtbot) -> None:
    window = document_window(candidates=2, theme="dark")
    select(window, "climbed the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    window.apply_preferences(replace(window.prefs, theme="light"))
    light = canvas_colors(False)
    assert _span_colors(window) == {(light.review.name(QColor.NameFormat.HexArgb), light.ink.name())}
    html = window.drafts_panel.cards[0].body.text() + window.drafts_panel.cards[1].body.text()
    dark_paper = build_palette(True).color(QPalette.ColorRole.Window)
    for name in ("fresh", "noise"):  # neither tint is blended on the dark panel any more
        assert _over(dark_paper, getattr(canvas_colors(True), name)).name() not in html


def _visible_cards(window: MainWindow) -> int:
    return sum(1 for card in window.drafts_panel.cards if not card.isHidden())


@pytest.mark.parametrize("how", ["new", "open"])
def test_new_or_open_clears_the_last_documents_drafts(document_window, qtbot, tmp_path: Path, how: str) -> None:
    window = document_window(candidates=2)
    select(window, "climbed the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    window.accept_rewrite()
    assert _visible_cards(window) == 2
    window.editor.document().setModified(False)
    if how == "new":
        window.new_document()
    else:
        (tmp_path / "other.md").write_text("Another story.\n")
        assert window.open_path(tmp_path / "other.md")
    assert _visible_cards(window) == 0 and window.drafts_panel.summary.text() == EMPTY_HINT


def test_alt_digit_with_no_drafts_says_why_and_types_nothing(document_window, qtbot) -> None:
    window = document_window()
    window.editor.setFocus()
    before = window.editor.plain_text()
    qtbot.keyClick(window.editor, Qt.Key.Key_1, Qt.KeyboardModifier.AltModifier)
    assert window.editor.plain_text() == before
    assert "No drafts to choose from" in window.statusBar().currentMessage()


def test_polish_rounds_say_polishing_not_100_percent_settled(document_window, qtbot) -> None:
    window = document_window(candidates=2, polish_rounds=3)
    seen: list[tuple[bool, str, str]] = []

    def check(_job: int, painted: PaintedPass) -> None:
        panel = window.drafts_panel
        seen.append((painted.raw.polishing, panel.cards[0].heading.text(), panel.summary.text()))

    recorder = PassRecorder(window, check)
    select(window, "climbed the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert recorder.passes
    polishing = [(heading, summary) for polished, heading, summary in seen if polished]
    assert len(polishing) == 3  # the three rounds, each said as such
    for heading, summary in polishing:
        assert "polishing" in heading and "settled" not in heading and "drafts polishing" in summary
    assert all("polishing" not in heading for polished, heading, _ in seen if not polished)


DEFAULT_SIZE = (1100, 680)  # the window's opening size on a 1366x768 laptop (screen_fit.fitted)


def _toolbar_overflows(window: MainWindow) -> bool:
    toolbar = window.findChild(QToolBar, "rewriteToolbar")
    extension = toolbar.findChild(QToolButton, "qt_toolbar_ext_button")  # the » of actions that did not fit
    return extension is not None and extension.isVisible()


def test_toolbar_and_status_messages_fit_the_default_width(document_window, qtbot) -> None:
    window = document_window(candidates=4)
    window.resize(*DEFAULT_SIZE)
    window._on_loaded(replace(window.model_info, name="/models/gemma-4-26b-a4b-it-qat-q4-with-a-long-folder-name"))
    qtbot.wait(50)
    assert not _toolbar_overflows(window)
    assert "gemma-4-26b-a4b-it-qat-q4-with-a-long-folder-name" in window.model_label.toolTip()
    # While a span develops (Cancel shown): the longest pass-by-pass message keeps its room.
    message = "Developing 4 drafts… pass 25 of at most 54 · block 2/3 · about 12 s left · Esc cancels"
    bar = window.statusBar()
    rooms: list[int] = []

    def check(_job: int, _painted: PaintedPass) -> None:
        if window.run is not None and window.run.result is None and window.cancel_button.isVisible():
            shown = [w for w in (window.cancel_button, window.load_progress, window.backend_label, window.model_label,
                                 window.figures_label, window.counts_label) if w.isVisible()]  # fmt: skip
            rooms.append(min(w.geometry().left() for w in shown))

    recorder = PassRecorder(window, check)
    select(window, "climbed the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    qtbot.wait(50)
    assert window.candidate_label.text().strip() == "1 of 4" and not _toolbar_overflows(window)  # Next, Cancel
    assert recorder.passes and rooms, rooms
    assert min(rooms) >= bar.fontMetrics().horizontalAdvance(message) + 12, (rooms, message)


def test_the_fill_popup_leaves_the_carets_line_and_the_next_in_sight(document_window, qtbot) -> None:
    window = document_window()
    editor = window.editor
    place_cursor(window, DOCUMENT.index(" every evening"))
    caret_line = editor.cursorRect()
    next_line = caret_line.translated(0, caret_line.height())  # the line below, wrapped or the next paragraph
    window.show_fill_popup()
    popup = window.fill_popup
    qtbot.waitUntil(popup.isVisible)
    viewport = editor.viewport()
    for line in (caret_line, next_line):
        shown = QRect(viewport.mapToGlobal(QPoint(0, line.top())), QSize(viewport.width(), line.height()))
        assert not popup.frameGeometry().intersects(shown), (popup.frameGeometry(), shown)
    popup.close()


def test_undoing_an_accepted_rewrite_leaves_the_caret_at_the_span(document_window, qtbot) -> None:
    window = document_window()
    start, end = select(window, "climbed the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    window.accept_rewrite()
    assert window.editor.plain_text() != DOCUMENT
    window.editor.setFocus()
    qtbot.keyClick(window.editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.editor.plain_text() == DOCUMENT
    assert start <= window.editor.textCursor().position() <= end, window.editor.textCursor().position()


def test_a_second_redraft_warns_when_the_file_is_open_in_another(make_window, tmp_path: Path) -> None:
    from app.documents.recovery import RecoveryArea
    from app.gui import protect_document

    story = tmp_path / "story.md"
    story.write_text("Once.\n")
    other = RecoveryArea(tmp_path / "recovery")  # another running Redraft: its own folder, locked
    other.claim()
    other.note_open(story)
    window = make_window(wait_for_model=False)
    mine = RecoveryArea(tmp_path / "recovery")
    protect_document(window, mine)
    assert window.open_path(story)
    said = window.message_bar.label.text()
    assert window.message_bar.isVisible() and "story.md is also open in another Redraft" in said
    assert mine.open_elsewhere(story) is not None
    other.release()  # that instance closed: no warning for the file any more
    assert mine.open_elsewhere(story) is None
    mine.release()


def test_rewriting_the_whole_document_keeps_its_heading_and_blank_lines(document_window, qtbot) -> None:
    # The trial: Select All, Ctrl+R gave one paragraph back, the "# heading" and the blank lines gone.
    text = "# The Lighthouse\n\nThe keeper climbed the stairs every evening.\n\nShe wrote the letter twice.\n"
    window = document_window(text)
    window.editor.setFocus()
    qtbot.keyClick(window.editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window.editor, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    window.accept_rewrite()
    rewritten = window.editor.plain_text()
    assert rewritten != text and rewritten.startswith("# ") and rewritten.endswith(".\n"), rewritten
    paragraphs = rewritten[:-1].split("\n\n")
    assert len(paragraphs) == 3 and all(p.strip() and "\n" not in p for p in paragraphs), rewritten
