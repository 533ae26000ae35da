"""Opening a Word document (.docx): its words as Markdown, for a manuscript that arrives from an editor or an
agent as Word's file.

The text becomes the Markdown that Export as Word Document writes back as Word's own structure: headings (Word's
Heading styles, or any paragraph with an outline level) as ``#``, quotes as ``>``, bulleted and numbered lists
(numbering.xml's formats, nested by level), bold, italic and strike-through runs, links, tables as pipe tables,
footnotes and endnotes as ``[^n]`` with their text at the end, code paragraphs as a fenced block. Tracked
changes are read as they would stand accepted (insertions in, deletions out); fields show their result;
comments stay where they were made, as ``<!-- Ed: the comment -->`` (Markdown's notes to self, which both
exports leave out); hidden text, pictures and text boxes are left out. Whatever was left or settled is counted in
``WordDocument.notes``, so the writer hears it once, on open. Page layout, fonts and colours are Word's and
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

from app.documents.fileio import FileError
from app.documents.word_styles import PLAIN, Format, Numbering, Styles, W, on

R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
PACKAGE_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
OFFICE_DOCUMENT = "/officeDocument"
MAX_PART_BYTES = 256 * 1024 * 1024  # a long novel's document.xml is tens of MB; a bomb unpacks to far more
ZIP_MAGIC = b"PK\x03\x04"
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an old .doc, or a password-protected .docx
WORD_SUFFIXES = frozenset({".docx", ".docm", ".dotx", ".dotm"})
QUOTE_STYLES = frozenset({"quote", "intense quote", "block text", "quotations"})  # Word's, LibreOffice's
CODE_STYLES = frozenset({"source code", "sourcecode", "html preformatted", "macro text"})
# A paragraph that only marks a scene break ("* * *", "***", "---") stays one: Markdown reads it as a rule.
SCENE_BREAK = re.compile(r"^(\\\*\s*){3,}$|^(-\s*){3,}$")  # as escape_inline left it
BLOCK_START = re.compile(r"^(#{1,6}(?=\s|$)|[>+-](?=\s|$)|\d{1,9}(?=[.)](?:\s|$)))")
INLINE_SPECIAL = re.compile(r"([\\*`]|<(?=[A-Za-z/!?]))")


class WordFileError(FileError):
    """The file is not a Word document Redraft can read; the message says why and what to do."""


@dataclass(frozen=True)
class WordDocument:
    text: str  # Markdown, "\n" line endings
    notes: tuple[str, ...] = field(default=())  # what did not come across as it is in Word, in words


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


def read_word_document(path: Path) -> WordDocument:
    """``path``'s text as Markdown; ``WordFileError`` (a ``FileError``) with the reason if it cannot be read."""
    try:
        with path.open("rb") as stream:
            head = stream.read(8)
    except OSError as error:
        raise FileError(str(error.strerror or error)) from error
    if head == OLE_MAGIC:
        raise WordFileError("it is an old-format Word document (.doc) or a password-protected one; in Word, save it "
                            "as a Word Document (.docx) without a password, then open that")  # fmt: skip
    if not head.startswith(ZIP_MAGIC):
        raise WordFileError("it is not a Word document (a .docx is a zip of XML parts; this file is not one)")
    try:
        with zipfile.ZipFile(path) as package:
            return WordReader(package).document()
    except zipfile.BadZipFile as error:
        raise WordFileError(f"the Word document is damaged ({error})") from error
    except OSError as error:
        raise FileError(str(error.strerror or error)) from error


