"""File ▸ Saved Versions…: the versions of this file that Redraft kept when it saved (app/documents/saved_versions.py),
newest first, each read in a preview marked with what Restore would change in the editor (words it brings back
underlined, words it takes out struck through); Restore puts one in the editor as one undo step, to keep with Save.
The same list, the text as opened first, is where Edit ▸ Tracked Changes ▸ Mark Changes Since… chooses
(mark_changes.py): its preview shows the editor's text with the marks it would write."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QSize
from PySide6.QtGui import QFont, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QStatusBar,
    QVBoxLayout,
    QWidget,
)

from app.dialogs.compare_view import show_change
from app.dialogs.screen_fit import fitted
from app.documents.markdown_format import is_markdown
from app.documents.saved_versions import SavedVersion, SavedVersions, digest_of
from app.documents.word_count import count_words, manuscript
from app.window.editor_widget import RewriteEditor

PREFERRED_SIZE = QSize(640, 520)
RESTORE_EXPLANATION = (
    "Redraft keeps what each save wrote, and what the file held before it first saved over it. Restore puts a "
    "version in the editor as one step for Ctrl+Z; the file changes when you save. The preview marks what "
    "restoring it would change: words it brings back underlined, words it takes out struck through."
)
PREVIEW_SCALE = 0.8


def when_saved(at: datetime, today: date | None = None) -> str:
    """"Today 14:05", "Yesterday 09:12", "Mon 23 Nov 18:40", or with the year when it is not this year's."""
    today = today or date.today()
    clock = at.strftime("%H:%M")
    if at.date() == today:
        return f"Today {clock}"
    if at.date() == today - timedelta(days=1):
        return f"Yesterday {clock}"
    day = f"{at.strftime('%a')} {at.day} {at.strftime('%b')}"
    return f"{day} {clock}" if at.year == today.year else f"{day} {at.year} {clock}"


def _against(digest: str, words: int, now: str, words_now: int) -> str:
    """How a version (its text's ``digest``, its ``words``) compares with the editor's text (whose digest is
    ``now``, and which holds ``words_now``)."""
    if digest == now:
        return "what the editor holds now"
    change = words - words_now
    if not change:
        return "as many words as now, not the same"
    return f"{abs(change):,} {'more' if change > 0 else 'fewer'} word{'s' if abs(change) != 1 else ''} than now"


