"""On start, offer back what Redraft instances that died had not saved.

The dialog lists each document (name, where it came from, its size, when it was autosaved) with a
preview of its text; the writer recovers one into the window, discards them, or decides later (they
are offered again at the next start). A recovered document opens unsaved, under its old file name if
it had one, so Save writes it where it belongs and closing asks first; its old record then goes.
"""

from __future__ import annotations

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

from app.dialogs.message_bar import MessageBar
from app.dialogs.screen_fit import fitted
from app.documents.fileio import TextDocument
from app.documents.recovery import RecoveredDocument, RecoveryArea

PREVIEW_CHARACTERS = 4000
PREFERRED_SIZE = QSize(720, 520)  # then fitted to the screen (app/dialogs/screen_fit.py)


class RecoveryDialog(QDialog):
    """Recover (the selected document), Discard All, or Later. ``chosen`` is set on Recover."""

    def __init__(self, documents: list[RecoveredDocument], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Recover unsaved work")
        self.documents = documents
        self.chosen: RecoveredDocument | None = None
        self.discard_all = False
        count = len(documents)
        intro = QLabel(
            f"Redraft closed unexpectedly with {count} unsaved document{'s' if count > 1 else ''}. "
            "Recover one now; the others stay here for the next start unless you discard them."
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
        self.list.currentRowChanged.connect(self._show_preview)
        buttons = QDialogButtonBox()
        self.recover_button = QPushButton("Recover")
        self.recover_button.setDefault(True)
        self.discard_button = QPushButton("Discard All")
        self.later_button = QPushButton("Later")
        buttons.addButton(self.recover_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.discard_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.addButton(self.later_button, QDialogButtonBox.ButtonRole.RejectRole)
        self.recover_button.clicked.connect(self._recover)
        self.discard_button.clicked.connect(self._discard)
        self.later_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.list)
        layout.addWidget(QLabel("Its text:"))
        layout.addWidget(self.preview, 1)
        layout.addWidget(buttons)
        self.resize(fitted(self, PREFERRED_SIZE))
        self.list.setCurrentRow(len(documents) - 1)  # the newest first in view

    def _show_preview(self, row: int) -> None:
        text = self.documents[row].text if 0 <= row < len(self.documents) else ""
        more = len(text) > PREVIEW_CHARACTERS
        self.preview.setPlainText(text[:PREVIEW_CHARACTERS] + ("\n…" if more else ""))

    def _recover(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.documents):
            self.chosen = self.documents[row]
            self.accept()

    def _discard(self) -> None:
        self.discard_all = True
        self.accept()


class RecoveringWindow(Protocol):
    """What recovering needs of the window (``MainWindow``, whose file half is app/window/file_commands.py)."""

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
    still = f" {closed.name} is as it was on disk (File ▸ Open Recent)." if closed is not None else ""
    window.message_bar.show_message(
        f"Recovered {document.title} as autosaved at {document.autosaved}. It is not saved yet: Save keeps it.{still}",
        "info",
    )
    return True


def offer_recovery(
    window: RecoveringWindow, area: RecoveryArea, dialog_parent: QWidget | None = None
) -> RecoveryDialog | None:
    """Show the dialog if instances died with unsaved work; returns it (open, non-modal) or None.

    Recovering or discarding removes those records; Later keeps them for the next start.
    """
    documents = area.orphans()
    if not documents:
        return None
    dialog = RecoveryDialog(documents, dialog_parent)

    def answered(_result: int) -> None:
        if dialog.chosen is not None:
            if recover_into(window, dialog.chosen):
                area.discard([dialog.chosen])
            else:  # kept, as Later keeps it
                window.message_bar.show_message(
                    f"{dialog.chosen.title} was not recovered; its autosaved copy is offered again at the next start.",
                    "info",
                )
        elif dialog.discard_all:
            area.discard(documents)

    dialog.finished.connect(answered)
    dialog.open()
    return dialog
