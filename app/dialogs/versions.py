"""Rewrite ▸ Versions…: the versions a span has had this session, with their time, each previewed marked with what
putting it back would change (app/dialogs/compare_view.py); one goes back."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QSize, Qt
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
from app.rewrite.rewrite_controller import RewriteController
from app.rewrite.versions import SpanVersions, Version

PREFERRED_SIZE = QSize(620, 440)
PREVIEW_CHARACTERS = 90


class VersionsDialog(QDialog):
    """The versions, oldest first, the one in the text marked; Enter or Put Back chooses (``chosen``)."""

    def __init__(self, versions: list[Version], current: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Versions of this passage")
        self.versions = versions
        self.current = current
        self.chosen: Version | None = None
        self.list = QListWidget()
        self.list.setAccessibleName("Versions of this passage")
        self.list.setAlternatingRowColors(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        for version in versions:
            first_line = " ".join(version.text.split())
            short = first_line[:PREVIEW_CHARACTERS] + ("…" if len(first_line) > PREVIEW_CHARACTERS else "")
            mark = " · in the text" if version.text == current else ""
            item = QListWidgetItem(f"{version.clock} · {version.label}{mark}\n{short or '(empty)'}")
            item.setToolTip(version.text)
            self.list.addItem(item)
        self.preview = QPlainTextEdit()
        self.preview.setAccessibleName("The chosen version's text")
        self.preview.setReadOnly(True)
        self.list.currentRowChanged.connect(self._show_preview)
        self.list.itemActivated.connect(lambda _item: self._choose())
        # Made in the dialog: a default set on a button outside one is lost, and Qt made Cancel the default.
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.put_back_button = buttons.addButton("&Put Back", QDialogButtonBox.ButtonRole.AcceptRole)
        self.put_back_button.setDefault(True)
        self.put_back_button.clicked.connect(self._choose)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        told = QLabel("Every version this passage has had since the document was opened, marked with what putting "
                      "it back would change: words it brings back underlined, words it takes out struck through. "
                      "Putting one back is one step for Ctrl+Z.")  # fmt: skip
        told.setWordWrap(True)
        layout.addWidget(told)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.preview, 2)  # the marks say more than the list's first lines
        layout.addWidget(buttons)
        self.resize(fitted(self, PREFERRED_SIZE))
        self.list.setCurrentRow(len(versions) - 1)
        self.list.setFocus()

    def _show_preview(self, row: int) -> None:
        if 0 <= row < len(self.versions):
            show_change(self.preview, self.current, self.versions[row].text)
        else:
            self.preview.clear()

    def _choose(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.versions):
            self.chosen = self.versions[row]
            self.accept()


class VersionsWindow(Protocol):
    """What choosing a version needs of the window (``MainWindow``)."""

    @property
    def versions(self) -> SpanVersions: ...

    @property
    def rewrites(self) -> RewriteController: ...

    def statusBar(self) -> QStatusBar: ...


def choose_version(window: VersionsWindow, parent: QWidget | None = None) -> VersionsDialog | None:
    """Rewrite ▸ Versions…: list the versions of the span under the caret (or the rewrite's own span) and
    put the chosen one back as one undo step. A developing or waiting rewrite ends first, without a step."""
    store = window.versions
    track = store.at_cursor()
    if track is None or len(track.versions) < 2:
        window.statusBar().showMessage(
            "No versions here: put the cursor in a passage you rewrote since opening the document.", 6000
        )
        return None
    live = store.editor.live_span
    current = live.original if live is not None and track is store.active else track.current
    dialog = VersionsDialog(track.versions, current, parent if parent is not None else store.editor)
    if dialog.exec() != QDialog.DialogCode.Accepted or dialog.chosen is None:
        return dialog
    if store.active is track:
        window.rewrites.end_live_span(select_original=False)  # the original back, no undo step left
    if store.put_back(track, dialog.chosen):
        window.statusBar().showMessage(f"{dialog.chosen.label} is back (Ctrl+Z undoes it).", 4000)
    else:
        window.statusBar().showMessage("That version is already in the text.", 4000)
    return dialog
