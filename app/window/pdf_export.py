"""File ▸ Export as PDF…: the document typeset on pages, to send or to print.

A Markdown document (``is_markdown``: .md, or untitled) is rendered as Markdown, its headings, emphasis, lists
and quotes set and its marks gone, its pictures read from beside it (export_pictures), its footnotes (``[^1]``)
numbered in the text and set as Notes at its end (a page's foot is Word's to lay out; docx_footnotes); any other
is its plain
text, line for line. Both in the editor's typeface at a print size, on A4, or on US Letter where the system's
country uses it, with margins and page numbers. Front matter (``app.documents.front_matter``) is not printed as
words: its title block opens the first page; the PDF's title and author are the document's (``title_page``).

What is exported is what Save would write: a rewrite still developing or waiting for Accept is exported as its
original. The file is written as a save is (``app.documents.fileio.save_bytes``): whole or not at all, an
earlier PDF of the same name left as it was if anything fails.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QLocale, QMarginsF, QRectF, QRegularExpression, QSizeF, Qt, QUrl
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QPagedPaintDevice,
    QPageLayout,
    QPageSize,
    QPainter,
    QPalette,
    QPdfWriter,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextImageFormat,
)

from app.documents.fileio import save_bytes
from app.documents.front_matter import TitlePage
from app.documents.markdown_format import lines_outside_code
from app.documents.word_count import without_notes
from app.window.docx_changes import ADDED, ADDED_END, REMOVED, REMOVED_END, mark_changes
from app.window.docx_footnotes import MARK as FOOTNOTE_MARK
from app.window.docx_footnotes import Footnotes
from app.window.export_pictures import FIGURE_PART, NO_WORDS, Picture, read_picture, set_figures
from app.window.theme import PAPER_LINK, change_colors, prose_families
from app.window.title_page import describe, put_title_page

PRINT_POINT_SIZE = 11.5  # a book's body size; the editor's is a screen's
MARGIN_MM = 25.0
QUOTE_INDENT_PT = 24.0
LAYOUT_DPI = 96
LEADING_RULE = re.compile(r"\A\ufeff?---(?=\r?\n)")
CLEAR = 0.01  # px: less than Qt's layout unit (1/64 px), to keep a clip off the line at its edge
# Countries whose paper is US Letter; the rest of the world's is A4.
LETTER_COUNTRIES = frozenset({
    QLocale.Country.UnitedStates, QLocale.Country.Canada, QLocale.Country.Mexico, QLocale.Country.Philippines,
    QLocale.Country.Chile, QLocale.Country.Colombia, QLocale.Country.Venezuela, QLocale.Country.PuertoRico,
})  # fmt: skip


NO_BREAK_SPACE = "\u00a0"


def paper_for(country: QLocale.Country) -> QPageSize:
    return QPageSize(QPageSize.PageSizeId.Letter if country in LETTER_COUNTRIES else QPageSize.PageSizeId.A4)


def typeset(text: str, markdown: bool, family: str = "", show_changes: bool = False,
            page: TitlePage | None = None) -> QTextDocument:  # fmt: skip
    """``text`` laid out for print: as Markdown (GitHub's dialect) or as plain lines, in the text's typeface
    (``family``, Settings ▸ Appearance; "": the book serifs), ``page``'s title block (its front matter's, which
    ``text`` no longer holds) on top; ``show_changes``: its tracked changes (CriticMarkup) shown as Show Changes
    shows them, else their signs printed as written."""
    document = QTextDocument()
    font = QFont()
    font.setFamilies(prose_families(family))
    font.setStyleHint(QFont.StyleHint.Serif)
    font.setPointSizeF(PRINT_POINT_SIZE)
    document.setDefaultFont(font)
    text = mark_changes(text) if show_changes else text
    if markdown:
        footnotes = Footnotes()
        read_markdown(document, footnotes.mark(text))
        _indent_quotes(document)
        _endnotes(document, footnotes.notes)
    else:
        document.setPlainText(text)
    if page is not None:
        put_title_page(document, page)
    _inked_for_paper(document, markdown)
    if show_changes:
        _changes_shown(document)
    return document


def _inked_for_paper(document: QTextDocument, markdown: bool) -> None:
    """Each character's ink set for paper: black, a link the light theme's blue. Qt's Markdown reader gives a
    link the screen's link colour (in the dark theme, a pale blue on white paper) and leaves other text to the
    painter's ink, which Print Preview's pages lose: they showed the dark theme's light grey."""
    cursor = QTextCursor(document)
    cursor.select(QTextCursor.SelectionType.Document)
    black = QTextCharFormat()
    black.setForeground(QColor(Qt.GlobalColor.black))
    cursor.mergeCharFormat(black)  # nothing else has an ink of its own yet (the changes' come after)
    if not markdown:
        return  # no links
    links: list[tuple[int, int]] = []
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            if (fragment := fragments.fragment()).charFormat().isAnchor():
                links.append((fragment.position(), fragment.position() + fragment.length()))
            fragments += 1
        block = block.next()
    blue = QTextCharFormat()
    blue.setForeground(PAPER_LINK)
    for start, end in links:
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(blue)


