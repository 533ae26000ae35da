"""The structures of a Word 97–2003 binary document ([MS-DOC]) that its words need: the File Information Block,
the piece table (which bytes hold which characters), the formatted-disk-page runs of character and paragraph
properties and the property modifiers (sprms) in them, styles, lists, the revision authors' table and the
position tables (PLCs) of notes and comments. Every offset is checked against its stream: a damaged file is
refused in words (``UnreadableDocument``), never read past its end. Nothing here needs Qt."""

from __future__ import annotations

import bisect
import struct
import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass

from app.documents.markdown_blocks import UnreadableDocument

WORD_MAGIC = 0xA5EC
PAGE = 512  # a formatted disk page: one in the WordDocument stream per PnFkp
# FibRgFcLcb97's pairs (fc, lcb) by index: where each structure is in the table stream, and its size.
STSHF, PLCFFNDREF, PLCFFNDTXT, PLCFANDREF, PLCFANDTXT = 1, 2, 3, 4, 5
PLCFBTECHPX, PLCFBTEPAPX, CLX, GRPXSTATNOWNERS = 12, 13, 33, 36
PLCFENDREF, PLCFENDTXT, STTBFRMARK, PLFLST, PLFLFO = 46, 47, 51, 73, 74
# Character sprms: toggles, and the tracked change's marks with their author (an index into SttbfRMark).
BOLD, ITALIC, STRIKE, DOUBLE_STRIKE, HIDDEN, SPECIAL_CHARACTER = 0x0835, 0x0836, 0x0837, 0x2A53, 0x083C, 0x0855
DELETED, INSERTED, AUTHOR_INSERTED, AUTHOR_DELETED, CHARACTER_STYLE_OF = 0x0800, 0x0801, 0x4804, 0x4863, 0x4A30
# Paragraph sprms.
LIST_ENTRY, LIST_LEVEL, OUTLINE_LEVEL, IN_TABLE, ROW_END, INNER_ROW_END = 0x460B, 0x260A, 0x2640, 0x2416, 0x2417, 0x244C
OPERAND_SIZE = {0: 1, 1: 1, 2: 2, 3: 4, 4: 2, 5: 2, 7: 3}  # by a sprm's spra; 6 is sized by its first byte(s)
PARAGRAPH_STYLE, CHARACTER_STYLE = 1, 2  # a style's kind (stk); 3 is a table's, 4 a numbering's
BULLET, NO_NUMBER = 0x17, 0xFF  # a list level's number format (nfc): a bullet; nothing shown


def damaged(what: str) -> UnreadableDocument:
    return UnreadableDocument(f"the document is damaged ({what})")


def u16(data: bytes, offset: int) -> int:
    if offset < 0 or offset + 2 > len(data):
        raise damaged("a structure runs past its stream's end")
    return int(struct.unpack_from("<H", data, offset)[0])


def u32(data: bytes, offset: int) -> int:
    if offset < 0 or offset + 4 > len(data):
        raise damaged("a structure runs past its stream's end")
    return int(struct.unpack_from("<I", data, offset)[0])


@dataclass(frozen=True)
class Fib:
    """The File Information Block's facts the reader uses."""

    table_name: str  # "0Table" or "1Table"
    text_lengths: tuple[int, ...]  # ccpText, ccpFtn, ccpHdd, ccpMcr, ccpAtn, ccpEdn: each story's characters
    pairs: tuple[tuple[int, int], ...]  # FibRgFcLcb: (fc, lcb) of each structure in the table stream

    def pair(self, index: int) -> tuple[int, int]:
        return self.pairs[index] if index < len(self.pairs) else (0, 0)

    def story_start(self, story: int) -> int:
        """The first character position of story ``story`` (0 main text, 1 footnotes, 4 comments, 5 endnotes)."""
        return sum(self.text_lengths[:story])


def read_fib(word: bytes) -> Fib:
    if len(word) < 154 or u16(word, 0) != WORD_MAGIC:
        raise UnreadableDocument("it is not a Word 97–2003 document (its WordDocument stream does not say so)")
    version, flags = u16(word, 2), u16(word, 0x0A)
    if version < 190:  # Word 6 is 101, Word 95 104, Word 97 and after 193 and on
        raise UnreadableDocument("it is a Word 6 or Word 95 document, which Redraft does not read; in Word or "
                                 "LibreOffice, save it as a Word Document (.docx), then open that")  # fmt: skip
    if flags & 0x0100 or flags & 0x8000:  # fEncrypted, fObfuscated
        raise UnreadableDocument("it is protected with a password; in Word, save it as a Word Document (.docx) "
                                 "without a password, then open that")  # fmt: skip
    fib_w = u16(word, 32)  # csw: how many 16-bit values follow
    at = 34 + 2 * fib_w
    long_count = u16(word, at)  # cslw
    longs = at + 2
    lengths = tuple(u32(word, longs + 4 * index) for index in (3, 4, 5, 6, 7, 8)) if long_count >= 9 else ()
    at = longs + 4 * long_count
    pair_count = u16(word, at)  # cbRgFcLcb: how many pairs follow
    pairs = tuple((u32(word, at + 2 + 8 * i), u32(word, at + 6 + 8 * i)) for i in range(min(pair_count, 200)))
    if len(lengths) < 6 or len(pairs) <= CLX:
        raise damaged("its File Information Block is cut short")
    return Fib("1Table" if flags & 0x0200 else "0Table", lengths, pairs)


