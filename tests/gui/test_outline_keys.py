"""The Outline from the keyboard (app/window/outline.py, outline_tree.py): F6 sends the keys to its rows and back,
Up and Down (or a title's first letters) choose a heading without moving the caret, Enter goes there, Left and
Right fold and step as in a tree of folders, Alt+Shift+Up/Down move the row's section, the menu key opens the
row's menu, and a screen reader hears each row's title, level and fold."""

from __future__ import annotations

from gui_helpers import place_cursor
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QColor, QContextMenuEvent, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu

BOOK = "# Part One\n\n## Storm\n\nRain.\n\n## Light\n\nHeld.\n\n# Part Two\n\n## Calm\n\nQuiet.\n"
KEYS_MOVE = Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.ShiftModifier


def _window_with_keys_in_the_text(document_window, text: str = BOOK):
    window = document_window(text=text)
    window.activateWindow()
    window.editor.setFocus()
    return window


def _shown(tree) -> list[bool]:
    return [not tree.topLevelItem(row).isHidden() for row in range(tree.topLevelItemCount())]


def test_f6_sends_the_keys_to_the_outline_where_enter_goes_to_a_heading_and_esc_comes_back(document_window) -> None:
    window = _window_with_keys_in_the_text(document_window)
    editor, outline, tree = window.editor, window.outline, window.outline.tree
    assert set(window.panes.actions) <= set(window.view_menu.actions())
    shortcuts = window.show_shortcuts().browser.toPlainText()  # Help ▸ Keyboard Shortcuts: the key, and the rows'
    assert "Next Pane\nF6" in shortcuts and "Previous Pane\nShift+F6" in shortcuts
    assert "In the Outline (F6 takes the keys there): Up and Down" in shortcuts
    assert not outline.isVisible()
    place_cursor(window, BOOK.index("Held"))
    QTest.keyClick(editor, Qt.Key.Key_F6)
    assert outline.isVisible() and window.prefs.outline_panel  # shown for it, and remembered
    assert tree.hasFocus() and tree.current_row() == 2  # on the caret's heading, Light
    assert window.statusBar().currentMessage().startswith("In the Outline: Up and Down choose a heading")
    QTest.keyClick(tree, Qt.Key.Key_Down)
    QTest.keyClick(tree, Qt.Key.Key_Down)
    assert tree.current_row() == 4  # Calm
    assert editor.textCursor().position() == BOOK.index("Held")  # choosing a row moves no caret
    QTest.keyClick(tree, Qt.Key.Key_Return)
    assert editor.textCursor().position() == BOOK.index("## Calm") and editor.hasFocus()
    assert window.statusBar().currentMessage() == ""  # the Outline's keys' hint went with them
    QTest.keyClicks(editor, "X")
    assert "X## Calm" in editor.plain_text()  # typed where the writer looks
    window.undo()
    # Esc: the keys back to the text, the caret where it was.
    QTest.keyClick(editor, Qt.Key.Key_F6)
    QTest.keyClick(tree, Qt.Key.Key_Up)
    QTest.keyClick(tree, Qt.Key.Key_Escape)
    assert editor.hasFocus() and editor.textCursor().position() == BOOK.index("## Calm")
    assert tree.current_row() == 4  # the caret's section marked again, not the row the keys left
    # F6 in the Outline comes back too; hiding the Outline with the keys in it gives them to the text.
    QTest.keyClick(editor, Qt.Key.Key_F6)
    QTest.keyClick(tree, Qt.Key.Key_F6)
    assert editor.hasFocus()
    QTest.keyClick(editor, Qt.Key.Key_F6)
    outline.toggle_action.trigger()
    assert not outline.isVisible() and editor.hasFocus()
    # A click on a row takes the caret there and never leaves the keys in the panel.
    outline.toggle_action.trigger()
    QTest.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=tree.visualItemRect(tree.topLevelItem(1)).center())
    assert editor.hasFocus() and not tree.hasFocus()


def test_f6_in_a_text_without_headings_says_how_to_make_one_and_keeps_the_keys(document_window) -> None:
    window = _window_with_keys_in_the_text(document_window, "Just one paragraph.\n")
    QTest.keyClick(window.editor, Qt.Key.Key_F6)
    assert window.outline.isVisible() and window.editor.hasFocus()
    assert window.statusBar().currentMessage().startswith("No headings yet. A line that starts with #")


