"""The Format menu: Bold (Ctrl+B), Italic (Ctrl+Shift+I), Code, Strikethrough, Link, Headings (Ctrl+1…6), lists and
quotes, each putting Markdown's marks in or taking them out (the rules: ``app/documents/markdown_format.py``), as
one undo step, with the selection kept on the same words; and Footnote and Picture… (``footnote_command``,
``picture_command``). Italic is not Ctrl+I, which rewrites with an instruction.

Only a Markdown document (.md, or untitled) is formatted: in a .txt, ``*`` and ``#`` are the writer's own
characters, so there the menu is greyed out and says why. Text that a rewrite is developing in is left alone
until the draft is accepted or rejected; edits elsewhere go under the rewrite as the writer's typing does.

Enter at a list item starts the next one (and on an empty item ends the list), and Tab and Shift+Tab nest an
item or bring it out, as word processors and Markdown editors do; while a rewrite is open, Enter and Tab stay the
draft's (they accept a waiting one at the caret)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import QMenu, QStatusBar, QWidget

from app.documents.markdown_format import (
    Edit,
    Inline,
    LineKind,
    continuation,
    indent_items,
    is_markdown,
    set_heading,
    toggle_inline,
    toggle_lines,
    toggle_link,
)
from app.window.editor_widget import RewriteEditor
from app.window.epub_export import passage_html
from app.window.footnote_command import TIP as FOOTNOTE_TIP
from app.window.footnote_command import FootnoteCommand
from app.window.live_span import index_at, utf16_length
from app.window.picture_command import TIP as PICTURE_TIP
from app.window.picture_command import PictureCommand

Rule = Callable[[str, int, int], Edit]
NOT_MARKDOWN = (
    "Formatting writes Markdown's marks, and this is a plain-text file, where * and # stay as typed: "
    "save it as .md (File ▸ Save As…) to format it."
)
BEING_REWRITTEN = "That text is being rewritten: accept or reject the draft first, then format it."


class FormattingWindow(Protocol):
    @property
    def editor(self) -> RewriteEditor: ...

    @property
    def path(self) -> Path | None: ...

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name


class Formatting(QObject):
    """Format ▸ …: its actions, its menu, and the same entries on the text's right-click menu."""

    def __init__(self, window: FormattingWindow, parent: QWidget) -> None:
        super().__init__(parent)
        self.window = window
        window.editor.html_of_markdown = passage_html  # Copy: a Markdown passage's look, as the exports read it
        self.menu = QMenu("F&ormat", parent)
        self.menu.setToolTipsVisible(True)
        self.actions: list[QAction] = []
        inline = (("&Bold", Inline.BOLD, "Ctrl+B"), ("&Italic", Inline.ITALIC, "Ctrl+Shift+I"),
                  ("&Code", Inline.CODE, "Ctrl+Shift+C"), ("&Strikethrough", Inline.STRIKE, ""))  # fmt: skip
        for text, style, keys in inline:
            self._add(text, partial(toggle_inline, style=style), keys, f"Mark the selection {style.name.lower()}")
        link_tip = "Make the selection a link (to the address on the clipboard, if it holds one)"
        self.link_action = self._add("&Link", self._link_rule, "Ctrl+Shift+K", link_tip)
        self.menu.addSeparator()
        headings = self.menu.addMenu("&Heading")
        for level in range(1, 7):
            self._add(f"Heading &{level}", partial(set_heading, level=level), f"Ctrl+{level}",
                      f"Make the line a level-{level} heading (again: back to body text)", headings)  # fmt: skip
        self._add("&Body Text", partial(set_heading, level=0), "", "Make the line body text", headings)
        lists = (("B&ulleted List", LineKind.BULLET, "Ctrl+Shift+8"), ("&Numbered List", LineKind.NUMBERED,
                 "Ctrl+Shift+7"), ("&Quote", LineKind.QUOTE, "Ctrl+Shift+9"))  # fmt: skip
        for text, kind, keys in lists:
            self._add(text, partial(toggle_lines, kind=kind), keys, f"Make the lines a {text.replace('&', '').lower()}")
        self.menu.addSeparator()
        self.footnote = FootnoteCommand(window, parent)
        self.footnote.action.setData(FOOTNOTE_TIP)
        self.picture = PictureCommand(window, parent)  # also a picture file dropped on the text
        self.picture.action.setData(PICTURE_TIP)
        self.footnote.renumber_action.setData(self.footnote.renumber_action.toolTip())
        for action in (self.footnote.action, self.footnote.renumber_action, self.picture.action):
            self.menu.addAction(action)
            self.actions.append(action)
        self.menu.aboutToShow.connect(self.update_enabled)
        parent.windowTitleChanged.connect(lambda _title: self.update_enabled())  # a new file, maybe a .txt
        window.editor.context_menu_extras.append(self.offer)
        window.editor.installEventFilter(self)  # Enter in a list: the next item (``continue_list``)

    def _add(self, text: str, rule: Rule, keys: str, tip: str, menu: QMenu | None = None) -> QAction:
        action = QAction(text, self.parent())
        if keys:
            action.setShortcut(QKeySequence(keys))
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.setData(tip)
        action.triggered.connect(lambda _checked=False: self.apply(rule))
        (menu or self.menu).addAction(action)
        self.actions.append(action)
        return action

    def _link_rule(self, text: str, start: int, end: int) -> Edit:
        return toggle_link(text, start, end, QGuiApplication.clipboard().text())

    def update_enabled(self) -> None:
        """Greyed out in a plain-text file, saying why (its shortcut, pressed anyway, says it in the status bar)."""
        markdown = is_markdown(self.window.path)
        for action in self.actions:
            action.setEnabled(markdown)
            tip = str(action.data()) if markdown else NOT_MARKDOWN
            action.setToolTip(tip)
            action.setStatusTip(tip)

    def offer(self, menu: QMenu, _cursor: QTextCursor) -> None:
        """The right-click menu's Format submenu, in a Markdown document."""
        if is_markdown(self.window.path):
            self.update_enabled()
            menu.addSeparator()
            menu.addMenu(self.menu)

    def apply(self, rule: Rule) -> bool:
        """Apply ``rule`` to the lines the selection touches, as one undo step; whether the text changed."""
        window = self.window
        editor = window.editor
        if not is_markdown(window.path):
            window.statusBar().showMessage(NOT_MARKDOWN, 8000)
            return False
        document = editor.document()
        cursor = editor.textCursor()
        first, last = cursor.selectionStart(), cursor.selectionEnd()
        region_start = document.findBlock(first).position()
        last_block = document.findBlock(last)
        region_end = last_block.position() + last_block.length() - 1
        old = editor.text_between(region_start, region_end)
        edit = rule(old, index_at(old, first - region_start), index_at(old, last - region_start))
        if edit.text == old:
            return False
        live = editor.live_range()
        if live is not None and region_start <= live[1] and region_end >= live[0]:
            window.statusBar().showMessage(BEING_REWRITTEN, 6000)
            return False
        # Only the characters that differ are replaced, so the rest of the line (and any mark on it) stays put.
        same_head = 0
        while same_head < min(len(old), len(edit.text)) and old[same_head] == edit.text[same_head]:
            same_head += 1
        same_tail = 0
        while (same_tail < min(len(old), len(edit.text)) - same_head
               and old[-1 - same_tail] == edit.text[-1 - same_tail]):  # fmt: skip
            same_tail += 1
        replaced = QTextCursor(document)
        replaced.setPosition(region_start + utf16_length(old[:same_head]))
        replaced.setPosition(region_start + utf16_length(old[: len(old) - same_tail]), QTextCursor.MoveMode.KeepAnchor)
        middle = edit.text[same_head : len(edit.text) - same_tail]
        with editor.writer_edit():
            replaced.insertText(middle)
        # The region may have moved while the edit went under a rewrite elsewhere: found again from the insertion.
        new_start = replaced.position() - utf16_length(middle) - utf16_length(edit.text[:same_head])
        selection = QTextCursor(document)
        selection.setPosition(new_start + utf16_length(edit.text[: edit.start]))
        selection.setPosition(new_start + utf16_length(edit.text[: edit.end]), QTextCursor.MoveMode.KeepAnchor)
        editor.setTextCursor(selection)
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter at a list item or a quoted line starts the next (``markdown_format.continuation``); Tab and Shift+Tab
        on list items nest them deeper or bring them out (``markdown_format.indent_items``)."""
        if event.type() == QEvent.Type.KeyPress and watched is self.window.editor and isinstance(event, QKeyEvent):
            key, plain = event.key(), not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and plain and self.continue_list():
                return True
            if (key == Qt.Key.Key_Tab and plain or key == Qt.Key.Key_Backtab) and self.indent_list(
                key == Qt.Key.Key_Backtab
            ):
                return True
        return super().eventFilter(watched, event)

    def _list_keys_apply(self) -> bool:
        """Whether Enter and Tab may work a list here: a Markdown document with no rewrite open (those keys are the
        draft's then: Enter and Tab accept a waiting one)."""
        editor = self.window.editor
        return editor.live_span is None and not editor.isReadOnly() and is_markdown(self.window.path)

    def indent_list(self, outdent: bool) -> bool:
        """Tab (Shift+Tab) on the list items the selection touches; False where they are not all list items."""
        if not self._list_keys_apply():
            return False
        items = False

        def rule(text: str, start: int, end: int) -> Edit:
            nonlocal items
            edit = indent_items(text, start, end, outdent)
            items = edit is not None
            return edit or Edit(text, start, end)

        self.apply(rule)
        return items

    def continue_list(self) -> bool:
        """Enter in a Markdown list or quote: the next item's mark on the new line, or the mark taken off an empty
        item to end the list; one undo step. Whether it did."""
        editor = self.window.editor
        cursor = editor.textCursor()
        if not self._list_keys_apply() or cursor.hasSelection():
            return False
        line = cursor.block().text()
        step = continuation(line, index_at(line, cursor.positionInBlock()))
        if step is None:
            return False
        cursor.beginEditBlock()
        if step.end:
            cursor.movePosition(QTextCursor.MoveOperation.StartOfBlock)
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
        else:
            cursor.insertText("\n" + step.prefix)
        cursor.endEditBlock()
        editor.setTextCursor(cursor)
        editor.ensureCursorVisible()
        return True
