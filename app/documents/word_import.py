"""Opening a Word document (.docx): its words as Markdown, for a manuscript that arrives from an editor or an
agent as Word's file.

The text becomes the Markdown that Export as Word Document writes back as Word's own structure: headings (Word's
Heading styles, or any paragraph with an outline level) as ``#``, quotes as ``>``, bulleted and numbered lists
(numbering.xml's formats, nested by level), bold, italic and strike-through runs, links, tables as pipe tables,
footnotes and endnotes as ``[^n]`` with their text at the end, code paragraphs as a fenced block. Tracked
changes are read as they would stand accepted (insertions in, deletions out), or rejected where the writer
asks for the text as it was before them; fields show their result;
comments stay where they were made, as ``<!-- Ed: the comment -->`` (Markdown's notes to self, which both
exports leave out); hidden text, pictures and text boxes are left out. Whatever was left or settled is counted in
``ImportedDocument.notes``, so the writer hears it once, on open. Page layout, fonts and colours are Word's and
stay in the .docx, which Redraft never writes over (Save asks for a Markdown file's name).

A .docx is a zip of XML parts: read here with the standard library, each part capped in size (a zip bomb is
refused, not unpacked) and any part declaring a DTD refused (entity expansion). Nothing here needs Qt.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from app.documents.markdown_blocks import (
    BY,
    OLE_MAGIC,
    PLAIN,
    ZIP_MAGIC,
    Block,
    Format,
    ImportedDocument,
    ListNumbers,
    Revision,
    UnreadableDocument,
    comment_note,
    emphasised,
    escape_block_start,
    escape_inline,
    field_link,
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
from app.documents.word_styles import MAX_COLUMNS, Numbering, Styles, W, on

R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
OFFICE_DOCUMENT = "/officeDocument"
WORD_SUFFIXES = frozenset({".docx", ".docm", ".dotx", ".dotm"})
QUOTE_STYLES = frozenset({"quote", "intense quote", "block text", "quotations"})  # Word's, LibreOffice's
CODE_STYLES = frozenset({"source code", "sourcecode", "html preformatted", "macro text"})


def is_word_file(path: Path) -> bool:
    """Whether ``path`` is for ``read_word_document``: a Word name, an old Office file (which it explains), or a
    .docx's zip under another name."""
    if path.suffix.lower() in WORD_SUFFIXES:
        return True
    try:
        with path.open("rb") as stream:
            head = stream.read(8)
        if head == OLE_MAGIC:
            return True
        if not head.startswith(ZIP_MAGIC):
            return False
        with zipfile.ZipFile(path) as package:
            return "word/document.xml" in package.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def read_word_document(path: Path, accept_changes: bool = True) -> ImportedDocument:
    """``path``'s text as Markdown, its tracked changes accepted (else rejected); ``UnreadableDocument`` (a
    ``FileError``) with the reason if it cannot be read."""
    return read_package(
        path, lambda package: WordReader(package, accept_changes).document(), "Word document",
        "it is not a Word document (a .docx is a zip of XML parts; this file is not one)",
        "it is an old-format Word document (.doc) or a password-protected one; in Word, save it as a Word Document "
        "(.docx) without a password, then open that",
    )  # fmt: skip


@dataclass
class OpenField:
    """A complex field being read: its instruction so far, and once its result begins, where that goes."""

    instruction: list[str] = field(default_factory=list)
    result: list[tuple[str, Format]] | None = None
    start: int = 0


