"""What the Word and OpenDocument readers share: a document's blocks and runs written as Markdown, and their
XML parts read safely. Nothing here needs Qt."""

from __future__ import annotations

import re
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from xml.etree import ElementTree

from app.documents.fileio import FileError

MAX_PART_BYTES = 256 * 1024 * 1024  # a long novel's XML is tens of MB; a zip bomb unpacks to far more
ZIP_MAGIC = b"PK\x03\x04"
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an old .doc, or a password-protected .docx
Format = tuple[bool, bool, bool, bool]  # a run's bold, italic, struck, code
PLAIN: Format = (False, False, False, False)
# A paragraph that only marks a scene break ("* * *", "***", "---") stays one: Markdown reads it as a rule.
SCENE_BREAK = re.compile(r"^(\\\*\s*){3,}$|^(-\s*){3,}$")  # as escape_inline left it
BLOCK_START = re.compile(r"^(#{1,6}(?=\s|$)|[>+-](?=\s|$)|\d{1,9}(?=[.)](?:\s|$)))")
# Markdown's marks among a writer's characters: backslashes, stars, backticks, a "<" that would open HTML, and an
# underscore or tilde that is not inside a word (one inside, snake_case or 2~3, is no emphasis, nor struck: left
# as typed; "_0_" and "~so~" would be).
INLINE_SPECIAL = re.compile(r"([\\*`]|<(?=[A-Za-z/!?])|(?<![^\W_])[_~]|[_~](?![^\W_]))")


# Paragraph styles read as quotes and as code by their names (lower case), as RTF files and .doc files name them.
QUOTE_STYLE_NAMES = frozenset({"quote", "intense quote", "block text", "quotations", "quotation"})
CODE_STYLE_NAMES = frozenset({"source code", "preformatted text", "html preformatted", "macro text", "code"})


class UnreadableDocument(FileError):
    """A Word or OpenDocument file Redraft cannot read; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Revision:
    """One tracked change as the file has it: an insertion (else a deletion), who made it, and its words."""

    inserted: bool
    author: str
    words: str


@dataclass(frozen=True)
class ImportedDocument:
    text: str  # Markdown, "\n" line endings
    notes: tuple[str, ...] = field(default=())  # what did not come across as it was, in words
    tracked_changes: int = 0  # insertions and deletions tracked in the file (read as accepted, or as rejected)
    revisions: tuple[Revision, ...] = field(default=())  # those changes in the order read, for their authors


def read_package(path: Path, read: Callable[[zipfile.ZipFile], ImportedDocument], what: str, not_a_zip: str,
                 old_format: str | None = None) -> ImportedDocument:  # fmt: skip
    """``read`` of ``path``'s zip, a file that is not one refused with ``not_a_zip`` (an old Office file with
    ``old_format``, where given), a damaged ``what`` said so; ``FileError`` for what the disk says."""
    try:
        with path.open("rb") as stream:
            head = stream.read(8)
    except OSError as error:
        raise FileError(str(error.strerror or error)) from error
    if old_format is not None and head == OLE_MAGIC:
        raise UnreadableDocument(old_format)
    if not head.startswith(ZIP_MAGIC):
        raise UnreadableDocument(not_a_zip)
    try:
        with zipfile.ZipFile(path) as package:
            return read(package)
    except RecursionError as error:  # text nested thousands deep: no editor wrote it
        raise UnreadableDocument("its text is nested too deeply to read; the file looks damaged") from error
    except zipfile.BadZipFile as error:
        raise UnreadableDocument(f"the {what} is damaged ({error})") from error
    except OSError as error:
        raise FileError(str(error.strerror or error)) from error


def read_xml_part(package: zipfile.ZipFile, name: str) -> ElementTree.Element | None:
    """A package's XML part, or None where it has none. Refused with the reason: a part that would unpack
    past ``MAX_PART_BYTES`` (a zip bomb), one declaring a DTD (entity expansion; office suites never write
    one), one that is not well-formed."""
    try:
        info = package.getinfo(name)
    except KeyError:
        return None
    if info.file_size > MAX_PART_BYTES:
        raise UnreadableDocument(f"its part {name} would unpack to {info.file_size // 2**20} MB: too large to open")
    with package.open(info) as stream:
        data = stream.read(MAX_PART_BYTES + 1)
    if len(data) > MAX_PART_BYTES:
        raise UnreadableDocument(f"its part {name} is too large to open")
    if b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data:
        raise UnreadableDocument(f"its part {name} declares entities, which office suites never write: not opened")
    try:
        return ElementTree.fromstring(data)
    except (ElementTree.ParseError, LookupError, ValueError) as error:  # not XML; an encoding none has heard of
        raise UnreadableDocument(f"the document is damaged ({name}: {error})") from error


def number(value: str | None, default: int, low: int, high: int) -> int:
    """An attribute's whole number kept within [low, high]; ``default`` where it is missing or not a number. A
    damaged or hostile file's "x" or 10**9 (a billion spaces, a table a billion columns wide) goes no further."""
    try:
        found = int(value) if value is not None else default
    except ValueError:
        found = default
    return max(low, min(high, found))


