"""Opening an OpenDocument text (.odt: LibreOffice's and OpenOffice's own file): its words as Markdown, as
``word_import`` reads a Word document and into the same Markdown (``markdown_blocks``).

content.xml holds the text and its direct formatting (automatic styles), styles.xml the named styles. Headings
are ``text:h`` or any paragraph whose style has an outline level or a Heading name; quotes the Quotations style;
code the Preformatted Text style; lists ``text:list``, numbered or bulleted by their list style at each level;
bold, italic, struck and fixed-pitch text from the text properties of a span's style or of a paragraph's own
direct formatting; links, tables, footnotes and endnotes. Tracked changes are read as they would stand
accepted (the body already holds the insertions; deletions live apart, in ``text:tracked-changes``), or
rejected where the writer asks for the text as it was before them (insertions skipped, deletions put back);
fields show their value; comments stay where they were made as ``<!-- Ed: … -->``; pictures and text boxes
are left out and counted; a table of contents is left out (the headings are the document's own).
"""

from __future__ import annotations

import re
import zipfile
from collections import Counter
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

from app.documents.markdown_blocks import (
    BY,
    PLAIN,
    TITLE_BLOCK_PARTS,
    ZIP_MAGIC,
    Block,
    Format,
    ImportedDocument,
    Revision,
    UnreadableDocument,
    comment_note,
    emphasised,
    escape_block_start,
    escape_inline,
    import_notes,
    join_blocks,
    linked,
    number,
    paragraph_block,
    pipe_table,
    read_package,
    read_xml_part,
    tidy,
)
from app.documents.word_styles import MAX_COLUMNS, MONOSPACE

OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
FO = "{urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0}"
TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
XLINK = "{http://www.w3.org/1999/xlink}"
DC = "{http://purl.org/dc/elements/1.1/}"
DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
ODF_SUFFIXES = frozenset({".odt", ".ott"})
ODF_TEXT_TYPES = (b"application/vnd.oasis.opendocument.text", b"application/vnd.oasis.opendocument.text-template")
QUOTE_STYLES = frozenset({"quotations", "quote", "quotation"})
CODE_STYLES = frozenset({"preformatted text", "source code"})
CODE_TEXT_STYLES = frozenset({"source text", "teletype", "example"})
LEFT_OUT = frozenset({f"{TEXT}table-of-content", f"{TEXT}alphabetical-index", f"{TEXT}illustration-index",
                      f"{TEXT}table-index", f"{TEXT}object-index", f"{TEXT}user-index", f"{TEXT}bibliography",
                      f"{TEXT}sequence-decls", f"{TEXT}variable-decls", f"{TEXT}user-field-decls",
                      f"{OFFICE}forms", f"{TEXT}soft-page-break"})  # fmt: skip
MARKERS = frozenset({f"{TEXT}change", f"{TEXT}change-start", f"{TEXT}change-end", f"{TEXT}bookmark",
                     f"{TEXT}bookmark-start", f"{TEXT}bookmark-end", f"{TEXT}reference-mark",
                     f"{TEXT}reference-mark-start", f"{TEXT}reference-mark-end", f"{TEXT}toc-mark",
                     f"{TEXT}alphabetical-index-mark", f"{TEXT}soft-page-break", f"{TEXT}note-citation",
                     f"{TEXT}ruby-text"})  # fmt: skip
COLLAPSIBLE = re.compile(r"[ \t\r\n]+")  # ODF's white space: runs of it are one space (text:s for more)


def is_odf_text(path: Path) -> bool:
    """Whether ``path`` is an OpenDocument text: by its name, or by the zip's ``mimetype`` under another name."""
    if path.suffix.lower() in ODF_SUFFIXES:
        return True
    try:
        with path.open("rb") as stream:
            if stream.read(4) != ZIP_MAGIC:
                return False
        with zipfile.ZipFile(path) as package:
            return package.read("mimetype").strip() in ODF_TEXT_TYPES
    except (OSError, KeyError, zipfile.BadZipFile):
        return False


