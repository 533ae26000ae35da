"""File ▸ Export as EPUB…: the document as an EPUB 3 e-book, the file e-readers and self-publishing stores take.

The text is read as the Word export reads it (``docx_export.markdown_body``: Qt's Markdown reader, then headings,
lists, quotes, code, rules, tables, emphasis, links and pictures) and written as XHTML: a chapter file for each
top-level heading (the text before the first is a file of its own), a table of contents (``nav.xhtml``) of the
top two levels, footnotes numbered in the text and set as Notes at the end (as the PDF sets them), pictures read
from beside the document and carried inside the book. A plain text is its paragraphs and its chapter lines as
headings (``docx_export.plain_paragraphs``), cut into chapter files the same way. The book's
title and authors are the PDF's (``title_page``), its front matter's title block opens it; its language is the
front matter's ``lang``, else the spelling language's. Written whole or not at all, as a save is.
"""

from __future__ import annotations

import uuid
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from xml.sax import saxutils

from app.documents.critic_markup import settle
from app.documents.fileio import save_bytes
from app.documents.front_matter import without_front_matter
from app.window.docx_export import CODE, Lists, Paragraph, Run, Table, markdown_body, plain_paragraphs
from app.window.docx_marks import NOT_XML
from app.window.export_pictures import FIGURE_PARTS, read_picture
from app.window.pdf_export import typeset
from app.window.title_page import describe


def escape(text: str) -> str:
    """``text`` for XHTML, without the characters XML forbids (a form feed between a plain text's chapters): a
    reading system refuses a whole book over one."""
    return saxutils.escape(NOT_XML.sub("", text))


def quoteattr(text: str) -> str:
    return saxutils.quoteattr(NOT_XML.sub("", text))


XHTML_HEAD = (
    '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml" '
    'xmlns:epub="http://www.idpf.org/2007/ops" xml:lang={language} lang={language}>\n<head>\n<meta charset="utf-8"/>\n'
    "<title>{title}</title>\n{style}</head>\n<body>\n"
)
STYLE = """body { font-family: serif; line-height: 1.5; margin: 0 5%; }
h1, h2, h3, h4, h5, h6 { font-weight: bold; line-height: 1.25; page-break-after: avoid; }
h1 { font-size: 1.6em; margin: 2em 0 1em; text-align: center; }
p { margin: 0 0 0.8em; }
blockquote { margin: 0 0 0.8em 1.5em; font-style: italic; }
pre, code { font-family: monospace; font-size: 0.9em; }
pre { white-space: pre-wrap; margin: 0 0 0.8em 1em; }
hr { border: none; border-top: 1px solid #888; margin: 1.5em 20%; }
table { border-collapse: collapse; margin: 0 0 0.8em; }
td, th { border: 1px solid #888; padding: 0.2em 0.5em; }
img { max-width: 100%; }
.title { font-size: 2em; font-weight: bold; text-align: center; margin: 3em 0 0.5em; }
.subtitle { font-size: 1.4em; font-style: italic; text-align: center; }
.author, .date { text-align: center; }
.figure { text-align: center; margin: 1em 0 0.3em; }
.caption { text-align: center; font-style: italic; font-size: 0.9em; margin: 0 0 1em; }
.date { margin-bottom: 3em; }
"""
TITLE_PARTS = ("Title", "Subtitle", "Author", "Date")  # title_page's, as classes


@dataclass
class Chapter:
    file: str
    title: str
    parts: list[Paragraph | Table] = field(default_factory=list)


@dataclass
class Book:
    """The pictures met while writing the chapters, each carried once."""

    folder: Path | None
    pictures: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)  # name -> (file, media type, bytes)
    missing: list[str] = field(default_factory=list)

    def picture(self, name: str) -> str | None:
        """The book's file for the picture ``name`` (read from beside the document), None where it cannot be read."""
        if name not in self.pictures:
            found = read_picture(name, self.folder)
            if found is None:
                if name not in self.missing:
                    self.missing.append(name)
                return None
            self.pictures[name] = (f"images/picture{len(self.pictures) + 1}.{found.extension}", found.content_type,
                                   found.data)  # fmt: skip
        return self.pictures[name][0]


def heading_words(heading: Paragraph) -> str:
    """A heading's words on one line, as a contents list and a chapter's title show them (a plain text's chapter
    heading may hold a line break: "CHAPTER I", then its title)."""
    return "".join(run.text for run in heading.runs).replace("\u2028", " ")


def chapters_of(body: list[Paragraph | Table]) -> list[Chapter]:
    """The body cut before each top-level heading (a document with none is one chapter)."""
    chapters = [Chapter("text/part0.xhtml", "")]
    for part in body:
        if isinstance(part, Paragraph) and part.style == "Heading1":
            chapters.append(Chapter(f"text/part{len(chapters)}.xhtml", heading_words(part)))
        chapters[-1].parts.append(part)
    return [chapter for chapter in chapters if chapter.parts]