class WordReader:
    """One package's parts, read on demand, and the Markdown made of them."""

    def __init__(self, package: zipfile.ZipFile) -> None:
        self.package = package
        self.names = set(package.namelist())
        self.counts: Counter[str] = Counter()
        self.notes_text: dict[str, str] = {}  # footnote and endnote marks → their text, in order of reference
        self.note_parts: dict[str, dict[str, ElementTree.Element]] = {}
        self.comments: dict[str, str] = {}  # read with the document (document())
        self.main = self._main_part()
        self.styles = Styles(self._part("word/styles.xml"))
        self.numbering = Numbering(self._part("word/numbering.xml"))
        self.links = self._relationships(self.main)
        self.list_counters: dict[tuple[str, int], int] = {}

    def document(self) -> WordDocument:
        root = self._part(self.main)
        if root is None:
            raise WordFileError("it has no document part (word/document.xml): not a Word document")
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
        return WordDocument(text.strip("\n") + "\n" if text.strip() else "", self.notes())

    def notes(self) -> tuple[str, ...]:
        said = []
        inserted, deleted = self.counts["insertion"], self.counts["deletion"]
        if inserted or deleted:
            said.append(f"its tracked changes are shown accepted ({plural(inserted, 'insertion')}, "
                        f"{plural(deleted, 'deletion')})")  # fmt: skip
        if self.counts["comment kept"]:
            kept = self.counts["comment kept"]
            said.append(f"{plural(kept, 'comment')} kept where {'it was' if kept == 1 else 'they were'} made, "
                        "as <!-- … --> notes that exports leave out")  # fmt: skip
        left = [plural(self.counts[kind], kind) for kind in ("comment", "picture", "text box", "equation")
                if self.counts[kind]]  # fmt: skip
        if left:
            said.append(f"{', '.join(left)} left out")
        return tuple(said)

    # -- parts ---------------------------------------------------------------------------------------

    def _part(self, name: str) -> ElementTree.Element | None:
        if name not in self.names:
            return None
        info = self.package.getinfo(name)
        if info.file_size > MAX_PART_BYTES:
            raise WordFileError(f"its part {name} would unpack to {info.file_size // 2**20} MB: too large to open")
        with self.package.open(info) as stream:
            data = stream.read(MAX_PART_BYTES + 1)
        if len(data) > MAX_PART_BYTES:
            raise WordFileError(f"its part {name} is too large to open")
        if b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data:
            raise WordFileError(f"its part {name} declares entities, which Word never writes: not opened")
        try:
            return ElementTree.fromstring(data)
        except ElementTree.ParseError as error:
            raise WordFileError(f"the Word document is damaged ({name}: {error})") from error

    def _comments(self) -> dict[str, str]:
        """Each comment's words by id, as the note that stands for it ("Ed: Why?")."""
        part = self._part("word/comments.xml")
        found = {}
        for comment in part.findall(f"{W}comment") if part is not None else ():
            words = " ".join(tidy(self.inline(p, code=True)) for p in comment.iter(f"{W}p")).strip()
            author = comment.get(f"{W}author", "").strip()
            note = f"{author}: {words}" if author else words
            # A note ends at the first "-->", and "--" inside one is not CommonMark everywhere.
            found[comment.get(f"{W}id", "")] = re.sub(r"-{2,}", "–", note.replace("\n", " "))
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
            elif tag in (f"{W}sdt", f"{W}customXml", f"{W}ins", f"{W}moveTo"):
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
        if level:
            return Block("heading", f"{'#' * level} {text}")
        number = self.numbering.list_of(properties, self.styles.numbering_of(style))
        if number is not None:
            num_id, depth = number
            # Word's List Bullet 2, List Number 3…: a list of its own, set in as one level deeper each.
            styled = re.fullmatch(r"list (?:bullet|number|continue) ([2-9])", name)
            depth = max(depth, int(styled[1]) - 1) if styled else depth
            ordered, start = self.numbering.format_of(num_id, depth)
            self._reset_deeper(num_id, depth)
            count = self.list_counters.get((num_id, depth), start - 1) + 1
            self.list_counters[(num_id, depth)] = count
            return Block("item", text, depth=depth, marker=f"{count}." if ordered else "-", list_id=num_id)
        quoted = self.styles.quote_depth(style, properties, name in QUOTE_STYLES)
        if quoted:
            return Block("quote", "> " * quoted + escape_block_start(text))
        if SCENE_BREAK.match(text):
            return Block("paragraph", text.replace("\\*", "*"))
        return Block("paragraph", escape_block_start(text))

    def _reset_deeper(self, num_id: str, depth: int) -> None:
        for key in [k for k in self.list_counters if k[0] == num_id and k[1] > depth]:
            del self.list_counters[key]

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
                cells.extend([""] * (int(span.get(f"{W}val", "1")) - 1 if span is not None else 0))
            rows.append(cells)
        if not rows:
            return ""
        width = max(len(row) for row in rows)
        rows = [row + [""] * (width - len(row)) for row in rows]
        lines = [f"| {' | '.join(rows[0])} |", f"|{'|'.join(['---'] * width)}|"]
        lines += [f"| {' | '.join(row)} |" for row in rows[1:]]
        return "\n".join(lines)

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
                 fields: list[bool], code: bool) -> None:  # fmt: skip
        """Append ``element``'s visible text as (text, (bold, italic, struck)) pieces. ``fields`` is the stack of
        open complex fields, True once a field's result begins (its instruction is never text)."""
        for child in element:
            tag = child.tag
            if tag == f"{W}r":
                self._run(child, pieces, fields, code)
            elif tag == f"{W}hyperlink":
                target = self.links.get(child.get(R_ID, ""), "")
                inner: list[tuple[str, Format]] = []
                self._collect(child, inner, fields, code)
                words = emphasised(inner)
                if target and words and not code:
                    link = f"<{target}>" if words == target else f"[{words}]({target.replace(')', '%29')})"
                    pieces.append((link, PLAIN))
                else:
                    pieces.extend(inner)
            elif tag in (f"{W}del", f"{W}moveFrom"):
                self.counts["deletion"] += 1
            elif tag in (f"{W}ins", f"{W}moveTo"):
                self.counts["insertion"] += 1
                self._collect(child, pieces, fields, code)
            elif tag == f"{W}sdt":
                content = child.find(f"{W}sdtContent")
                if content is not None:
                    self._collect(content, pieces, fields, code)
            elif tag in (f"{W}smartTag", f"{W}customXml", f"{W}fldSimple", f"{W}bdo", f"{W}dir"):
                self._collect(child, pieces, fields, code)
            elif tag.endswith("}oMath") or tag.endswith("}oMathPara"):
                self.counts["equation"] += 1

    def _run(self, run: ElementTree.Element, pieces: list[tuple[str, Format]],
             fields: list[bool], code: bool) -> None:  # fmt: skip
        properties = run.find(f"{W}rPr")
        if properties is not None and on(properties.find(f"{W}vanish")):
            return
        style = self.styles.run_format(properties)
        for child in run:
            tag = child.tag
            if tag == f"{W}fldChar":
                kind = child.get(f"{W}fldCharType")
                if kind == "begin":
                    fields.append(False)
                elif kind == "separate" and fields:
                    fields[-1] = True
                elif kind == "end" and fields:
                    fields.pop()
                continue
            if fields and not fields[-1]:
                continue  # a field's instruction (PAGE, HYPERLINK "…"), not its result
            text = self._run_child(child, tag)
            if text:
                plain = code or style[3] or tag != f"{W}t"  # code keeps its characters; a break is a mark
                pieces.append((text if plain else escape_inline(text), style))
            elif text is None and tag == f"{W}commentReference" and child.get(f"{W}id", "") in self.comments:
                self.counts["comment kept"] += 1
                pieces.append((f"<!-- {self.comments[child.get(f'{W}id', '')]} -->", PLAIN))
            elif text is None and tag in (f"{W}footnoteReference", f"{W}endnoteReference"):
                mark = self._note(child, "footnotes" if tag == f"{W}footnoteReference" else "endnotes")
                pieces.append((f"[^{mark}]", PLAIN))

    def _run_child(self, child: ElementTree.Element, tag: str) -> str | None:
        if tag == f"{W}t":
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


