"""On start, offer back what Redraft instances that died had not saved.

The dialog lists each document (name, where it came from, its size, when it was autosaved) with a
preview of its text, marked against its file as it is on disk now: the words the crash would have lost
underlined, the first of them in view. The writer recovers one into the window, discards them, or
decides later (they are offered again at the next start). A recovered document opens unsaved, under
its old file name if it had one, so Save writes it where it belongs and closing asks first; its old
record then goes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.dialogs.compare_view import show_change
from app.dialogs.message_bar import UNTIL_SAVED, MessageBar
from app.dialogs.screen_fit import fitted
from app.documents.critic_markup import changes_between
from app.documents.fileio import FileError, TextDocument, decode_document, looks_binary
from app.documents.markdown_format import is_markdown
from app.documents.recovery import RecoveredDocument, RecoveryArea
from app.documents.word_count import count_words, manuscript
from app.window.editor_widget import RewriteEditor
from app.window.live_span import utf16_length
from model.edit.changes import draft_ranges

PREFERRED_SIZE = QSize(720, 520)  # then fitted to the screen (app/dialogs/screen_fit.py)


class RecoveryDialog(QDialog):
    """Recover (the selected document), Recover All (with more than one: each in a window of its own), Discard
    All, or Later. ``chosen`` is set on Recover and Recover All, ``recover_all`` on the latter."""

    def __init__(self, documents: list[RecoveredDocument], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Recover unsaved work")
        self.documents = documents
        self.chosen: RecoveredDocument | None = None
        self.recover_all = False
        self.discard_all = False
        count = len(documents)
        intro = QLabel(
            f"Redraft closed unexpectedly with {count} unsaved documents. Recover the one chosen here, or all of "
            "them, each in a window of its own; what you leave stays here for the next start unless you discard it."
            if count > 1
            else "Redraft closed unexpectedly before this document was saved."
        )
        intro.setWordWrap(True)
        self.list = QListWidget()
        self.list.setAccessibleName("Unsaved documents")
        # One entry in lines that fit the list: no sideways scrolling to read when it was autosaved; a
        # long path is shortened in its middle (the whole of it in the entry's tooltip).
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.list.setAlternatingRowColors(True)
        for document in documents:
            item = QListWidgetItem(document.summary())
            item.setToolTip(document.describe())
            item.setData(Qt.ItemDataRole.UserRole, document)
            self.list.addItem(item)
        self.preview = QPlainTextEdit()
        self.preview.setAccessibleName("The chosen document's text")
        self.preview.setReadOnly(True)
        self.against = QLabel()
        self.against.setWordWrap(True)
        self.list.currentRowChanged.connect(self._show_preview)
        buttons = QDialogButtonBox(self)  # in the dialog already: its default holds
        self.recover_button = QPushButton("&Recover")
        self.recover_button.setDefault(True)
        self.recover_all_button = QPushButton("Recover &All")
        self.recover_all_button.setVisible(count > 1)
        self.discard_button = QPushButton("&Discard All")
        self.later_button = QPushButton("&Later")
        buttons.addButton(self.recover_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.recover_all_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.discard_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.addButton(self.later_button, QDialogButtonBox.ButtonRole.RejectRole)
        self.recover_button.clicked.connect(self._recover)
        self.recover_all_button.clicked.connect(self._recover_every)
        self.discard_button.clicked.connect(self._discard)
        self.later_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.against)
        layout.addWidget(self.preview, 3)
        layout.addWidget(buttons)
        self.resize(fitted(self, PREFERRED_SIZE))
        self.list.setCurrentRow(len(documents) - 1)  # the newest first in view

    def _show_preview(self, row: int) -> None:
        if not 0 <= row < len(self.documents):
            self.against.clear()
            self.preview.clear()
            return
        document = self.documents[row]
        on_disk, told = against_disk(document)
        changes = show_change(self.preview, on_disk, document.text)
        if on_disk is not None and changes:
            plural = "s" if changes > 1 else ""
            told += f" {changes:,} change{plural}: words not on disk underlined, words only on disk struck through."
        self.against.setText(told)

    def _recover(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.documents):
            self.chosen = self.documents[row]
            self.accept()

    def _recover_every(self) -> None:
        self.recover_all = True
        self._recover()

    def _discard(self) -> None:
        self.discard_all = True
        self.accept()


def against_disk(document: RecoveredDocument) -> tuple[str | None, str]:
    """The text of ``document``'s file as it is on disk now (None when there is nothing to compare with), and a
    line that says how the autosaved text stands against it."""
    if document.path is None:
        source = f"opened from {document.imported_from.name}, " if document.imported_from is not None else ""
        return None, f"Its text ({source}never saved: this copy is the only one):"
    name = document.path.name
    if not document.path.exists():
        return None, f"Its text ({name} is no longer on disk: this copy is the only one):"
    try:
        data = document.path.read_bytes()
        changed_since = document.path.stat().st_mtime > document.written_at
        if looks_binary(data) and not document.encoding.lower().startswith("utf-16"):
            raise FileError("it is not text")  # a Word file an untitled text was saved over, say
        on_disk = decode_document(data, document.encoding).text
    except OSError as error:
        return None, f"Its text ({name} could not be read to compare: {error.strerror or error}):"
    except FileError as error:
        return None, f"Its text ({name} could not be read to compare: {error}):"
    if on_disk == document.text:
        return None, f"Its text, the same as {name} on disk: discarding it loses nothing."
    later = f" {name} changed on disk after this was autosaved." if changed_since else ""
    words_on_disk = count_words(manuscript(on_disk, is_markdown(document.path)))
    return on_disk, f"Its text against {name} on disk ({_words_against(document.words, words_on_disk)}).{later}"


def _words_against(words: int, on_disk: int) -> str:
    difference = words - on_disk
    if not difference:
        return "as many words"
    return f"{abs(difference):,} word{'s' if abs(difference) != 1 else ''} {'more' if difference > 0 else 'fewer'}"


def left_off_at(text: str, on_disk: str | None) -> int:
    """Where in a recovered ``text`` the writer most likely left off: the end of its last change against the file
    as it is ``on_disk``, else (nothing to compare with, or the same) the text's end."""
    changes = changes_between(on_disk, text) if on_disk is not None else []
    return draft_ranges(changes)[-1][1] if changes else len(text)


