"""File ▸ Open on a Word 97–2003 document (.doc): its words as Markdown, as the .docx, .odt and RTF readers give
theirs, and the file never written over.

A .doc is an OLE compound file (``compound_file``) whose WordDocument stream holds the text, found through the
piece table, and the runs of character and paragraph properties (``doc_binary``). The reader walks the main
text's characters once and keeps what Markdown can say:
- headings (the built-in Heading 1–9 and Title by their style numbers, so in any language, or an outline level),
  quotes and code paragraphs by their style's name, list items numbered or bulleted as their list's level says;
- bold, italic and struck runs, line breaks, links (a HYPERLINK field's result; other fields show their result),
  tables as pipe tables, footnotes and endnotes as ``[^n]``, comments as ``<!-- Name: … -->`` where they were made;
- tracked changes (revision marks, with their authors), accepted or, as asked, the text as it was before them.
Hidden text is left out; pictures and drawn shapes are left out and counted; headers and footers are not the
story's. A Word 6/95 file or a password-protected one is refused with what to do instead.
"""

from __future__ import annotations

import bisect
import re
import struct
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.documents import doc_binary as binary
from app.documents.compound_file import CompoundFile
from app.documents.fileio import FileError
from app.documents.markdown_blocks import (
    CODE_STYLE_NAMES,
    MAX_PART_BYTES,
    OLE_MAGIC,
    PLAIN,
    QUOTE_STYLE_NAMES,
    ZIP_MAGIC,
    Block,
    Format,
    ImportedDocument,
    ListNumbers,
    RevisionLog,
    UnreadableDocument,
    comment_note,
    emphasised,
    escape_block_start,
    escape_inline,
    field_link,
    import_notes,
    join_blocks,
    joined_pairs,
    linked,
    one_line,
    paragraph_block,
    pipe_table,
    tidy,
)

DOC_SUFFIXES = frozenset({".doc", ".dot"})
TITLE_STI = 62
# The characters that are not words: paragraph and cell ends, breaks, fields' marks, notes' and objects' anchors,
# and every other control character but the tab (a column break, an optional hyphen: nothing to show).
SPECIAL = re.compile(r"[\x00-\x08\x0a-\x1f]")
# Where the main text refers to its notes and comments, where their words are, which story, each reference's size.
REFERENCES = (
    ("note", binary.PLCFFNDREF, binary.PLCFFNDTXT, 1, 2),
    ("note", binary.PLCFENDREF, binary.PLCFENDTXT, 5, 2),
    ("comment", binary.PLCFANDREF, binary.PLCFANDTXT, 4, 30),
)
UNESCAPE = re.compile(r"\\([\\*`<])")  # escape_inline undone: code keeps its characters


def is_doc_file(path: Path) -> bool:
    """Whether ``path`` is for :func:`read_doc`: any OLE compound file (a password-protected .docx is one too, and
    is explained), or a .doc or .dot by its name that is not a .docx's zip renamed."""
    try:
        with path.open("rb") as stream:
            head = stream.read(8)
    except OSError:
        return path.suffix.lower() in DOC_SUFFIXES  # opening says why it cannot be read
    return head == OLE_MAGIC or (path.suffix.lower() in DOC_SUFFIXES and not head.startswith(ZIP_MAGIC))


def read_doc(path: Path, accept_changes: bool = True) -> ImportedDocument:
    """``path``'s text as Markdown, its tracked changes accepted (else as before them); ``UnreadableDocument`` (a
    ``FileError``) with the reason where it cannot be read."""
    try:
        if path.stat().st_size > MAX_PART_BYTES:
            raise UnreadableDocument("it is larger than any Word document (over 256 MB)")
        data = path.read_bytes()
    except OSError as error:
        raise FileError(str(error.strerror or error)) from error
    if data[:8] != OLE_MAGIC:
        if data.startswith(ZIP_MAGIC):
            raise UnreadableDocument("it is a zip, not an old-format Word document: rename it to .docx and open that")
        if data.lstrip().startswith(b"{\\rtf"):
            raise UnreadableDocument("it is an RTF file under a .doc name: rename it to .rtf and open that")
        raise UnreadableDocument("it is not a Word 97–2003 document (that is an OLE compound file; this is not one)")
    try:
        return _read(CompoundFile(data), accept_changes)
    except RecursionError as error:
        raise UnreadableDocument("its text is nested too deeply to read; the file looks damaged") from error
    except (struct.error, IndexError, ValueError, OverflowError) as error:  # a structure read past its bounds
        raise binary.damaged(f"{type(error).__name__}: {error}") from error