class SavedVersionsDialog(QDialog):
    """The versions, newest first; Enter or Restore chooses one (``chosen``, its text ``chosen_text``). With ``opened``
    (when the document was opened, and its text then), that text is the first row (``chosen`` None, ``chosen_at``
    its time); ``verb`` names the button and ``explanation`` says what it does, and with ``marks_since`` the
    preview shows the editor's text marked with the changes since the row's version, not the version marked with
    what restoring it would change (Edit ▸ Tracked Changes ▸ Mark Changes Since… lists them so). ``markdown``: the
    counts leave out what a Markdown text's are left out of (front matter, notes), as the status bar's do."""

    def __init__(
        self, name: str, versions: list[SavedVersion], current: str, font: QFont, parent: QWidget | None = None,
        opened: tuple[datetime, str] | None = None, verb: str = "Restore", explanation: str = RESTORE_EXPLANATION,
        marks_since: bool = False, markdown: bool = True,
    ) -> None:  # fmt: skip
        super().__init__(parent)
        self.marks_since = marks_since
        self.setWindowTitle(f"Saved versions of {name}")
        self.opened = opened
        self.versions = versions
        self.current = current
        self.chosen: SavedVersion | None = None
        self.chosen_at: datetime | None = None
        self.chosen_text = ""
        self._texts: dict[int, str | None] = {}  # read when first shown: a long history of a novel is not read whole
        self.list = QListWidget()
        self.list.setAccessibleName("Saved versions")
        self.list.setAlternatingRowColors(True)
        now = digest_of(current)  # once, not for every version listed
        words_now = count_words(manuscript(current, markdown))
        if opened is not None:
            at, text = opened
            self._texts[0] = text
            words = count_words(manuscript(text, markdown))
            compared = _against(digest_of(text), words, now, words_now)
            item = QListWidgetItem(f"As you opened it, {when_saved(at)} · {words:,} words · {compared}")
            item.setToolTip(at.strftime("Opened %A %d %B %Y at %H:%M:%S"))
            self.list.addItem(item)
        for version in versions:
            compared = _against(version.digest, version.words, now, words_now)
            item = QListWidgetItem(f"{when_saved(version.at)} · {version.words:,} words · {compared}")
            item.setToolTip(version.at.strftime("Saved %A %d %B %Y at %H:%M:%S"))
            self.list.addItem(item)
        self.preview = QPlainTextEdit()
        self.preview.setAccessibleName("The chosen version's text, marked")
        self.preview.setReadOnly(True)
        preview_font = QFont(font)  # the text's face, a size down: a hand-wrapped line fits the preview's width
        preview_font.setPointSizeF(max(9.0, font.pointSizeF() * PREVIEW_SCALE))
        self.preview.setFont(preview_font)
        self.list.currentRowChanged.connect(self._show_preview)
        self.list.itemActivated.connect(lambda _item: self._choose())
        # Made in the dialog: a default set on a button outside one is lost, and Qt made Cancel the default.
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.restore_button = buttons.addButton(f"&{verb}", QDialogButtonBox.ButtonRole.AcceptRole)
        self.restore_button.setDefault(True)
        self.restore_button.clicked.connect(self._choose)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        told = QLabel(explanation)
        told.setWordWrap(True)
        layout.addWidget(told)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.preview, 2)
        layout.addWidget(buttons)
        self.resize(fitted(self, PREFERRED_SIZE))
        # The newest that differs from the editor's text: the newest is often what was just saved.
        rows = [digest_of(opened[1])] if opened is not None else []
        rows += [version.digest for version in versions]
        self.list.setCurrentRow(next((row for row, digest in enumerate(rows) if digest != now), 0))
        self.list.setFocus()

    def _version(self, row: int) -> SavedVersion | None:
        """The saved version a row shows; None for the text as opened."""
        return self.versions[row - (self.opened is not None)] if row >= (self.opened is not None) else None

    def text_of(self, row: int) -> str | None:
        if row not in self._texts:
            version = self._version(row)
            assert version is not None  # the text as opened is known from the start
            try:
                self._texts[row] = version.text()
            except (OSError, ValueError, EOFError):
                self._texts[row] = None  # damaged: shown as such, never restored
        return self._texts[row]

    def _show_preview(self, row: int) -> None:
        if not 0 <= row < self.list.count():
            self.preview.setPlainText("")
            return
        text = self.text_of(row)
        if text is None:
            self.preview.setPlainText("(This version could not be read.)")
        elif self.marks_since:
            show_change(self.preview, text, self.current)
        else:  # the first change in view: what a writer looks for
            show_change(self.preview, self.current, text)
        self.restore_button.setEnabled(text is not None and text != self.current)
        self.restore_button.setToolTip("" if text != self.current else "The editor holds this version already.")

    def _choose(self) -> None:
        row = self.list.currentRow()
        text = self.text_of(row) if 0 <= row < self.list.count() else None
        if text is not None and text != self.current:
            self.chosen, self.chosen_text = self._version(row), text
            self.chosen_at = self.chosen.at if self.chosen is not None else self.opened[0] if self.opened else None
            self.accept()


class SavedVersionsWindow(Protocol):
    """What File ▸ Saved Versions… needs of the window (``MainWindow``)."""

    editor: RewriteEditor
    path: Path | None

    @property
    def saved_versions(self) -> SavedVersions: ...

    def saved_text(self) -> str: ...

    def _end_live_span(self, select_original: bool = True) -> None: ...

    def statusBar(self) -> QStatusBar: ...


def choose_saved_version(window: SavedVersionsWindow) -> SavedVersionsDialog | None:
    """List the file's saved versions and put the chosen one in the editor, one undo step (a rewrite still open
    ends first, its original back)."""
    if window.path is None:
        window.statusBar().showMessage("No saved versions yet: Redraft keeps one each time you save.", 6000)
        return None
    versions = window.saved_versions.versions(window.path)
    if not versions:
        window.statusBar().showMessage(
            f"No saved versions of {window.path.name} yet: Redraft keeps one each time you save it.", 6000
        )
        return None
    editor = window.editor
    dialog = SavedVersionsDialog(window.path.name, versions, window.saved_text(), editor.font(), editor,
                                 markdown=is_markdown(window.path))  # fmt: skip
    if dialog.exec() != QDialog.DialogCode.Accepted or dialog.chosen is None:
        return dialog
    window._end_live_span(select_original=False)
    caret = editor.textCursor().position()
    cursor = QTextCursor(editor.document())
    cursor.beginEditBlock()
    cursor.select(QTextCursor.SelectionType.Document)
    cursor.insertText(dialog.chosen_text)
    cursor.endEditBlock()
    cursor.setPosition(min(caret, editor.document().characterCount() - 1))
    editor.setTextCursor(cursor)
    editor.ensureCursorVisible()
    day, clock = when_saved(dialog.chosen.at).rsplit(" ", 1)
    day = day.lower() if day in ("Today", "Yesterday") else f"on {day}"
    window.statusBar().showMessage(
        f"The version saved {day} at {clock} is in the editor: Save keeps it, Ctrl+Z undoes it.", 8000
    )
    return dialog