class RecoveringWindow(Protocol):
    """What recovering needs of the window (``MainWindow``, whose file half is app/window/file_commands.py)."""

    editor: RewriteEditor

    @property
    def file_format(self) -> TextDocument: ...

    @property
    def message_bar(self) -> MessageBar: ...

    @property
    def path(self) -> Path | None: ...

    def maybe_save(self) -> bool: ...

    def load_unsaved(self, text: str, path: Path | None, file_format: TextDocument,
                     imported_from: Path | None = None) -> None: ...  # fmt: skip

    def restore_versions(self, records: list[dict[str, Any]]) -> int: ...


def recover_into(window: RecoveringWindow, document: RecoveredDocument) -> bool:
    """Put a recovered document into ``window`` as unsaved text under its old name.

    The document already there (a file named on the command line, words typed since) is the writer's too: its
    unsaved changes are asked about first, and False (Cancel) leaves everything as it was.
    """
    if not window.maybe_save():
        return False
    closed = window.path if window.path is not None and window.path != document.path else None
    window.load_unsaved(
        document.text,
        document.path,
        replace(window.file_format, encoding=document.encoding, bom=document.bom, newline=document.newline),
        document.imported_from,
    )
    window.restore_versions(list(document.versions))  # Rewrite ▸ Versions… works on them as before
    # The caret where the writer most likely left off, not at the top (where the next words typed went before).
    at = utf16_length(document.text[: left_off_at(document.text, against_disk(document)[0])])
    window.editor.select_range(at, at)
    window.editor.ensureCursorVisible()
    still = f" {closed.name} is as it was on disk (File ▸ Open Recent)." if closed is not None else ""
    window.message_bar.show_message(
        f"Recovered {document.title} as autosaved at {document.autosaved}. It is not saved yet: Save keeps it.{still}",
        "info", topic=UNTIL_SAVED,
    )  # fmt: skip
    return True


def offer_recovery(
    window: RecoveringWindow, area: RecoveryArea, dialog_parent: QWidget | None = None,
    new_window: Callable[[], RecoveringWindow] | None = None,
) -> RecoveryDialog | None:  # fmt: skip
    """Show the dialog if instances died with unsaved work; returns it (open, non-modal) or None. The chosen
    document is recovered into ``window``; on Recover All each other one into a ``new_window()`` of its own.

    Recovering or discarding removes those records; Later keeps them for the next start.
    """
    documents = area.orphans()
    if not documents:
        return None
    dialog = RecoveryDialog(documents, dialog_parent)

    def recover(into: RecoveringWindow, document: RecoveredDocument) -> None:
        if recover_into(into, document):
            area.discard([document])
        else:  # kept, as Later keeps it
            into.message_bar.show_message(
                f"{document.title} was not recovered; its autosaved copy is offered again at the next start.", "info"
            )

    def answered(_result: int) -> None:
        if dialog.chosen is not None:
            recover(window, dialog.chosen)
            if dialog.recover_all and new_window is not None:
                for document in documents:
                    if document is not dialog.chosen:
                        recover(new_window(), document)
        elif dialog.discard_all:
            area.discard(documents)

    dialog.finished.connect(answered)
    dialog.open()
    return dialog