def _changes_shown(document: QTextDocument) -> None:
    """Each tracked change's words (between docx_changes' marks) as on screen: added ones underlined in the
    added ink, removed ones struck through in the removed ink (the light theme's: paper is white); marks gone."""
    colors = change_colors(dark=False)
    for opening, closing, added in ((ADDED, ADDED_END, True), (REMOVED, REMOVED_END, False)):
        start = document.find(opening)
        while not start.isNull():
            end = document.find(closing, start)
            if end.isNull():
                break
            words = QTextCursor(document)
            words.setPosition(start.selectionEnd())
            words.setPosition(end.selectionStart(), QTextCursor.MoveMode.KeepAnchor)
            ink = QTextCharFormat()
            ink.setForeground(colors.added if added else colors.removed)
            ink.setFontUnderline(added)
            ink.setFontStrikeOut(not added)
            words.mergeCharFormat(ink)
            end.removeSelectedText()
            start.removeSelectedText()
            start = document.find(opening, start)


def read_markdown(document: QTextDocument, text: str) -> None:
    """``text`` into ``document`` as GitHub's Markdown, with any HTML in it as the words it is: Qt's reader let a
    tag it did not know (a writer's "<angle>") swallow the rest of the document. HTML comments, notes to self that
    Markdown never shows, are left out. The front matter was taken off before (``title_page.describe``): a text
    that still opens with ``---`` opens with a rule, which Qt (6.10 and later) would take, with every word up to
    the next ``---``, for front matter and drop. A picture with nothing in its brackets (``![](map.png)``, as
    other editors paste them) is read too: Qt's reader left it out of every export, unsaid."""
    features = QTextDocument.MarkdownFeature.MarkdownDialectGitHub | QTextDocument.MarkdownFeature.MarkdownNoHTML
    text = LEADING_RULE.sub("***", without_notes(text), count=1)
    if "![](" in text:
        text = "\n".join(line.replace("![](", f"![{NO_WORDS}](") if prose else line
                          for line, prose in lines_outside_code(text))  # fmt: skip
    document.setMarkdown(text, features)
    set_figures(document)


def _endnotes(document: QTextDocument, notes: list[str]) -> None:
    """Each footnote's mark a superscript number, and the notes under a Notes heading at the end, numbered so."""
    if not notes:
        return
    marks = QRegularExpression(FOOTNOTE_MARK.pattern)
    found = document.find(marks)
    while not found.isNull():
        number = found.selectedText().strip("\ue002\ue003")
        raised = QTextCharFormat(found.charFormat())
        raised.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignSuperScript)
        found.insertText(number, raised)
        found = document.find(marks, found)
    cursor = QTextCursor(document)
    cursor.movePosition(QTextCursor.MoveOperation.End)
    cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())  # a block of its own, not the last paragraph's end
    # A note not yet written (Format ▸ Footnote opens it empty) is an item still: Markdown drops an empty one, and
    # every later note took the number before its own.
    items = (f"{index}. {words or NO_BREAK_SPACE}" for index, words in enumerate(notes, 1))
    cursor.insertMarkdown("## Notes\n\n" + "\n".join(items))


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