def _runs(runs: list[Run], book: Book, bold_already: bool = False) -> str:
    """The runs as XHTML; ``bold_already`` in a heading or a table's header, whose words Qt makes bold."""
    out = []
    for run in runs:
        if run.picture:
            file = book.picture(run.picture)
            out.append(f"<img src={quoteattr('../' + file)} alt={quoteattr(run.alt or run.picture)}/>" if file
                       else escape(run.picture))  # fmt: skip
            continue
        html = escape(run.text).replace("\u2028", "<br/>")
        marks = ((run.code, "code"), (run.strike, "del"), (run.italic, "em"),
                 (run.bold and not bold_already, "strong"), (run.raised, "sup"))  # fmt: skip
        for on, tag in marks:
            if on:
                html = f"<{tag}>{html}</{tag}>"
        if run.link:
            html = f"<a href={quoteattr(run.link)}>{html}</a>"
        out.append(html)
    return "".join(out)


def xhtml_body(parts: list[Paragraph | Table], lists: Lists, book: Book, anchors: list[str]) -> str:
    """The parts as XHTML; each heading gets the next of ``anchors``' ids (h1 to h6 alike)."""
    out: list[str] = []
    open_lists: list[str] = []  # the tags of the lists open, outermost first
    quote = 0
    code: list[str] = []

    def close_lists(depth: int) -> None:
        while len(open_lists) > depth:
            out.append(f"</li></{open_lists.pop()}>")

    for part in parts:
        if not (isinstance(part, Paragraph) and part.style == CODE) and code:
            out.append(f"<pre><code>{escape(chr(10).join(code))}</code></pre>")
            code = []
        if isinstance(part, Table):
            close_lists(0)
            rows = "".join(
                "<tr>" + "".join(
                    f"<{'th' if index < part.header_rows else 'td'}>"
                    + "<br/>".join(_runs(p.runs, book, index < part.header_rows) for p in cell)
                    + f"</{'th' if index < part.header_rows else 'td'}>" for cell in row
                ) + "</tr>"
                for index, row in enumerate(part.rows)
            )  # fmt: skip
            out.append(f"<table>{rows}</table>")
            continue
        if part.list_id:
            depth = part.list_level + 1
            tag = "ul" if part.list_id == 1 else "ol"
            if len(open_lists) >= depth and open_lists[depth - 1] != tag:
                close_lists(depth - 1)
            if len(open_lists) == depth:
                out.append("</li><li>")
            else:
                close_lists(depth)
                while len(open_lists) < depth:
                    start = lists.starts[part.list_id - 2][1] if tag == "ol" else 1
                    numbered_from = f' start="{start}"' if start != 1 else ""
                    out.append(f"<{tag}{numbered_from}><li>")
                    open_lists.append(tag)
            out.append(_runs(part.runs, book))
            continue
        close_lists(0)
        while quote < part.quote_level:
            out.append("<blockquote>")
            quote += 1
        while quote > part.quote_level:
            out.append("</blockquote>")
            quote -= 1
        if part.style == CODE:
            code.append("".join(run.text for run in part.runs))
        elif part.style.startswith("Heading"):
            level = part.style[-1]
            anchor = f" id={quoteattr(anchors.pop(0))}" if anchors else ""  # none in a copied passage's
            out.append(f"<h{level}{anchor}>{_runs(part.runs, book, bold_already=True)}</h{level}>")
        elif part.style in TITLE_PARTS or part.style in FIGURE_PARTS:
            out.append(f'<p class="{part.style.lower()}">{_runs(part.runs, book)}</p>')  # its class is its look
        elif part.rule:
            out.append("<hr/>")
        elif part.runs:
            out.append(f"<p>{_runs(part.runs, book)}</p>")
    if code:
        out.append(f"<pre><code>{escape(chr(10).join(code))}</code></pre>")
    close_lists(0)
    out.extend("</blockquote>" for _ in range(quote))
    return "\n".join(out)


