"""View ▸ Outline in a real window: the headings beside the text with their sections' words, the caret's section
marked, a click that takes the caret there and leaves the keys with the text, the panel following the writing,
a plain text's chapters, and the panel remembered and put aside in Focus Mode."""

from __future__ import annotations

from pathlib import Path

from gui_helpers import SIGNAL_TIMEOUT_MS, PassRecorder, place_cursor, select
from PySide6.QtCore import Qt

from app.documents.word_count import WordCounter
from app.window.headings import headings
from app.window.outline import EMPTY_MARKDOWN, PANEL_WIDTH, REFRESH_MS, WIDEST
from app.window.outline_tree import ARROW_ROOM
from app.window.section_words import section_words

BOOK = (
    "# Part One\n\nThe keeper climbed the stairs.\n\n## The Storm\n\nRain came 🌊 in from the sea at night.\n\n"
    "```\n# not a heading\n```\n\n## The Light\n\nIt held.\n"
)


def _rows(window) -> list[tuple[str, str]]:
    tree = window.outline.tree
    return [(tree.topLevelItem(i).text(0).removeprefix(ARROW_ROOM), tree.topLevelItem(i).text(1))
            for i in range(tree.topLevelItemCount())]  # fmt: skip


def test_each_sections_words_are_its_own() -> None:
    found = headings(BOOK, markdown=True)
    assert [h.title for h in found] == ["Part One", "The Storm", "The Light"]
    # Marks, fences and the emoji are no words; a part counts its chapters' headings and words too.
    assert section_words(BOOK, found) == [5 + 2 + 11 + 2 + 2, 8 + 3, 2]
    noted = BOOK.replace("It held.", "It held.<!-- Ed: did it? -->")
    assert section_words(noted, found, markdown=True)[2] == 2  # a note is no word of its section
    assert section_words(noted, found)[2] == 5  # in a plain text its signs are words


