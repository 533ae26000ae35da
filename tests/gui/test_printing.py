"""File ▸ Print… and Print Preview… (app/window/printing.py) through the window: Qt's own printer, printing to a
PDF file here (a machine with no printer), read back with pypdf: the pages and words as Export as PDF sets them,
the pages asked for and no others, the tracked changes as the writer answers, and the preview's pages."""

from __future__ import annotations

import re
from pathlib import Path

from pypdf import PdfReader
from PySide6.QtGui import QColor, QGuiApplication, QImage, QKeySequence, QPalette
from PySide6.QtPrintSupport import QPrintDialog, QPrinter, QPrintPreviewDialog, QPrintPreviewWidget
from PySide6.QtWidgets import QApplication, QDialog
from test_pdf_export import STORY, words_of

from app.window.theme import PAPER_LINK, build_palette


def _to_file(printer: QPrinter, path: Path) -> QPrinter:
    printer.setOutputFormat(QPrinter.OutputFormat.PdfFormat)
    printer.setOutputFileName(str(path))
    return printer


def test_printed_pages_are_the_exported_pdfs(document_window, tmp_path: Path) -> None:
    window = document_window(text=STORY)
    assert window.export_to(tmp_path / "exported.pdf")
    exported, exported_words = words_of(tmp_path / "exported.pdf")
    printing = window.printing
    assert printing.print_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Print)
    pages = printing.print_to(_to_file(QPrinter(QPrinter.PrinterMode.HighResolution), tmp_path / "printed.pdf"))
    printed, printed_words = words_of(tmp_path / "printed.pdf")
    assert pages == len(printed.pages) == len(exported.pages) > 1
    assert printed_words == exported_words
    assert "**" not in printed_words and "The Lighthouse" in printed_words  # set, not its marks
    assert printed.metadata.title == "The Lighthouse"


def test_only_the_pages_asked_for_are_printed(document_window, tmp_path: Path) -> None:
    window = document_window(text=STORY)
    printer = _to_file(QPrinter(QPrinter.PrinterMode.HighResolution), tmp_path / "all.pdf")
    everything = window.printing.print_to(printer)
    printer = _to_file(QPrinter(QPrinter.PrinterMode.HighResolution), tmp_path / "two.pdf")
    printer.setPrintRange(QPrinter.PrintRange.PageRange)
    printer.setFromTo(2, 2)
    assert window.printing.print_to(printer) == 1
    reader, words = words_of(tmp_path / "two.pdf")
    _all, all_words = words_of(tmp_path / "all.pdf")
    assert len(reader.pages) == 1 < everything
    assert "The Lighthouse" not in words and words in all_words


def test_print_asks_about_tracked_changes_then_prints_as_answered(document_window, tmp_path, monkeypatch) -> None:
    window = document_window(text="The keeper {--slowly --}climbed the {++stone ++}stairs.\n")
    answers = iter(["cancel", "before"])
    monkeypatch.setattr(type(window), "_choose", lambda *_args, **_kwargs: next(answers))
    dialogs: list[QPrintDialog] = []

    def accept(dialog: QPrintDialog) -> int:
        dialogs.append(dialog)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(QPrintDialog, "exec", accept)
    _to_file(window.printing.printer, tmp_path / "before.pdf")
    assert not window.printing.print_document()  # cancelled at the question: no dialog
    assert dialogs == []
    assert window.printing.print_document()
    _reader, words = words_of(tmp_path / "before.pdf")
    assert words == "The keeper slowly climbed the stairs."
    assert window.statusBar().currentMessage() == f"Sent 1 page to {tmp_path / 'before.pdf'}."
    assert "{--" in window.editor.plain_text()  # the text keeps its marks


