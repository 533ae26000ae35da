"""Every version of a file that Redraft saved, kept aside: File ▸ Saved Versions… brings one back.

Save replaces a file whole; what it replaced is gone unless it was kept. So each save keeps the text it wrote,
and, where the file held something Redraft has not kept (its first save over a file written elsewhere, or a
file another program changed), that text first. Versions live in the data folder (Help ▸ Where Your Files Are),
``saved versions/<the file's key>/``: one gzip'd UTF-8 text a version, named by when it was saved, how many
words it holds and a digest of its text (so a listing knows both without reading the versions), beside
``document.txt`` naming the file. Nothing here needs Qt.

A history that grew without end would fill a disk with a novel saved every few minutes, so a file keeps its
newest ``KEEP_RECENT`` versions and, before those, the last of each day for ``KEEP_DAILY`` more days' worth.
A history follows its file: Save As carries it to the new name (which goes on from it; a file saved over
keeps its own), and a file renamed or moved outside Redraft finds it again when opened, by its text.
Keeping is a safety net, never a reason a save fails: errors are raised as ``OSError`` for the caller to report.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from app.documents.markdown_format import is_markdown
from app.documents.word_count import count_words, manuscript

KEEP_RECENT = 30
KEEP_DAILY = 60
FOLDER = "saved versions"
NAME = re.compile(r"^(\d{8}-\d{6}-\d{6})\.w(\d+)\.([0-9a-f]{16})\.txt\.gz$")
STAMP = "%Y%m%d-%H%M%S-%f"


@dataclass(frozen=True)
class SavedVersion:
    at: datetime  # local time, when it was saved (or found on disk)
    words: int
    digest: str  # of its text: digest_of
    file: Path

    def text(self) -> str:
        """The version's text; ``OSError`` (or ``ValueError`` for a damaged file) if it cannot be read."""
        with gzip.open(self.file, "rt", encoding="utf-8", newline="") as stream:
            return stream.read()


def digest_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class SavedVersions:
    """The kept versions of every file, under ``root`` (the data folder)."""

    def __init__(self, root: Path) -> None:
        self.root = root / FOLDER

    def folder_of(self, path: Path) -> Path:
        """The folder holding ``path``'s versions: named by a digest of its full path, so two files of the same
        name never share one, and a file's versions are found again whatever opens it."""
        key = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:20]
        return self.root / key

    def versions(self, path: Path) -> list[SavedVersion]:
        """``path``'s kept versions, newest first (none for a file never saved by Redraft)."""
        return self._listed(self.folder_of(path))

    @staticmethod
    def _listed(folder: Path) -> list[SavedVersion]:
        found = []
        for file in folder.glob("*.txt.gz") if folder.is_dir() else ():
            match = NAME.match(file.name)
            if match:
                found.append(SavedVersion(datetime.strptime(match[1], STAMP), int(match[2]), match[3], file))
        return sorted(found, key=lambda version: version.at, reverse=True)

    def keep(self, path: Path, text: str, at: datetime | None = None) -> SavedVersion | None:
        """Keep ``text`` as a version of ``path`` unless it is the newest kept already; the version kept, or None.
        Prunes the older ones (see the module's docstring). Raises ``OSError`` where the folder cannot be written."""
        existing = self.versions(path)
        digest = digest_of(text)
        if existing and existing[0].digest == digest and _readable(existing[0]):
            return None
        when = at or datetime.now()
        if existing and when <= existing[0].at:  # the clock went back: still the newest, by a microsecond
            when = existing[0].at + timedelta(microseconds=1)
        folder = self.folder_of(path)
        folder.mkdir(parents=True, exist_ok=True)
        self._name(folder, path)
        words = count_words(manuscript(text, is_markdown(path)))  # once: a long book's count is a tenth of a second
        target = folder / f"{when.strftime(STAMP)}.w{words}.{digest}.txt.gz"
        partial = target.with_name(target.name + ".partial")
        # Level 1: War and Peace in 33 ms, not 215 (level 6), at 44 % of its size, not 37: each save waits for it.
        with gzip.open(partial, "wt", encoding="utf-8", newline="", compresslevel=1) as stream:
            stream.write(text)
        partial.replace(target)  # a version is whole or absent
        kept = SavedVersion(when, words, digest, target)
        for version in pruned([kept, *existing]):
            version.file.unlink(missing_ok=True)
        return kept

    def carry(self, source: Path, target: Path) -> int:
        """Save As: ``source``'s versions copied to ``target``, which goes on from them, unless ``target`` has a
        history of its own (never mixed). ``source`` keeps its own. How many were copied; ``OSError`` as keep."""
        if self.folder_of(source) == self.folder_of(target) or self.versions(target):
            return 0
        versions = self.versions(source)
        if not versions:
            return 0
        folder = self.folder_of(target)
        folder.mkdir(parents=True, exist_ok=True)
        for version in versions:
            shutil.copyfile(version.file, folder / version.file.name)
        self._name(folder, target)
        return len(versions)

    def adopt(self, path: Path, text: str) -> bool:
        """A file renamed or moved outside Redraft finds its history again: where ``path`` has none, the history
        whose newest version is ``text`` and whose file is gone becomes ``path``'s. Whether one did."""
        if self.versions(path) or not self.root.is_dir():
            return False
        digest = digest_of(text)
        for candidate in sorted({kept.parent for kept in self.root.glob(f"*/*.{digest}.txt.gz")}):
            named = candidate / "document.txt"
            try:
                was = Path(named.read_text(encoding="utf-8", errors="surrogateescape").strip())
            except OSError:
                continue
            newest = next(iter(self._listed(candidate)), None)
            if was.exists() or newest is None or newest.digest != digest:
                continue  # its file is still there (this is a copy), or it has been saved since
            if self.folder_of(path).exists():  # a folder without versions (its document.txt at most)
                shutil.rmtree(self.folder_of(path))
            candidate.rename(self.folder_of(path))
            self._name(self.folder_of(path), path)
            return True
        return False

    @staticmethod
    def _name(folder: Path, path: Path) -> None:
        (folder / "document.txt").write_text(str(path.resolve()) + "\n", encoding="utf-8", errors="surrogateescape")


def pruned(versions: list[SavedVersion]) -> list[SavedVersion]:
    """Which of ``versions`` (newest first) go: all but the newest ``KEEP_RECENT``, and before those the last
    of each day for ``KEEP_DAILY`` days that have one."""
    older = versions[KEEP_RECENT:]
    days_kept: set[date] = set()
    going = []
    for version in older:
        day = version.at.date()
        if day in days_kept or len(days_kept) >= KEEP_DAILY:
            going.append(version)
        else:
            days_kept.add(day)
    return going


def _readable(version: SavedVersion) -> bool:
    try:
        version.text()
    except (OSError, ValueError, EOFError):
        return False  # a damaged version: the same text is kept again beside it
    return True