@dataclass
class Block:
    kind: str  # heading, paragraph, quote, item, code, table
    text: str
    depth: int = 0
    marker: str = ""
    list_id: str = ""


def join_blocks(blocks: list[Block]) -> str:
    """Blocks as Markdown: a blank line between blocks, none inside a list or a code block; nested items set
    in under their parent's text, as CommonMark nests them."""
    lines: list[str] = []
    previous: Block | None = None
    indents: list[int] = []  # where each open list level's text begins
    top_list = ""  # the list of the last item at the outer level: an outer item of another starts a new list
    for block in blocks:
        joined = previous is not None and previous.kind == block.kind and block.kind in ("item", "code")
        if joined and block.kind == "item" and block.depth == 0:
            joined = block.list_id == top_list  # another list: Word counts it from its own start
        if previous is not None and not joined:
            lines.append("```" if previous.kind == "code" else "")
            if previous.kind == "code":
                lines.append("")
        if block.kind == "code" and not joined:
            lines.append("```")
        if block.kind == "item":
            top_list = block.list_id if block.depth == 0 else top_list
            indents = indents[: block.depth] if joined else []
            indent = indents[-1] if indents else 0
            while len(indents) < block.depth:  # a level skipped in Word: set in as far as its parent's text
                indents.append(indent)
            text_starts = indent + len(block.marker) + 1
            lines.append(" " * indent + f"{block.marker} " + block.text.replace("\\\n", "\\\n" + " " * text_starts))
            indents.append(text_starts)
        else:
            lines.append(block.text)
        previous = block
    if previous is not None and previous.kind == "code":
        lines.append("```")
    return "\n".join(lines)


