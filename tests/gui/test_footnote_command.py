"""Format ▸ Footnote in a real window: Ctrl+Alt+F puts a note in as one undo step and leaves the caret on its
line for the words, goes between its two halves, counts an emoji as the document does, shows the marks quiet,
and leaves a .txt and a waiting draft alone, saying why."""

from __future__ import annotations

from pathlib import Path

from gui_helpers import SIGNAL_TIMEOUT_MS, place_cursor, select
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette, QTextCharFormat

from app.window.footnote_command import PLAIN_TEXT, WHILE_REWRITING

STORY = "The Lighthouse\n\nThe keeper climbed the stairs.[^1] He lit the lamp.\n\n[^1]: In 1877.\n"
CTRL_ALT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier


def test_ctrl_alt_f_adds_a_note_as_one_undo_step_and_goes_between_its_halves(document_window, qtbot) -> None:
    window = document_window(text=STORY)
    editor = window.editor
    assert "&Footnote" in [action.text() for action in window.formatting.menu.actions()]
    place_cursor(window, STORY.index("lamp.") + len("lamp."))
    qtbot.keyClick(editor, Qt.Key.Key_F, CTRL_ALT)
    assert editor.plain_text() == STORY.replace("lamp.", "lamp.[^2]").replace(
        "[^1]: In 1877.\n", "[^1]: In 1877.\n[^2]: \n")
    qtbot.keyClicks(editor, "Oil, then.")  # the caret waits on the new note's line
    assert "[^2]: Oil, then.\n" in editor.plain_text()
    assert window.statusBar().currentMessage().startswith("Footnote 2: type its words here.")
    qtbot.keyClick(editor, Qt.Key.Key_F, CTRL_ALT)  # back to the text, after its reference
    text = editor.plain_text()
    assert editor.textCursor().position() == text.index("[^2]") + len("[^2]")
    qtbot.keyClick(editor, Qt.Key.Key_F, CTRL_ALT)  # and to its words again
    assert text[editor.textCursor().position() :].startswith("Oil, then.")
    window.undo()  # the words typed
    window.undo()  # the note
    assert editor.plain_text() == STORY


def test_a_note_before_the_first_renumbers_the_rest_and_an_emoji_counts_as_two_positions(document_window,
                                                                                            qtbot) -> None:
    text = "🌊 Waves rose.\n\n" + STORY
    window = document_window(text=text)
    place_cursor(window, len("🌊 Waves rose.") + 1)  # Qt's position: the emoji takes two
    qtbot.keyClick(window.editor, Qt.Key.Key_F, CTRL_ALT)
    assert window.editor.plain_text() == ("🌊 Waves rose.[^1]\n\n" + STORY.replace("[^1]", "[^2]")).replace(
        "\n\n[^2]: In 1877.", "\n\n[^1]: \n[^2]: In 1877.")
    assert window.statusBar().currentMessage() == (
        "Footnote 1: type its words here. The one after it is now 2. Ctrl+Alt+F goes back to the text.")


def test_the_marks_are_shown_quiet(make_window, tmp_path: Path) -> None:
    window = make_window(wait_for_model=False)
    (tmp_path / "notes.md").write_text(STORY, encoding="utf-8")
    assert window.open_path(tmp_path / "notes.md")
    document = window.editor.document()
    quiet = window.editor.palette().color(QPalette.ColorRole.PlaceholderText)

    def format_of(line: int, piece: str) -> QTextCharFormat:
        block = document.findBlockByNumber(line)
        formats = block.layout().formats()
        return {block.text()[r.start : r.start + r.length]: QTextCharFormat(r.format) for r in formats}[piece]

    assert format_of(2, "[^1]").foreground().color() == quiet
    assert format_of(4, "[^1]:").foreground().color() == quiet


def test_a_plain_text_and_a_waiting_draft_are_left_alone(document_window, tmp_path: Path, qtbot) -> None:
    path = tmp_path / "story.txt"
    path.write_text(STORY, encoding="utf-8")
    window = document_window(text="", candidates=1, max_denoising_steps=4)
    assert window.open_path(path)
    editor = window.editor
    assert not window.formatting.footnote.run()
    assert editor.plain_text() == STORY and window.statusBar().currentMessage() == PLAIN_TEXT
    markdown = tmp_path / "story.md"
    markdown.write_text(STORY, encoding="utf-8")
    assert window.open_path(markdown)
    select(window, "climbed the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    before = editor.plain_text()
    place_cursor(window, before.index("He lit"))
    assert not window.formatting.footnote.run()
    assert editor.plain_text() == before and window.statusBar().currentMessage() == WHILE_REWRITING


def test_the_mouse_on_a_reference_shows_its_words(make_window, tmp_path: Path, qtbot) -> None:
    window = make_window(wait_for_model=False)
    (tmp_path / "notes.md").write_text(STORY + "[^2]:\n", encoding="utf-8")
    assert window.open_path(tmp_path / "notes.md")
    window.show()
    qtbot.waitExposed(window)
    editor = window.editor
    command = window.formatting.footnote

    def point_at(position: int, offset: int = 0) -> tuple[int, int]:
        cursor = editor.textCursor()
        cursor.setPosition(position)
        rect = editor.cursorRect(cursor)
        return rect.left() + offset, rect.center().y()

    reference = STORY.index("[^1]")
    assert command.words_at(*point_at(reference, 3)) == "Footnote 1: In 1877."
    assert command.words_at(*point_at(reference - 3)) is None  # on "s." before it
    assert command.words_at(*point_at(STORY.index("[^1]:"), 3)) is None  # on its own line: no tooltip of itself
    editor.setPlainText(STORY.replace("lamp.", "lamp.[^2]") + "[^2]:\n")
    second = editor.plain_text().index("[^2]")
    assert command.words_at(*point_at(second, 3)).startswith("Footnote 2 has no words yet")
    assert command.words_at(*point_at(second + len("[^2]"), 200)) is None  # past the line's end, off the mark


def test_a_moved_chapters_notes_are_renumbered_in_one_undo_step(document_window) -> None:
    text = "# One\n\nA.[^1]\n\n# Two\n\nB.[^2]\n\n[^1]: first\n[^2]: second\n"
    window = document_window(text=text)
    window.outline.toggle_action.trigger()
    assert window.outline.move_section(1, up=True)  # Two above One; the notes' lines stay at the end
    moved = window.editor.plain_text()
    assert moved == "# Two\n\nB.[^2]\n\n# One\n\nA.[^1]\n\n[^1]: first\n[^2]: second\n"
    assert window.statusBar().currentMessage().endswith("out of order now: Format ▸ Renumber Footnotes.")
    renumber = window.formatting.footnote.renumber_action
    assert renumber in window.formatting.menu.actions() and renumber.isEnabled()
    renumber.trigger()
    assert window.editor.plain_text() == "# Two\n\nB.[^1]\n\n# One\n\nA.[^2]\n\n[^1]: second\n[^2]: first\n"
    assert not window.formatting.footnote.renumber()  # in order now
    assert window.statusBar().currentMessage() == "The footnotes are numbered in order already."
    window.undo()
    assert window.editor.plain_text() == moved
