"""File ▸ Open on an RTF file (TextEdit's, WordPad's, Scrivener's compile, Word's or LibreOffice's save): its words
as Markdown, as the Word and OpenDocument readers give theirs, and the file never written over.

RTF is one stream of groups (``{…}``), control words (``\\b``, ``\\par``) and text. The reader walks it once with a
stack of group states and keeps what Markdown can say:
- headings (a style named "heading n" or "title", or an outline level), quotes and code paragraphs by their
  style's name, list items by the number or bullet the file shows for them (``\\listtext``, Word 6's ``\\pntext``);
- bold, italic, struck and fixed-pitch runs (a font of the modern family), links (a HYPERLINK field's result),
  line breaks, tables (``\\cell``, ``\\row``) as pipe tables, footnotes and endnotes as ``[^n]``;
- comments (``\\annotation``) as ``<!-- Name: … -->`` notes where they were made;
- tracked changes (``\\revised`` insertions, ``\\deleted`` deletions), accepted or, as asked, as before them;
- text in the document's code page (``\\ansicpg``, ``\\'hh``), Unicode (``\\uN`` with its ``\\ucN`` fallback, and
  surrogate pairs), and RTF's named characters (dashes, quotes, no-break spaces).
Pictures and drawn shapes are left out and counted; headers, footers, fields' instructions and every destination
the reader does not know (``{\\*\\…}``) are skipped, as RTF asks of a reader.
"""

from __future__ import annotations

