"""File ▸ Export as Word Document…: the document as a .docx, the file editors, agents and publishers ask for.

A Markdown document (``is_markdown``) keeps its structure as Word's own: headings in Word's Heading styles (its
navigation pane lists them), emphasis, strike-through and code as run formats, links as hyperlinks, bulleted and
numbered lists as Word lists (each numbered list counting from its own start), quotes set in, code blocks in a
fixed-pitch face, rules as a paragraph's border, tables as tables, pictures in line (export_pictures), and
footnotes (``[^1]``) as Word's own (docx_footnotes), and its notes (``<!-- … -->``) left out or, where the
writer asks, as Word comments (docx_comments). Its front matter's title block is set in Word's Title and
Subtitle styles (and Pandoc's Author and Date), its title and authors in the file's properties (title_page). Qt's
Markdown reader (the PDF export's too) reads the text. Any other file is paragraphs: a blank line ends one; a
hand-wrapped paragraph's lines are joined (Word wraps them itself), any other keeps its line breaks (verse, an
address).

The page is the PDF's: A4, or US Letter where the system's country uses it, 25 mm margins, the page number
centred below. The text is set at 12 pt in the writer's typeface (Settings ▸ Appearance), else Georgia, which
every Windows and Mac has. The file is an Office Open XML package written here (a zip of a few XML parts), whole
or not at all, as a save is.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from io import BytesIO
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from PySide6.QtCore import QLocale
from PySide6.QtGui import (
    QFont,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextListFormat,
    QTextTableCell,
)

from app.documents.chapters import chapters
from app.documents.fileio import save_bytes
from app.documents.front_matter import language_tag
from app.window.docx_changes import SIGN, Revisions, mark_changes
from app.window.docx_comments import Comments
from app.window.docx_footnotes import Footnotes
from app.window.docx_marks import NOT_XML, MarkedPart, R, W, split_marks
from app.window.docx_parts import (
    CODE_FAMILY,
    PACKAGE_RELS,
    content_types_xml,
    core_xml,
    footer_xml,
    numbering_xml,
    relationships_xml,
    styles_xml,
)
from app.window.export_pictures import FIGURE_PART, Pictures, picture_words
from app.window.pdf_export import MARGIN_MM, paper_for, read_markdown
from app.window.title_page import TITLE_PART, describe, put_title_page
from model.edit.wrapping import wrap_width

DEFAULT_FAMILY = "Georgia"
TWIPS_PER_MM = 1440 / 25.4
WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
NUMBERED_STYLES = frozenset({
    QTextListFormat.Style.ListDecimal, QTextListFormat.Style.ListLowerAlpha, QTextListFormat.Style.ListUpperAlpha,
    QTextListFormat.Style.ListLowerRoman, QTextListFormat.Style.ListUpperRoman,
})  # fmt: skip
CODE = "SourceCode"  # the code block's paragraph style
PARAGRAPH_SPACING = '<w:spacing w:after="160"/>'
CELL_SPACING = '<w:spacing w:before="40" w:after="40"/>'


@dataclass
class Run:
    text: str
    bold: bool = False
    italic: bool = False
    strike: bool = False
    code: bool = False
    link: str = ""  # a hyperlink's address
    picture: str = ""  # a picture's file name, as the Markdown gives it (the run has no text)
    alt: str = ""  # its words in the brackets: what a screen reader says for it
    raised: bool = False  # superscript: a footnote's number where notes are endnotes (the e-book's)


@dataclass
class Paragraph:
    runs: list[Run] = field(default_factory=list)
    style: str = ""  # a paragraph style of styles.xml's, "" for Normal
    list_id: int = 0  # numbering.xml's num, 0 for none
    list_level: int = 0
    quote_level: int = 0
    rule: bool = False  # a horizontal rule: the paragraph's bottom border


@dataclass
class Table:
    rows: list[list[list[Paragraph]]]  # rows of cells of paragraphs
    header_rows: int = 0


@dataclass
class Lists:
    """The numbered lists met so far: Word restarts a list's count only in a numbering instance of its own."""

    starts: list[tuple[int, int]] = field(default_factory=list)  # (level, first number) of each, numId - 2 order

    def numbered(self, level: int, start: int) -> int:
        self.starts.append((level, start))
        return len(self.starts) + 1  # numId 1 is the bullets'


