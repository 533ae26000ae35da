"""Reading and writing documents without damaging them.

Open refuses binary files, decodes UTF-8 (with or without a BOM) and UTF-16 (by its BOM, or by where
its zero bytes fall) and otherwise asks for an explicit encoding instead of guessing; Save writes the
same encoding, BOM and line endings back, atomically (a temporary file in the same folder, flushed, a
rename, the folder flushed), so a crash never leaves half a file. What a save would not keep byte for
byte (mixed line endings, characters the editor shows as line breaks, bytes the encoding cannot give
back) is named on open, in ``TextDocument.notes``, so the writer hears it once and before saving.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import re
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path

SNIFF_BYTES = 8192
# Offered when a file is not UTF-8; the writer picks one explicitly.
FALLBACK_ENCODINGS = (
    "cp1252",
    "latin-1",
    "utf-16",
    "gb18030",
    "big5",
    "shift_jis",
    "euc-kr",
    "koi8-r",
    "mac-roman",
)
# Longest first: the UTF-32 LE BOM starts with the UTF-16 LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_BOM_FOR = {encoding: bom for bom, encoding in _BOMS}
_TEXT_CONTROL_BYTES = {8, 9, 10, 12, 13, 27}
# The editor (Qt's text document) turns these into line breaks: U+2029 and U+FDD0/U+FDD1 are its own
# block and frame markers, U+2028 is what Shift+Enter types.
EDITOR_LINE_BREAKS = {"\u2028": "U+2028", "\u2029": "U+2029", "\ufdd0": "U+FDD0", "\ufdd1": "U+FDD1"}
_NEWLINE_NAMES = {"\r\n": "Windows (CRLF)", "\n": "Unix (LF)", "\r": "old Mac (CR)"}


class FileError(Exception):
    """A document could not be read or written; the message is meant for the writer."""


class BinaryFileError(FileError):
    pass


class UnknownEncodingError(FileError):
    """The file is text but not UTF-8: the writer has to choose its encoding."""


@dataclass(frozen=True)
class TextDocument:
    text: str  # with "\n" line endings, whatever the file used
    encoding: str = "utf-8"
    bom: bool = False
    newline: str = "\n"
    # What saving this text back would change, in words (set on open; empty when the save is byte-exact).
    notes: tuple[str, ...] = field(default=(), compare=False)


def looks_binary(data: bytes) -> bool:
    sample = data[:SNIFF_BYTES]
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    control = sum(1 for byte in sample if byte < 32 and byte not in _TEXT_CONTROL_BYTES)
    return control / len(sample) > 0.05


def _detect_newline(text: str) -> str:
    crlf = text.count("\r\n")
    lone_cr = text.count("\r") - crlf
    lone_lf = text.count("\n") - crlf
    if crlf > lone_lf and crlf >= lone_cr:
        return "\r\n"
    if lone_cr > lone_lf:
        return "\r"
    return "\n"


def _utf16_by_zero_bytes(data: bytes) -> str | None:
    """"utf-16-le" or "utf-16-be" when the zero bytes fall in the high half of most characters (text in a
    Latin script without a BOM), else None."""
    sample = data[: SNIFF_BYTES - SNIFF_BYTES % 2]
    if len(data) % 2 or len(sample) < 2:
        return None
    pairs = len(sample) // 2
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if odd >= 0.3 * pairs and even <= 0.02 * pairs:
        return "utf-16-le"
    if even >= 0.3 * pairs and odd <= 0.02 * pairs:
        return "utf-16-be"
    return None


def _plain_text(text: str) -> bool:
    """Decoded text that reads as text: no NUL, few control characters."""
    sample = text[:SNIFF_BYTES]
    control = sum(1 for c in sample if ord(c) < 32 and ord(c) not in _TEXT_CONTROL_BYTES)
    return "\x00" not in sample and control <= 0.05 * max(1, len(sample))


def decode_document(data: bytes, encoding: str | None = None) -> TextDocument:
    """Decode file bytes; ``encoding`` is the writer's explicit choice for a non-UTF-8 file."""
    for bom, bom_encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(bom_encoding)
            except UnicodeDecodeError as error:
                raise FileError(
                    f"the file starts with a {bom_encoding} marker but is not valid {bom_encoding}"
                ) from error
            return _normalized(text, bom_encoding, True, data)
    if encoding is None:
        sniffed = _utf16_by_zero_bytes(data)
        if sniffed is not None:
            try:
                text = data.decode(sniffed)
            except UnicodeDecodeError:
                text = ""
            if text and _plain_text(text):
                return _normalized(text, sniffed, False, data)
        if looks_binary(data):
            raise BinaryFileError(
                "this looks like a binary file, not text; Redraft opens plain text and Markdown"
            )
        try:
            return _normalized(data.decode("utf-8"), "utf-8", False, data)
        except UnicodeDecodeError as error:
            raise UnknownEncodingError(
                f"the file is not UTF-8 (byte {error.start} is invalid); choose the encoding it uses"
            ) from error
    try:
        encoding = _without_bom_handling(encoding, data)
        text = data.decode(encoding)
    except LookupError as error:
        raise FileError(f"unknown encoding {encoding!r}") from error
    except UnicodeDecodeError as error:
        raise FileError(
            f"the file is not valid {encoding} (byte {error.start}); try another encoding"
        ) from error
    return _normalized(text, encoding, False, data)


