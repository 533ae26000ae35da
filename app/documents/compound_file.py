"""The streams of an OLE compound file ([MS-CFB]): the container of Word 97–2003's .doc (and of a password-
protected .docx). Read from bytes with the standard library, every sector chain checked, so a damaged or hostile
file is refused in words, never looped on or read past its end. Nothing here needs Qt."""

from __future__ import annotations

import struct

from app.documents.markdown_blocks import MAX_PART_BYTES, OLE_MAGIC, UnreadableDocument

FREE, END_OF_CHAIN = 0xFFFFFFFF, 0xFFFFFFFE  # a sector not in use; the end of a chain
SPECIAL = 0xFFFFFFFA  # and above: no sector (FAT and DIFAT sectors, free, end of chain)
STREAM, ROOT = 2, 5  # directory entries' object types
DAMAGED = "the file is damaged (its compound file structure does not hold together)"


class CompoundFile:
    """A compound file's streams by name (the root storage's and every storage's, by their own names)."""

    def __init__(self, data: bytes) -> None:
        if len(data) < 512 or data[:8] != OLE_MAGIC:
            raise UnreadableDocument("it is not an OLE compound file (a Word 97–2003 .doc is one)")
        self.data = data
        sector_shift, mini_shift = struct.unpack_from("<HH", data, 0x1E)
        if sector_shift not in (9, 12) or mini_shift != 6:
            raise UnreadableDocument(DAMAGED)
        self.sector_size = 1 << sector_shift
        fat_sectors, first_directory = struct.unpack_from("<II", data, 0x2C)
        self.mini_cutoff, first_mini_fat, mini_fat_sectors, first_difat, difat_sectors = struct.unpack_from(
            "<IIIII", data, 0x38
        )
        self.fat = self._fat(fat_sectors, first_difat, difat_sectors)
        directory = self._chain_bytes(first_directory)
        self.entries = [directory[offset : offset + 128] for offset in range(0, len(directory) - 127, 128)]
        if not self.entries or self.entries[0][0x42] != ROOT:
            raise UnreadableDocument(DAMAGED)
        root = self.entries[0]
        root_start, root_size = struct.unpack_from("<IQ", root, 0x74)
        self.mini_stream = self._chain_bytes(root_start)[:root_size] if root_start < SPECIAL else b""
        self.mini_fat = _words(self._chain_bytes(first_mini_fat)) if mini_fat_sectors else []

    def names(self) -> set[str]:
        return {_name(entry) for entry in self.entries if entry[0x42] == STREAM}

    def stream(self, name: str) -> bytes | None:
        """The stream called ``name`` (the first, where storages repeat one), or None where the file has none."""
        for entry in self.entries:
            if entry[0x42] == STREAM and _name(entry) == name:
                start, size = struct.unpack_from("<IQ", entry, 0x74)
                if self.sector_size == 512:
                    size &= 0xFFFFFFFF  # version 3 files leave the high half undefined
                if size > MAX_PART_BYTES:
                    raise UnreadableDocument(f"its stream {name} is too large to open")
                if size < self.mini_cutoff:
                    data = self._chain_bytes(start, self.mini_fat, self.mini_stream, 64)
                else:
                    data = self._chain_bytes(start)
                if len(data) < size:
                    raise UnreadableDocument(f"the file is damaged (its stream {name} is cut short)")
                return data[:size]
        return None

    # -- sectors ---------------------------------------------------------------------------------------

    def _sector(self, number: int) -> bytes:
        start = (number + 1) * self.sector_size  # the header fills sector -1
        if number >= SPECIAL or start >= len(self.data):
            raise UnreadableDocument(DAMAGED)
        return self.data[start : start + self.sector_size]

    def _fat(self, count: int, first_difat: int, difat_count: int) -> list[int]:
        """The file allocation table: where each sector's chain goes next."""
        where = list(struct.unpack_from("<109I", self.data, 0x4C))
        seen: set[int] = set()
        sector = first_difat
        while sector < SPECIAL and len(seen) < difat_count:
            if sector in seen:
                raise UnreadableDocument(DAMAGED)
            seen.add(sector)
            entries = _words(self._sector(sector))
            where.extend(entries[:-1])
            sector = entries[-1]
        where = [number for number in where if number < SPECIAL][:count]
        if len(where) * self.sector_size > len(self.data) + self.sector_size:
            raise UnreadableDocument(DAMAGED)
        return _words(b"".join(self._sector(number) for number in where))

    def _chain_bytes(self, first: int, table: list[int] | None = None, source: bytes | None = None,
                     size: int = 0) -> bytes:  # fmt: skip
        """The bytes of the chain from ``first``: in the file's sectors, or (given ``table``, ``source`` and
        ``size``) in the mini stream's. A chain that loops or leaves the table is damage."""
        table = self.fat if table is None else table
        pieces: list[bytes] = []
        seen: set[int] = set()
        sector = first
        while sector < SPECIAL:
            if sector in seen or sector >= len(table):
                raise UnreadableDocument(DAMAGED)
            seen.add(sector)
            if source is None:
                pieces.append(self._sector(sector))
            else:
                pieces.append(source[sector * size : (sector + 1) * size])
            sector = table[sector]
        return b"".join(pieces)


def _words(data: bytes) -> list[int]:
    return list(struct.unpack_from(f"<{len(data) // 4}I", data))


def _name(entry: bytes) -> str:
    length = min(64, struct.unpack_from("<H", entry, 0x40)[0])
    return entry[: max(0, length - 2)].decode("utf-16-le", errors="replace")