def plain_paragraphs(text: str) -> list[Paragraph]:
    """A plain text's paragraphs (blank lines apart): a hand-wrapped one's lines joined, another's kept. Its chapter
    lines (app.documents.chapters: "CHAPTER I", "Part Two", "XIV") are headings of their level, as a Markdown
    text's # lines are, so Word's navigation pane and an e-book's contents list them; a heading keeps its lines,
    and a numeral's title on a line of its own below it joins it on a line of the heading's own."""
    lines = text.replace("\r\n", "\n").strip("\n").split("\n")
    headings = {chapter.line: chapter for chapter in chapters(lines)}
    titles = {chapter.title_line: chapter.line for chapter in headings.values() if chapter.title_line >= 0}
    paragraphs: list[Paragraph] = []
    heading_of: dict[int, Paragraph] = {}  # a chapter line's index → its heading, which its title line joins
    start = 0
    while start < len(lines):
        if not lines[start].strip():
            start += 1
            continue
        end = start
        while end < len(lines) and lines[end].strip():
            end += 1
        chunk = lines[start:end]
        if start in titles:  # the title under a numeral: its heading's second line
            heading_of[titles[start]].runs.append(Run("\u2028" + "\u2028".join(line.strip() for line in chunk)))
        elif start in headings:
            heading = Paragraph([Run("\u2028".join(line.strip() for line in chunk))],
                                f"Heading{min(headings[start].level, 6)}")  # fmt: skip
            heading_of[start] = heading
            paragraphs.append(heading)
        else:
            joined = " ".join(line.strip() for line in chunk) if wrap_width(chunk) else "\n".join(chunk)
            paragraphs.append(Paragraph([Run(joined)]))
        start = end
    return paragraphs


def markdown_body(document: QTextDocument, lists: Lists) -> list[Paragraph | Table]:
    """A document Qt read as Markdown, as paragraphs and tables."""
    body: list[Paragraph | Table] = []
    numbering: dict[int, int] = {}  # QTextList's object number → its numId
    block = document.begin()
    done_tables: set[int] = set()
    while block.isValid():
        table = QTextCursor(block).currentTable()
        if table is not None:
            if table.objectIndex() not in done_tables:
                done_tables.add(table.objectIndex())
                rows = [
                    [_cell_paragraphs(document, table.cellAt(row, column), numbering, lists)
                     for column in range(table.columns())]
                    for row in range(table.rows())
                ]  # fmt: skip
                body.append(Table(rows, header_rows=1))  # a Markdown table's first row is its header
        else:
            paragraph = _paragraph(block, numbering, lists)
            # Qt's empty blocks between parts are not the writer's; a code block's blank line is.
            if paragraph.runs or paragraph.rule or paragraph.style == CODE:
                body.append(paragraph)
        block = block.next()
    return body


def _cell_paragraphs(
    document: QTextDocument, cell: QTextTableCell, numbering: dict[int, int], lists: Lists
) -> list[Paragraph]:
    first, last = cell.firstPosition(), cell.lastPosition()
    block, paragraphs = document.findBlock(first), []
    while block.isValid() and block.position() <= last:
        paragraphs.append(_paragraph(block, numbering, lists))
        block = block.next()
    written = [paragraph for paragraph in paragraphs if paragraph.runs]  # Qt starts a table with an empty block
    return written or [Paragraph()]  # a cell holds a paragraph, if an empty one


def _paragraph(block: QTextBlock, numbering: dict[int, int], lists: Lists) -> Paragraph:
    form = block.blockFormat()
    paragraph = Paragraph(_runs(block))
    if form.hasProperty(TITLE_PART):  # the front matter's title block: Word's Title, Subtitle…
        paragraph.style = str(form.property(TITLE_PART))
        for run in paragraph.runs:  # its bold and italic are its style's (the words are plain: front_matter)
            run.bold = run.italic = False
    elif form.hasProperty(FIGURE_PART):  # a picture alone in its paragraph, and its caption: a figure
        paragraph.style = str(form.property(FIGURE_PART))
    elif form.headingLevel():
        paragraph.style = f"Heading{min(form.headingLevel(), 6)}"
    elif form.hasProperty(QTextFormat.Property.BlockCodeFence):
        paragraph.style = CODE
    paragraph.quote_level = form.intProperty(QTextFormat.Property.BlockQuoteLevel)
    paragraph.rule = form.hasProperty(QTextFormat.Property.BlockTrailingHorizontalRulerWidth)
    listed = block.textList()
    if listed is not None:
        list_format = listed.format()
        paragraph.list_level = max(0, min(list_format.indent() - 1, 8))
        if list_format.style() in NUMBERED_STYLES:
            key = listed.objectIndex()
            if key not in numbering:
                numbering[key] = lists.numbered(paragraph.list_level, list_format.start())
            paragraph.list_id = numbering[key]
        else:
            paragraph.list_id = 1
            box = {QTextBlockFormat.MarkerType.Checked: "☑ ", QTextBlockFormat.MarkerType.Unchecked: "☐ "}
            if form.marker() in box:  # a task list's item (Qt's marker is only read on list items)
                paragraph.runs.insert(0, Run(box[form.marker()]))
        paragraph.style = paragraph.style or "ListParagraph"
    return paragraph