def test_the_outline_lists_headings_marks_the_caret_and_a_click_gives_the_keys_back(document_window, qtbot) -> None:
    window = document_window(text=BOOK)
    outline = window.outline
    assert not outline.isVisible()  # off until the writer asks for it
    window.outline.toggle_action.trigger()
    assert outline.isVisible() and window.prefs.outline_panel
    assert _rows(window) == [("Part One", "22"), ("    The Storm", "11"), ("    The Light", "2")]
    place_cursor(window, BOOK.index("from the sea"))
    assert outline.tree.currentItem() is outline.tree.topLevelItem(1)
    window.editor.setFocus()
    rect = outline.tree.visualItemRect(outline.tree.topLevelItem(2))
    qtbot.mouseClick(outline.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    light = BOOK.index("## The Light")
    assert window.editor.textCursor().position() == len(BOOK[:light].encode("utf-16-le")) // 2  # past 🌊: +1
    assert window.editor.hasFocus() or not window.isActiveWindow()  # the keys stay with the text
    qtbot.keyClicks(window.editor, "X")
    assert window.editor.plain_text().startswith(BOOK[: BOOK.index("## The Light")] + "X## The Light")


def test_the_outline_follows_the_writing(document_window, qtbot) -> None:
    window = document_window(text="Nothing here yet.\n")
    window.outline.toggle_action.trigger()
    assert window.outline.empty.text() == EMPTY_MARKDOWN
    assert window.outline.stack.currentWidget() is window.outline.empty
    place_cursor(window, 0)
    qtbot.keyClick(window.editor, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)  # Format ▸ Heading 1
    qtbot.waitUntil(lambda: _rows(window) == [("Nothing here yet.", "0")], timeout=REFRESH_MS * 10)
    assert window.outline.stack.currentWidget() is window.outline.tree


def test_a_refresh_changes_the_rows_in_place(document_window, qtbot) -> None:
    window = document_window(text=BOOK)
    window.outline.toggle_action.trigger()
    tree = window.outline.tree
    before = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    place_cursor(window, len(BOOK[: BOOK.index("It held.") + 3].encode("utf-16-le")) // 2)  # Qt counts 🌊 twice
    window.editor.insertPlainText("firmly and ")
    window.outline.refresh()
    assert _rows(window) == [("Part One", "24"), ("    The Storm", "11"), ("    The Light", "4")]
    assert [tree.topLevelItem(i) for i in range(3)] == before  # the same rows: a novel's 380 were made again
    assert tree.topLevelItem(2).toolTip(1) == "4 words in this section"
    window.editor.setPlainText(BOOK.replace("## The Storm", "The Storm"))  # a heading gone, its row with it
    window.outline.refresh()
    assert _rows(window) == [("Part One", "22"), ("    The Light", "2")]
    window.editor.setPlainText(BOOK + "\n# Part Two\n")  # and one come
    window.outline.refresh()
    assert _rows(window)[-1] == ("Part Two", "0")


def test_a_rewrite_of_a_heading_reaches_the_outline_when_it_ends_not_at_every_pass(document_window, qtbot) -> None:
    """Refreshed at every pass, War and Peace's outline stalled a rewrite for seconds: the span's passes leave the
    outline alone, and the draft accepted (or the original back) is listed."""
    window = document_window(text=BOOK, candidates=1, max_denoising_steps=10)
    window.outline.toggle_action.trigger()
    timer = window.outline.timer
    started: list[bool] = []
    recorder = PassRecorder(window, lambda _job, _painted: started.append(timer.isActive()))
    select(window, "Storm")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.last_result is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert len(recorder.passes) >= 3 and not any(started)
    window.accept_rewrite()
    title = window.editor.plain_text().split("\n")[4].removeprefix("## ")
    assert title != "The Storm"
    qtbot.waitUntil(lambda: _rows(window)[1] == ("    " + title, _rows(window)[1][1]), timeout=REFRESH_MS * 10)


def test_a_plain_texts_sections_count_the_same_by_lines_or_by_slices() -> None:
    """A plain text without tracked changes or emoji is counted line by line, once (a novel's refresh); the same
    figures as each section sliced out and counted, which a text with either still is."""
    text = ("PART ONE\n\nCHAPTER I. The Stairs\n\nThe keeper climbed the stairs.\n\nCHAPTER II\n\nRain came in."
            "\n\nPART TWO\n\nCHAPTER III\n\nIt held, and the light turned.\n")  # fmt: skip
    found = headings(text, markdown=False)
    counter = WordCounter()
    expected = [4 + 5 + 2 + 3, 5, 3, 2 + 6, 6]  # a part's chapter lines are its words
    assert section_words(text, found, count=counter) == expected
    assert section_words(text, found) == expected  # count_words itself, line by line
    # An emoji (two of Qt's positions) and a tracked change (made) send it the other way: the same counts.
    with_emoji = text.replace("Rain came in.", "Rain came 🌊 in.")
    assert section_words(with_emoji, headings(with_emoji, markdown=False), count=counter) == expected
    changed = text.replace("Rain came in.", "Rain {++soon ++}came in.")
    assert section_words(changed, headings(changed, markdown=False), count=counter)[2] == 4


def test_a_plain_texts_chapters_are_its_outline(document_window, tmp_path: Path) -> None:
    path = tmp_path / "book.txt"
    path.write_text("CHAPTER I. Down the Rabbit-Hole\n\nAlice was beginning.\n\nCHAPTER II. The Pool\n\nCurious.\n")
    window = document_window(text="")
    window.outline.toggle_action.trigger()
    assert window.open_path(path)
    window.outline.refresh()
    assert _rows(window) == [("CHAPTER I. Down the Rabbit-Hole", "3"), ("CHAPTER II. The Pool", "1")]
    # Numbered only, in parts, the title a line below the number: the parts hold their chapters and their words.
    path.write_text("PART ONE\n\n I\n\n Introduction\n\nThe Time Traveller was expounding.\n\n II\n\nThe thing he "
                    "held.\n\nPART TWO\n\n III\n\n The Morlocks\n\nDark.\n\nEpilogue\n\nThe end.\n")  # fmt: skip
    assert window.open_path(path)
    window.outline.refresh()
    assert _rows(window) == [("PART ONE", "12"), ("    I. Introduction", "5"), ("    II", "4"), ("PART TWO", "4"),
                             ("    III. The Morlocks", "1"), ("Epilogue", "2")]  # fmt: skip


def test_the_outline_is_remembered_and_put_aside_in_focus_mode(document_window, make_window) -> None:
    window = document_window(text=BOOK)
    window.outline.toggle_action.trigger()
    window.focus_mode.action.trigger()
    assert not window.outline.isVisible()
    window.focus_mode.action.trigger()
    assert window.outline.isVisible()
    again = make_window(wait_for_model=False)
    assert again.outline.isVisible()


def test_the_outline_is_dark_in_the_dark_theme(document_window, qtbot) -> None:
    from dataclasses import replace

    window = document_window(text=BOOK)
    window.outline.toggle_action.trigger()
    try:
        for theme, dark in (("dark", True), ("light", False)):
            window.apply_preferences(replace(window.prefs, theme=theme))
            qtbot.wait(50)  # the palette's change reaches the panel's widgets as events
            tree = window.outline.tree
            image = tree.viewport().grab().toImage()
            corner = image.pixelColor(image.width() - 3, image.height() - 3)  # below the last heading: the ground
            assert (corner.lightness() < 128) is dark, (theme, corner.name())
    finally:
        window.apply_preferences(replace(window.prefs, theme="light"))


def test_long_titles_widen_the_outline_into_the_margins_not_into_the_text(document_window, qtbot) -> None:
    long_titles = "".join(f"## Chapter {n}: The Fellow of No Delicacy Whatever\n\nWords.\n\n" for n in range(3))
    window = document_window(text="# Book the Second--the Golden Thread\n\n" + long_titles)
    window.resize(1800, 900)
    window.show()
    qtbot.waitExposed(window)
    editor = window.editor
    column = editor.viewport().width()
    window.outline.toggle_action.trigger()
    tree = window.outline.tree
    title = tree.topLevelItem(1).text(0)
    needed = tree.fontMetrics().horizontalAdvance(title)
    qtbot.waitUntil(lambda: window.outline.width() > PANEL_WIDTH + 40, timeout=SIGNAL_TIMEOUT_MS)
    qtbot.waitUntil(lambda: tree.columnWidth(0) >= needed, timeout=SIGNAL_TIMEOUT_MS)  # no title cut short
    assert window.outline.width() <= WIDEST and editor.viewport().width() == column  # the column kept its width
    narrow = document_window(text="# Book the Second--the Golden Thread\n\n" + long_titles)
    narrow.resize(1000, 700)
    narrow.show()
    qtbot.waitExposed(narrow)
    if not narrow.outline.isVisible():  # the first window's Outline, shown, is remembered for the next
        narrow.outline.toggle_action.trigger()
    qtbot.waitUntil(lambda: not narrow.outline.timer.isActive(), timeout=SIGNAL_TIMEOUT_MS)  # its text outlined
    qtbot.wait(50)  # and fitted
    assert narrow.outline.isVisible() and narrow.outline.width() == PANEL_WIDTH  # no margins: the text keeps its room

    narrow.resize(1800, 900)  # maximised after the book opened: the titles take the room it gives
    qtbot.waitUntil(lambda: narrow.outline.width() > PANEL_WIDTH + 40, timeout=SIGNAL_TIMEOUT_MS)
    assert narrow.outline.width() <= WIDEST


def test_a_text_opened_is_outlined_at_once_and_typing_waits_for_a_pause(document_window, tmp_path: Path,
                                                                         qtbot) -> None:
    window = document_window(text="")
    window.outline.toggle_action.trigger()
    novel = tmp_path / "novel.txt"
    novel.write_text("CHAPTER I\n\n" + "Words. " * 400 + "\n\nCHAPTER II\n\nMore words.\n", encoding="utf-8")
    assert window.open_path(novel)
    assert not window.outline.timer.isActive()  # not waiting for a pause in typing
    qtbot.waitUntil(lambda: [title for title, _ in _rows(window)] == ["CHAPTER I", "CHAPTER II"], timeout=200)
    book = tmp_path / "book.md"
    book.write_text(BOOK + "Words. " * 400, encoding="utf-8")
    assert window.open_path(book)  # read as Markdown now: its # lines, not chapter lines
    qtbot.waitUntil(lambda: [title.strip() for title, _ in _rows(window)] == ["Part One", "The Storm", "The Light"],
                    timeout=200)  # fmt: skip
    place_cursor(window, 0)
    qtbot.keyClicks(window.editor, "## Prologue")
    qtbot.keyClick(window.editor, Qt.Key.Key_Return)
    assert len(_rows(window)) == 3 and window.outline.timer.isActive()  # a keystroke: after the pause
    qtbot.waitUntil(lambda: len(_rows(window)) == 4, timeout=REFRESH_MS * 10)


CHAPTERS = "# One\n\nFirst words.\n\n# Two 🌊\n\nSecond words.\n\n# Three\n\nLast words."


def test_alt_shift_down_moves_a_section_past_the_next_as_one_undo_step(document_window, qtbot) -> None:
    window = document_window(text=CHAPTERS)  # the Outline hidden: the keys work all the same
    editor = window.editor
    place_cursor(window, CHAPTERS.index("First"))
    assert [action.text() for action in window.outline.move_actions] == ["M&ove Section Up", "Move Section &Down"]
    assert all(action in window.edit_menu.actions() for action in window.outline.move_actions)
    qtbot.keyClick(editor, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.ShiftModifier)
    moved = "# Two 🌊\n\nSecond words.\n\n# One\n\nFirst words.\n\n# Three\n\nLast words."
    assert editor.plain_text() == moved
    assert editor.textCursor().position() == len("# Two 🌊\n\nSecond words.\n\n") + 1  # on its heading; 🌊 is two
    window.outline.toggle_action.trigger()
    assert [title.strip() for title, _ in _rows(window)] == ["Two 🌊", "One", "Three"]
    window.undo()
    assert editor.plain_text() == CHAPTERS


def test_the_last_section_moved_up_keeps_the_texts_ending_and_the_first_goes_no_higher(document_window) -> None:
    window = document_window(text=CHAPTERS)
    window.outline.toggle_action.trigger()
    assert window.outline.move_section(2, up=True)
    assert window.editor.plain_text() == "# One\n\nFirst words.\n\n# Three\n\nLast words.\n\n# Two 🌊\n\nSecond words."
    assert not window.outline.move_section(0, up=True)
    assert window.statusBar().currentMessage().startswith("“One” is the first section under its heading")


def test_a_section_stays_put_while_a_draft_waits(document_window, qtbot) -> None:
    window = document_window(text=CHAPTERS, candidates=1, max_denoising_steps=4)
    select(window, "Second words")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    before = window.editor.plain_text()
    assert not window.outline.move_section(0, up=False)
    assert window.editor.plain_text() == before
    assert "accept or reject the draft first" in window.statusBar().currentMessage()


def _drag(tree, row: int, to_row: int, upper: bool, data=None) -> bool:
    """Row ``row`` dragged over the upper (or lower) half of row ``to_row``, as Qt delivers a drag: enter, move,
    then the drop; whether the panel offered a place there."""
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
    from PySide6.QtWidgets import QApplication

    rect = tree.visualItemRect(tree.topLevelItem(to_row))
    point = QPoint(rect.center().x(), rect.top() + 2 if upper else rect.bottom() - 2)
    data = tree.row_data(row) if data is None else data
    move, buttons, keys = Qt.DropAction.MoveAction, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    QApplication.sendEvent(tree.viewport(), QDragEnterEvent(point, move, data, buttons, keys))
    over = QDragMoveEvent(point, move, data, buttons, keys)
    QApplication.sendEvent(tree.viewport(), over)
    if over.isAccepted():
        QApplication.sendEvent(tree.viewport(), QDropEvent(QPointF(point), move, data, buttons, keys))
    return over.isAccepted()


def test_a_row_dragged_moves_its_section_where_it_is_dropped_as_one_undo_step(document_window) -> None:
    book = "# Part One\n\n## Storm\n\nRain.\n\n## Light\n\nHeld.\n\n# Part Two\n\n## Calm\n\nQuiet.\n"
    window = document_window(text=book)
    window.outline.toggle_action.trigger()
    tree, editor = window.outline.tree, window.editor
    # Calm over the lower half of Storm: before Light, out of Part Two into Part One.
    assert _drag(tree, 4, 1, upper=False)
    assert editor.plain_text() == ("# Part One\n\n## Storm\n\nRain.\n\n## Calm\n\nQuiet.\n\n## Light\n\nHeld.\n\n"
                                   "# Part Two\n")
    assert [title.strip() for title, _ in _rows(window)] == ["Part One", "Storm", "Calm", "Light", "Part Two"]
    assert editor.textCursor().position() == editor.plain_text().index("## Calm")  # the caret on its heading
    assert "Moved “Calm” before “Light”" in window.statusBar().currentMessage()
    window.undo()
    assert editor.plain_text() == book
    # Dropped before the rows have caught up with the undo: refused, not moved by the old rows' places.
    assert _drag(tree, 0, 4, upper=False)
    assert editor.plain_text() == book and "drag the row again" in window.statusBar().currentMessage()
    assert [title.strip() for title, _ in _rows(window)] == ["Part One", "Storm", "Light", "Part Two", "Calm"]
    # Where a section of its level may not stand, no place is offered and nothing moves: Part One between
    # Storm and Light (inside itself), Part Two above Calm (it would take Calm as its own).
    assert not _drag(tree, 0, 2, upper=True)
    assert not _drag(tree, 3, 4, upper=True) and editor.plain_text() == book
    # A row from another panel (another window's Outline) is not taken.
    other = type(tree)(lambda row, before: None, list)
    assert not _drag(tree, 1, 3, upper=True, data=other.row_data(1)) and editor.plain_text() == book
    assert _drag(tree, 1, 3, upper=True)  # the same row of its own: taken
    window.undo()
    window.outline.refresh()  # as the pause after the undo does
    # Part One dropped below the last row: after Part Two, the text's ending kept at the end.
    assert _drag(tree, 0, 4, upper=False)
    assert editor.plain_text() == ("# Part Two\n\n## Calm\n\nQuiet.\n\n# Part One\n\n## Storm\n\nRain.\n\n"
                                   "## Light\n\nHeld.\n")


def test_a_part_folds_away_its_chapters_at_its_arrow_and_a_drop_below_it_lands_after_them(document_window, qtbot
                                                                                          ) -> None:  # fmt: skip
    from app.window.outline_tree import FOLD_ROLE, arrow_rect

    book = "# Part One\n\n## Storm\n\nRain.\n\n## Light\n\nHeld.\n\n# Part Two\n\n## Calm\n\nQuiet.\n"
    window = document_window(text=book)
    window.outline.toggle_action.trigger()
    tree, editor = window.outline.tree, window.editor
    place_cursor(window, book.index("Held"))
    assert [tree.topLevelItem(row).data(0, FOLD_ROLE) for row in range(5)] == [False, None, None, False, None]

    def arrow(row: int):
        item = tree.topLevelItem(row)
        return arrow_rect(tree, tree.visualItemRect(item), 1 if row in (0, 3) else 2).center()

    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=arrow(0))
    assert [tree.topLevelItem(row).isHidden() for row in range(5)] == [False, True, True, False, False]
    described = [tree.topLevelItem(row).data(0, Qt.ItemDataRole.AccessibleDescriptionRole) for row in (0, 1, 3)]
    assert described == ["level 1, folded, 4 words", "level 2, 1 word", "level 1, open, 2 words"]  # as shown
    assert editor.textCursor().position() == book.index("Held")  # a fold is no click on the heading
    assert tree.currentItem() is tree.topLevelItem(0)  # the caret's chapter is folded: its part is marked
    # Folds outlive the typing: the rows made again keep Part One folded.
    editor.textCursor().insertText("Still ")
    window.outline.refresh()
    assert tree.topLevelItem(1).isHidden() and tree.topLevelItem(0).data(0, FOLD_ROLE) is True
    # Calm dropped on the lower half of the folded part: after its chapters, not among them.
    assert _drag(tree, 4, 0, upper=False)
    assert editor.plain_text().index("## Calm") > editor.plain_text().index("Still Held.")
    assert editor.plain_text().index("## Calm") < editor.plain_text().index("# Part Two")
    window.undo()
    window.outline.refresh()
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=arrow(0))
    assert not any(tree.topLevelItem(row).isHidden() for row in range(5))
    window.outline.fold_all(True)  # the right-click menu's Fold All: every part down to its line
    assert [tree.topLevelItem(row).isHidden() for row in range(5)] == [False, True, True, False, True]
    window.outline.fold_all(False)
    # A chapter has no arrow: a click in that room goes to it as anywhere on its row.
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=arrow(4))
    assert editor.textCursor().position() == editor.plain_text().index("## Calm")