def test_the_preview_shows_every_page(document_window, tmp_path: Path, monkeypatch) -> None:
    window = document_window(text=STORY)
    shown: list[int] = []

    def look(dialog: QPrintPreviewDialog) -> int:
        preview = dialog.findChild(QPrintPreviewWidget)
        preview.updatePreview()  # what showing it does: the pages painted through paintRequested
        shown.append(preview.pageCount())
        return QDialog.DialogCode.Rejected

    monkeypatch.setattr(QPrintPreviewDialog, "exec", look)
    assert not window.printing.preview()
    pages = window.printing.print_to(_to_file(QPrinter(QPrinter.PrinterMode.HighResolution), tmp_path / "p.pdf"))
    assert shown == [pages] and pages > 1


def _fill_colors(path: Path) -> set[tuple[float, ...]]:
    """Every fill colour the pages' drawing sets (Qt's PDF writes them as ``r g b scn``)."""
    found: set[tuple[float, ...]] = set()
    for page in PdfReader(path).pages:
        stream = page.get_contents().get_data().decode("latin-1")
        found |= {tuple(map(float, m)) for m in re.findall(r"([\d.]+) ([\d.]+) ([\d.]+) (?:scn|rg)\b", stream)}
    return found


def test_pages_are_inked_black_in_the_dark_theme_too(document_window, tmp_path: Path) -> None:
    window = document_window(text=STORY)
    light = QGuiApplication.palette()
    dark = QPalette(light)
    dark.setColor(QPalette.ColorRole.Text, QColor("#e6e3dc"))  # the dark theme's ink: light grey on paper
    QGuiApplication.setPalette(dark)
    try:
        assert window.export_to(tmp_path / "exported.pdf")
        window.printing.print_to(_to_file(QPrinter(QPrinter.PrinterMode.HighResolution), tmp_path / "printed.pdf"))
    finally:
        QGuiApplication.setPalette(light)
    for name in ("exported.pdf", "printed.pdf"):
        colors = _fill_colors(tmp_path / name)
        assert (0.0, 0.0, 0.0) in colors
        assert all(max(color) < 0.5 for color in colors), (name, colors)


def _darkest(image: QImage) -> int:
    """The darkest grey in ``image``'s ink (its lightness, 0 black to 255 white), the frame's grey aside."""
    return min(QColor(image.pixel(x, y)).lightness() for y in range(0, image.height(), 2)
               for x in range(0, image.width(), 2) if QColor(image.pixel(x, y)).saturation() < 30)  # fmt: skip


def test_in_the_dark_theme_the_preview_and_the_links_are_inked_for_paper(document_window, qtbot, tmp_path) -> None:
    # Plain paragraphs: nothing on the page changes the ink, which Qt's preview then left to its own widget's.
    window = document_window(text="# The Keeper\n\n" + "The keeper counted the steps as his father had. " * 20)
    window.path = tmp_path / "story.md"
    app = QApplication.instance()
    light = app.palette()
    app.setPalette(build_palette(dark=True))  # as the dark theme sets it: the widgets' own palettes too
    try:
        printer = QPrinter(QPrinter.PrinterMode.HighResolution)  # kept: the widget does not own it
        preview = QPrintPreviewWidget(printer)
        qtbot.addWidget(preview)
        preview.paintRequested.connect(window.printing.print_to)
        preview.resize(700, 900)
        preview.show()
        preview.updatePreview()
        preview.setZoomFactor(1.0)
        page = preview.grab().toImage()
        page = page.copy(page.width() // 8, page.height() // 10, page.width() * 3 // 4, page.height() * 4 // 5)
        window.editor.setPlainText(STORY + "\nSee [the chart](https://example.org/chart) for the tides.\n")
        assert window.export_to(tmp_path / "exported.pdf")
    finally:
        app.setPalette(light)
    assert _darkest(page) < 60  # the words in black (they were the dark theme's light grey: 225)
    colors = _fill_colors(tmp_path / "exported.pdf")
    assert {tuple(round(part, 3) for part in color) for color in colors} == {
        (0.0, 0.0, 0.0), tuple(round(part, 3) for part in PAPER_LINK.getRgbF()[:3])}  # the link's was a pale blue