def _runs(block: QTextBlock) -> list[Run]:
    runs = []
    fragments = block.begin()
    while not fragments.atEnd():
        fragment = fragments.fragment()
        form: QTextCharFormat = fragment.charFormat()
        text = fragment.text().replace("\ufffc", "")  # an image's place
        if form.isImageFormat():
            image = form.toImageFormat()
            runs.append(Run("", picture=image.name(), alt=picture_words(image)))
        if text:
            runs.append(Run(
                text, bold=form.fontWeight() >= QFont.Weight.DemiBold, italic=form.fontItalic(),
                strike=form.fontStrikeOut(), code=form.fontFixedPitch() or "monospace" in (form.fontFamilies() or []),
                link=form.anchorHref() if form.isAnchor() and not form.anchorHref().startswith("#") else "",
                raised=form.verticalAlignment() == QTextCharFormat.VerticalAlignment.AlignSuperScript,
            ))  # fmt: skip
        fragments += 1
    return runs


class _Writer:
    """document.xml's body, and the hyperlinks it refers to (word/_rels)."""

    def __init__(self, text_width: int, pictures: Pictures, extras: Sequence[MarkedPart]) -> None:
        self.links: list[str] = []
        self.text_width = text_width  # twips between the margins: a table's columns share it
        self.pictures = pictures
        self.extras = extras  # the comments and footnotes whose marks runs may hold
        self.revisions = Revisions()  # the tracked changes' marks (docx_changes), followed run after run

    def body(self, parts: list[Paragraph | Table]) -> str:
        xml = []
        for part, following in zip(parts, [*parts[1:], None], strict=True):
            if isinstance(part, Table):
                xml.append(self.table(part) + "<w:p/>")  # a line's space after it; Word ends a body on a paragraph
                continue
            # A code block's lines sit close; its last keeps a paragraph's space after.
            last_of_code = part.style == CODE and not (isinstance(following, Paragraph) and following.style == CODE)
            xml.append(self.paragraph(part, spacing=PARAGRAPH_SPACING if last_of_code else ""))
        return "".join(xml) or "<w:p/>"

    def table(self, table: Table) -> str:
        columns = max((len(row) for row in table.rows), default=1)
        column_width = self.text_width // columns
        rows = []
        for index, row in enumerate(table.rows):
            header = index < table.header_rows
            cells = "".join(
                "<w:tc><w:tcPr><w:tcW w:w=\"0\" w:type=\"auto\"/></w:tcPr>"
                + "".join(self.paragraph(p, bold=header, spacing=CELL_SPACING) for p in cell) + "</w:tc>"
                for cell in row
            )  # fmt: skip
            rows.append(f"<w:tr>{'<w:trPr><w:tblHeader/></w:trPr>' if header else ''}{cells}</w:tr>")
        borders = "".join(f'<w:{side} w:val="single" w:sz="4" w:space="0" w:color="808080"/>'
                          for side in ("top", "left", "bottom", "right", "insideH", "insideV"))  # fmt: skip
        grid = f'<w:gridCol w:w="{column_width}"/>' * columns
        return (f'<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/><w:tblBorders>{borders}</w:tblBorders>'
                f'</w:tblPr><w:tblGrid>{grid}</w:tblGrid>{"".join(rows)}</w:tbl>')  # fmt: skip

    def paragraph(self, paragraph: Paragraph, bold: bool = False, spacing: str = "") -> str:
        properties = ""
        if paragraph.style:
            properties += f'<w:pStyle w:val="{paragraph.style}"/>'
        if paragraph.list_id:
            level, number = paragraph.list_level, paragraph.list_id
            properties += f'<w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="{number}"/></w:numPr>'
        if paragraph.rule:
            properties += '<w:pBdr><w:bottom w:val="single" w:sz="6" w:space="1" w:color="808080"/></w:pBdr>'
        properties += spacing
        if paragraph.quote_level:
            indent = 720 * paragraph.quote_level
            properties += f'<w:ind w:left="{indent}" w:right="720"/>'
        runs = "".join(self.run(run, bold) for run in paragraph.runs)
        properties += self.revisions.paragraph_mark()  # a paragraph break added or taken out with a change
        return f"<w:p>{f'<w:pPr>{properties}</w:pPr>' if properties else ''}{runs}</w:p>"

    def run(self, run: Run, bold: bool = False) -> str:
        if run.picture:  # in line; where it cannot be read, its name in brackets marks the place
            return self.pictures.run_xml(run.picture, run.alt) or self.run(Run(f"[{run.picture}]", italic=True))
        if SIGN.search(run.text):  # a tracked change begins or ends in it: each piece as its change has it
            return "".join(self.run(replace(run, text=piece), bold) for piece in self.revisions.pieces(run.text))
        for extra in self.extras:  # a comment's or a footnote's mark (docx_marks): its XML between the words
            if extra.pattern.search(run.text):
                split = split_marks(run.text, extra.pattern)
                return "".join(self.run(replace(run, text=piece), bold) if isinstance(piece, str)
                               else extra.anchor_xml(piece) for piece in split)  # fmt: skip
        # In the schema's order, which Word holds a file to (LibreOffice and python-docx do not).
        properties = '<w:rStyle w:val="Hyperlink"/>' if run.link else ""
        if run.code:
            properties += f'<w:rFonts w:ascii="{CODE_FAMILY}" w:hAnsi="{CODE_FAMILY}" w:cs="{CODE_FAMILY}"/>'
        properties += "<w:b/>" if run.bold or bold else ""
        properties += "<w:i/>" if run.italic else ""
        properties += "<w:strike/>" if run.strike else ""
        pieces = []
        for index, line in enumerate(NOT_XML.sub("", run.text).replace("\u2028", "\n").split("\n")):
            if index:
                pieces.append("<w:br/>")
            for column, part in enumerate(line.split("\t")):
                if column:
                    pieces.append("<w:tab/>")
                if part:
                    pieces.append(f'<w:t xml:space="preserve">{escape(part)}</w:t>')
        xml = self.revisions.run(f"<w:r>{f'<w:rPr>{properties}</w:rPr>' if properties else ''}{''.join(pieces)}</w:r>")
        if not run.link:
            return xml
        self.links.append(run.link)
        return f'<w:hyperlink r:id="rLink{len(self.links)}">{xml}</w:hyperlink>'