def part_of(table: bytes, fib: Fib, index: int) -> bytes:
    """Structure ``index``'s bytes in the table stream (empty where the document has none)."""
    fc, lcb = fib.pair(index)
    if lcb == 0:
        return b""
    if fc + lcb > len(table):
        raise damaged("a table points past its stream's end")
    return table[fc : fc + lcb]


def plc(data: bytes, item_size: int) -> tuple[list[int], list[bytes]]:
    """A position table: n + 1 character positions (or file offsets), and n items of ``item_size`` bytes."""
    if not data:
        return [], []
    count = (len(data) - 4) // (4 + item_size)
    positions = list(struct.unpack_from(f"<{count + 1}I", data)) if len(data) >= 4 * (count + 1) else []
    start = 4 * (count + 1)
    return positions, [data[start + i * item_size : start + (i + 1) * item_size] for i in range(count)]


@dataclass(frozen=True)
class Piece:
    """Characters [start, end) of the document, at ``fc`` in the WordDocument stream, one byte each (cp1252) where
    ``compressed``, else two (UTF-16)."""

    start: int
    end: int
    fc: int
    compressed: bool

    def fc_of(self, cp: int) -> int:
        return self.fc + (cp - self.start) * (1 if self.compressed else 2)


def read_pieces(table: bytes, fib: Fib) -> list[Piece]:
    """The piece table (the Clx's Pcdt), after the property modifiers (Prc) that may precede it."""
    clx = part_of(table, fib, CLX)
    at = 0
    while at < len(clx) and clx[at] == 1:  # Prc: clxt 1, a 16-bit size, its grpprl
        at += 3 + u16(clx, at + 1)
    if at >= len(clx) or clx[at] != 2:
        raise damaged("it has no piece table")
    positions, items = plc(clx[at + 5 : at + 5 + u32(clx, at + 1)], 8)
    pieces = []
    for (start, end), item in zip(zip(positions, positions[1:], strict=False), items, strict=False):
        raw = u32(item, 2)
        compressed = bool(raw & 0x40000000)
        fc = (raw & 0x3FFFFFFF) // 2 if compressed else raw & 0x3FFFFFFF
        if end < start:
            raise damaged("its piece table runs backwards")
        pieces.append(Piece(start, end, fc, compressed))
    return pieces


def piece_text(word: bytes, piece: Piece) -> str:
    size = (piece.end - piece.start) * (1 if piece.compressed else 2)
    if piece.fc + size > len(word):
        raise damaged("its text runs past the stream's end")
    data = word[piece.fc : piece.fc + size]
    if piece.compressed:
        return data.decode("cp1252", errors="replace")
    # One character per 16-bit unit, surrogates apart, so that positions stay the file's (joined_pairs joins them).
    units = array("H", data)
    if sys.byteorder == "big":
        units.byteswap()
    return "".join(map(chr, units))



def sprms(grpprl: bytes) -> Iterator[tuple[int, bytes]]:
    """Each property modifier of a grpprl: its opcode and operand."""
    at = 0
    while at + 2 <= len(grpprl):
        opcode = u16(grpprl, at)
        at += 2
        spra = opcode >> 13
        if spra != 6:
            size = OPERAND_SIZE[spra]
        elif opcode == 0xD608 and at + 2 <= len(grpprl):  # sprmTDefTable: a 16-bit size, one more than it says
            size = u16(grpprl, at) + 1
        elif at < len(grpprl):
            size = grpprl[at] + 1
        else:
            return
        yield opcode, grpprl[at : at + size]
        at += size


def fkp_runs(word: bytes, table: bytes, fib: Fib, paragraphs: bool) -> tuple[list[int], list[bytes]]:
    """The character (or paragraph) property runs: their file offsets (each run starts at one and ends at the
    next) and each run's grpprl (a paragraph's led by its style's istd). Runs no page gives have no properties."""
    _offsets, pages = plc(part_of(table, fib, PLCFBTEPAPX if paragraphs else PLCFBTECHPX), 4)
    starts: list[int] = []
    grpprls: list[bytes] = []
    for item in pages:
        number = u32(item, 0) & 0x3FFFFF
        page = word[number * PAGE : (number + 1) * PAGE]
        if len(page) < PAGE:
            raise damaged("a formatting page is missing")
        count = page[PAGE - 1]
        if 4 * (count + 1) + (13 if paragraphs else 1) * count >= PAGE:
            raise damaged("a formatting page holds more runs than fit in it")
        bounds = struct.unpack_from(f"<{count + 1}I", page)
        for index in range(count):
            # Where the run's properties are in the page, in 16-bit words (0: none): a byte per run, or a
            # paragraph's byte and its 12-byte height cache.
            at = 2 * page[4 * (count + 1) + (13 if paragraphs else 1) * index]
            if not at:
                grpprl = b""
            elif paragraphs:  # a size in words (0: the next byte says, in words too), then istd and grpprl
                size, begin = (2 * page[at] - 1, at + 1) if page[at] else (2 * page[at + 1], at + 2)
                grpprl = page[begin : begin + size]
            else:
                grpprl = page[at + 1 : at + 1 + page[at]]
            starts.append(bounds[index])
            grpprls.append(grpprl)
        starts.append(bounds[count])
        grpprls.append(b"")  # past the page's last run: nothing, until the next page's first
    order = sorted(range(len(starts)), key=lambda index: starts[index])  # pages come in file order; be sure
    return [starts[index] for index in order], [grpprls[index] for index in order]


