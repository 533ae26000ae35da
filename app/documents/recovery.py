"""Autosave records, so a crash, a killed process or a power cut never costs a writer their text.

Each running Redraft owns one folder under the recovery area (``user_dirs().recovery``), named for its
process id and holding an OS lock on ``lock`` for as long as the process lives; the lock, not the pid,
says whether the instance still runs (a pid can be reused, a lock dies with its process). Every
document with unsaved changes, untitled ones included, has one record there, replaced
atomically (temporary file, fsync, rename) so a record is always whole. A clean exit removes the
folder; saving or closing a document removes its record. On start, folders whose lock can be taken
belong to instances that died: their records are what :meth:`RecoveryArea.orphans` offers back, and
those that hold no record (an instance ended by SIGTERM or a kill with nothing unsaved) are removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO, Any

from app.documents.fileio import fsync_folder
from app.documents.markdown_format import is_markdown
from app.documents.word_count import count_words, manuscript

RECORD_VERSION = 1
LOCK_NAME = "lock"
OPEN_NAME = "open.json"  # the file the instance shows, so a second Redraft can warn
RECORD_SUFFIX = ".record"
TEMP_SUFFIX = ".tmp"


def _try_lock(stream: IO[bytes]) -> bool:
    """Take the whole-file lock without waiting; False if another process holds it."""
    try:
        if sys.platform == "win32":
            import msvcrt

            stream.seek(0)
            msvcrt.locking(stream.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a reader (or a crash) sees the old bytes or the new ones."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
        fsync_folder(path.parent)  # the rename itself survives a power cut
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@dataclass(frozen=True)
class RecoveredDocument:
    """One document a dead instance had not saved: its last consistent text and where it came from."""

    record: Path
    text: str
    path: Path | None  # the file it was opened from or saved as; None for an untitled document
    title: str
    written_at: float  # seconds since the epoch, when the record was written
    encoding: str = "utf-8"
    bom: bool = False
    newline: str = "\n"
    # The versions of its rewritten spans (app/rewrite/versions.py, ``SpanVersions.record``); older records have none.
    versions: tuple[dict[str, Any], ...] = ()
    imported_from: Path | None = None  # the Word or OpenDocument file an untitled text was imported from

    @property
    def autosaved(self) -> str:
        """When the record was written, in local time."""
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.written_at))

    @cached_property  # a novel's count is a tenth of a second, and the dialog asks three times
    def words(self) -> int:
        """Its words as the status bar counts them once it is recovered."""
        return count_words(manuscript(self.text, is_markdown(self.path)))

    def summary(self) -> str:
        """The recovery dialog's entry: short lines, the path last (where it may be shortened)."""
        words = self.words
        where = str(self.path) if self.path is not None else "untitled, never saved"
        return f"{self.title}: {words:,} word{'' if words == 1 else 's'}, autosaved {self.autosaved}\n{where}"

    def describe(self) -> str:
        when = self.autosaved
        where = str(self.path) if self.path is not None else "untitled"
        return f"{self.title} ({where}), {self.words:,} words, autosaved {when}"