def place_pictures(document: QTextDocument, folder: Path | None, room: QSizeF) -> list[str]:
    """Each picture ``document``'s Markdown names, read from ``folder``, at its size on the page and never wider
    or taller than ``room``; where one cannot be read, its name in brackets in its place. The names it could not
    read."""
    found: list[tuple[int, QTextImageFormat]] = []
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            if fragment.charFormat().isImageFormat():
                form = fragment.charFormat().toImageFormat()
                found += [(fragment.position() + i, form) for i in range(fragment.length())]
            fragments += 1
        block = block.next()
    read: dict[str, Picture | None] = {}  # a picture named twice is read once
    for position, form in reversed(found):  # from the end, so the positions before stay where they were
        cursor = QTextCursor(document)
        cursor.setPosition(position)
        cursor.setPosition(position + 1, QTextCursor.MoveMode.KeepAnchor)
        if form.name() not in read:
            read[form.name()] = read_picture(form.name(), folder)
        picture = read[form.name()]
        if picture is None:
            named = QTextCharFormat()
            named.setFontItalic(True)
            cursor.insertText(f"[{form.name()}]", named)
            continue
        document.addResource(QTextDocument.ResourceType.ImageResource.value, QUrl(form.name()), picture.image)
        width, height = picture.width_inches * LAYOUT_DPI, picture.height_inches * LAYOUT_DPI
        # A line's room left below it; a figure's caption, which stays with it, two more.
        figure = document.findBlock(position).blockFormat().hasProperty(FIGURE_PART)
        tallest = room.height() * (0.85 if figure else 0.95)
        scale = min(1.0, room.width() / width, tallest / height)
        sized = QTextImageFormat(form)
        sized.setWidth(width * scale)
        sized.setHeight(height * scale)
        cursor.setCharFormat(sized)
    return [name for name in dict.fromkeys(form.name() for _, form in found) if read[name] is None]