def _read(container: CompoundFile, accept_changes: bool) -> ImportedDocument:
    word = container.stream("WordDocument")
    if word is None:
        if "EncryptedPackage" in container.names():
            raise UnreadableDocument("it is a Word document protected with a password; in Word, save it without a "
                                     "password, then open that")  # fmt: skip
        raise UnreadableDocument("it is an Office file of another kind (it has no Word text)")
    fib = binary.read_fib(word)
    table = container.stream(fib.table_name)
    if table is None:
        raise binary.damaged(f"its {fib.table_name} stream is missing")
    return DocReader(word, table, fib, accept_changes).document()


@dataclass(frozen=True)
class Run:
    """A run's character properties."""

    format: Format = PLAIN
    hidden: bool = False
    special: bool = False  # its 0x01, 0x02, 0x05, 0x08 are anchors (pictures, note marks), not text
    inserted: bool = False
    deleted: bool = False
    author: int = 0  # the tracked change's author: an index into SttbfRMark (0 is "Unknown")


def toggled(operand: bytes | None, inherited: bool) -> bool:
    """A toggle property: 1 on, 0 off; 0x80 as the style has it, 0x81 the opposite; absent as the style has it."""
    if not operand:
        return inherited
    return {0: False, 1: True, 0x80: inherited, 0x81: not inherited}.get(operand[0], inherited)


def run_of(grpprl: bytes, styles: list[binary.Style]) -> Run:
    """A run's properties: its direct ones over its character style's (Strong, Emphasis)."""
    found = dict(binary.sprms(grpprl))
    style = styled_format(styles, int.from_bytes(found.get(binary.CHARACTER_STYLE_OF, b"")[:2], "little"), 0)
    bold, italic = toggled(found.get(binary.BOLD), style[0]), toggled(found.get(binary.ITALIC), style[1])
    strike = toggled(found.get(binary.STRIKE), style[2]) or toggled(found.get(binary.DOUBLE_STRIKE), False)
    inserted, deleted = toggled(found.get(binary.INSERTED), False), toggled(found.get(binary.DELETED), False)
    author = found.get(binary.AUTHOR_INSERTED if inserted else binary.AUTHOR_DELETED, b"")[:2]
    return Run((bold, italic, strike, False), toggled(found.get(binary.HIDDEN), False),
               toggled(found.get(binary.SPECIAL_CHARACTER), False), inserted, deleted,
               int.from_bytes(author, "little"))  # fmt: skip


def styled_format(styles: list[binary.Style], istd: int, depth: int) -> Format:
    """The bold, italic and struck a character style gives, over the styles it is based on (a few deep at most)."""
    if not 0 < istd < len(styles) or depth > 10:
        return PLAIN
    style = styles[istd]
    base = styled_format(styles, style.base, depth + 1) if style.base != istd else PLAIN
    found = dict(binary.sprms(style.character))
    return (toggled(found.get(binary.BOLD), base[0]), toggled(found.get(binary.ITALIC), base[1]),
            toggled(found.get(binary.STRIKE), base[2]), False)  # fmt: skip


@dataclass(frozen=True)
class ParagraphProperties:
    style: int = 0
    list_entry: int = 0  # ilfo: 1-based into the list overrides; 0 not a list item
    list_level: int = 0
    outline: int = 9  # 0–8 a heading's level less one; 9 body text
    in_table: bool = False
    row_end: bool = False