def test_left_and_right_fold_and_step_and_letters_choose_a_title(document_window, qtbot) -> None:
    window = _window_with_keys_in_the_text(document_window)
    editor, outline, tree = window.editor, window.outline, window.outline.tree
    place_cursor(window, BOOK.index("Held"))
    QTest.keyClick(editor, Qt.Key.Key_F6)
    QTest.keyClick(tree, Qt.Key.Key_Left)  # a chapter: out to its part
    assert tree.current_row() == 0 and _shown(tree) == [True] * 5
    QTest.keyClick(tree, Qt.Key.Key_Left)  # an open part: folded, the keys still on it
    assert _shown(tree) == [True, False, False, True, True] and tree.current_row() == 0 and tree.hasFocus()
    described = tree.topLevelItem(0).data(0, Qt.ItemDataRole.AccessibleDescriptionRole)
    assert described == "level 1, folded, 4 words" and window.statusBar().currentMessage() == "“Part One” folded"
    QTest.keyClick(tree, Qt.Key.Key_Down)  # past the folded chapters
    assert tree.current_row() == 3
    QTest.keyClick(tree, Qt.Key.Key_Up)
    QTest.keyClick(tree, Qt.Key.Key_Right)  # unfolded
    assert _shown(tree) == [True] * 5 and tree.current_row() == 0
    QTest.keyClick(tree, Qt.Key.Key_Right)  # into it
    assert tree.current_row() == 1
    QTest.keyClick(tree, Qt.Key.Key_Right)  # a chapter: nothing under it
    assert tree.current_row() == 1 and editor.textCursor().position() == BOOK.index("Held")
    # Letters typed: the next title starting with them, past the rows' indent.
    QTest.keyClicks(tree, "ca")
    assert tree.current_row() == 4
    qtbot.wait(QApplication.keyboardInputInterval() + 100)
    QTest.keyClicks(tree, "p")  # from Calm on, round to the first part
    assert tree.current_row() == 0
    QTest.keyClicks(tree, "p")  # the same letter again: the next of them
    assert tree.current_row() == 3
    # Folded with the caret inside: its part's row is marked while the keys are in the text again.
    QTest.keyClick(tree, Qt.Key.Key_Escape)
    outline.fold(0)
    assert tree.current_row() == 0


def test_alt_shift_down_in_the_outline_moves_the_rows_section_and_the_keys_stay_on_it(document_window) -> None:
    window = _window_with_keys_in_the_text(document_window)
    editor, tree = window.editor, window.outline.tree
    place_cursor(window, BOOK.index("Held"))  # the caret in Light
    QTest.keyClick(editor, Qt.Key.Key_F6)
    QTest.keyClick(tree, Qt.Key.Key_Up)  # the keys on Storm
    QTest.keyClick(tree, Qt.Key.Key_Down, KEYS_MOVE)
    assert editor.plain_text() == BOOK.replace("## Storm\n\nRain.\n\n## Light\n\nHeld.",
                                               "## Light\n\nHeld.\n\n## Storm\n\nRain.")  # fmt: skip
    assert tree.hasFocus() and tree.current_row() == 2  # Storm, moved: once more moves it on
    QTest.keyClick(tree, Qt.Key.Key_Down, KEYS_MOVE)  # the last chapter of its part: it stays
    assert "is the last section under its heading" in window.statusBar().currentMessage()
    window.undo()
    assert editor.plain_text() == BOOK