def _without_bom_handling(encoding: str, data: bytes) -> str:
    """The byte order to use for a file without a BOM, where the codec would guess one or add a BOM on save.

    Python's "utf-16" reads a BOM-less file in the machine's order and writes a BOM; the file's own
    order (from its zero bytes; little-endian, Windows' order, when they do not say) keeps it as it was.
    """
    name = codecs.lookup(encoding).name  # LookupError for an unknown one
    if name == "utf-16":
        return _utf16_by_zero_bytes(data) or "utf-16-le"
    if name == "utf-32":
        return "utf-32-le"
    if name == "utf-8-sig":
        return "utf-8"
    return encoding


def _normalized(raw: str, encoding: str, bom: bool, data: bytes) -> TextDocument:
    newline = _detect_newline(raw)
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    notes = _mixed_newlines(raw, newline) + _editor_line_breaks(text) + _inexact_bytes(raw, encoding, bom, data)
    return TextDocument(text=text, encoding=encoding, bom=bom, newline=newline, notes=notes)


def _mixed_newlines(raw: str, newline: str) -> tuple[str, ...]:
    crlf = raw.count("\r\n")
    counts = {"\r\n": crlf, "\n": raw.count("\n") - crlf, "\r": raw.count("\r") - crlf}
    if sum(1 for count in counts.values() if count) < 2:
        return ()
    found = ", ".join(f"{count} {_NEWLINE_NAMES[kind]}" for kind, count in counts.items() if count)
    return (f"it mixes line endings ({found}); saving writes every one as {_NEWLINE_NAMES[newline]}",)


def _editor_line_breaks(text: str) -> tuple[str, ...]:
    found = {name: text.count(character) for character, name in EDITOR_LINE_BREAKS.items() if character in text}
    if not found:
        return ()
    listed = ", ".join(f"{count} {name}" for name, count in found.items())
    return (f"it holds special line-break characters ({listed}) that the editor shows as line breaks; saving "
            "writes them as ordinary line breaks",)  # fmt: skip


def _inexact_bytes(raw: str, encoding: str, bom: bool, data: bytes) -> tuple[str, ...]:
    """Some encodings (shift_jis, big5...) read several byte sequences as one character and write it back one way."""
    try:
        again = (_BOM_FOR.get(codecs.lookup(encoding).name, b"") if bom else b"") + raw.encode(encoding)
    except UnicodeEncodeError:
        again = b""
    if again == data:
        return ()
    first = next((i for i, (a, b) in enumerate(zip(again, data, strict=False)) if a != b), min(len(again), len(data)))
    return (f"some of its bytes have no exact {encoding} form: saving changes them (the first at byte {first}); "
            "Save As UTF-8 keeps every character",)  # fmt: skip


def read_document(path: Path, encoding: str | None = None) -> TextDocument:
    remove_stale_temporaries(path)  # what a save killed mid-write left beside it
    try:
        data = path.read_bytes()
    except OSError as error:
        raise FileError(f"could not read {path}: {error.strerror or error}") from error
    return decode_document(data, encoding)


def encode_document(document: TextDocument) -> bytes:
    text = document.text.replace("\n", document.newline) if document.newline != "\n" else document.text
    try:
        data = text.encode(document.encoding)
    except UnicodeEncodeError as error:
        character = error.object[error.start : error.end]
        raise FileError(
            f"{character!r} cannot be written in {document.encoding}; use Save As and choose UTF-8"
        ) from error
    if document.bom:
        data = _BOM_FOR.get(codecs.lookup(document.encoding).name, b"") + data
    return data


def _why(error: OSError, target: Path, again: str = "use Save As") -> str:
    """Why a save failed and what the writer can do, in their terms (the file on disk is untouched); ``again``
    is how they choose another place."""
    folder = target.parent
    reasons = {
        errno.ENOSPC: f"the disk holding {folder} is full; free some space, or {again} to put it elsewhere",
        errno.EDQUOT: f"your disk quota on {folder} is used up; free some space, or {again} elsewhere",
        errno.EROFS: f"{folder} is on a read-only disk; {again} to put it on another one",
        errno.EACCES: f"you do not have permission to write in {folder}; {again} to put it in a folder of yours",
        errno.EPERM: f"the system does not allow writing {target.name} in {folder}; {again} to put it elsewhere",
        errno.ENOENT: f"the folder {folder} no longer exists; {again} to choose where the document goes",
        errno.ENOTDIR: f"{folder} is not a folder any more; {again} to choose where the document goes",
    }
    return reasons.get(error.errno or 0, f"{error.strerror or error}; {again} to try another place")