def read_odf_text(path: Path, accept_changes: bool = True) -> ImportedDocument:
    """``path``'s text as Markdown, its tracked changes accepted (else rejected); ``UnreadableDocument`` (a
    ``FileError``) with the reason if it cannot be read."""

    def read(package: zipfile.ZipFile) -> ImportedDocument:
        manifest = read_xml_part(package, "META-INF/manifest.xml")
        if manifest is not None and any(e.tag.endswith("}encryption-data") for e in manifest.iter()):
            raise UnreadableDocument("it is password-protected; in LibreOffice, save a copy without a password "
                                     "(File ▸ Properties ▸ Security), then open that")  # fmt: skip
        return OdfReader(package, accept_changes).document()

    not_one = "it is not an OpenDocument text (an .odt is a zip of XML parts; this file is not one)"
    return read_package(path, read, "document", not_one)


def _name(element: ElementTree.Element) -> str:
    """A style's name as the writer sees it, in lower case ("Text_20_body" is "text body")."""
    shown = element.get(f"{STYLE}display-name") or element.get(f"{STYLE}name") or ""
    return re.sub(r"_([0-9a-f]{2})_", lambda m: chr(int(m[1], 16)), shown).lower()


class OdfStyles:
    """The named styles (styles.xml, content.xml's automatic ones too) and the list styles, by name."""

    def __init__(self, *roots: ElementTree.Element | None) -> None:
        self.styles: dict[tuple[str, str], ElementTree.Element] = {}
        self.lists: dict[str, ElementTree.Element] = {}
        self.fonts: dict[str, str] = {}  # font-face name → its family
        self.automatic: set[int] = set()  # ids of the styles that are a paragraph's own direct formatting
        for root in roots:
            for holder in root if root is not None else ():
                kind = holder.tag
                for style in holder:
                    if style.tag == f"{STYLE}style":
                        self.styles[(style.get(f"{STYLE}family", ""), style.get(f"{STYLE}name", ""))] = style
                        if kind == f"{OFFICE}automatic-styles":
                            self.automatic.add(id(style))
                    elif style.tag == f"{TEXT}list-style":
                        self.lists[style.get(f"{STYLE}name", "")] = style
                    elif style.tag == f"{STYLE}font-face":
                        family = style.get("{urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0}font-family")
                        self.fonts[style.get(f"{STYLE}name", "")] = (family or "").strip("'\"")

    def chain(self, family: str, name: str | None) -> list[ElementTree.Element]:
        found: list[ElementTree.Element] = []
        while name and (family, name) in self.styles and len(found) < 20:
            style = self.styles[(family, name)]
            found.append(style)
            name = style.get(f"{STYLE}parent-style-name")
        return found

    def names(self, family: str, name: str | None) -> list[str]:
        return [_name(style) for style in self.chain(family, name)]

    def outline_level(self, name: str | None) -> int:
        for style in self.chain("paragraph", name):
            level = style.get(f"{STYLE}default-outline-level")
            if level:
                return number(level, 1, 1, 6)
            shown = re.fullmatch(r"heading (\d+)", _name(style))
            if shown:
                return min(6, max(1, int(shown[1])))
            if _name(style) == "title":
                return 1
        return 0

    def text_format(self, family: str, name: str | None, base: Format = PLAIN, own_only: bool = False) -> Format:
        """A style's (bold, italic, struck, code) over ``base``: its parents' first, then its own; with
        ``own_only`` only direct formatting (a paragraph's automatic style, not the named style it is based on)."""
        values = list(base)
        chain = self.chain(family, name)
        if own_only:
            chain = [style for style in chain if id(style) in self.automatic]
        for style in reversed(chain):
            if _name(style) in CODE_TEXT_STYLES:
                values[3] = True
            properties = style.find(f"{STYLE}text-properties")
            if properties is None:
                continue
            weight = properties.get(f"{FO}font-weight")
            if weight is not None:
                values[0] = weight == "bold" or (weight.isdigit() and int(weight) >= 600)
            slant = properties.get(f"{FO}font-style")
            if slant is not None:
                values[1] = slant in ("italic", "oblique")
            struck = properties.get(f"{STYLE}text-line-through-style")
            if struck is not None:
                values[2] = struck != "none"
            font = properties.get(f"{STYLE}font-name")
            if font is not None:
                values[3] = self.fonts.get(font, font).lower() in MONOSPACE
        return values[0], values[1], values[2], values[3]

    def list_format(self, name: str | None, level: int) -> tuple[bool, int]:
        """(numbered, first number) of ``level`` (0-based) in list style ``name``; bulleted where unknown."""
        style = self.lists.get(name or "")
        for level_style in style if style is not None else ():
            if level_style.get(f"{TEXT}level") == str(level + 1):
                numbered = level_style.tag == f"{TEXT}list-level-style-number" and \
                    level_style.get(f"{STYLE}num-format", "1") != ""  # fmt: skip
                return numbered, number(level_style.get(f"{TEXT}start-value"), 1, 0, 10**6)
        return False, 1