def epub_bytes(body: list[Paragraph | Table], lists: Lists, title: str, language: str, folder: Path | None = None,
               authors: tuple[str, ...] = ()) -> tuple[bytes, list[str]]:  # fmt: skip
    """The book as an EPUB 3 package in memory, and the pictures it could not carry."""
    book = Book(folder)
    chapters = chapters_of(body)
    language_attr = quoteattr(language or "en")
    toc: list[tuple[int, str, str]] = []  # (level, title, href) for nav.xhtml: the top two levels
    files = {}
    for chapter in chapters:
        headings = [p for p in chapter.parts if isinstance(p, Paragraph) and p.style.startswith("Heading")]
        anchors = [f"h{len(toc) + index}" for index in range(len(headings))]
        for heading, anchor in zip(headings, anchors, strict=True):
            level = int(heading.style[-1])
            if level <= 2:
                toc.append((level, heading_words(heading), f"{chapter.file}#{anchor}"))
        head = XHTML_HEAD.format(language=language_attr, title=escape(chapter.title or title),
                                 style='<link rel="stylesheet" type="text/css" href="../style.css"/>\n')  # fmt: skip
        files[chapter.file] = head + xhtml_body(chapter.parts, lists, book, anchors) + "\n</body>\n</html>\n"
    if not chapters:
        files["text/part0.xhtml"] = (XHTML_HEAD.format(language=language_attr, title=escape(title), style="")
                                     + "<p></p>\n</body>\n</html>\n")  # fmt: skip
    entries: list[tuple[str, str, list[tuple[str, str]]]] = []  # a chapter, its sections under it
    for level, words, href in toc or [(1, title, "text/part0.xhtml")]:
        if level == 2 and entries:
            entries[-1][2].append((words, href))
        else:
            entries.append((words, href, []))
    nav = ['<nav epub:type="toc" id="toc"><h1>Contents</h1><ol>']
    for words, href, sections in entries:
        inner = "".join(f"<li><a href={quoteattr(h)}>{escape(w)}</a></li>" for w, h in sections)
        nav.append(f"<li><a href={quoteattr(href)}>{escape(words)}</a>{f'<ol>{inner}</ol>' if inner else ''}</li>")
    nav.append("</ol></nav>")
    files["nav.xhtml"] = (XHTML_HEAD.format(language=language_attr, title="Contents", style="")
                          + "\n".join(nav) + "\n</body>\n</html>\n")  # fmt: skip
    identifier = f"urn:uuid:{uuid.uuid4()}"
    modified = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    manifest = ['<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>',
                '<item id="style" href="style.css" media-type="text/css"/>']  # fmt: skip
    spine = []
    for index, name in enumerate(name for name in files if name.startswith("text/")):
        manifest.append(f'<item id="part{index}" href={quoteattr(name)} media-type="application/xhtml+xml"/>')
        spine.append(f'<itemref idref="part{index}"/>')
    for index, (file, media_type, _data) in enumerate(book.pictures.values()):
        manifest.append(f"<item id=\"picture{index + 1}\" href={quoteattr(file)} media-type={quoteattr(media_type)}/>")
    opf = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="book-id">\n'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">\n'
        f'<dc:identifier id="book-id">{identifier}</dc:identifier>\n<dc:title>{escape(title)}</dc:title>\n'
        f"<dc:language>{escape(language or 'en')}</dc:language>\n"
        + "".join(f"<dc:creator>{escape(author)}</dc:creator>\n" for author in authors)
        + f'<meta property="dcterms:modified">{modified}</meta>\n</metadata>\n'
        f"<manifest>\n{chr(10).join(manifest)}\n</manifest>\n<spine>\n{chr(10).join(spine)}\n</spine>\n</package>\n"
    )
    container = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">\n'
        '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>\n'
        "</container>\n"
    )
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        package.writestr("META-INF/container.xml", container, compress_type=zipfile.ZIP_DEFLATED)
        package.writestr("OEBPS/content.opf", opf, compress_type=zipfile.ZIP_DEFLATED)
        package.writestr("OEBPS/style.css", STYLE, compress_type=zipfile.ZIP_DEFLATED)
        for name, xhtml in files.items():
            package.writestr(f"OEBPS/{name}", xhtml, compress_type=zipfile.ZIP_DEFLATED)
        for file, _media_type, data in book.pictures.values():
            package.writestr(f"OEBPS/{file}", data, compress_type=zipfile.ZIP_STORED)
    return buffer.getvalue(), book.missing


def export_epub(text: str, markdown: bool, path: Path, name: str, language: str = "", folder: Path | None = None,
                author: str = "") -> list[str]:  # fmt: skip
    """Write ``text`` to ``path`` as an EPUB (see the module's docstring), its pictures read from ``folder``,
    ``author`` (the writer's name) its author where its front matter names none; the pictures it could not carry.
    Raises ``FileError`` (in the writer's words) where it cannot be written."""
    lists = Lists()
    told = describe(text, markdown, name, author)
    body: list[Paragraph | Table] = (markdown_body(typeset(told.body, markdown=True, page=told.page), lists)
                                     if markdown else [*plain_paragraphs(text)])  # fmt: skip
    data, missing = epub_bytes(body, lists, told.title, told.page.language or language, folder, told.authors)
    save_bytes(path, data, again="export again")
    return missing


def passage_html(markdown: str) -> str:
    """A Markdown passage as an HTML page, for the clipboard (``markdown_clipboard``): read as this export reads
    Markdown, its tracked changes made (as the counts take them) and its front matter left out; notes numbered in
    the text and set after it, as the PDF sets them; a picture by its name."""
    lists = Lists()
    text = without_front_matter(settle(markdown, accept=True))[1]
    body = markdown_body(typeset(text, markdown=True), lists)
    page = xhtml_body(body, lists, Book(None), [])
    return f'<html><head><meta charset="utf-8"/></head><body>\n{page}\n</body></html>'
