"""File ▸ Export as PDF…: the document typeset on pages, to send or to print.

A Markdown document (``is_markdown``: .md, or untitled) is rendered as Markdown, its headings, emphasis, lists
and quotes set and its marks gone; any other is its plain text, line for line. Both in the editor's typeface at a
print size, on A4, or on US Letter where the system's country uses it, with margins and page numbers. The
PDF's title is the document's first heading, else its file name.

What is exported is what Save would write: a rewrite still developing or waiting for Accept is exported as its
original. The file is written as a save is (``app.documents.fileio.save_bytes``): whole or not at all, an
earlier PDF of the same name left as it was if anything fails.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QLocale, QMarginsF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QFont,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)

from app.documents.fileio import save_bytes
from app.window.headings import each_heading
from app.window.theme import prose_families

PRINT_POINT_SIZE = 11.5  # a book's body size; the editor's is a screen's
MARGIN_MM = 25.0
QUOTE_INDENT_PT = 24.0
LAYOUT_DPI = 96
# Countries whose paper is US Letter; the rest of the world's is A4.
LETTER_COUNTRIES = frozenset({
    QLocale.Country.UnitedStates, QLocale.Country.Canada, QLocale.Country.Mexico, QLocale.Country.Philippines,
    QLocale.Country.Chile, QLocale.Country.Colombia, QLocale.Country.Venezuela, QLocale.Country.PuertoRico,
})  # fmt: skip


def paper_for(country: QLocale.Country) -> QPageSize:
    return QPageSize(QPageSize.PageSizeId.Letter if country in LETTER_COUNTRIES else QPageSize.PageSizeId.A4)


def typeset(text: str, markdown: bool, family: str = "") -> QTextDocument:
    """``text`` laid out for print: as Markdown (GitHub's dialect) or as plain lines, in the text's typeface
    (``family``, Settings ▸ Appearance; "": the book serifs)."""
    document = QTextDocument()
    font = QFont()
    font.setFamilies(prose_families(family))
    font.setStyleHint(QFont.StyleHint.Serif)
    font.setPointSizeF(PRINT_POINT_SIZE)
    document.setDefaultFont(font)
    if markdown:
        document.setMarkdown(text, QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
        _indent_quotes(document)
    else:
        document.setPlainText(text)
    return document


def _indent_quotes(document: QTextDocument) -> None:
    """Set a Markdown quote in from both sides, a step a level: Qt's import marks it but barely moves it."""
    block = document.begin()
    while block.isValid():
        level = block.blockFormat().intProperty(QTextFormat.Property.BlockQuoteLevel)
        if level:
            quote = block.blockFormat()
            quote.setLeftMargin(QUOTE_INDENT_PT * level)
            quote.setRightMargin(QUOTE_INDENT_PT)
            QTextCursor(block).setBlockFormat(quote)
        block = block.next()


def title_of(text: str, markdown: bool, name: str) -> str:
    """The PDF's title: a Markdown document's first heading, else ``name`` (the file's, without its suffix)."""
    heading = next(each_heading(text, markdown=True), None) if markdown else None
    return heading.title.strip() if heading else name


def pdf_bytes(document: QTextDocument, title: str, paper: QPageSize) -> tuple[bytes, int]:
    """``document`` printed to a PDF in memory, and its number of pages.

    Painted page by page here rather than by ``QTextDocument.print_``, for exact margins and page numbers set
    in the text's typeface, centred. Qt puts the line before a page break in the next page's text as well, out of
    sight in its top margin (print_ does the same): a PDF reader's search may find that line twice."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    # A screen's resolution: the document's spacings (a quote's indent, a paragraph's space after) are pixels,
    # which at the writer's own 1200 dpi shrank to nothing; text and paper are in points either way.
    writer.setResolution(LAYOUT_DPI)
    writer.setTitle(title)
    writer.setCreator("Redraft")
    writer.setPageLayout(QPageLayout(paper, QPageLayout.Orientation.Portrait, QMarginsF()))
    page = writer.pageLayout().fullRectPixels(LAYOUT_DPI)
    margin = MARGIN_MM / 25.4 * LAYOUT_DPI
    body = QSizeF(page.width() - 2 * margin, page.height() - 2 * margin)
    document.documentLayout().setPaintDevice(writer)  # fonts sized for the page, not for this screen's dpi
    document.setDocumentMargin(0)
    document.setPageSize(body)  # paginated: a line that does not fit on a page starts the next
    pages = document.pageCount()
    numbers = QFont(document.defaultFont())
    numbers.setPointSizeF(PRINT_POINT_SIZE * 0.8)
    painter = QPainter(writer)
    for index in range(pages):
        if index:
            writer.newPage()
        top = index * body.height()
        painter.save()
        painter.translate(margin, margin - top)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.clip = QRectF(0, top, body.width(), body.height())
        painter.setClipRect(context.clip)
        document.documentLayout().draw(painter, context)
        painter.restore()
        painter.setFont(numbers)
        painter.drawText(QRectF(margin, page.height() - margin, body.width(), margin / 2),
                         Qt.AlignmentFlag.AlignCenter, str(index + 1))  # fmt: skip
    painter.end()
    return bytes(buffer.data().data()), pages


def export_pdf(text: str, markdown: bool, path: Path, name: str, country: QLocale.Country, family: str = "") -> int:
    """Write ``text`` to ``path`` as a PDF (see the module's docstring) in ``family`` (the editor's typeface);
    the number of pages. Raises ``FileError`` (in the writer's words) where it cannot be written; nothing is
    half-written."""
    data, pages = pdf_bytes(typeset(text, markdown, family), title_of(text, markdown, name), paper_for(country))
    save_bytes(path, data, again="export again")
    return pages
