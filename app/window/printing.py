"""File ▸ Print… (Ctrl+P) and Print Preview…: the document on paper as Export as PDF sets it (``pdf_export``: the
same typeface, margins, page numbers, and a Markdown document's headings, emphasis, lists and quotes set with
their marks gone), on the printer, paper and pages chosen in the system's print dialog.

What is printed is what Save would write: a rewrite still developing or waiting for Accept prints as its
original. Tracked changes still marked in the text get the export's question (shown struck through and
underlined, accepted, or as before them). The printer and its settings are kept for the next print."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, QSize, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtPrintSupport import QAbstractPrintDialog, QPrintDialog, QPrinter, QPrintPreviewDialog
from PySide6.QtWidgets import QApplication, QDialog, QStatusBar, QWidget

from app.dialogs.screen_fit import fitted
from app.documents.critic_markup import settle
from app.documents.markdown_format import is_markdown
from app.settings import Preferences
from app.window.pdf_export import LAYOUT_DPI, paint_pages, typeset
from app.window.title_page import Described, describe


class PrintingWindow(Protocol):
    @property
    def path(self) -> Path | None: ...

    @property
    def prefs(self) -> Preferences: ...

    def saved_text(self) -> str: ...

    def named_after(self) -> Path | None: ...

    def _changes_for_export(self, title: str, word: bool, verb: str = "export") -> str | None: ...

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name


class Printing(QObject):
    """File ▸ Print… and Print Preview…"""

    def __init__(self, window: PrintingWindow, parent: QWidget) -> None:
        super().__init__(parent)
        self.window = window
        self.parent_widget = parent
        self.print_action = QAction("&Print…", parent)
        self.print_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Print))
        self.print_action.setStatusTip("Print the document, set on pages as Export as PDF sets it")
        self.print_action.triggered.connect(self.print_document)
        self.preview_action = QAction("Prin&t Preview…", parent)
        self.preview_action.setStatusTip("See the pages as they will print, and print them from there")
        self.preview_action.triggered.connect(self.preview)
        self._printer: QPrinter | None = None

    @property
    def printer(self) -> QPrinter:
        """The printer the writer last chose (the system's default at first), with its paper and copies."""
        if self._printer is None:
            self._printer = QPrinter(QPrinter.PrinterMode.HighResolution)
        return self._printer

    def print_document(self) -> bool:
        """Ask about tracked changes, then the print dialog; print. Whether it printed."""
        changes = self.window._changes_for_export("Print", word=False, verb="print")
        if changes is None:
            return False
        self.printer.setDocName(self._described(changes).title)  # Qt names a print to file after it
        dialog = QPrintDialog(self.printer, self.parent_widget)
        dialog.setWindowTitle("Print")
        dialog.setOption(QAbstractPrintDialog.PrintDialogOption.PrintPageRange, True)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return False
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)  # a novel takes some seconds to set
        try:
            pages = self.print_to(self.printer, changes)
        finally:
            QApplication.restoreOverrideCursor()
        return self._said(pages)

    def preview(self) -> bool:
        """Print Preview…: the pages in Qt's preview, which can print them too."""
        changes = self.window._changes_for_export("Print Preview", word=False, verb="print")
        if changes is None:
            return False
        dialog = QPrintPreviewDialog(self.printer, self.parent_widget)
        dialog.setWindowTitle("Print Preview")
        dialog.paintRequested.connect(lambda printer: self.print_to(printer, changes))
        dialog.resize(fitted(dialog, QSize(900, 760)))  # the screen's room at most
        return dialog.exec() == QDialog.DialogCode.Accepted

    def print_to(self, printer: QPrinter, changes: str = "accept") -> int:
        """The document painted on ``printer``'s pages (those it asks for), its tracked changes shown ("track"),
        accepted or left out ("before"); the number of pages painted."""
        window = self.window
        told = self._described(changes)
        origin = window.named_after()
        printer.setDocName(told.title)
        printer.setCreator("Redraft")
        printer.setResolution(LAYOUT_DPI)  # as the PDF's: its spacings are pixels of this size
        printer.setFullPage(True)  # the margins are the document's own, measured from the paper's edge
        some = printer.printRange() == QPrinter.PrintRange.PageRange and printer.fromPage() > 0
        only = (printer.fromPage(), printer.toPage() or printer.fromPage()) if some else None
        document = typeset(told.body, is_markdown(window.path), window.prefs.font_family, changes == "track", told.page)
        pages, _missing = paint_pages(document, printer, origin.parent if origin is not None else None, only)
        if only is not None:
            pages = max(0, min(only[1], pages) - only[0] + 1)
        return pages

    def _described(self, changes: str) -> Described:
        """The text to print, its tracked changes kept ("track"), made or left out, as the PDF describes it."""
        window = self.window
        text, tracked = window.saved_text(), changes == "track"
        text = text if tracked else settle(text, accept=changes != "before")
        origin = window.named_after()
        return describe(text, is_markdown(window.path), origin.stem if origin is not None else "Untitled",
                        window.prefs.author_name, tracked)  # fmt: skip

    def _said(self, pages: int) -> bool:
        printer = self.printer
        where = printer.outputFileName() or printer.printerName() or "the printer"
        self.window.statusBar().showMessage(f"Sent {pages} page{'s' if pages != 1 else ''} to {where}.", 6000)
        return True