import codecs
import contextlib
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from app.documents.fileio import FileError
from app.documents.markdown_blocks import (
    CODE_STYLE_NAMES,
    MAX_PART_BYTES,
    PLAIN,
    QUOTE_STYLE_NAMES,
    Block,
    Format,
    ImportedDocument,
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

RTF_SUFFIXES = frozenset({".rtf"})
RTF_MAGIC = b"{\\rtf"
TOKEN = re.compile(
    r"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\(.)|([{}])|([^\\{}\r\n]+)|[\r\n]+|\\", re.DOTALL
)
# Destinations whose text is never the document's: tables of fonts, colours and styles are read on the side.
SKIPPED = frozenset({
    "colortbl", "info", "pict", "header", "headerl", "headerr", "headerf", "footer", "footerl", "footerr",
    "footerf", "listtable", "listoverridetable", "rsidtbl", "generator", "xmlnstbl", "themedata", "object",
    "colorschememapping", "datastore", "latentstyles", "pgdsctbl", "ftnsep", "ftnsepc", "aftnsep", "aftnsepc",
    "pn", "nonshppict", "shp", "shpinst", "do", "userprops", "atnid", "atndate", "atnref", "bkmkstart",
    "bkmkend", "template", "listpicture", "mmathPr", "pnseclvl", "protusertbl", "wgrffmtfilter",
})  # fmt: skip
NAMED = {
    "emdash": "—", "endash": "–", "lquote": "‘", "rquote": "’", "ldblquote": "“", "rdblquote": "”", "bullet": "•",
    "tab": "\t", "enspace": " ", "emspace": " ", "qmspace": " ", "zwj": "\u200d", "zwnj": "\u200c",
}  # fmt: skip
SYMBOLS = {"~": "\u00a0", "_": "\u2011", "-": "", "\\": "\\", "{": "{", "}": "}", "\n": "", "\r": ""}
NUMBERED = re.compile(r"\(?(\d{1,9})[.)]")


def is_rtf(path: Path) -> bool:
    """Whether ``path`` is for :func:`read_rtf`: an .rtf by its name, or any file that starts as RTF does."""
    if path.suffix.lower() in RTF_SUFFIXES:
        return True
    try:
        with path.open("rb") as stream:
            return stream.read(5) == RTF_MAGIC
    except OSError:
        return False


def read_rtf(path: Path, accept_changes: bool = True) -> ImportedDocument:
    """``path``'s text as Markdown, its tracked changes accepted (else as before them); ``UnreadableDocument`` (a
    ``FileError``) with the reason where it is not RTF."""
    try:
        if path.stat().st_size > MAX_PART_BYTES:
            raise UnreadableDocument("it is larger than any text RTF holds (over 256 MB)")
        data = path.read_bytes()
    except OSError as error:
        raise FileError(str(error.strerror or error)) from error
    if not data.lstrip().startswith(RTF_MAGIC):
        raise UnreadableDocument("it is not RTF (an RTF file starts with {\\rtf)")
    # latin-1 keeps each byte one character: the code page decodes \'hh and stray 8-bit bytes (_text).
    return RtfReader(data.decode("latin-1"), accept_changes).document()


# Destinations read (from a {\*\…} group too); any other {\*\…} group is skipped whole, as RTF asks.
READ_DESTINATIONS = frozenset({"annotation", "atnauthor", "fldinst", "fldrslt", "footnote", "listtext", "pntext",
                               "revtbl"})
# Where each destination's words go: the document's (body), a footnote's or comment's, or a side list.
SIDE_SINKS = frozenset({"listtext", "atnauthor", "fldinst"})


@dataclass
class State:
    """What a group holds: its run formats, and where its words go."""

    bold: bool = False
    italic: bool = False
    strike: bool = False
    code: bool = False  # a fixed-pitch font's run
    hidden: bool = False
    inserted: bool = False
    deleted: bool = False
    skip: bool = False  # a destination whose text is not the document's
    starred: bool = False  # {\* …}: skipped unless its destination is one the reader knows
    sink: str = "body"  # body, footnote, annotation, listtext, atnauthor, fldinst, stylesheet, fonttbl, revtbl
    author: int = 0  # \revauthN (\revauthdelN): the tracked change's author in the revision table
    uc: int = 1  # characters of fallback after each \uN
    fields: int = 0  # how many fields are open around the group

    def format(self) -> Format:
        return (self.bold, self.italic, self.strike, self.code)


@dataclass
class Paragraph:
    """The paragraph being read: its pieces and what \\pard resets."""

    pieces: list[tuple[str, Format]]
    style: int = 0
    level: int = 0  # \ilvl: a list item's depth
    outline: int = 0  # \outlinelevel + 1
    in_table: bool = False
    marker: str = ""  # the list item's number or bullet, as the file shows it
    list_id: str = ""


class RtfReader:
    def __init__(self, source: str, accept_changes: bool = True) -> None:
        self.source = source
        self.accept_changes = accept_changes
        self.codec = "cp1252"
        self.counts: Counter[str] = Counter()
        self.styles: dict[int, str] = {}  # \sN → its name, lower case
        self.style_outline: dict[int, int] = {}
        self.modern_fonts: set[int] = set()
        self.authors: list[str] = []  # the revision table: who made each tracked change, by \revauthN
        self.entry: tuple[int, str] = (0, "")  # the style (or font) being defined: its number, its name so far
        self.blocks: list[Block] = []
        self.notes_text: list[str] = []  # footnotes' words, in order of reference
        self.paragraph = Paragraph([])
        self.side: dict[str, list[tuple[str, Format]]] = {}  # a footnote's, a comment's, a marker's words
        self.fields: list[tuple[str, int, str]] = []  # each open field's sink, where its result starts, its link
        self.rows: list[list[str]] = []  # the table being read
        self.cells: list[str] = []
        self._author_so_far = ""  # the revision table's name being read, up to its ";"
        self.changes = RevisionLog(self.counts)  # the tracked changes in order, each with its author and words

    # -- reading ------------------------------------------------------------------------------------

    def document(self) -> ImportedDocument:
        stack: list[State] = []
        state = State()
        fallback = 0  # characters still to skip after a \uN
        source, position = self.source, 0
        while position < len(source):
            match = TOKEN.match(source, position)
            if match is None:
                break  # cannot happen: a lone backslash matches the pattern's last branch
            position = match.end()
            word, parameter, hexed, symbol, brace, text = match.groups()
            if word == "bin" and parameter is not None:  # raw bytes (a picture's): braces in them are not groups
                position += max(0, int(parameter))
                continue
            if brace == "{":
                stack.append(state)
                state = replace(state, starred=False)
                if state.sink == "stylesheet":
                    self.entry = (0, "")  # a style's entry: Normal's number until it names its own
                if len(stack) > 1000:
                    raise UnreadableDocument("its groups are nested too deeply to read; the file looks damaged")
            elif brace == "}":
                if not stack:
                    break  # the document's own group has closed: anything after it is not RTF's
                self._close(state, stack[-1])
                state, fallback = stack.pop(), 0
            elif word is not None:
                value = int(parameter) if parameter is not None else None
                if word == "u" and value is not None:
                    self._text(state, chr(value % 65536))
                    fallback = state.uc
                else:
                    fallback = 0
                    self._control(word, value, state)
            elif hexed is not None:
                if fallback:
                    fallback -= 1
                else:
                    self._text(state, bytes([int(hexed, 16)]).decode(self.codec, errors="replace"))
            elif symbol is not None:
                fallback = 0
                if symbol == "*":
                    state.starred = True
                elif symbol in ("\n", "\r"):
                    self._control("par", None, state)  # a backslash before a line break: TextEdit's paragraphs
                elif symbol in SYMBOLS:
                    self._text(state, SYMBOLS[symbol])
            elif text is not None:
                dropped = min(fallback, len(text))
                text, fallback = text[dropped:], fallback - dropped
                if text:
                    self._text(state, text.encode("latin-1").decode(self.codec, errors="replace"))
        self._end_paragraph()
        self._end_table()
        text = join_blocks(self.blocks)
        if self.notes_text:
            text += "\n\n" + "\n".join(f"[^{n}]: {words}" for n, words in enumerate(self.notes_text, start=1))
        text = joined_pairs(text)
        changes = self.counts["insertion"] + self.counts["deletion"]
        notes = import_notes(self.counts, ("picture",), self.accept_changes)
        return ImportedDocument(text.strip("\n") + "\n" if text.strip() else "", notes, changes,
                                tuple(self.changes.revisions))  # fmt: skip

    def _control(self, word: str, value: int | None, state: State) -> None:
        on = value != 0
        if state.starred:
            state.starred = False
            if word not in READ_DESTINATIONS:
                if word == "shppict" and not state.skip:  # Word's picture (its \nonshppict twin is skipped)
                    self.counts["picture"] += 1
                state.skip = True
                return
        if state.skip:
            return
        if word in SKIPPED or word == "shppict":
            if word in ("pict", "shppict"):
                self.counts["picture"] += 1
            state.skip = True
        elif state.sink in ("stylesheet", "fonttbl"):
            self._table_entry(word, value, state)
        elif word in ("stylesheet", "fonttbl", "revtbl"):
            state.sink = word
        elif word == "ansicpg" and value:
            with contextlib.suppress(LookupError):  # an unknown code page: Windows' Western one, as most files are
                self.codec = codecs.lookup(f"cp{value}").name
        elif word == "uc" and value is not None:
            state.uc = max(0, min(value, 10))
        elif word in ("listtext", "pntext", "atnauthor", "fldinst", "footnote", "annotation"):
            state.sink = "listtext" if word == "pntext" else word
            self.side[state.sink] = []
        elif word == "field":
            self.fields.append((state.sink, len(self._words(state.sink)), ""))
            state.fields = len(self.fields)
        elif word in ("revauth", "revauthdel") and value is not None:
            state.author = value
        elif word in ("plain", "b", "i", "strike", "striked", "v", "f", "revised", "deleted"):
            self._run_format(word, value, on, state)
        elif state.sink == "body" and word in ("par", "sect", "page", "pard", "s", "ilvl", "ls", "outlinelevel",
                                               "intbl", "cell", "nestcell", "row"):  # fmt: skip
            self._paragraph_control(word, value)
        elif state.sink in ("footnote", "annotation") and word in ("par", "sect", "page"):
            self._text(state, " ")  # one line: a footnote's or a note's paragraphs run on
        elif word in ("line", "softline"):
            self._text(state, "\u2028")  # a line break: Markdown's backslash at the line's end (_end_paragraph)
        elif word in NAMED:
            self._text(state, NAMED[word])

    def _table_entry(self, word: str, value: int | None, state: State) -> None:
        """A control word inside the stylesheet or the font table: the entry's number and what it says."""
        number, name = self.entry
        if word == ("s" if state.sink == "stylesheet" else "f") and value is not None:
            self.entry = (value, name)
        elif word in ("cs", "ds", "ts", "tsrowd"):
            self.entry = (-1, name)  # a character, section or table style: never a paragraph's
        elif word == "outlinelevel" and value is not None and state.sink == "stylesheet":
            self.style_outline[number] = value + 1
        elif word == "fmodern" and state.sink == "fonttbl":
            self.modern_fonts.add(number)

    def _run_format(self, word: str, value: int | None, on: bool, state: State) -> None:
        if word == "plain":
            state.bold = state.italic = state.strike = state.code = state.hidden = False
        elif word == "b":
            state.bold = on
        elif word == "i":
            state.italic = on
        elif word in ("strike", "striked"):
            state.strike = on
        elif word == "v":
            state.hidden = on
        elif word == "f" and value is not None:
            state.code = value in self.modern_fonts
        elif word == "revised":
            state.inserted = on
        elif word == "deleted":
            state.deleted = on

    def _paragraph_control(self, word: str, value: int | None) -> None:
        paragraph = self.paragraph
        if word in ("par", "sect", "page"):
            self._end_paragraph()
        elif word == "pard":
            self.paragraph = Paragraph(paragraph.pieces)
        elif word == "s" and value is not None:
            paragraph.style = value
        elif word == "ilvl" and value is not None:
            paragraph.level = max(0, min(value, 8))
        elif word == "ls" and value is not None:
            paragraph.list_id = str(value)
        elif word == "outlinelevel" and value is not None:
            paragraph.outline = value + 1
        elif word == "intbl":
            paragraph.in_table = True
        elif word in ("cell", "nestcell"):
            self._end_cell()
        elif word == "row":
            self._end_cell(row=True)

    def _words(self, sink: str) -> list[tuple[str, Format]]:
        """Where a sink's words go: a footnote's or a comment's, a side list's, or the paragraph's."""
        return self.paragraph.pieces if sink == "body" else self.side.setdefault(sink, [])

    def _text(self, state: State, text: str) -> None:
        if state.skip:
            return
        if state.sink in ("stylesheet", "fonttbl"):
            self._entry_name(text, state.sink)
            return
        if state.sink == "revtbl":  # {Unknown;}{Maya;}: each entry an author, numbered from 0
            names = (self._author_so_far + text).split(";")
            self.authors.extend(names[:-1])
            self._author_so_far = names[-1]
            return
        if state.sink in SIDE_SINKS:
            self.side[state.sink].append((text, PLAIN))
            return
        if state.hidden:
            return
        if state.inserted or state.deleted:
            author = self.authors[state.author].strip() if 0 < state.author < len(self.authors) else ""  # 0: Unknown
            self.changes.add(state.inserted, author, text)
        else:
            self.changes.gap()
        if (state.inserted and not self.accept_changes) or (state.deleted and self.accept_changes):
            return
        code = state.code or self.styles.get(self.paragraph.style, "") in CODE_STYLE_NAMES
        self._words(state.sink).append((text if code else escape_inline(text), state.format()))

    def _entry_name(self, text: str, sink: str) -> None:
        """A style's name, up to the ";" that ends its entry (a font's name says nothing the reader uses)."""
        number, name = self.entry
        for part in re.split("(;)", text):
            if part == ";":
                if sink == "stylesheet" and number >= 0 and name.strip():
                    self.styles[number] = " ".join(name.split()).lower()
                number, name = 0, ""
            else:
                name += part
        self.entry = (number, name)

    def _close(self, state: State, parent: State) -> None:
        """A group ends: a list marker, a footnote, a comment, a field's instruction or a field is complete."""
        if state.sink != parent.sink and not state.skip:
            if state.sink == "listtext":
                self.paragraph.marker = "".join(text for text, _style in self.side.pop("listtext", [])).strip()
            elif state.sink == "footnote":
                self.notes_text.append(one_line(self.side.pop("footnote", [])))
                self._words(parent.sink).append((f"[^{len(self.notes_text)}]", PLAIN))
            elif state.sink == "annotation":
                author = "".join(text for text, _style in self.side.pop("atnauthor", [])).strip()
                words = one_line(self.side.pop("annotation", []))
                if words:
                    self.counts["comment kept"] += 1
                    self._words(parent.sink).append((f"<!-- {comment_note(author, words)} -->", PLAIN))
            elif state.sink == "fldinst" and self.fields:
                instruction = "".join(text for text, _style in self.side.pop("fldinst", []))
                sink, start, _link = self.fields[-1]
                self.fields[-1] = (sink, start, field_link(instruction))
        if state.fields > parent.fields and len(self.fields) == state.fields:  # the field's own group
            sink, start, link = self.fields.pop()
            pieces = self._words(sink)
            if link and start <= len(pieces):
                pieces[start:] = linked(pieces[start:], link)

    # -- blocks ---------------------------------------------------------------------------------------

    def _end_paragraph(self) -> None:
        paragraph = self.paragraph
        if paragraph.in_table:  # a cell's paragraphs run on until its \cell
            if paragraph.pieces:
                paragraph.pieces.append((" ", PLAIN))
            return
        self.paragraph = Paragraph([], paragraph.style, paragraph.level, paragraph.outline, False, "",
                                   paragraph.list_id)  # fmt: skip
        self._end_table()
        name = self.styles.get(paragraph.style, "")
        if name in CODE_STYLE_NAMES:
            code = "".join(piece for piece, _style in paragraph.pieces).replace("\u2028", "\n")
            if code.strip():
                self.blocks.append(Block("code", code))
            return
        text = tidy(emphasised(paragraph.pieces).replace("\u2028", "\\\n"))
        if not text:
            return
        heading = re.fullmatch(r"heading (\d)", name)
        level = int(heading[1]) if heading else 1 if name == "title" else paragraph.outline
        level = level or self.style_outline.get(paragraph.style, 0)
        if 0 < level < 10:  # a heading is bold by its style; bold in it says nothing more
            plain = emphasised([(piece, (False, *style[1:])) for piece, style in paragraph.pieces])
            plain = " ".join(plain.replace("\u2028", " ").split())
            self.blocks.append(Block("title" if name == "title" else "heading", f"{'#' * min(level, 6)} {plain}"))
        elif paragraph.marker:
            self.blocks.append(self._item(paragraph, text))
        elif name in QUOTE_STYLE_NAMES:
            self.blocks.append(Block("quote", "> " + escape_block_start(text)))
        else:
            self.blocks.append(paragraph_block(text, name))

    @staticmethod
    def _item(paragraph: Paragraph, text: str) -> Block:
        """A list item, numbered as the file shows it ("3." or "(3)"), else a bullet."""
        numbered = NUMBERED.match(paragraph.marker)
        marker = f"{int(numbered[1])}." if numbered else "-"
        return Block("item", text, depth=paragraph.level, marker=marker, list_id=paragraph.list_id or "rtf")

    def _end_cell(self, row: bool = False) -> None:
        pieces = self.paragraph.pieces
        if not row or tidy(emphasised(pieces)):
            self.cells.append(" ".join(emphasised(pieces).replace("\u2028", " ").split()).replace("|", "\\|"))
            self.paragraph.pieces = []
        if row:
            self.rows.append(self.cells)
            self.cells = []

    def _end_table(self) -> None:
        if self.rows:
            self.blocks.append(Block("table", pipe_table(self.rows)))
            self.rows = []