class RecoveryArea:
    """This process's records, and the records of instances that died."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder: Path | None = None
        self._lock: IO[bytes] | None = None
        self._written: dict[str, str] = {}  # document id -> digest of what its record holds

    # -- this instance ------------------------------------------------------------------------

    def claim(self) -> None:
        """Create and lock this instance's folder (idempotent)."""
        if self._lock is not None:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        folder = self.root / f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        folder.mkdir()
        lock = open(folder / LOCK_NAME, "a+b")  # noqa: SIM115  held open for the process's life
        if not _try_lock(lock):
            lock.close()
            raise OSError(f"could not lock {folder / LOCK_NAME}")
        lock.seek(0)
        lock.truncate()
        lock.write(json.dumps({"pid": os.getpid(), "started": time.time()}).encode())
        lock.flush()
        self.folder, self._lock = folder, lock
        self.sweep()

    def sweep(self) -> None:
        """Remove the folders of dead instances that hold no record: nothing to offer, only clutter."""
        for folder in self._dead_folders():
            if not any(folder.glob(f"*{RECORD_SUFFIX}")):
                shutil.rmtree(folder, ignore_errors=True)

    def write(self, document_id: str, text: str, *, path: Path | None, title: str, encoding: str = "utf-8",
              bom: bool = False, newline: str = "\n", versions: list[dict[str, Any]] | None = None,
              imported_from: Path | None = None) -> bool:  # fmt: skip
        """Record ``text`` for the document unless the record already holds it; True if written.

        A record is one JSON line of metadata, then the text as UTF-8: no escaping pass over a 10 MB
        novel, and hashing and writing release the GIL, so this can run beside the GUI thread. The spans'
        ``versions`` ride in the metadata (a key older Redraft ignores), so a new version is a new record.
        """
        self.claim()
        assert self.folder is not None
        body = text.encode("utf-8", "surrogatepass")
        meta: dict[str, Any] = {
            "path": None if path is None else str(path), "title": title, "encoding": encoding, "bom": bom,
            "newline": newline,
        }  # fmt: skip
        if versions:
            meta["versions"] = versions
        if imported_from is not None:  # a key older Redraft ignores, as versions
            meta["imported_from"] = str(imported_from)
        digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode() + b"\n" + body).hexdigest()
        if self._written.get(document_id) == digest:
            return False
        meta |= {"version": RECORD_VERSION, "written_at": time.time(), "bytes": len(body)}
        write_atomically(self.folder / f"{document_id}{RECORD_SUFFIX}", json.dumps(meta).encode() + b"\n" + body)
        self._written[document_id] = digest
        return True

    def remove(self, document_id: str) -> None:
        """The document was saved or closed: its record goes."""
        self._written.pop(document_id, None)
        if self.folder is not None:
            with contextlib.suppress(FileNotFoundError):
                (self.folder / f"{document_id}{RECORD_SUFFIX}").unlink()

    def release(self) -> None:
        """A clean exit: this instance's records and folder go."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
        self._written.clear()

    # -- the file this instance has open, and who else has it ------------------------------------

    def note_open(self, path: Path | None, window: str = "") -> None:
        """Say which file this instance shows in ``window`` (a name of the writer's windows; ``path`` ``None``:
        an untitled one, or the window closed), for other instances to see."""
        self.claim()
        assert self.folder is not None
        target = self.folder / (f"{OPEN_NAME.removesuffix('.json')}-{window}.json" if window else OPEN_NAME)
        if path is None:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
            return
        write_atomically(target, json.dumps({"path": str(path.resolve())}).encode())

    def open_elsewhere(self, path: Path) -> int | None:
        """The process id of another running Redraft that has ``path`` open, if one has."""
        if not self.root.is_dir():
            return None
        wanted = str(path.resolve())
        for folder in self.root.iterdir():
            if folder == self.folder or not folder.is_dir():
                continue
            try:
                notes = folder.glob(f"{OPEN_NAME.removesuffix('.json')}*.json")  # one a window
                if not any(json.loads(note.read_text()).get("path") == wanted for note in notes):
                    continue
                with open(folder / LOCK_NAME, "a+b") as lock:
                    if _try_lock(lock):
                        continue  # its instance is gone (closing the file releases the lock just taken)
                return int(json.loads((folder / LOCK_NAME).read_text())["pid"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return None

    # -- instances that died ------------------------------------------------------------------

    def _dead_folders(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        dead = []
        for folder in sorted(self.root.iterdir()):
            if not folder.is_dir() or folder == self.folder:
                continue
            lock_path = folder / LOCK_NAME
            if not lock_path.exists():
                # Died before it could lock, or half removed; a folder made this minute may be an
                # instance between creating it and locking it.
                with contextlib.suppress(OSError):
                    if time.time() - folder.stat().st_mtime > 60:
                        dead.append(folder)
                continue
            with contextlib.suppress(OSError), open(lock_path, "a+b") as lock:
                # The owner writes the lock file only once it holds the lock: an empty one this minute
                # may be an instance between creating the file and locking it, not a dead one.
                starting = lock_path.stat().st_size == 0 and time.time() - lock_path.stat().st_mtime <= 60
                if not starting and _try_lock(lock):  # the owner is gone (its lock went with it)
                    dead.append(folder)  # closing the file releases the lock we just took
        return dead

    def orphans(self) -> list[RecoveredDocument]:
        """Documents of instances that are no longer running, oldest first; unreadable records skipped."""
        found = []
        for folder in self._dead_folders():
            for record in sorted(folder.glob(f"*{RECORD_SUFFIX}")):
                try:
                    head, _, body = record.read_bytes().partition(b"\n")
                    fields = json.loads(head)
                    if len(body) != fields["bytes"]:
                        continue  # not whole: records are replaced atomically, so not one of ours
                    found.append(
                        RecoveredDocument(
                            record=record, text=body.decode("utf-8", "surrogatepass"),
                            path=None if fields.get("path") is None else Path(fields["path"]),
                            title=str(fields.get("title") or "Untitled"), written_at=float(fields["written_at"]),
                            encoding=str(fields.get("encoding", "utf-8")), bom=bool(fields.get("bom", False)),
                            newline=str(fields.get("newline", "\n")),
                            versions=_versions(fields.get("versions")),
                            imported_from=Path(fields["imported_from"]) if fields.get("imported_from") else None,
                        )
                    )  # fmt: skip
                except (OSError, ValueError, KeyError, TypeError):
                    continue
        return sorted(found, key=lambda document: document.written_at)

    def discard(self, documents: list[RecoveredDocument]) -> None:
        """Forget these recovered documents; a dead instance's folder goes once it holds no record."""
        for document in documents:
            with contextlib.suppress(FileNotFoundError):
                document.record.unlink()
        self.sweep()


def _versions(value: object) -> tuple[dict[str, Any], ...]:
    """A record's span versions, if they read as a list of objects; anything else (none, damage) as none."""
    if not isinstance(value, list):
        return ()
    return tuple(entry for entry in value if isinstance(entry, dict))