TEMP_SUFFIX = ".redraft-tmp"


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs (on Windows without ``os.kill``, which would end it)."""
    if sys.platform == "win32":
        import ctypes

        still_active, query_limited_information = 259, 0x1000
        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(query_limited_information, False, pid)
        if not handle:
            return False
        code = ctypes.c_ulong()
        try:
            return bool(kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == still_active
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def _temporaries_of(name: str) -> re.Pattern[str]:
    """``.NAME.PID.TAG.redraft-tmp`` for this NAME only: PID is digits and TAG has no dot, so the temporary of
    ``notes.txt`` (``.notes.txt.41.x1y2.redraft-tmp``) never reads as one of ``notes`` with pid "txt"."""
    return re.compile(re.escape(f".{name}.") + r"(\d+)\.[a-z0-9_]+" + re.escape(TEMP_SUFFIX))


def remove_stale_temporaries(target: Path) -> int:
    """Delete the temporary files a save of ``target`` left when its process was killed mid-write.

    Only ``target``'s own (see :func:`_temporaries_of`); those of a process that still runs (a save in
    progress in another window) are kept. Returns how many went.
    """
    pattern = _temporaries_of(target.name)
    removed = 0
    with contextlib.suppress(OSError):
        for temporary in target.parent.iterdir():
            match = pattern.fullmatch(temporary.name)
            if match is None or process_alive(int(match.group(1))):
                continue
            with contextlib.suppress(OSError):
                temporary.unlink()
                removed += 1
    return removed


def _create_temporary(target: Path, mode: int) -> tuple[int, Path]:
    """A new file beside ``target`` named as :func:`_temporaries_of` expects, opened for writing.

    ``mode`` goes through the umask (and the folder's default ACL) as for any new file.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOINHERIT", 0)
    for _attempt in range(100):
        temporary = target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            return os.open(temporary, flags, mode), temporary
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free name for a temporary file", str(target.parent))


def fsync_folder(folder: Path) -> None:
    """Flush ``folder``'s entries, so a rename just made in it survives a power cut (POSIX).

    Windows has no folder handle to flush (NTFS journals the rename itself); some file systems refuse
    to flush a folder (EINVAL), and a folder we may write but not read cannot be opened: both are let be.
    """
    if sys.platform == "win32":
        return
    try:
        handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(handle)


def _may_replace(target: Path) -> bool:
    """Whether we may change ``target`` itself (the rename needs only the folder's permission).

    On a read-only disk, or in a folder we may not write, the answer is left to the save, whose error
    names the disk or the folder.
    """
    if os.access(target, os.W_OK) or not os.access(target.parent, os.W_OK | os.X_OK):
        return True
    if hasattr(os, "statvfs"):
        with contextlib.suppress(OSError):
            return bool(os.statvfs(target.parent).f_flag & os.ST_RDONLY)
    return False


def save_document(path: Path, document: TextDocument) -> None:
    """Write atomically: a temporary file beside the target, flushed to disk, then renamed over it.

    Whatever fails, the file on disk is the complete old text or the complete new one, and no temporary
    file is left; the FileError says why and what to do.
    """
    save_bytes(path, encode_document(document))


def save_bytes(path: Path, data: bytes, again: str = "use Save As") -> None:
    """:func:`save_document`'s atomic write of any ``data`` (an exported PDF); ``again`` is how the writer
    chooses another place, said where this one fails."""
    target = path.resolve() if path.is_symlink() else path
    folder = target.parent
    remove_stale_temporaries(target)
    try:
        existing: int | None = target.stat().st_mode
    except FileNotFoundError:
        existing = None
    except OSError as error:
        raise FileError(f"could not save {target.name}: {_why(error, target, again)}") from error
    if existing is not None:
        # The rename would replace the file without asking (only the folder's permission counts), taking
        # its owner, group and ACLs with it: a read-only mark (also for an administrator) and a file we may
        # not write are honoured here.
        if not existing & 0o222:
            raise FileError(f"{target} is read-only; {again} to save a copy, or make it writable first")
        if not _may_replace(target):
            raise FileError(
                f"you do not have permission to change {target} (it may belong to another user); {again} "
                "to save a copy in a folder of yours"
            )
    try:
        # A new file gets 0666 less the umask like any other; a replacement starts private and takes the
        # old file's mode once written, so its text is never readable by more people than before.
        handle, temporary = _create_temporary(target, 0o666 if existing is None else 0o600)
    except OSError as error:
        raise FileError(f"could not save {target.name}: {_why(error, target, again)}") from error
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if existing is not None:
            os.chmod(temporary, existing & 0o7777)
        os.replace(temporary, target)
        fsync_folder(folder)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if error.errno == errno.ENOENT and folder.is_dir():
            raise FileError(
                f"could not save {target.name}: another program removed Redraft's temporary copy beside it "
                "before it could take the file's place; your text is still here, unsaved: save again"
            ) from error
        raise FileError(f"could not save {target.name}: {_why(error, target, again)}") from error