def pdf_bytes(document: QTextDocument, title: str, paper: QPageSize, folder: Path | None = None,
              authors: tuple[str, ...] = ()) -> tuple[bytes, int, list[str]]:  # fmt: skip
    """``document`` printed to a PDF in memory (its pictures read from ``folder``, ``title`` and ``authors`` in its
    properties), its number of pages, and the pictures it could not read."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    # A screen's resolution: the document's spacings (a quote's indent, a paragraph's space after) are pixels,
    # which at the writer's own 1200 dpi shrank to nothing; text and paper are in points either way.
    writer.setResolution(LAYOUT_DPI)
    writer.setTitle(title)
    writer.setAuthor(", ".join(authors))
    writer.setCreator("Redraft")
    writer.setPageLayout(QPageLayout(paper, QPageLayout.Orientation.Portrait, QMarginsF()))
    pages, missing = paint_pages(document, writer, folder)
    return bytes(buffer.data().data()), pages, missing


def paint_pages(
    document: QTextDocument, device: QPagedPaintDevice, folder: Path | None = None, only: tuple[int, int] | None = None
) -> tuple[int, list[str]]:
    """``document`` painted on ``device``'s pages (a PDF writer, or File ▸ Print's printer) with this module's
    margins and page numbers, its pictures read from ``folder``; the number of pages and the pictures it could not
    read. The device's page layout is its paper, margins included: the margins here are drawn on it. ``only``:
    the first and last page to paint (counted from 1), where a printer was asked for some pages.

    Painted page by page here rather than by ``QTextDocument.print_``, for exact margins and page numbers set
    in the text's typeface, centred, and for the paragraphs a page break splits: Qt draws such a paragraph's line
    before the break on both pages (out of sight in a margin, but in the PDF's text, so a reader's search found
    it twice; print_ does the same). Their lines are drawn here one by one, each on its own page."""
    page = device.pageLayout().fullRectPixels(LAYOUT_DPI)
    margin = MARGIN_MM / 25.4 * LAYOUT_DPI
    # In Qt's layout units (1/64 px): its page breaks fall exactly where this loop's pages end.
    body = QSizeF(page.width() - 2 * margin, math.floor((page.height() - 2 * margin) * 64) / 64)
    layout = document.documentLayout()
    # Laid out at the page's own resolution, fonts sized for it, where the device took LAYOUT_DPI (a PDF writer,
    # a CUPS printer); a printer that keeps its own gets the same layout scaled up.
    scale = device.logicalDpiY() / LAYOUT_DPI
    if scale == 1:
        layout.setPaintDevice(device)
    document.setDocumentMargin(0)
    missing = place_pictures(document, folder, body)
    document.setPageSize(body)  # paginated: a line that does not fit on a page starts the next
    pages = document.pageCount()
    split = _split_paragraphs(document, body.height())
    numbers = QFont(document.defaultFont())
    numbers.setPointSizeF(PRINT_POINT_SIZE * 0.8)
    painter = QPainter(device)
    painter.scale(device.logicalDpiX() / LAYOUT_DPI, scale)
    context = QAbstractTextDocumentLayout.PaintContext()
    context.palette.setColor(QPalette.ColorRole.Text, QColor(Qt.GlobalColor.black))  # not the dark theme's ink
    first, last = only if only is not None else (1, pages)
    for index in range(max(first, 1) - 1, min(last, pages)):
        if index > max(first, 1) - 1:
            device.newPage()
        top, bottom = index * body.height(), (index + 1) * body.height()
        painter.save()
        painter.translate(margin, margin - top)
        painter.setClipRect(QRectF(0, top, body.width(), body.height()))
        painter.setPen(Qt.GlobalColor.black)
        # In reading order: the lines of a paragraph run on from the page before, the paragraphs wholly on this
        # page (Qt draws a block or a line that touches its clip's edge: the clip is kept off them), the lines of
        # one that runs on to the next.
        on_page = [block for block in split if _overlaps(_area(block), top, bottom)]
        runs_on = [block for block in on_page if _area(block).top() < top]
        whole_from = max([top, *(_area(block).bottom() for block in runs_on)])
        whole_to = min([bottom, *(_area(block).top() for block in on_page if block not in runs_on)])
        _draw_lines(painter, runs_on, top, bottom)
        if whole_to > whole_from:
            context.clip = QRectF(0, whole_from + CLEAR, body.width(), whole_to - whole_from - 2 * CLEAR)
            layout.draw(painter, context)
        _draw_lines(painter, [block for block in on_page if block not in runs_on], top, bottom)
        painter.restore()
        painter.setFont(numbers)
        painter.drawText(QRectF(margin, page.height() - margin, body.width(), margin / 2),
                         Qt.AlignmentFlag.AlignCenter, str(index + 1))  # fmt: skip
    painter.end()
    return pages, missing


def _split_paragraphs(document: QTextDocument, page_height: float) -> list[QTextBlock]:
    """The paragraphs (of the text itself, not of a table: those are left to Qt) that a page break splits."""
    split = []
    block = document.begin()
    while block.isValid():
        area = _area(block)
        if math.floor(area.top() / page_height) != math.floor((area.bottom() - CLEAR) / page_height):
            frame = QTextCursor(block).currentFrame()
            if frame is None or frame.parentFrame() is None:
                split.append(block)
        block = block.next()
    return split


def _area(block: QTextBlock) -> QRectF:
    """Where ``block``'s lines lie, as Qt's drawing reckons it (its layout's box; the block's bounding rect in
    the document's layout ends short of lines that a page break moved down)."""
    layout = block.layout()
    return layout.boundingRect().translated(layout.position())


def _overlaps(area: QRectF, top: float, bottom: float) -> bool:
    return area.top() < bottom and area.bottom() > top


def _draw_lines(painter: QPainter, blocks: list[QTextBlock], top: float, bottom: float) -> None:
    """The lines of ``blocks`` that start on the page from ``top`` to ``bottom`` (pagination moves a line that
    would cross a page's end to the next page, whole)."""
    for block in blocks:
        layout = block.layout()
        for line in (layout.lineAt(i) for i in range(layout.lineCount())):
            if top <= layout.position().y() + line.y() < bottom:
                line.draw(painter, layout.position())


def export_pdf(text: str, markdown: bool, path: Path, name: str, country: QLocale.Country, family: str = "",
               folder: Path | None = None, show_changes: bool = False,
               author: str = "") -> tuple[int, list[str]]:  # fmt: skip
    """Write ``text`` to ``path`` as a PDF (see the module's docstring) in ``family`` (the editor's typeface), a
    Markdown document's pictures read from ``folder``, its tracked changes shown if ``show_changes``, ``author``
    (the writer's name) its author where its front matter names none; the number of pages and the pictures it
    could not read. Raises ``FileError`` (in the writer's words) where it cannot be written; nothing is
    half-written."""
    told = describe(text, markdown, name, author, tracked=show_changes)
    data, pages, missing = pdf_bytes(typeset(told.body, markdown, family, show_changes, told.page), told.title,
                                     paper_for(country), folder, told.authors)  # fmt: skip
    save_bytes(path, data, again="export again")
    return pages, missing