def run_at(starts: list[int], grpprls: list[bytes], fc: int) -> bytes:
    index = bisect.bisect_right(starts, fc) - 1
    return grpprls[index] if index >= 0 else b""


def sttb(data: bytes) -> list[str]:
    """A string table's strings (extended: UTF-16, each with its 16-bit length)."""
    if len(data) < 6 or u16(data, 0) != 0xFFFF:
        return []
    count, extra = u16(data, 2), u16(data, 4)
    strings, at = [], 6
    for _ in range(count):
        length = u16(data, at)
        strings.append(data[at + 2 : at + 2 + 2 * length].decode("utf-16-le", "replace"))
        at += 2 + 2 * length + extra
    return strings


def xst_list(data: bytes) -> list[str]:
    """Strings one after another, each with its 16-bit length (the comment authors' GrpXstAtnOwners)."""
    strings, at = [], 0
    while at + 2 <= len(data):
        length = u16(data, at)
        strings.append(data[at + 2 : at + 2 + 2 * length].decode("utf-16-le", "replace"))
        at += 2 + 2 * length
    return strings


@dataclass(frozen=True)
class Style:
    name: str  # lower case
    sti: int  # the built-in style's number, whatever the language of its name: 1–9 headings, 62 Title
    base: int = 0x0FFF  # the style it is based on (0x0FFF none)
    character: bytes = b""  # a character style's own run properties (its grpprl)
    paragraph: bytes = b""  # a paragraph style's own paragraph properties (its grpprl): a list, an outline level


def read_styles(table: bytes, fib: Fib) -> list[Style]:
    """The style sheet's styles by istd (an empty slot's name is "")."""
    data = part_of(table, fib, STSHF)
    if len(data) < 6:
        return []
    header = u16(data, 0)
    count, base_size = u16(data, 2), u16(data, 4)
    styles, at = [], 2 + header
    for _ in range(count):
        size = u16(data, at)
        entry = data[at + 2 : at + 2 + size]
        at += 2 + size
        if size < base_size + 2:
            styles.append(Style("", 0x0FFE))
            continue
        length = u16(entry, base_size)
        name = entry[base_size + 2 : base_size + 2 + 2 * length].decode("utf-16-le", "replace")
        kind, base = u16(entry, 2) & 0x000F, u16(entry, 2) >> 4
        # Its property exceptions (UPXs) follow the name, each at an even offset: a character style's run
        # properties; a paragraph style's paragraph properties (led by its istd), then its run properties.
        upx = base_size + 4 + 2 * length
        upx += upx % 2
        first = entry[upx + 2 : upx + 2 + u16(entry, upx)] if upx + 2 <= len(entry) else b""
        character = first if kind == CHARACTER_STYLE else b""
        paragraph = first[2:] if kind == PARAGRAPH_STYLE else b""
        styles.append(Style(name.lower(), u16(entry, 0) & 0x0FFF, base, character, paragraph))
    return styles


@dataclass(frozen=True)
class ListLevel:
    bullet: bool
    start: int


def read_lists(table: bytes, fib: Fib) -> list[list[ListLevel]]:
    """Each list override's (LFO's, 1-based by the paragraph's ilfo) levels: a bullet or numbered, and where
    its numbers start."""
    data = part_of(table, fib, PLFLST)
    levels_of: dict[int, list[ListLevel]] = {}
    if len(data) >= 2:
        count = u16(data, 0)
        fc, _lcb = fib.pair(PLFLST)
        at = fc + 2 + 28 * count  # the levels follow the list table, list by list
        for index in range(count):
            lsid = u32(data, 2 + 28 * index)
            simple = data[2 + 28 * index + 26] & 1 if 2 + 28 * index + 26 < len(data) else 1
            levels: list[ListLevel] = []
            for _ in range(1 if simple else 9):
                if at + 28 > len(table):
                    raise damaged("its list table is cut short")
                start, nfc, chpx, papx = u32(table, at), table[at + 4], table[at + 24], table[at + 25]
                at += 28 + papx + chpx
                at += 2 + 2 * u16(table, at)  # the number's text
                levels.append(ListLevel(nfc in (BULLET, NO_NUMBER), start))
            levels_of[lsid] = levels
    overrides = part_of(table, fib, PLFLFO)
    found = []
    if len(overrides) >= 4:
        for index in range(min(u32(overrides, 0), (len(overrides) - 4) // 16)):
            found.append(levels_of.get(u32(overrides, 4 + 16 * index), []))
    return found