def test_folding_one_of_two_headings_of_the_same_name_folds_that_one(document_window) -> None:
    book = "# Notes\n\n## A\n\nOne.\n\n# Notes\n\n## B\n\nTwo.\n"
    window = document_window(text=book)
    window.outline.toggle_action.trigger()
    tree = window.outline.tree
    window.outline.fold(2)
    assert [tree.topLevelItem(row).isHidden() for row in range(4)] == [False, False, False, True]


def test_select_section_selects_a_part_with_its_chapters_to_its_last_word(document_window) -> None:
    book = "# Part One\n\n## Storm 🌊\n\nRain.\n\n## Light\n\nHeld.\n\n# Part Two\n\nQuiet.[^1]\n\n[^1]: A note.\n"
    window = document_window(text=book)
    window.outline.toggle_action.trigger()
    window.outline.select_section(0)
    assert window.editor.textCursor().selectedText() == (
        "# Part One\u2029\u2029## Storm 🌊\u2029\u2029Rain.\u2029\u2029## Light\u2029\u2029Held.")
    window.outline.select_section(3)  # the last: to its last word, the notes at the end left out
    assert window.editor.textCursor().selectedText() == "# Part Two\u2029\u2029Quiet.[^1]"


def test_a_move_undone_or_redone_leaves_the_caret_on_the_moved_heading(document_window, qtbot) -> None:
    book = "# Part One\n\n## Storm\n\nRain.\n\n# Part Two\n\n## Calm\n\nQuiet.\n\n# Part Three\n\nEnd.\n"
    window = document_window(text=book)
    window.outline.toggle_action.trigger()
    editor, tree = window.editor, window.outline.tree
    place_cursor(window, book.index("Rain"))
    ctrl, shift = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier
    assert window.outline.move_section(0, up=False)  # Part One past Part Two
    moved = editor.plain_text()
    assert moved.startswith("# Part Two") and editor.textCursor().position() == moved.index("# Part One")
    qtbot.keyClick(editor, Qt.Key.Key_Z, ctrl)  # the editor's own Ctrl+Z
    # Qt left the caret past the section put back, on Part Two's heading, and the Outline marked Part Two.
    assert editor.plain_text() == book and editor.textCursor().position() == 0
    window.outline.refresh()
    assert tree.current_row() == 0  # Part One
    qtbot.keyClick(editor, Qt.Key.Key_Z, ctrl | shift)  # redone: on the moved heading again
    assert editor.plain_text() == moved and editor.textCursor().position() == moved.index("# Part One")
    window.undo()
    assert editor.textCursor().position() == 0
    # A new step where the move was in the undo history: its undo goes where it changed the text, as ever.
    place_cursor(window, book.index("End."))
    qtbot.keyClicks(editor, "The ")
    window.undo()
    assert editor.plain_text() == book and editor.textCursor().position() == book.index("End.")
    # The move further back in the history is gone from it (redo is past), and the step before it keeps Qt's caret.
    assert window.editor.undo_carets.carets == {}