def paragraph_of(grpprl: bytes, styles: list[binary.Style]) -> ParagraphProperties:
    """A paragraph's properties: its own over its style's (Word's List Bullet numbers by its style), over the
    styles that style is based on."""
    if len(grpprl) < 2:
        return ParagraphProperties()
    style = binary.u16(grpprl, 0)
    found: dict[int, bytes] = {}
    chain, istd = [grpprl[2:]], style
    while 0 <= istd < len(styles) and len(chain) < 12:  # a damaged file's loop of bases ends here
        chain.append(styles[istd].paragraph)
        istd = styles[istd].base if styles[istd].base != istd else -1
    for properties in reversed(chain):
        found.update(binary.sprms(properties))

    def byte(opcode: int, default: int) -> int:
        return found[opcode][0] if found.get(opcode) else default

    return ParagraphProperties(
        style,
        int.from_bytes(found.get(binary.LIST_ENTRY, b"\x00\x00")[:2].ljust(2, b"\x00"), "little", signed=True),
        byte(binary.LIST_LEVEL, 0),
        byte(binary.OUTLINE_LEVEL, 9),
        bool(byte(binary.IN_TABLE, 0)),
        bool(byte(binary.ROW_END, 0) or byte(binary.INNER_ROW_END, 0)),
    )


@dataclass
class Field:
    instruction: list[str] = field(default_factory=list)
    result: list[tuple[str, Format]] | None = None  # the paragraph's pieces its result goes into, once it begins
    result_from: int = 0  # where in them


def in_instruction(fields: list[Field]) -> bool:
    """Whether the words read now are a field's instruction (a field inside another's instruction too)."""
    return any(open_field.result is None for open_field in fields)


@dataclass
class Paragraph:
    pieces: list[tuple[str, Format]]
    properties: ParagraphProperties = ParagraphProperties()
    cell_end: bool = False


