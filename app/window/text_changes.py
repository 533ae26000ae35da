"""Edit ▸ Tracked Changes: the changes marked in the text as CriticMarkup (``app/documents/critic_markup.py``), as an
editor's Word changes arrive when the writer chooses to review each one (File ▸ Open).

Next Change and Previous Change select a change; Accept Change and Reject Change settle the one the caret is in (its
new words, or its old ones, replace the whole mark) and select the next; Accept All Changes and Reject All Changes
settle every one, and By Author (or a right-click on a signed change) every one of one editor's. Each decision is
one undo step. These are the same actions (and keys) that step through a finished draft's changes
(``app/rewrite/tracked_changes.py``), which hands them here while no draft waits.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction, QTextCursor
from PySide6.QtWidgets import QMenu, QStatusBar

from app.documents.critic_markup import Mark, marks
from app.window.editor_widget import RewriteEditor
from app.window.spelling import disabled, qt_ranges, top_of

NONE_IN_TEXT = (
    "No tracked changes in the text. A Word or LibreOffice document's changes are marked here when you open it "
    "and choose Review Each."
)

# One change's two answers, with the same letters wherever they are offered: the Rewrite menu, Edit ▸ Tracked
# Changes, a click on a draft's change and the right-click menu on the text's (Cut is T there, Paste P).
ACCEPT_CHANGE, REJECT_CHANGE = "Acc&ept Change", "Reject C&hange"


def change_in_the_way(editor: RewriteEditor, start: int, end: int) -> str:
    """Why a rewrite of ``[start, end)`` (a fill at ``start == end``) cannot start, in editor positions: a tracked
    change still to decide inside it or across its edge, which a draft would take apart; "" where none is."""
    text = editor.plain_text()
    found = marks(text)
    if not found:
        return ""
    for mark_start, mark_end in qt_ranges(text, [(mark.start, mark.end) for mark in found]):
        if (mark_start < end and start < mark_end) if start < end else mark_start < start < mark_end:
            what = "This passage holds" if start < end else "The cursor is inside"
            return (f"{what} a tracked change still to decide: accept or reject it first (Alt+Return or Alt+Delete, "
                    "Edit ▸ Tracked Changes), then rewrite.")  # fmt: skip
    return ""


class TextChanges(QObject):
    """The tracked changes marked in the editor's text, and the writer's decisions on them."""

    countChanged = Signal()  # noqa: N815 - Qt's naming

    def __init__(self, editor: RewriteEditor, status: Callable[[], QStatusBar], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.editor, self.status = editor, status
        self.count = 0  # the changes in the text, counted a moment after each edit
        owner = editor.window()
        self.accept_all_action = QAction("Accept A&ll Changes", owner)
        self.accept_all_action.triggered.connect(lambda _checked=False: self.settle_all(True))
        self.reject_all_action = QAction("Re&ject All Changes", owner)
        self.reject_all_action.triggered.connect(lambda _checked=False: self.settle_all(False))
        # Counted after typing pauses (a scan of a long book's text on every key would be felt), but at once where
        # a brace came in: a change typed, pasted or brought back by Undo can be stepped to straight away.
        self._recount = QTimer(self, singleShot=True, interval=300)
        self._recount.timeout.connect(self.recount)
        editor.document().contentsChange.connect(self._changed)
        editor.context_menu_extras.append(self.offer)  # a right-click on a change: Accept or Reject it
        self.recount()

    def _changed(self, position: int, _removed: int, added: int) -> None:
        came_in = self.editor.text_between(position, position + added) if added else ""
        if "{" in came_in or "}" in came_in:
            self.recount()
        else:
            self._recount.start()

    def available(self) -> bool:
        """Whether there are changes to act on: some marked, and no rewrite in the text."""
        return self.count > 0 and self.editor.live_span is None

    def recount(self) -> None:
        self._recount.stop()
        count = len(marks(self.editor.plain_text()))
        if count != self.count:
            self.count = count
            self.countChanged.emit()
        enabled = self.available()
        for action in (self.accept_all_action, self.reject_all_action):
            action.setEnabled(enabled)
            action.setStatusTip("" if enabled else NONE_IN_TEXT)  # said when its greyed-out entry is hovered
            action.setToolTip(action.text() if enabled else NONE_IN_TEXT)

    def _found(self) -> list[tuple[Mark, int, int]]:
        """Each change in the text, with where it lies in the editor's positions."""
        text = self.editor.plain_text()
        found = marks(text)
        where = qt_ranges(text, [(mark.start, mark.end) for mark in found])
        return [(mark, start, end) for mark, (start, end) in zip(found, where, strict=True)]

    def offer(self, menu: QMenu, cursor: QTextCursor) -> None:
        """Accept Change and Reject Change at the top of the right-click ``menu``, where ``cursor`` (the pointer)
        is in a change; and, where its editor signed others, all of theirs."""
        at = cursor.position()
        every = self._found()
        found = [(mark, start) for mark, start, end in every if start <= at < end]
        if not found or self.editor.live_span is not None:
            return
        first = top_of(menu)
        mark, start = found[-1]
        for label, accept in ((ACCEPT_CHANGE, True), (REJECT_CHANGE, False)):
            action = QAction(label, menu)
            action.triggered.connect(lambda _checked=False, yes=accept, at=start: self._decide_at(at, yes))
            menu.insertAction(first, action)
        if mark.author and sum(other.author == mark.author for other, _start, _end in every) > 1:
            for action in self._by_author_actions(mark.author, menu):
                menu.insertAction(first, action)
        menu.insertSeparator(first)

    def authors(self) -> list[str]:
        """Who signed the changes in the text, in the order their first change comes."""
        return list(dict.fromkeys(mark.author for mark, _start, _end in self._found() if mark.author))

    def fill_by_author(self, menu: QMenu) -> None:
        """Edit ▸ Tracked Changes ▸ By Author, as it opens: Accept All and Reject All of each editor's changes."""
        menu.clear()
        authors = self.authors() if self.editor.live_span is None else []
        for author in authors:
            menu.addActions(self._by_author_actions(author, menu))
        if not authors:
            menu.addAction(disabled(menu, "No change in the text is signed with a name"))

    def _by_author_actions(self, author: str, parent: QObject) -> list[QAction]:
        actions = []
        for verb, accept in (("Accept", True), ("Reject", False)):
            action = QAction(f"{verb} All by {author.replace('&', '&&')}", parent)
            action.triggered.connect(lambda _checked=False, yes=accept, who=author: self.settle_all(yes, who))
            actions.append(action)
        return actions

    def _decide_at(self, position: int, accept: bool) -> None:
        cursor = self.editor.textCursor()
        cursor.setPosition(position)
        self.editor.setTextCursor(cursor)
        self.decide(accept)

    def step(self, by: int) -> bool:
        """Select the next change after the selection (``by`` +1) or the one before it (-1), round past the ends;
        whether there was one."""
        found = self._found()
        if not found:
            self.status().showMessage(NONE_IN_TEXT, 6000)
            return False
        cursor = self.editor.textCursor()
        if by > 0:
            after = [i for i, (_mark, start, _end) in enumerate(found) if start >= cursor.selectionEnd()]
            index = after[0] if after else 0
        else:
            before = [i for i, (_mark, _start, end) in enumerate(found) if end <= cursor.selectionStart()]
            index = before[-1] if before else len(found) - 1
        self._select(found, index)
        return True

    def decide(self, accept: bool) -> bool:
        """Settle the change the caret is in (or that the selection covers) and select the next one; where the
        caret is in none, select the next for the writer to see first. Whether one was settled."""
        found = self._found()
        cursor = self.editor.textCursor()
        first, last = cursor.selectionStart(), cursor.selectionEnd()
        # The caret between two changes that touch: the second, as a caret at a word's start is in that word.
        index = next((i for i in reversed(range(len(found))) if found[i][1] <= first and last <= found[i][2]), None)
        if index is None:
            if self.step(+1):
                self.status().showMessage("This is the next change: Alt+Return accepts it, Alt+Delete rejects it.")
            return False
        mark, start, end = found[index]
        edit = QTextCursor(self.editor.document())
        edit.setPosition(start)
        edit.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        edit.insertText(mark.settled(accept))  # one edit: one undo step
        self.recount()
        rest = self._found()
        if not rest:
            self.editor.setTextCursor(edit)
            self.status().showMessage(f"Change {'accepted' if accept else 'rejected'}; that was the last.", 6000)
            return True
        later = [i for i, (_mark, start, _end) in enumerate(rest) if start >= edit.position()]
        self._select(rest, later[0] if later else 0, f"Change {'accepted' if accept else 'rejected'}. ")
        return True

    def settle_all(self, accept: bool, author: str | None = None) -> int:
        """Accept (or reject) every change in the text (every one ``author`` signed, where given), in one undo
        step; how many there were."""
        found = [entry for entry in self._found() if author is None or entry[0].author == author]
        if not found:
            self.status().showMessage(NONE_IN_TEXT, 6000)
            return 0
        edit = QTextCursor(self.editor.document())
        edit.beginEditBlock()
        for mark, start, end in reversed(found):  # from the end: the positions before each stay where they were
            edit.setPosition(start)
            edit.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            edit.insertText(mark.settled(accept))
        edit.endEditBlock()
        self.recount()
        done = f"{'' if author is None else f'by {author} '}{'accepted' if accept else 'rejected'}"
        self.status().showMessage(f"{len(found)} {'changes' if len(found) > 1 else 'change'} {done} (Ctrl+Z takes "
                                  f"{'them' if len(found) > 1 else 'it'} back).", 6000)  # fmt: skip
        return len(found)

    def _select(self, found: list[tuple[Mark, int, int]], index: int, said: str = "") -> None:
        mark, start, end = found[index]
        cursor = self.editor.textCursor()
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        self.editor.setTextCursor(cursor)
        self.editor.ensureCursorVisible()
        self.status().showMessage(
            f"{said}Change {index + 1} of {len(found)} ({mark.kind}{f', by {mark.author}' if mark.author else ''}) · "
            "Alt+Return accepts it, Alt+Delete rejects it"
        )