class OdfReader:
    def __init__(self, package: zipfile.ZipFile, accept_changes: bool = True) -> None:
        self.accept_changes = accept_changes
        self.changes: dict[str, tuple[bool, str]] = {}  # by id: (an insertion, a deletion's words)
        self.hidden: set[str] = set()  # the rejected insertions being read past
        self.authors: dict[str, str] = {}  # by id: who made the change
        self.revisions: list[Revision] = []  # the changes in the body's order, for their authors
        self.inserting: dict[str, int] = {}  # by id: the insertions being read, each its place in revisions
        content = read_xml_part(package, "content.xml")
        if content is None:
            raise UnreadableDocument("it has no content part (content.xml): not an OpenDocument text")
        self.content: ElementTree.Element = content
        self.styles = OdfStyles(read_xml_part(package, "styles.xml"), content)
        self.counts: Counter[str] = Counter()
        self.notes_text: dict[str, str] = {}
        self.pending_comments: dict[str, str] = {}  # a comment's note, waiting for the end of what it is about
        self.list_counts: dict[str, int] = {}  # by list style: where a list that continues another goes on

    def document(self) -> ImportedDocument:
        body = self.content.find(f"{OFFICE}body/{OFFICE}text")
        self._tracked(body.find(f"{TEXT}tracked-changes") if body is not None else None)
        blocks = self.blocks(body) if body is not None else []
        text = join_blocks(blocks)
        if self.notes_text:
            text += "\n\n" + "\n".join(f"[^{mark}]: {words}" for mark, words in self.notes_text.items())
        changes = self.counts["insertion"] + self.counts["deletion"]
        return ImportedDocument(text.strip("\n") + "\n" if text.strip() else "", self.notes(), changes,
                                tuple(self.revisions))  # fmt: skip

    def notes(self) -> tuple[str, ...]:
        return import_notes(self.counts, ("picture", "text box"), self.accept_changes)

    def _tracked(self, tracked: ElementTree.Element | None) -> None:
        """The tracked changes, counted, and each deletion's words (put back where changes are rejected)."""
        for region in tracked if tracked is not None else ():
            for change in region:
                if change.tag in (f"{TEXT}insertion", f"{TEXT}deletion"):
                    inserted = change.tag == f"{TEXT}insertion"
                    self.counts["insertion" if inserted else "deletion"] += 1
                    author = change.find(f"{OFFICE}change-info/{DC}creator")
                    name = (author.text or "").strip() if author is not None else ""
                    self.counts[BY + name] += 1
                    self.authors[region.get(f"{TEXT}id", "")] = name
                    # Its paragraphs run on, one space between; the spaces at its ends are the text's own ("slowly ").
                    texts = [self.inline(p, inner=True) for p in change.iter(f"{TEXT}p")]
                    words = " ".join(text.strip(" \t") for text in texts)
                    if words and texts:
                        words = texts[0][: len(texts[0]) - len(texts[0].lstrip(" \t"))] + words
                        words += texts[-1][len(texts[-1].rstrip(" \t")) :]
                    self.changes[region.get(f"{TEXT}id", "")] = (inserted, words)

    def blocks(self, container: ElementTree.Element) -> list[Block]:
        found: list[Block] = []
        for child in container:
            tag = child.tag
            if tag in (f"{TEXT}p", f"{TEXT}h"):
                block = self.paragraph(child)
                if block is not None:
                    found.append(block)
            elif tag == f"{TEXT}list":
                found.extend(self.list_items(child, 0, child.get(f"{TEXT}style-name"), str(id(child))))
            elif tag == f"{TABLE}table":
                found.append(Block("table", self.table(child)))
            elif tag != f"{TEXT}tracked-changes" and tag not in LEFT_OUT:  # sections and the like: paragraphs
                found.extend(self.blocks(child))
        return found

    def paragraph(self, p: ElementTree.Element) -> Block | None:
        style = p.get(f"{TEXT}style-name")
        names = self.styles.names("paragraph", style)
        if any(name in CODE_STYLES for name in names):
            return Block("code", self.inline(p, code=True))
        if p.tag == f"{TEXT}h":
            level = number(p.get(f"{TEXT}outline-level"), 1, 1, 6)
        else:
            level = self.styles.outline_level(style)
        text = tidy(self.inline(p, bold=not level))
        if not text:
            return None
        if level:  # the Title style the document's one top heading (join_blocks sets the headings under it)
            title = p.tag != f"{TEXT}h" and "title" in names
            return Block("title" if title else "heading", f"{'#' * min(6, level)} {text}")
        if any(name in QUOTE_STYLES for name in names):
            return Block("quote", "> " + escape_block_start(text))
        return paragraph_block(text, next((name for name in names if name in TITLE_BLOCK_PARTS), ""))

    def list_items(self, element: ElementTree.Element, depth: int, style: str | None, key: str) -> list[Block]:
        style = element.get(f"{TEXT}style-name") or style
        numbered, start = self.styles.list_format(style, depth)
        goes_on = element.get(f"{TEXT}continue-numbering") == "true" or element.get(f"{TEXT}continue-list")
        count = self.list_counts.get(f"{style}:{depth}", start - 1) if goes_on else start - 1
        found: list[Block] = []
        for item in element:
            if item.tag not in (f"{TEXT}list-item", f"{TEXT}list-header"):
                continue
            words: list[str] = []
            nested: list[Block] = []
            for child in item:
                if child.tag in (f"{TEXT}p", f"{TEXT}h"):
                    words.append(tidy(self.inline(child)))
                elif child.tag == f"{TEXT}list":
                    nested.extend(self.list_items(child, depth + 1, style, key))
            text = " ".join(w for w in words if w)
            if text:
                count += 1
                marker = f"{count}." if numbered else "-"
                found.append(Block("item", text, depth=depth, marker=marker, list_id=key))
            found.extend(nested)
        self.list_counts[f"{style}:{depth}"] = count
        return found

    def table(self, element: ElementTree.Element) -> str:
        rows: list[list[str]] = []
        for row in element.iter(f"{TABLE}table-row"):
            cells = []
            for cell in row:
                if cell.tag == f"{TABLE}covered-table-cell":
                    cells.append("")  # the cell a merged one spans
                if len(cells) >= MAX_COLUMNS:
                    break
                elif cell.tag == f"{TABLE}table-cell":
                    words = " ".join(tidy(self.inline(p, bold=bool(rows))) for p in cell.iter(f"{TEXT}p"))
                    cells.append(words.strip().replace("|", "\\|"))
            rows.append(cells)
        return pipe_table(rows)

    def inline(self, p: ElementTree.Element, code: bool = False, bold: bool = True, inner: bool = False) -> str:
        """A paragraph's text as Markdown (``code``: as it is); ``inner`` for one inside a note or comment."""
        pieces: list[tuple[str, Format]] = []
        base = self.styles.text_format("paragraph", p.get(f"{TEXT}style-name"), own_only=True)
        self._collect(p, pieces, base, code)
        if not inner:
            for note in self.pending_comments.values():  # a comment whose end is past its paragraph: at its end
                pieces.append((f"<!-- {note} -->", PLAIN))
            self.pending_comments.clear()
        if code:
            return "".join(text for text, _ in pieces)
        if not bold:
            pieces = [(text, (False, *style[1:])) for text, style in pieces]
        return emphasised(pieces)

    def _words(self, text: str | None, style: Format, code: bool) -> tuple[str, Format] | None:
        if not text:
            return None
        for at in self.inserting.values():  # an insertion's words, for whose they are
            self.revisions[at] = replace(self.revisions[at], words=self.revisions[at].words + text)
        if self.hidden:  # inside an insertion the writer rejected
            return None
        text = text if code else COLLAPSIBLE.sub(" ", text)
        return (text if code or style[3] else escape_inline(text)), style

    def _collect(self, element: ElementTree.Element, pieces: list[tuple[str, Format]], style: Format,
                 code: bool) -> None:  # fmt: skip
        """Append ``element``'s text and its children's (each followed by its tail) as formatted pieces."""
        own = self._words(element.text, style, code)
        if own is not None:
            pieces.append(own)
        for child in element:
            self._child(child, pieces, style, code)
            tail = self._words(child.tail, style, code)
            if tail is not None:
                pieces.append(tail)

    def _child(self, child: ElementTree.Element, pieces: list[tuple[str, Format]], style: Format,
               code: bool) -> None:  # fmt: skip
        tag = child.tag
        if tag in (f"{TEXT}change-start", f"{TEXT}change-end", f"{TEXT}change"):
            self._change(child, pieces, style)
        elif self.hidden:
            return  # inside an insertion the writer rejected
        elif tag == f"{TEXT}span":
            self._collect(child, pieces, self.styles.text_format("text", child.get(f"{TEXT}style-name"), style), code)
        elif tag == f"{TEXT}a":
            inner: list[tuple[str, Format]] = []
            self._collect(child, inner, style, code)
            target = child.get(f"{XLINK}href", "")
            internal = target.startswith("#")  # a bookmark in the document itself: its words only
            pieces.extend(inner if code or internal else linked(inner, target))
        elif tag == f"{TEXT}s":
            pieces.append((" " * number(child.get(f"{TEXT}c"), 1, 1, 1000), style))
        elif tag == f"{TEXT}tab":
            pieces.append((" ", style))
        elif tag == f"{TEXT}line-break":
            pieces.append(("\\\n", PLAIN))  # Markdown's hard line break
        elif tag == f"{TEXT}note":
            body = child.find(f"{TEXT}note-body")
            mark = str(len(self.notes_text) + 1)
            paragraphs = body.iter(f"{TEXT}p") if body is not None else ()
            self.notes_text[mark] = " ".join(tidy(self.inline(p, inner=True)) for p in paragraphs).strip()
            pieces.append((f"[^{mark}]", PLAIN))
        elif tag == f"{OFFICE}annotation":
            self._comment(child, pieces)
        elif tag == f"{OFFICE}annotation-end":
            note = self.pending_comments.pop(child.get(f"{OFFICE}name", ""), None)
            if note is not None:
                pieces.append((f"<!-- {note} -->", PLAIN))
        elif tag == f"{DRAW}frame" or tag == f"{DRAW}a":
            boxed = any(e.tag == f"{DRAW}text-box" for e in child.iter())
            self.counts["text box" if boxed else "picture"] += 1
        elif tag not in MARKERS:  # fields (page numbers, dates, titles…) and other holders: what they show
            self._collect(child, pieces, style, code)

    def _change(self, marker: ElementTree.Element, pieces: list[tuple[str, Format]], style: Format) -> None:
        """Where changes are rejected: an insertion's words read past, a deletion's put back at its place."""
        change = marker.get(f"{TEXT}change-id", "")
        inserted, words = self.changes.get(change, (False, ""))
        author = self.authors.get(change, "")
        if marker.tag == f"{TEXT}change-start" and inserted:
            self.inserting[change] = len(self.revisions)
            self.revisions.append(Revision(True, author, ""))
        elif marker.tag == f"{TEXT}change-end":
            self.inserting.pop(change, None)
        elif marker.tag == f"{TEXT}change" and not inserted:
            self.revisions.append(Revision(False, author, words))
        if self.accept_changes:
            return
        if marker.tag == f"{TEXT}change-start" and inserted:
            self.hidden.add(change)
        elif marker.tag == f"{TEXT}change-end":
            self.hidden.discard(change)
        elif marker.tag == f"{TEXT}change" and not inserted and words and not self.hidden:
            pieces.append((words, style))

    def _comment(self, annotation: ElementTree.Element, pieces: list[tuple[str, Format]]) -> None:
        """A comment becomes a note at the end of the words it is about (where its end is), else here."""
        words = " ".join(tidy(self.inline(p, code=True, inner=True)) for p in annotation.iter(f"{TEXT}p")).strip()
        author = (annotation.findtext(f"{DC}creator") or "").strip()
        note = comment_note(author, words)
        self.counts["comment kept"] += 1
        name = annotation.get(f"{OFFICE}name")
        if name:
            self.pending_comments[name] = note
        else:
            pieces.append((f"<!-- {note} -->", PLAIN))