def test_the_menu_key_opens_the_rows_menu_and_select_section_selects_that_section(document_window) -> None:
    window = _window_with_keys_in_the_text(document_window)
    editor, tree = window.editor, window.outline.tree
    place_cursor(window, BOOK.index("Rain"))
    QTest.keyClick(editor, Qt.Key.Key_F6)
    QTest.keyClick(tree, Qt.Key.Key_End)  # Calm
    seen: list[list[str]] = []

    def choose_select_section() -> None:
        menu = QApplication.activePopupWidget()
        assert isinstance(menu, QMenu)
        seen.append([action.text() for action in menu.actions() if not action.isSeparator()])
        menu.actions()[0].trigger()
        menu.close()

    QTimer.singleShot(0, choose_select_section)
    # The menu key, as the platform sends it: a context-menu event from the keyboard at the view's frame.
    corner = tree.rect().topLeft()
    QApplication.sendEvent(tree, QContextMenuEvent(QContextMenuEvent.Reason.Keyboard, corner, tree.mapToGlobal(corner)))
    assert seen and seen[0][:2] == ["&Select Section", "M&ove Section Up"]
    assert editor.textCursor().selectedText() == "## Calm\u2029\u2029Quiet."
    assert window.focusWidget() is editor  # the keys to the text (offscreen, a closed menu leaves no window active)
    window.activateWindow()
    # Shift+F10 opens the same menu for the row the keys are on.
    QTest.keyClick(editor, Qt.Key.Key_F6)  # the keys back on the caret's heading: Calm, where the selection is
    QTest.keyClick(tree, Qt.Key.Key_Home)
    QTimer.singleShot(0, choose_select_section)
    QTest.keyClick(tree, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    assert len(seen) == 2 and window.focusWidget() is editor
    assert editor.textCursor().selectedText().startswith("# Part One\u2029")
    assert editor.textCursor().selectedText().endswith("Held.")


def test_a_screen_reader_hears_each_rows_title_level_fold_and_words(document_window) -> None:
    window = _window_with_keys_in_the_text(document_window)
    window.outline.toggle_action.trigger()
    tree = window.outline.tree
    roles = (Qt.ItemDataRole.AccessibleTextRole, Qt.ItemDataRole.AccessibleDescriptionRole)
    heard = [tuple(tree.topLevelItem(row).data(0, role) for role in roles) for row in range(5)]
    assert heard == [("Part One", "level 1, open, 4 words"), ("Storm", "level 2, 1 word"), ("Light", "level 2, 1 word"),
                     ("Part Two", "level 1, open, 2 words"), ("Calm", "level 2, 1 word")]  # fmt: skip
    place_cursor(window, BOOK.index("Rain"))
    window.editor.textCursor().insertText("Wind. ")  # the words change: what is heard follows
    window.outline.refresh()
    assert tree.topLevelItem(0).data(0, roles[1]) == "level 1, open, 5 words"


def test_the_marked_row_is_soft_while_the_keys_are_with_the_text_and_strong_in_the_outline(document_window) -> None:
    from app.window.outline_tree import soft_highlight

    window = _window_with_keys_in_the_text(document_window)
    window.outline.toggle_action.trigger()
    tree = window.outline.tree

    def marked_colour() -> tuple[int, int, int]:
        row = tree.visualItemRect(tree.topLevelItem(0))
        between = QPoint(tree.header().sectionSize(0) - 4, row.center().y())  # past the title, before the count
        colour = tree.viewport().grab().toImage().pixelColor(between)
        return colour.red(), colour.green(), colour.blue()

    def near(colour: tuple[int, int, int], wanted: QColor) -> bool:
        return all(abs(a - b) <= 2 for a, b in zip(colour, (wanted.red(), wanted.green(), wanted.blue()), strict=True))

    colours = tree.palette()
    assert tree.current_row() == 0 and near(marked_colour(), soft_highlight(colours))
    QTest.keyClick(window.editor, Qt.Key.Key_F6)
    assert tree.hasFocus() and near(marked_colour(), colours.color(QPalette.ColorRole.Highlight))
    assert soft_highlight(colours) != colours.color(QPalette.ColorRole.Highlight)


def test_edit_select_section_selects_the_carets_section_or_the_rows_and_says_where_there_is_none(document_window
                                                                                                ) -> None:  # fmt: skip
    window = _window_with_keys_in_the_text(document_window, "Before any heading.\n\n" + BOOK)
    editor, outline, tree = window.editor, window.outline, window.outline.tree
    assert outline.select_action in window.edit_menu.actions()  # the Outline hidden: it works all the same
    place_cursor(window, 3)
    outline.select_action.trigger()
    assert not editor.textCursor().hasSelection()
    assert window.statusBar().currentMessage() == "The cursor is in no section: a heading starts one."
    place_cursor(window, editor.plain_text().index("Held"))
    outline.select_action.trigger()
    assert editor.textCursor().selectedText() == "## Light\u2029\u2029Held."
    # With the keys in the Outline, the row's section: Part Two, where the keys are, not Light, where the caret is.
    QTest.keyClick(editor, Qt.Key.Key_F6)
    QTest.keyClick(tree, Qt.Key.Key_Down)
    outline.select_action.trigger()
    assert editor.textCursor().selectedText() == "# Part Two\u2029\u2029## Calm\u2029\u2029Quiet." and editor.hasFocus()