class DocReader:
    def __init__(self, word: bytes, table: bytes, fib: binary.Fib, accept_changes: bool = True) -> None:
        self.word, self.table, self.fib = word, table, fib
        self.accept_changes = accept_changes
        self.pieces = binary.read_pieces(table, fib)
        self.piece_starts = [piece.start for piece in self.pieces]
        self.piece_texts: dict[int, str] = {}
        self.char_runs = binary.fkp_runs(word, table, fib, paragraphs=False)
        self.paragraph_runs = binary.fkp_runs(word, table, fib, paragraphs=True)
        self.styles = binary.read_styles(table, fib)
        self.lists = binary.read_lists(table, fib)
        self.authors = binary.sttb(binary.part_of(table, fib, binary.STTBFRMARK))
        self.comment_authors = binary.xst_list(binary.part_of(table, fib, binary.GRPXSTATNOWNERS))
        self.counts: Counter[str] = Counter()
        self.changes = RevisionLog(self.counts)
        self.notes_text: list[str] = []  # footnotes' and endnotes' words, in order of reference
        self.references = self._references()
        self.list_numbers = ListNumbers()
        self.run_cache: dict[bytes, Run] = {}
        self.paragraph_cache: dict[bytes, ParagraphProperties] = {}

    def document(self) -> ImportedDocument:
        blocks: list[Block] = []
        rows: list[list[str]] = []
        cells: list[str] = []
        cell: list[tuple[str, Format]] = []
        for paragraph in self.story(0, self.fib.text_lengths[0]):
            if paragraph.cell_end or paragraph.properties.in_table:
                if paragraph.cell_end and paragraph.properties.row_end:
                    rows.append(cells)
                    cells = []
                elif paragraph.cell_end:
                    cells.append(one_line(cell + paragraph.pieces).replace("|", "\\|"))
                    cell = []
                else:  # a cell's paragraphs run on until its end
                    cell += paragraph.pieces + [(" ", PLAIN)]
                continue
            if rows:
                blocks.append(Block("table", pipe_table(rows)))
                rows = []
            block = self._block(paragraph)
            if block is not None:
                blocks.append(block)
        if rows:
            blocks.append(Block("table", pipe_table(rows)))
        text = join_blocks(blocks)
        if self.notes_text:
            text += "\n\n" + "\n".join(f"[^{n}]: {words}" for n, words in enumerate(self.notes_text, start=1))
        changes = self.counts["insertion"] + self.counts["deletion"]
        notes = import_notes(self.counts, ("picture",), self.accept_changes)
        revisions = tuple(replace(change, words=joined_pairs(change.words)) for change in self.changes.revisions)
        text = joined_pairs(text)
        return ImportedDocument(text.strip("\n") + "\n" if text.strip() else "", notes, changes, revisions)

    # -- the text ---------------------------------------------------------------------------------------

    def story(self, start: int, end: int, main: bool = True) -> list[Paragraph]:
        """The paragraphs of characters [start, end): fields' results in place of the fields, tracked changes
        settled, and (in the ``main`` text) the notes and comments it refers to read where it refers to them."""
        paragraphs: list[Paragraph] = []
        pieces: list[tuple[str, Format]] = []
        fields: list[Field] = []
        for cp, text, run in self._runs(start, end):
            if run.hidden:
                continue
            if run.inserted or run.deleted:
                self._revision(run, text)
                if run.deleted if self.accept_changes else run.inserted:
                    continue
            else:
                self.changes.gap()
            position = 0
            for match in SPECIAL.finditer(text):
                self._words(text[position : match.start()], run.format, pieces, fields)
                position = match.end()
                mark, at = match.group(), cp + match.start()
                if mark == "\x13":
                    fields.append(Field())
                elif mark == "\x14" and fields:
                    fields[-1].result, fields[-1].result_from = pieces, len(pieces)
                elif mark == "\x15" and fields:
                    done = fields.pop()
                    address = field_link("".join(done.instruction))
                    if done.result is pieces and address:  # a link's result within one paragraph
                        pieces[done.result_from :] = linked(pieces[done.result_from :], address)
                elif in_instruction(fields):
                    continue  # inside a field's instruction: no words of the document's
                elif mark in "\r\x07\x0c":
                    paragraphs.append(Paragraph(pieces, self._paragraph_at(at), mark == "\x07"))
                    pieces = []
                elif mark == "\x0b":
                    pieces.append(("\u2028", PLAIN))
                elif mark == "\x1e":
                    pieces.append(("\u2011", run.format))
                elif mark in "\x02\x05" and main and run.special and at in self.references:
                    pieces.append(self._reference(at))
                elif mark in "\x01\x08" and run.special:
                    self.counts["picture"] += 1
            self._words(text[position:], run.format, pieces, fields)
        if any(text.strip() for text, _format in pieces):
            paragraphs.append(Paragraph(pieces))
        return paragraphs

    @staticmethod
    def _words(text: str, style: Format, pieces: list[tuple[str, Format]], fields: list[Field]) -> None:
        if not text:
            return
        if in_instruction(fields):
            fields[-1].instruction.append(text)
        else:
            pieces.append((escape_inline(text), style))

    def _runs(self, start: int, end: int) -> Iterator[tuple[int, str, Run]]:
        """Characters [start, end) in runs of one set of properties: each run's first position, text, properties."""
        starts, grpprls = self.char_runs
        first = max(0, bisect.bisect_right(self.piece_starts, start) - 1)
        for index in range(first, len(self.pieces)):
            piece = self.pieces[index]
            if piece.start >= end:
                break
            text = self._piece_text(index)
            low, high = max(start, piece.start), min(end, piece.end)
            cp = low
            while cp < high:
                fc = piece.fc_of(cp)
                at = bisect.bisect_right(starts, fc) - 1
                following = starts[at + 1] if at + 1 < len(starts) else None
                step = 1 if piece.compressed else 2
                stop = high if following is None else min(high, cp + max(1, -(-(following - fc) // step)))
                yield cp, text[cp - piece.start : stop - piece.start], self._run_of(grpprls[at] if at >= 0 else b"")
                cp = stop

    def _run_of(self, grpprl: bytes) -> Run:
        if grpprl not in self.run_cache:
            self.run_cache[grpprl] = run_of(grpprl, self.styles)
        return self.run_cache[grpprl]

    def _piece_text(self, index: int) -> str:
        if index not in self.piece_texts:
            self.piece_texts[index] = binary.piece_text(self.word, self.pieces[index])
        return self.piece_texts[index]

    def _paragraph_at(self, cp: int) -> ParagraphProperties:
        index = bisect.bisect_right(self.piece_starts, cp) - 1
        if index < 0:
            return ParagraphProperties()
        starts, grpprls = self.paragraph_runs
        grpprl = binary.run_at(starts, grpprls, self.pieces[index].fc_of(cp))
        if grpprl not in self.paragraph_cache:
            self.paragraph_cache[grpprl] = paragraph_of(grpprl, self.styles)
        return self.paragraph_cache[grpprl]

    def _revision(self, run: Run, text: str) -> None:
        words = SPECIAL.sub(lambda mark: "\n" if mark.group() in "\r\x07" else "", text)
        author = self.authors[run.author].strip() if 0 < run.author < len(self.authors) else ""  # 0: "Unknown"
        self.changes.add(run.inserted, author, words)

    # -- notes and comments -------------------------------------------------------------------------------

    def _references(self) -> dict[int, tuple[str, int, int, str]]:
        """Where the main text refers to a footnote, endnote or comment: its story's range, and a comment's author."""
        found: dict[int, tuple[str, int, int, str]] = {}
        for kind, where, text_at, story, size in REFERENCES:
            positions, items = binary.plc(binary.part_of(self.table, self.fib, where), size)
            texts, _none = binary.plc(binary.part_of(self.table, self.fib, text_at), 0)
            base = self.fib.story_start(story)
            for index, (cp, item) in enumerate(zip(positions, items, strict=False)):
                if index + 1 < len(texts):
                    author = ""
                    if kind == "comment" and len(item) >= 22:
                        owner = binary.u16(item, 20)
                        author = self.comment_authors[owner] if owner < len(self.comment_authors) else ""
                    found[cp] = (kind, base + texts[index], base + texts[index + 1], author)
        return found

    def _reference(self, cp: int) -> tuple[str, Format]:
        kind, start, end, author = self.references.pop(cp)  # read once: a damaged file's loop ends here
        words = one_line([p for paragraph in self.story(start, end, main=False) for p in
                                paragraph.pieces + [(" ", PLAIN)]])  # fmt: skip
        if kind == "note":
            self.notes_text.append(words)
            return f"[^{len(self.notes_text)}]", PLAIN
        if not words:
            return "", PLAIN
        self.counts["comment kept"] += 1
        return f"<!-- {comment_note(author.strip(), words)} -->", PLAIN

    # -- blocks ---------------------------------------------------------------------------------------------

    def _block(self, paragraph: Paragraph) -> Block | None:
        properties = paragraph.properties
        style = self.styles[properties.style] if properties.style < len(self.styles) else binary.Style("", 0)
        if style.name in CODE_STYLE_NAMES:
            code = UNESCAPE.sub(r"\1", "".join(text for text, _format in paragraph.pieces)).replace("\u2028", "\n")
            return Block("code", code) if code.strip() else None
        text = tidy(emphasised(paragraph.pieces).replace("\u2028", "\\\n"))
        if not text:
            return None
        heading = re.fullmatch(r"heading (\d)", style.name)
        level = style.sti if 1 <= style.sti <= 9 else int(heading[1]) if heading else 0
        title = style.sti == TITLE_STI or style.name == "title"
        level = 1 if title else level or (properties.outline + 1 if properties.outline < 9 else 0)
        if level:  # a heading is bold by its style; bold in it says nothing more
            plain = one_line([(piece, (False, *style[1:])) for piece, style in paragraph.pieces])
            return Block("title" if title else "heading", f"{'#' * min(level, 6)} {plain}")
        if properties.list_entry > 0:
            return self._item(properties, text)
        if style.name in QUOTE_STYLE_NAMES:
            return Block("quote", "> " + escape_block_start(text))
        return paragraph_block(text, style.name)

    def _item(self, properties: ParagraphProperties, text: str) -> Block:
        """A list item, numbered as its list's level says (counted from its start), else a bullet."""
        entry, depth = properties.list_entry, min(properties.list_level, 8)
        levels = self.lists[entry - 1] if entry <= len(self.lists) else []
        level = levels[min(depth, len(levels) - 1)] if levels else binary.ListLevel(True, 1)
        count = self.list_numbers.next(str(entry), depth, level.start)
        return Block("item", text, depth=depth, marker="-" if level.bullet else f"{count}.", list_id=f"doc{entry}")