def pipe_table(rows: list[list[str]]) -> str:
    """Rows of cells (Markdown already, ``|`` escaped) as a pipe table, the first row its header, every row as
    wide as the widest."""
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    lines = [f"| {' | '.join(rows[0])} |", f"|{'|'.join(['---'] * width)}|"]
    return "\n".join(lines + [f"| {' | '.join(row)} |" for row in rows[1:]])


class ListNumbers:
    """Each list's count at each level, as word processors number: an item counts on from its level's last item
    (else from the level's start), and starts every deeper level of its list afresh."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, int], int] = {}

    def next(self, list_id: str, depth: int, start: int) -> int:
        for key in [key for key in self.counts if key[0] == list_id and key[1] > depth]:
            del self.counts[key]
        count = self.counts.get((list_id, depth), start - 1) + 1
        self.counts[(list_id, depth)] = count
        return count


class RevisionLog:
    """The tracked changes of a reader that meets them run by run (RTF, .doc): runs of one kind in a row are one
    change (counted in ``counts`` with its author under ``BY``), one revision per author within it."""

    def __init__(self, counts: Counter[str]) -> None:
        self.counts = counts
        self.revisions: list[Revision] = []
        self.last = ""  # the kind of the last run read: "insertion", "deletion", or "" (no change)

    def add(self, inserted: bool, author: str, words: str) -> None:
        kind = "insertion" if inserted else "deletion"
        if kind != self.last:
            self.counts[kind] += 1
            self.counts[BY + author] += 1
        last = self.revisions[-1] if self.revisions and kind == self.last else None
        if last is not None and last.author == author:
            self.revisions[-1] = replace(last, words=last.words + words)
        else:
            self.revisions.append(Revision(inserted, author, words))
        self.last = kind

    def gap(self) -> None:
        """Words that are no change: the next changed run starts a change of its own."""
        self.last = ""


# How an import's note names tracked changes read as accepted; critic_markup.reviewed says "marked" instead.
CHANGES_ACCEPTED = "its tracked changes are shown accepted"
# A reader counts each tracked change's author under this prefix (counts[BY + name]), in the order met.
BY = "by:"


def import_notes(counts: Counter[str], left_kinds: tuple[str, ...], accepted: bool = True) -> tuple[str, ...]:
    """What an import settled, kept differently or left out, from its ``counts`` ("insertion", "deletion", their
    authors under ``BY``, "comment kept", and each of ``left_kinds``), in the writer's words; tracked changes read
    as ``accepted``, or as rejected (the text as it was before them)."""
    said = []
    inserted, deleted = counts["insertion"], counts["deletion"]
    if inserted or deleted:
        how = CHANGES_ACCEPTED if accepted else "its tracked changes are left out: it reads as it was before them"
        authors = [key.removeprefix(BY) for key in counts if key.startswith(BY) and key != BY]
        by = f", by {authors[0] if len(authors) == 1 else ', '.join(authors[:-1]) + ' and ' + authors[-1]}" \
            if authors else ""  # fmt: skip
        said.append(f"{how} ({plural(inserted, 'insertion')}, "
                    f"{plural(deleted, 'deletion')}{by})")  # fmt: skip
    kept = counts["comment kept"]
    if kept:
        one = kept == 1
        said.append(f"{plural(kept, 'comment')} kept where {'it was' if one else 'they were'} made, "
                    f"as {'a <!-- … --> note' if one else '<!-- … --> notes'}")  # fmt: skip
    left = [plural(counts[kind], kind) for kind in left_kinds if counts[kind]]
    if left:
        said.append(f"{', '.join(left)} left out")
    return tuple(said)


def one_line(pieces: list[tuple[str, Format]]) -> str:
    """Pieces as one line of Markdown (a footnote's, a comment's, a table cell's): line breaks and runs of
    spaces as one space."""
    return " ".join(emphasised(pieces).replace("\u2028", " ").split())


def linked(pieces: list[tuple[str, Format]], target: str) -> list[tuple[str, Format]]:
    """A link's text pieces as one Markdown link to ``target`` (its text, if the text is the address); the
    pieces as they are where there is no target or no text."""
    words = emphasised(pieces)
    if not target or not words:
        return pieces
    link = f"<{target}>" if words == target else f"[{words}]({target.replace(')', '%29')})"
    return [(link, PLAIN)]


FIELD_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
SWITCHES_WITH_AN_ARGUMENT = frozenset({"\\l", "\\o", "\\t"})  # a bookmark, a tooltip, a target frame


def field_link(instruction: str) -> str:
    """The address a HYPERLINK field's instruction links to (``HYPERLINK "https://…" \\o "tip"``), or "" where it is
    not one, or links within the document (``\\l "_Toc12"``, a table of contents' entries; "#…")."""
    tokens: list[tuple[str, str]] = FIELD_TOKEN.findall(instruction)
    if not tokens or tokens[0][1].upper() != "HYPERLINK":
        return ""
    address, skip = "", False
    for quoted, bare in tokens[1:]:
        if skip:
            skip = False
        elif bare.startswith("\\"):
            if bare.lower() == "\\l":
                return ""
            skip = bare.lower() in SWITCHES_WITH_AN_ARGUMENT
        elif not address:
            address = quoted or bare
    return "" if address.startswith("#") else address


def comment_note(author: str, words: str) -> str:
    """A comment as the note that stands for it ("Ed: Why?"): one line, and no "--" (a note ends at the first
    "-->", and "--" inside one is not CommonMark everywhere)."""
    note = f"{author}: {words}" if author else words
    return re.sub(r"-{2,}", "–", note.replace("\n", " "))


def paragraph_block(text: str, style_name: str = "") -> Block:
    """A body paragraph: a scene break stays one, and a start Markdown would read as a mark is escaped. One in a
    title block's style (``style_name`` lower case: Subtitle, Author, Date) says so, for join_blocks."""
    kind = style_name if style_name in TITLE_BLOCK_PARTS else "paragraph"
    if SCENE_BREAK.match(text):
        return Block(kind, text.replace("\\*", "*"))
    return Block(kind, escape_block_start(text))


# The styles of a title block's paragraphs under the Title, as Pandoc's Word and OpenDocument writers and Redraft's
# own Word export set them (app/window/title_page.py); Word's letters use Date too, which only counts under a Title.
TITLE_BLOCK_PARTS = frozenset({"subtitle", "author", "date"})


@dataclass
class Block:
    kind: str  # title (Word's or LibreOffice's Title style), heading, paragraph, quote, item, code, table, or a
    # title block's part (TITLE_BLOCK_PARTS): a paragraph unless it follows the document's opening Title
    text: str
    depth: int = 0
    marker: str = ""
    list_id: str = ""


def _title_block(blocks: list[Block]) -> tuple[str, list[Block]]:
    """A document that opens with its one Title and its Subtitle, Author or Date under it has a title page, which
    Markdown keeps as front matter (as Pandoc reads a .docx): its text and the blocks after it (their headings
    keep their levels). A lone Title stays the document's top heading (``_under_title``). Either way the parts
    found elsewhere are paragraphs."""
    end = 1
    while end < len(blocks) and blocks[end].kind in TITLE_BLOCK_PARTS:
        end += 1
    head, rest = blocks[:end], [replace(b, kind="paragraph") if b.kind in TITLE_BLOCK_PARTS else b for b in blocks]
    parts: dict[str, list[str]] = {"title": [], "subtitle": [], "author": [], "date": []}
    for block in head:
        parts.setdefault(block.kind, []).append(block.text)
    lone = end == 1 or head[0].kind != "title" or any(block.kind == "title" for block in blocks[end:])
    if lone or len(parts["subtitle"]) > 1 or len(parts["date"]) > 1 or any(
        "<!--" in block.text or "\\\n" in block.text for block in head  # a note or a line break: the text's own
    ):
        return "", rest
    title = head[0].text.split(" ", 1)[1]  # after the heading's "# "
    subtitle, date = (parts[kind][0] if parts[kind] else "" for kind in ("subtitle", "date"))
    return front_matter_text(title, subtitle, tuple(parts["author"]), date), rest[end:]


def front_matter_text(title: str, subtitle: str = "", authors: tuple[str, ...] = (), date: str = "") -> str:
    """The front matter block (closed, with the blank line after it) that reads back as these values: Markdown, as
    Pandoc reads a value, so an imported title keeps its escaped characters. YAML quotes what needs quoting;
    app.documents.front_matter reads it."""
    import yaml  # only for a title page: the editor starts without it

    author: object = authors[0] if len(authors) == 1 else list(authors)
    fields = {"title": title, "subtitle": subtitle, "author": author, "date": date}
    kept = {key: value for key, value in fields.items() if value}
    dumped = yaml.safe_dump(kept, allow_unicode=True, sort_keys=False, default_flow_style=False, width=1 << 20)
    return f"---\n{dumped}---\n\n"


def _under_title(blocks: list[Block]) -> list[Block]:
    """Where a document has a Title, it is the one ``#`` and every heading one level under it (Heading 1 ``##``):
    Word and LibreOffice set a title above the Heading 1s, which would otherwise read as its equals."""
    if not any(block.kind == "title" for block in blocks):
        return blocks
    return [
        Block("heading", block.text) if block.kind == "title"
        else replace(block, text="#" + block.text) if block.kind == "heading" and not block.text.startswith("######")
        else block
        for block in blocks
    ]  # fmt: skip


def join_blocks(blocks: list[Block]) -> str:
    """Blocks as Markdown: a blank line between blocks, none inside a list or a code block; nested items set
    in under their parent's text, as CommonMark nests them."""
    front_matter, blocks = _title_block(blocks)
    blocks = _under_title(blocks)
    lines: list[str] = [front_matter.removesuffix("\n")] if front_matter else []
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


def joined_pairs(text: str) -> str:
    """UTF-16 surrogate pairs (an emoji read as two units, RTF's two \\uN or a .doc's text) as the one character
    they stand for."""
    if not any(0xD800 <= ord(character) <= 0xDFFF for character in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 'es' if word.endswith('x') else 's'}"
