"""Edit ▸ Tracked Changes ▸ Mark Changes Since…: every change made since the text was opened, or since a version
Redraft kept when it saved, marked in the text as tracked changes (CriticMarkup, ``app/documents/critic_markup.py``)
and signed with the writer's name (Settings ▸ Documents).

A comparison, as Word's Compare and LibreOffice's Compare Document make one: the text as it stands against the one
chosen, word by word, so that rewrites kept, words typed and paragraphs moved are all marked, however they were
made. The marks are then an editor's changes like any: stepped through, accepted or rejected one by one, and kept
as Word's own tracked changes by File ▸ Export as Word Document, so a manuscript that came as a .docx goes back with
the writer's changes shown. The marks go in where the words changed, the rest of the text untouched, as one undo
step.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, SignalInstance
from PySide6.QtGui import QAction, QTextCursor
from PySide6.QtWidgets import QDialog, QMenu, QStatusBar

from app.dialogs.saved_versions import SavedVersionsDialog, when_saved
from app.documents.critic_markup import mark_up, marks, placements, settle, signed_by
from app.documents.markdown_format import is_markdown
from app.documents.saved_versions import SavedVersion, SavedVersions, digest_of
from app.settings import Preferences
from app.window.editor_widget import RewriteEditor
from app.window.spelling import qt_ranges

EXPLANATION = (
    "The changes made since the text you choose are marked in the text as tracked changes, signed with your name "
    "(Settings ▸ Documents): step through them with Alt+Right, accept or reject each, or keep them as Word's own "
    "tracked changes with File ▸ Export as Word Document. One step for Ctrl+Z. The preview shows the marks it "
    "would write: words put in underlined, words taken out struck through."
)
HOLDS_MARKS = (
    "The text holds another's tracked changes to decide: accept or reject them first (Edit ▸ Tracked Changes), "
    "then mark yours."
)


class MarkingWindow(Protocol):
    """What marking the changes needs of the window (``MainWindow``)."""

    editor: RewriteEditor
    path: Path | None

    @property
    def prefs(self) -> Preferences: ...

    @property
    def saved_versions(self) -> SavedVersions: ...

    @property
    def documentReplaced(self) -> SignalInstance: ...  # noqa: N802 - Qt's naming

    def statusBar(self) -> QStatusBar: ...


class ChangeMarker(QObject):
    """Remembers the text as it was opened, and marks the changes since it or since a saved version."""

    def __init__(self, window: MarkingWindow, menu: QMenu) -> None:
        super().__init__(menu)
        self.window = window
        self.opened = (datetime.now(), window.editor.plain_text())  # the window's first text: new, or given to open
        self.action = QAction("&Mark Changes Since…", menu)
        self.action.setStatusTip("Mark the changes made since the text was opened, or since a saved version, as "
                                 "tracked changes signed with your name")  # fmt: skip
        self.action.triggered.connect(lambda _checked=False: self.mark())
        menu.addSeparator()
        menu.addAction(self.action)
        # Read from the editor once the text is in it: what a later comparison is made against, character for character.
        window.documentReplaced.connect(lambda _text: self.remember())

    def remember(self) -> None:
        self.opened = (datetime.now(), self.window.editor.plain_text())

    def mark(self) -> SavedVersionsDialog | None:
        """Ask since which text, then mark the changes since it; the dialog (None where nothing was asked). Marks the
        writer made so before (signed with their name, or unsigned) are taken in and marked again with the rest;
        another's marks are theirs to decide first."""
        window, editor = self.window, self.window.editor
        status = window.statusBar()
        author = window.prefs.author_name
        if editor.live_span is not None:  # its draft is no change yet, nor is it to be dropped unasked
            status.showMessage("A rewrite is open: accept or reject its draft first (Enter or Esc), then mark your "
                               "changes.", 8000)  # fmt: skip
            return None
        current = editor.plain_text()
        earlier = marks(current)
        if any(mark.author not in ("", author) for mark in earlier):  # unsigned: marked before a name was set
            status.showMessage(HOLDS_MARKS, 8000)
            return None
        made = settle(current, accept=True)  # the text as the writer has made it, their earlier marks made
        versions: list[SavedVersion] = window.saved_versions.versions(window.path) if window.path is not None else []
        now = digest_of(made)
        if self.opened[1] == made and all(version.digest == now for version in versions):
            status.showMessage("Nothing to mark: the text is as you opened it.", 6000)
            return None
        name = window.path.name if window.path is not None else "this text"
        dialog = SavedVersionsDialog(name, versions, made, editor.font(), editor, opened=self.opened,
                                     verb="Mark Changes", explanation=EXPLANATION, marks_since=True,
                                     markdown=is_markdown(window.path))  # fmt: skip
        dialog.setWindowTitle(f"Mark the changes to {name} since…")
        if dialog.exec() != QDialog.DialogCode.Accepted or dialog.chosen_at is None:
            return dialog
        since = (f"you opened it ({when_saved(dialog.chosen_at)})" if dialog.chosen is None
                 else f"the version saved {when_saved(dialog.chosen_at)}")  # fmt: skip
        base = dialog.chosen_text  # the text is as read above: the dialog was modal
        marked = None if marks(base) else mark_up(base, made, signed_by(author), whole_rewrites=True)
        if marked is None:
            status.showMessage("That version holds tracked-change signs of its own ({++ …), so its words could not be "
                               "told from marks: nothing was marked.", 8000)  # fmt: skip
            return dialog
        cursor = QTextCursor(editor.document())
        cursor.beginEditBlock()  # one undo step; each pass from the end, so each place is where it was read
        _replace(cursor, qt_ranges(current, [(m.start, m.end) for m in earlier]), [m.added for m in earlier])
        placed = placements(made, marked)
        _replace(cursor, qt_ranges(made, [(start, end) for start, end, _mark in placed]), [m for *_, m in placed])
        cursor.endEditBlock()
        count = len(placed)
        signed = f", signed {author}" if author else " (your name in Settings ▸ Documents signs them)"
        status.showMessage(f"{count} change{'s' if count != 1 else ''} since {since} marked{signed}: Alt+Right "
                           "steps through them, Ctrl+Z takes the marks out.", 12000)  # fmt: skip
        return dialog


def _replace(cursor: QTextCursor, where: list[tuple[int, int]], texts: list[str]) -> None:
    """Each stretch ``where`` (Qt positions, in order) replaced by its text, from the last: the places before it
    are where they were read."""
    for (start, end), text in zip(reversed(where), reversed(texts), strict=True):
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(text)