class WordReader:
    """One package's parts, read on demand, and the Markdown made of them."""

    def __init__(self, package: zipfile.ZipFile, accept_changes: bool = True) -> None:
        self.package = package
        self.accept_changes = accept_changes
        self.counts: Counter[str] = Counter()
        self.revisions: list[Revision] = []  # the tracked changes, in the order read
        self.notes_text: dict[str, str] = {}  # footnote and endnote marks → their text, in order of reference
        self.note_parts: dict[str, dict[str, ElementTree.Element]] = {}
        self.comments: dict[str, str] = {}  # read with the document (document())
        self.main = self._main_part()
        self.styles = Styles(self._part("word/styles.xml"))
        self.numbering = Numbering(self._part("word/numbering.xml"))
        self.links = self._relationships(self.main)
        self.list_numbers = ListNumbers()

    def document(self) -> ImportedDocument:
        root = self._part(self.main)
        if root is None:
            raise UnreadableDocument("it has no document part (word/document.xml): not a Word document")
        self.comments = self._comments()
        for kind in ("footnotes", "endnotes"):  # read as the body refers to them
            part = self._part(f"word/{kind}.xml")
            self.note_parts[kind] = {} if part is None else {n.get(f"{W}id", ""): n for n in part}
        body = root.find(f"{W}body")
        blocks = self.blocks(body) if body is not None else []
        text = join_blocks(blocks)
        if self.notes_text:  # made while reading the body: their text after it, in order of reference
            text += "\n\n" + "\n".join(f"[^{mark}]: {words}" for mark, words in self.notes_text.items())
        self.counts["comment"] = max(0, len(self.comments) - self.counts["comment kept"])  # ones nothing refers to
        changes = self.counts["insertion"] + self.counts["deletion"]
        return ImportedDocument(text.strip("\n") + "\n" if text.strip() else "", self.notes(), changes,
                                tuple(self.revisions))  # fmt: skip

    def notes(self) -> tuple[str, ...]:
        return import_notes(self.counts, ("comment", "picture", "text box", "equation"), self.accept_changes)

    # -- parts ---------------------------------------------------------------------------------------

    def _part(self, name: str) -> ElementTree.Element | None:
        return read_xml_part(self.package, name)

    def _comments(self) -> dict[str, str]:
        """Each comment's words by id, as the note that stands for it ("Ed: Why?")."""
        part = self._part("word/comments.xml")
        found = {}
        for comment in part.findall(f"{W}comment") if part is not None else ():
            words = " ".join(tidy(self.inline(p, code=True)) for p in comment.iter(f"{W}p")).strip()
            found[comment.get(f"{W}id", "")] = comment_note(comment.get(f"{W}author", "").strip(), words)
        return found

    def _main_part(self) -> str:
        rels = self._part("_rels/.rels")
        for rel in rels if rels is not None else ():
            if rel.get("Type", "").endswith(OFFICE_DOCUMENT):
                return rel.get("Target", "").lstrip("/")
        return "word/document.xml"

    def _relationships(self, part: str) -> dict[str, str]:
        """External link targets by relationship id for ``part``."""
        folder, name = posixpath.split(part)
        rels = self._part(posixpath.join(folder, "_rels", f"{name}.rels"))
        return {rel.get("Id", ""): rel.get("Target", "") for rel in (rels if rels is not None else ())
                if rel.get("TargetMode") == "External"}  # fmt: skip

    # -- blocks --------------------------------------------------------------------------------------

    def blocks(self, container: ElementTree.Element) -> list[Block]:
        found: list[Block] = []
        for child in container:
            tag = child.tag
            if tag == f"{W}p":
                block = self.paragraph(child)
                if block is not None:
                    found.append(block)
            elif tag == f"{W}tbl":
                found.append(Block("table", self.table(child)))
            elif tag in (f"{W}ins", f"{W}moveTo", f"{W}del", f"{W}moveFrom"):  # whole paragraphs tracked
                inserted = self._tracked(child)
                found.extend(self.blocks(child) if inserted == self.accept_changes else [])
            elif tag in (f"{W}sdt", f"{W}customXml"):
                inner = child.find(f"{W}sdtContent") if tag == f"{W}sdt" else child
                found.extend(self.blocks(inner) if inner is not None else [])
        return found

    def paragraph(self, p: ElementTree.Element) -> Block | None:
        properties = p.find(f"{W}pPr")
        style = self.styles.paragraph_style(properties)
        name = self.styles.name_of(style)
        if name in CODE_STYLES or (style or "").lower() in CODE_STYLES:
            return Block("code", self.inline(p, code=True))  # its blank lines and indents are the code's
        level = self.styles.heading_level(style, properties)
        text = tidy(self.inline(p, bold=not level))  # a heading is bold by its style; bold in it says nothing more
        if not text:
            return None
        if level:  # Word's Title the document's one top heading (join_blocks sets the headings under it)
            return Block("title" if name == "title" else "heading", f"{'#' * level} {text}")
        number = self.numbering.list_of(properties, self.styles.numbering_of(style))
        if number is not None:
            num_id, depth = number
            # Word's List Bullet 2, List Number 3…: a list of its own, set in as one level deeper each.
            styled = re.fullmatch(r"list (?:bullet|number|continue) ([2-9])", name)
            depth = max(depth, int(styled[1]) - 1) if styled else depth
            ordered, start = self.numbering.format_of(num_id, depth)
            count = self.list_numbers.next(num_id, depth, start)
            return Block("item", text, depth=depth, marker=f"{count}." if ordered else "-", list_id=num_id)
        quoted = self.styles.quote_depth(style, properties, name in QUOTE_STYLES)
        if quoted:
            return Block("quote", "> " * quoted + escape_block_start(text))
        return paragraph_block(text, name)

    def table(self, tbl: ElementTree.Element) -> str:
        rows: list[list[str]] = []
        for tr in tbl.iter(f"{W}tr"):
            cells = []
            for tc in tr.findall(f"{W}tc"):
                span = tc.find(f"{W}tcPr/{W}gridSpan")
                merged = tc.find(f"{W}tcPr/{W}vMerge")
                # A header row is bold by convention; a pipe table's first row is its header already.
                words = " ".join(tidy(self.inline(p, bold=bool(rows))) for p in tc.iter(f"{W}p"))
                if merged is not None and merged.get(f"{W}val") != "restart":
                    words = ""  # the cell above holds a vertically merged cell's words
                cells.append(words.strip().replace("|", "\\|"))
                spanned = number(span.get(f"{W}val") if span is not None else None, 1, 1, MAX_COLUMNS)
                cells.extend([""] * (spanned - 1))
            rows.append(cells)
        return pipe_table(rows)

    # -- runs ----------------------------------------------------------------------------------------

    def inline(self, element: ElementTree.Element, code: bool = False, bold: bool = True) -> str:
        pieces: list[tuple[str, Format]] = []
        self._collect(element, pieces, [], code)
        if code:
            return "".join(text for text, _ in pieces)
        if not bold:
            pieces = [(text, (False, *style[1:])) for text, style in pieces]
        return emphasised(pieces)

    def _collect(self, element: ElementTree.Element, pieces: list[tuple[str, Format]],
                 fields: list[OpenField], code: bool) -> None:  # fmt: skip
        """Append ``element``'s visible text as (text, (bold, italic, struck)) pieces. ``fields`` is the stack of
        open complex fields (their instructions are never text; a HYPERLINK's result becomes a link)."""
        for child in element:
            tag = child.tag
            if tag == f"{W}r":
                self._run(child, pieces, fields, code)
            elif tag == f"{W}hyperlink":
                target = self.links.get(child.get(R_ID, ""), "")
                inner: list[tuple[str, Format]] = []
                self._collect(child, inner, fields, code)
                pieces.extend(inner if code else linked(inner, target))
            elif tag in (f"{W}ins", f"{W}moveTo", f"{W}del", f"{W}moveFrom"):
                inserted = self._tracked(child)
                if inserted == self.accept_changes:  # an insertion accepted, or a deletion rejected: its words
                    self._collect(child, pieces, fields, code)
            elif tag == f"{W}sdt":
                content = child.find(f"{W}sdtContent")
                if content is not None:
                    self._collect(content, pieces, fields, code)
            elif tag == f"{W}fldSimple":  # a field in one element: its result, a link where it is a HYPERLINK
                simple: list[tuple[str, Format]] = []
                self._collect(child, simple, fields, code)
                address = field_link(child.get(f"{W}instr", ""))
                pieces.extend(linked(simple, address) if address and not code else simple)
            elif tag in (f"{W}smartTag", f"{W}customXml", f"{W}bdo", f"{W}dir"):
                self._collect(child, pieces, fields, code)
            elif tag.endswith("}oMath") or tag.endswith("}oMathPara"):
                self.counts["equation"] += 1

    def _tracked(self, change: ElementTree.Element) -> bool:
        """A tracked insertion or deletion (or move) counted, with its author and words; whether it inserts."""
        inserted = change.tag in (f"{W}ins", f"{W}moveTo")
        author = (change.get(f"{W}author") or "").strip()
        self.counts["insertion" if inserted else "deletion"] += 1
        self.counts[BY + author] += 1
        words = "".join(node.text or "" for node in change.iter() if node.tag in (f"{W}t", f"{W}delText"))
        self.revisions.append(Revision(inserted, author, words))
        return inserted

    def _run(self, run: ElementTree.Element, pieces: list[tuple[str, Format]],
             fields: list[OpenField], code: bool) -> None:  # fmt: skip
        properties = run.find(f"{W}rPr")
        if properties is not None and on(properties.find(f"{W}vanish")):
            return
        style = self.styles.run_format(properties)
        for child in run:
            tag = child.tag
            if tag == f"{W}fldChar":
                kind = child.get(f"{W}fldCharType")
                if kind == "begin":
                    fields.append(OpenField())
                elif kind == "separate" and fields:
                    fields[-1].result, fields[-1].start = pieces, len(pieces)
                elif kind == "end" and fields:
                    done = fields.pop()
                    address = field_link("".join(done.instruction))
                    if address and done.result is pieces and not code:  # a result within one paragraph
                        pieces[done.start :] = linked(pieces[done.start :], address)
                continue
            if fields and fields[-1].result is None:  # a field's instruction (PAGE, HYPERLINK "…"), not its result
                if tag == f"{W}instrText":
                    fields[-1].instruction.append(child.text or "")
                continue
            text = self._run_child(child, tag)
            if text:
                plain = code or style[3] or tag not in (f"{W}t", f"{W}delText")  # code as it is; a break a mark
                pieces.append((text if plain else escape_inline(text), style))
            elif text is None and tag == f"{W}commentReference" and child.get(f"{W}id", "") in self.comments:
                self.counts["comment kept"] += 1
                pieces.append((f"<!-- {self.comments[child.get(f'{W}id', '')]} -->", PLAIN))
            elif text is None and tag in (f"{W}footnoteReference", f"{W}endnoteReference"):
                mark = self._note(child, "footnotes" if tag == f"{W}footnoteReference" else "endnotes")
                pieces.append((f"[^{mark}]", PLAIN))

    def _run_child(self, child: ElementTree.Element, tag: str) -> str | None:
        if tag in (f"{W}t", f"{W}delText"):  # deleted text is visited only where deletions are rejected
            return child.text or ""
        if tag in (f"{W}tab", f"{W}ptab"):
            return " "
        if tag in (f"{W}br", f"{W}cr"):
            return "" if child.get(f"{W}type") in ("page", "column") else "\\\n"  # Markdown's hard line break
        if tag == f"{W}noBreakHyphen":
            return "-"
        if tag in (f"{W}drawing", f"{W}pict", f"{W}object", f"{MC}AlternateContent"):
            boxed = any(e.tag == f"{W}txbxContent" for e in child.iter())
            self.counts["text box" if boxed else "picture"] += 1
            return ""
        return None

    def _note(self, reference: ElementTree.Element, kind: str) -> str:
        """The mark a footnote or endnote gets (numbered in order of reference), its text read on the way."""
        number = str(len(self.notes_text) + 1)
        note = self.note_parts.get(kind, {}).get(reference.get(f"{W}id", ""))
        words = " ".join(tidy(self.inline(p)) for p in note.iter(f"{W}p")) if note is not None else ""
        self.notes_text[number] = words.strip()
        return number