def docx_bytes(body: list[Paragraph | Table], lists: Lists, title: str, paper_twips: tuple[int, int], family: str,
               language: str, folder: Path | None = None, extras: Sequence[MarkedPart] = (),
               authors: tuple[str, ...] = ()) -> tuple[bytes, list[str]]:  # fmt: skip
    """The .docx package of ``body`` (document, styles, numbering, footer, properties with ``title`` and
    ``authors``, the pictures read from ``folder`` and the ``extras`` marked in it: comments, footnotes), and the
    pictures it could not carry."""
    width, height = paper_twips
    margin = round(MARGIN_MM * TWIPS_PER_MM)
    pictures = Pictures(folder, width - 2 * margin)
    writer = _Writer(width - 2 * margin, pictures, extras)
    content = writer.body(body)
    document = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="{W}" xmlns:r="{R}"'
        f' xmlns:wp="{WP}">'
        f"<w:body>{content}<w:sectPr><w:footerReference w:type=\"default\" r:id=\"rFooter\"/>"
        f'<w:pgSz w:w="{width}" w:h="{height}"/><w:pgMar w:top="{margin}" w:right="{margin}" w:bottom="{margin}"'
        f' w:left="{margin}" w:header="708" w:footer="{margin // 2}" w:gutter="0"/></w:sectPr></w:body></w:document>'
    )
    links = "".join(
        f'<Relationship Id="rLink{index}" Type="{R}/hyperlink" Target={quoteattr(NOT_XML.sub("", address))}'
        ' TargetMode="External"/>'
        for index, address in enumerate(writer.links, start=1)
    )
    parts = {
        "[Content_Types].xml": content_types_xml(pictures.content_types() + "".join(e.content_types() for e in extras)),
        "_rels/.rels": relationships_xml(
            f'<Relationship Id="rDocument" Type="{R}/officeDocument" Target="word/document.xml"/>'
            f'<Relationship Id="rCore" Type="{PACKAGE_RELS}/metadata/core-properties" Target="docProps/core.xml"/>'
            f'<Relationship Id="rApp" Type="{R}/extended-properties" Target="docProps/app.xml"/>'
        ),
        "word/document.xml": document,
        "word/_rels/document.xml.rels": relationships_xml(
            f'<Relationship Id="rStyles" Type="{R}/styles" Target="styles.xml"/>'
            f'<Relationship Id="rNumbering" Type="{R}/numbering" Target="numbering.xml"/>'
            f'<Relationship Id="rFooter" Type="{R}/footer" Target="footer1.xml"/>' + links + pictures.relationships()
            + "".join(extra.relationships() for extra in extras)
        ),
        "word/styles.xml": styles_xml(family, language),
        "word/numbering.xml": numbering_xml(lists.starts),
        "word/footer1.xml": footer_xml(),
        "docProps/core.xml": core_xml(title, authors),
        **{name: xml for extra in extras for name, xml in extra.parts().items()},
        "docProps/app.xml": (
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Properties xmlns='
            '"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
            "<Application>Redraft</Application></Properties>"
        ),
    }
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        for name, xml in parts.items():  # [Content_Types].xml first, as Office writes it
            package.writestr(name, xml.encode("utf-8"))
        for name, data in pictures.parts().items():
            package.writestr(name, data)
    return buffer.getvalue(), pictures.missing


