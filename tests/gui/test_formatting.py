"""The Format menu in a real window: its keys reach the text as Markdown's marks, one undo step each, the
selection kept on the same words, emoji counted as the document counts them, a .txt left plain and the text a
draft waits in left alone."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from gui_helpers import SIGNAL_TIMEOUT_MS, place_cursor, select
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QGuiApplication, QTextCharFormat
from PySide6.QtWidgets import QMenu

from app.documents.markdown_format import Inline, toggle_inline
from app.window.formatting import BEING_REWRITTEN, NOT_MARKDOWN

STORY = "The Lighthouse\n\nThe keeper climbed the stairs.\nHe lit the lamp.\n"


def _menu_titles(window) -> list[str]:
    return [action.text().replace("&", "") for action in window.menuBar().actions()]


def test_the_format_menu_sits_before_rewrite_and_its_keys_format_as_one_undo_step(document_window, qtbot) -> None:
    window = document_window(text=STORY)
    editor = window.editor
    assert _menu_titles(window).index("Format") == _menu_titles(window).index("Rewrite") - 1
    select(window, "keeper")
    qtbot.keyClick(editor, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert editor.plain_text() == STORY.replace("keeper", "**keeper**")
    assert editor.textCursor().selectedText() == "keeper"
    qtbot.keyClick(editor, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert editor.plain_text() == STORY.replace("keeper", "***keeper***")
    place_cursor(window, 3)
    qtbot.keyClick(editor, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert editor.plain_text().startswith("# The Lighthouse\n")
    assert editor.textCursor().position() == 5  # still before " Lighthouse"
    window.undo()
    assert editor.plain_text() == STORY.replace("keeper", "***keeper***")
    window.undo()
    window.undo()
    assert editor.plain_text() == STORY
    assert not editor.document().isModified()


def test_lines_become_a_list_and_a_quote_and_back(document_window) -> None:
    window = document_window(text=STORY)
    editor = window.editor
    select(window, "The keeper climbed the stairs.\nHe lit")
    formatting = window.formatting
    bullets = next(a for a in formatting.actions if a.text() == "B&ulleted List")
    bullets.trigger()
    assert editor.plain_text() == STORY.replace("The keeper", "- The keeper").replace("He lit", "- He lit")
    assert editor.textCursor().selectedText().startswith("The keeper")
    bullets.trigger()
    assert editor.plain_text() == STORY


def test_a_link_takes_the_address_on_the_clipboard(document_window) -> None:
    window = document_window(text=STORY)
    QGuiApplication.clipboard().setText("https://example.org/keeper")
    select(window, "the lamp")
    window.formatting.link_action.trigger()
    assert "He lit [the lamp](https://example.org/keeper)." in window.editor.plain_text()


def test_positions_past_an_emoji_are_the_documents_not_pythons(document_window) -> None:
    text = "A storm 🌊 came in the night.\n"
    window = document_window(text=text)
    start = len("A storm 🌊 came in the ".encode("utf-16-le")) // 2  # Qt counts the emoji as two
    window.editor.select_range(start, start + len("night"))
    next(a for a in window.formatting.actions if a.text() == "&Bold").trigger()
    assert window.editor.plain_text() == "A storm 🌊 came in the **night**.\n"
    assert window.editor.textCursor().selectedText() == "night"


def test_a_plain_text_file_is_left_plain_and_the_menu_says_why(document_window, tmp_path: Path, qtbot) -> None:
    path = tmp_path / "notes.txt"
    path.write_text(STORY, encoding="utf-8")
    window = document_window(text="")
    assert window.open_path(path)
    bold = next(a for a in window.formatting.actions if a.text() == "&Bold")
    assert not bold.isEnabled() and bold.statusTip() == NOT_MARKDOWN
    select(window, "keeper")
    qtbot.keyClick(window.editor, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert window.editor.plain_text() == STORY  # no "b" typed over the selection either
    assert window.statusBar().currentMessage() == NOT_MARKDOWN
    menu = QMenu()
    window.formatting.offer(menu, window.editor.textCursor())
    assert window.formatting.menu.menuAction() not in menu.actions()
    markdown = tmp_path / "notes.md"
    markdown.write_text(STORY, encoding="utf-8")
    assert window.open_path(markdown)
    assert bold.isEnabled()


def test_the_lines_a_draft_waits_in_are_left_alone_and_others_format_under_it(document_window, qtbot) -> None:
    window = document_window(text=STORY, candidates=1, max_denoising_steps=4)
    editor = window.editor
    select(window, "climbed the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    before = editor.plain_text()
    place_cursor(window, before.index("keeper"))
    assert not window.formatting.apply(partial(toggle_inline, style=Inline.BOLD))
    assert editor.plain_text() == before and window.statusBar().currentMessage() == BEING_REWRITTEN
    place_cursor(window, before.index("lamp"))
    qtbot.keyClick(editor, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert editor.plain_text() == before.replace("lamp", "**lamp**")
    qtbot.keyClick(editor, Qt.Key.Key_Escape)  # the draft rejected: the original back, the bold kept
    assert editor.plain_text() == STORY.replace("lamp", "**lamp**")


def test_what_the_menu_writes_is_shown_as_it_will_print(make_window, tmp_path: Path) -> None:
    window = make_window(wait_for_model=False)
    (tmp_path / "marks.md").write_text("a ***both*** and ~~gone~~ here\n> quoted words\n", encoding="utf-8")
    assert window.open_path(tmp_path / "marks.md")
    document = window.editor.document()

    def runs(line: int) -> dict[str, QTextCharFormat]:
        block = document.findBlockByNumber(line)
        return {block.text()[r.start : r.start + r.length]: QTextCharFormat(r.format) for r in block.layout().formats()}

    first = runs(0)
    assert first["***both***"].fontWeight() >= QFont.Weight.Bold and first["***both***"].fontItalic()
    assert first["~~gone~~"].fontStrikeOut() and not first["~~gone~~"].fontItalic()
    assert runs(1)["> quoted words"].fontItalic()


def test_marks_after_an_emoji_are_drawn_on_their_own_letters(make_window, tmp_path: Path) -> None:
    # Qt counts 🌊 as two positions and Python as one: the bold used to start a letter early per emoji.
    window = make_window(wait_for_model=False)
    (tmp_path / "sea.md").write_text("A storm 🌊🌊 came **at night** and {++the++} sea rose [...] high\n")
    assert window.open_path(tmp_path / "sea.md")
    block = window.editor.document().firstBlock()
    units = block.text().encode("utf-16-le")
    drawn = {units[2 * r.start : 2 * (r.start + r.length)].decode("utf-16-le") for r in block.layout().formats()}
    assert {"**at night**", "{++", "the", "++}", "[...]"} <= drawn, drawn


def test_enter_continues_a_list_and_ends_it_on_an_empty_item(document_window, qtbot) -> None:
    window = document_window(text="Shopping:\n- milk")
    editor = window.editor
    place_cursor(window, len("Shopping:\n- milk"))
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "eggs")
    assert editor.plain_text() == "Shopping:\n- milk\n- eggs"
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # on the empty item: the list ends there
    assert editor.plain_text() == "Shopping:\n- milk\n- eggs\n"
    qtbot.keyClicks(editor, "Done.")
    assert editor.plain_text() == "Shopping:\n- milk\n- eggs\nDone."
    window.undo()  # the words typed, then the list's end, then the new item: each its own step
    window.undo()
    assert editor.plain_text() == "Shopping:\n- milk\n- eggs\n- "


def test_numbers_count_on_tasks_get_an_empty_box_and_quotes_go_on(document_window, qtbot) -> None:
    for text, added in (
        ("1. first", "\n2. "),
        ("  9) ninth", "\n  10) "),
        ("- [x] done", "\n- [ ] "),
        ("> quoted", "\n> "),
    ):
        window = document_window(text=text)
        place_cursor(window, len(text))
        qtbot.keyClick(window.editor, Qt.Key.Key_Return)
        assert window.editor.plain_text() == text + added, text


def test_shift_enter_a_plain_text_and_a_waiting_draft_keep_enter_as_it_was(
    document_window, qtbot, tmp_path: Path
) -> None:
    window = document_window(text="- milk")
    place_cursor(window, len("- milk"))
    qtbot.keyClick(window.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert window.editor.plain_text() in ("- milk\n", "- milk\u2028")  # a plain break, no new item
    path = tmp_path / "list.txt"
    path.write_text("- milk", encoding="utf-8")
    assert window.open_path(path)
    place_cursor(window, len("- milk"))
    qtbot.keyClick(window.editor, Qt.Key.Key_Return)
    assert window.editor.plain_text() == "- milk\n"  # a .txt's dash is the writer's own
    window = document_window(text="- the keeper climbed the stairs", candidates=1, max_denoising_steps=4)
    select(window, "climbed the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    qtbot.keyClick(window.editor, Qt.Key.Key_Return)  # Enter at a waiting draft accepts it, as ever
    assert window.run is None and "\n" not in window.editor.plain_text()


def test_tab_nests_list_items_and_types_a_tab_elsewhere(document_window, qtbot) -> None:
    text = "- milk\n- eggs\n\nPlain words."
    window = document_window(text=text)
    editor = window.editor
    place_cursor(window, text.index("eggs"))
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.plain_text() == "- milk\n  - eggs\n\nPlain words."
    qtbot.keyClick(editor, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert editor.plain_text() == text
    qtbot.keyClick(editor, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)  # as far out as it goes
    assert editor.plain_text() == text
    place_cursor(window, text.index("words"))
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.plain_text() == text.replace("words", "\twords")


def test_a_document_is_highlighted_once_as_it_opens_in_its_own_kind(document_window, tmp_path: Path) -> None:
    """A .txt opened over Markdown (and back) shows its kind's cues at once, each paragraph highlighted once: a
    long novel's were done twice, as Markdown and then again as plain text (2 s of War and Peace's 6.5 s)."""
    chapter = "# The Lighthouse\n\nThe keeper climbed the **stairs**.\n"
    plain, markdown = tmp_path / "chapter.txt", tmp_path / "chapter.md"
    plain.write_text(chapter * 50, encoding="utf-8")
    markdown.write_text(chapter * 50, encoding="utf-8")
    window = document_window(text=chapter)
    highlighter = window.editor.highlighter
    highlighted: list[str] = []
    original = highlighter.highlightBlock
    highlighter.highlightBlock = lambda text: (highlighted.append(text), original(text))  # type: ignore[method-assign]
    for path, bold in ((plain, False), (markdown, True), (plain, False)):
        highlighted.clear()
        assert window.open_path(path)
        assert highlighted.count("The keeper climbed the **stairs**.") == 50
        stairs = window.editor.document().findBlockByNumber(2).layout().formats()
        assert any(f.format.fontWeight() == QFont.Weight.Bold for f in stairs) is bold
