"""Reading and writing documents without damaging them.

Open refuses binary files, decodes UTF-8 (with or without a BOM) and otherwise asks for an explicit
encoding instead of guessing; Save writes the same encoding, BOM and line endings back, atomically
(a temporary file in the same folder, then a rename), so a crash never leaves half a file.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import glob
import os
import sys
import tempfile
from dataclasses import dataclass
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
            return _normalized(text, bom_encoding, bom=True)
    if encoding is None:
        if looks_binary(data):
            raise BinaryFileError(
                "this looks like a binary file, not text; Redraft opens plain text and Markdown"
            )
        try:
            return _normalized(data.decode("utf-8"), "utf-8", bom=False)
        except UnicodeDecodeError as error:
            raise UnknownEncodingError(
                f"the file is not UTF-8 (byte {error.start} is invalid); choose the encoding it uses"
            ) from error
    try:
        codecs.lookup(encoding)
        text = data.decode(encoding)
    except LookupError as error:
        raise FileError(f"unknown encoding {encoding!r}") from error
    except UnicodeDecodeError as error:
        raise FileError(
            f"the file is not valid {encoding} (byte {error.start}); try another encoding"
        ) from error
    return _normalized(text, encoding, bom=False)


def _normalized(text: str, encoding: str, bom: bool) -> TextDocument:
    newline = _detect_newline(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return TextDocument(text=text, encoding=encoding, bom=bom, newline=newline)


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


def _why(error: OSError, target: Path) -> str:
    """Why a save failed and what the writer can do, in their terms (the file on disk is untouched)."""
    folder = target.parent
    reasons = {
        errno.ENOSPC: f"the disk holding {folder} is full; free some space, or use Save As to put it elsewhere",
        errno.EDQUOT: f"your disk quota on {folder} is used up; free some space, or use Save As elsewhere",
        errno.EROFS: f"{folder} is on a read-only disk; use Save As to put it on another one",
        errno.EACCES: f"you do not have permission to write in {folder}; use Save As to put it in a folder of yours",
        errno.EPERM: f"the system does not allow writing {target.name} in {folder}; use Save As to put it elsewhere",
        errno.ENOENT: f"the folder {folder} no longer exists; use Save As to choose where the document goes",
        errno.ENOTDIR: f"{folder} is not a folder any more; use Save As to choose where the document goes",
    }
    return reasons.get(error.errno or 0, f"{error.strerror or error}; use Save As to try another place")


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


def remove_stale_temporaries(target: Path) -> int:
    """Delete the temporary files a save of ``target`` left when its process was killed mid-write.

    They are named ``.NAME.PID.*.redraft-tmp``; those of a process that still runs (a save in progress
    in another window) are kept. Returns how many went.
    """
    removed = 0
    with contextlib.suppress(OSError):
        for temporary in target.parent.glob(f".{glob.escape(target.name)}.*{TEMP_SUFFIX}"):
            pid = temporary.name[len(target.name) + 2 :].split(".", 1)[0]
            if pid.isdigit() and process_alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                temporary.unlink()
                removed += 1
    return removed


def save_document(path: Path, document: TextDocument) -> None:
    """Write atomically: a temporary file beside the target, flushed to disk, then renamed over it.

    Whatever fails, the file on disk is the complete old text or the complete new one, and no temporary
    file is left; the FileError says why and what to do.
    """
    data = encode_document(document)
    target = path.resolve() if path.is_symlink() else path
    folder = target.parent
    remove_stale_temporaries(target)
    with contextlib.suppress(FileNotFoundError):
        # The rename would replace a read-only file without asking (only the folder's permission counts),
        # so its read-only mark is honoured here, also for an administrator.
        if not target.stat().st_mode & 0o222:
            raise FileError(f"{target} is read-only; use Save As to save a copy, or make it writable first")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=folder)
    except OSError as error:
        raise FileError(f"could not save {target.name}: {_why(error, target)}") from error
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(temporary, target.stat().st_mode & 0o7777)
        os.replace(temporary, target)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise FileError(f"could not save {target.name}: {_why(error, target)}") from error