def paper_twips(country: QLocale.Country) -> tuple[int, int]:
    size = paper_for(country).size(paper_for(country).Unit.Millimeter)
    return round(size.width() * TWIPS_PER_MM), round(size.height() * TWIPS_PER_MM)


def word_language(language: str, system: QLocale) -> str:
    """The language tag Word checks the text in: ``language``'s (a code, "" for the system's) in the system's
    country where the system speaks it (en-GB for a British writer, not Qt's en-US), else its usual one."""
    same = not language or system.name().split("_")[0] == language
    # Qt's "C" locale (LANG=C, as in many containers) is no language tag; its words are English, as Qt's are.
    return language_tag((system if same else QLocale(language)).name()) or "en-US"


def export_docx(text: str, markdown: bool, path: Path, name: str, country: QLocale.Country, family: str = "",
                language: str = "", folder: Path | None = None, notes_as_comments: bool = False,
                tracked: bool = False, author: str = "") -> list[str]:  # fmt: skip
    """Write ``text`` to ``path`` as a Word document (see the module's docstring): ``family`` is the writer's
    typeface ("": Georgia), ``language`` its language's code ("": the system's; a front matter's ``lang`` comes
    first), ``folder`` where the document is (its pictures are read from there); ``notes_as_comments``: a Markdown
    text's inline notes as Word comments (docx_comments), else left out; ``tracked``: its CriticMarkup as Word's
    tracked changes (docx_changes), else as written; ``author``: the writer's name, the document's author where its
    front matter names none, and the author of their notes that name no one. Returns the pictures it could not
    carry. Raises ``FileError`` (in the writer's words) where it cannot be written; nothing is half-written."""
    lists = Lists()
    comments, footnotes = Comments(author), Footnotes(Revisions(first_id=100_000) if tracked else None)
    body: list[Paragraph | Table]
    told = describe(text, markdown, name, author, tracked)
    marked = mark_changes(told.body, signed=True) if tracked else told.body
    if markdown:
        document = QTextDocument()
        read_markdown(document, footnotes.mark(comments.mark(marked) if notes_as_comments else marked))
        put_title_page(document, told.page)
        body = markdown_body(document, lists)
    else:
        body = [*plain_paragraphs(marked)]
    data, missing = docx_bytes(body, lists, told.title, paper_twips(country), family or DEFAULT_FAMILY,
                               told.page.language or word_language(language, QLocale.system()), folder,
                               (comments, footnotes), told.authors)  # fmt: skip
    save_bytes(path, data, again="export again")
    return missing