def escape_inline(text: str) -> str:
    """The writer's characters kept as characters where Markdown would read them as marks."""
    return INLINE_SPECIAL.sub(r"\\\1", text.replace("\u00ad", ""))


def escape_block_start(text: str) -> str:
    """A paragraph that begins like a heading, quote or list item ("#1 priority", "- sure") kept a paragraph."""
    match = BLOCK_START.match(text)
    if match is None:
        return text
    start = match.group(1)
    return "\\" + text if not start[0].isdigit() else start + "\\" + text[len(start) :]


def tidy(text: str) -> str:
    """A paragraph's text without the spaces and tabs at its ends (a first-line tab is layout, not words)."""
    return text.strip(" \t")


def emphasised(pieces: list[tuple[str, Format]]) -> str:
    """Pieces of text with their formats as Markdown: neighbours of one format joined, its marks around them
    and the spaces at their ends left outside (``** bold**`` would not be bold)."""
    merged: list[tuple[str, Format]] = []
    for text, style in pieces:
        if merged and merged[-1][1] == style:
            merged[-1] = (merged[-1][0] + text, style)
        else:
            merged.append((text, style))
    return "".join(_marked(text, style) for text, style in merged)


def _marked(text: str, style: Format) -> str:
    """One format's text with its marks, line by line (a mark cannot span a hard line break)."""
    if "\\\n" in text:
        return "\\\n".join(_marked(line, style) for line in text.split("\\\n"))
    core = text.strip(" ")
    if not core or not any(style):
        return text
    if style[3]:  # code: fenced by more backticks than it holds, its other formats dropped (Markdown has none)
        fence = "`" * (max((len(run) for run in re.findall("`+", core)), default=0) + 1)
        padded = f" {core} " if core.startswith("`") or core.endswith("`") else core
        return f"{text[: len(text) - len(text.lstrip(' '))]}{fence}{padded}{fence}{text[len(text.rstrip(' ')) :]}"
    opening = [mark for mark, wanted in zip(("**", "*", "~~"), style[:3], strict=True) if wanted]
    lead, trail = text[: len(text) - len(text.lstrip(" "))], text[len(text.rstrip(" ")) :]
    return f"{lead}{''.join(opening)}{core}{''.join(reversed(opening))}{trail}"


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 'es' if word.endswith('x') else 's'}"
