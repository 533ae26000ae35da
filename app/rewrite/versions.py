"""Every version a span has had in the session: its original, each draft shown, each regeneration.

A :class:`SpanTrack` follows one span through the document (two cursors, like the live span's) and
holds its versions in order, each with the time it was first shown. The rewrite controller reports a
span's life (``spanBegan``, ``draftShown``, ``spanEnded``); rewriting the same span again (regenerate,
or Ctrl+R on the accepted text) adds to the same track. Rewrite ▸ Versions… lists the track under the
caret and :meth:`SpanVersions.put_back` replaces the span's text with a chosen version as one undo
step; text the writer typed there since is kept as a version of its own first, so nothing is lost.

Versions live as long as the document is open, and go into its recovery record (:meth:`record`,
:meth:`restore`), so they come back after a crash. Positions in a record are approximate: a track is
found again by its current text nearest to where it was (the record's text shows a developing span
as its original, and Qt counts positions in UTF-16 units).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtGui import QTextCursor

from app.window.editor_widget import RewriteEditor

MAX_VERSIONS_PER_SPAN = 200  # a writer regenerating all afternoon keeps the newest ones and the original
ORIGINAL = "Original"
WRITER_EDIT = "Your edit"


@dataclass(frozen=True)
class Version:
    label: str
    text: str
    at: float  # seconds since the epoch, when it was first shown

    @property
    def clock(self) -> str:
        return time.strftime("%H:%M:%S", time.localtime(self.at))


@dataclass
class SpanTrack:
    """One span's versions, and where its text is now (``current`` is what the cursors should hold)."""

    start: QTextCursor
    end: QTextCursor
    current: str
    versions: list[Version] = field(default_factory=list)

    def add(self, label: str, text: str, at: float | None = None) -> bool:
        """Keep ``text`` as a version unless the span already had it; True if added."""
        if any(version.text == text for version in self.versions):
            return False
        self.versions.append(Version(label, text, time.time() if at is None else at))
        if len(self.versions) > MAX_VERSIONS_PER_SPAN:
            del self.versions[1]  # the original stays first
        return True

    def place(self, start: int, end: int, current: str) -> None:
        self.start.setPosition(start)
        self.end.setPosition(end)
        self.current = current


class SpanVersions:
    """The versions of every span rewritten in one window's document."""

    def __init__(self, editor: RewriteEditor) -> None:
        self.editor = editor
        self.tracks: list[SpanTrack] = []
        self.active: SpanTrack | None = None  # the span a rewrite is developing or waiting in

    def clear(self) -> None:
        """Another document: its spans have no versions yet."""
        self.tracks.clear()
        self.active = None

    # -- the rewrite controller's reports -------------------------------------------------------

    def span_began(self, start: int, end: int, original: str) -> None:
        track = next((t for t in self.tracks if self.locate(t) == (start, end)), None)
        if track is None:
            track = self._new_track(start, end, original)
            track.add(ORIGINAL, original)
        else:
            track.add(WRITER_EDIT, original)  # the writer changed it since: that text is a version too
        self.active = track

    def draft_shown(self, text: str, label: str) -> None:
        if self.active is not None:
            self.active.add(label, text)

    def span_ended(self, start: int, end: int) -> None:
        if self.active is not None:
            self.active.place(start, end, self.editor.text_between(start, end))
            self.active = None

    # -- finding and putting back ---------------------------------------------------------------

    def _new_track(self, start: int, end: int, current: str) -> SpanTrack:
        document = self.editor.document()
        track = SpanTrack(QTextCursor(document), QTextCursor(document), current)
        track.end.setKeepPositionOnInsert(True)  # text typed right after the span is not part of it
        track.place(start, end, current)
        self.tracks.append(track)
        return track

    def locate(self, track: SpanTrack) -> tuple[int, int] | None:
        """Where the track's span is now. Its cursors follow edits around it; if they no longer hold its
        text (the document was reloaded, or collapsed them), its text is looked for nearest to them."""
        live = self.editor.live_range()
        if track is self.active and live is not None:
            return live  # the cursors sit under the developing span's paints until it ends
        start, end = track.start.position(), track.end.position()
        if start > end:
            return None
        if self.editor.text_between(start, end) == track.current or (start < end and track.current):
            return start, end  # its text, or the writer's edit of it in place
        found = self._find(track.current, start)
        if found is None:
            return None
        track.place(found, found + _qt_length(track.current), track.current)
        return track.start.position(), track.end.position()

    def _find(self, text: str, near: int) -> int | None:
        """The Qt position of the occurrence of ``text`` nearest ``near`` (UTF-16 units), or None."""
        if not text:
            return None
        whole = self.editor.plain_text()
        best: int | None = None
        index = whole.find(text)
        while index >= 0:
            position = _qt_length(whole[:index])
            if best is None or abs(position - near) < abs(best - near):
                best = position
            index = whole.find(text, index + 1)
        return best

    def at_cursor(self) -> SpanTrack | None:
        """The span the rewrite is on, or the smallest rewritten span holding the selection or caret.

        A rewrite leaves a selection's edge spaces and its sentence ending outside its span (model/edit/
        shape.py), so the sentence the writer selected ("… her stupid. ") holds its span with a full stop
        and a space to spare: the selection's edge spaces are not counted, and the marks beside a span
        (the full stop, a quotation mark) count as the span's."""
        if self.active is not None:
            return self.active
        cursor = self.editor.textCursor()
        first, last = cursor.selectionStart(), cursor.selectionEnd()
        if first < last:
            first, last = self._without_edge_spaces(first, last)
        holding = []
        for track in self.tracks:
            where = self.locate(track)
            if where is None or len(track.versions) < 2:
                continue
            reach_start, reach_end = self._with_marks_beside(*where)
            if reach_start <= first and last <= reach_end:
                holding.append((where[1] - where[0], track))
        return min(holding, key=lambda item: item[0])[1] if holding else None

    def _without_edge_spaces(self, first: int, last: int) -> tuple[int, int]:
        """The selection ``first``..``last`` less the spaces and line breaks at its edges."""
        selected = self.editor.text_between(first, last)
        words = selected.strip()
        if not words:
            return first, last
        before = selected[: len(selected) - len(selected.lstrip())]
        return first + _qt_length(before), first + _qt_length(before) + _qt_length(words)

    def _with_marks_beside(self, start: int, end: int) -> tuple[int, int]:
        """``start``..``end`` widened over the marks right beside it: neither letters, digits nor spaces."""
        document = self.editor.document()
        while start > 0 and _is_mark(document.characterAt(start - 1)):
            start -= 1
        while end < document.characterCount() - 1 and _is_mark(document.characterAt(end)):
            end += 1
        return start, end

    def put_back(self, track: SpanTrack, version: Version) -> bool:
        """Replace the span's text with ``version``'s as one undo step; False if it already shows it."""
        where = self.locate(track)
        if where is None:
            return False
        start, end = where
        now = self.editor.text_between(start, end)
        if now == version.text:
            return False
        track.add(WRITER_EDIT, now)  # typed into the span since: kept before it is replaced
        cursor = QTextCursor(self.editor.document())
        cursor.beginEditBlock()
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(version.text)
        cursor.endEditBlock()
        track.place(start, cursor.position(), version.text)
        selection = self.editor.textCursor()
        selection.setPosition(start)
        selection.setPosition(cursor.position(), QTextCursor.MoveMode.KeepAnchor)
        self.editor.setTextCursor(selection)
        return True

    # -- the recovery record --------------------------------------------------------------------

    def record(self) -> list[dict[str, Any]]:
        """The tracks as JSON-ready data for the recovery record (only spans with more than the original)."""
        out = []
        for track in self.tracks:
            where = self.locate(track)
            if where is None or len(track.versions) < 2:
                continue
            span = self.editor.live_span
            # The record's text shows a developing span as its original (app/documents/autosave.py).
            current = span.original if track is self.active and span is not None else track.current
            out.append({
                "at": where[0], "current": current,
                "versions": [{"label": v.label, "text": v.text, "at": v.at} for v in track.versions],
            })  # fmt: skip
        return out

    def restore(self, records: list[dict[str, Any]]) -> int:
        """Tracks from a recovery record, found again in the recovered text; returns how many were found.
        A record that does not read as one (an older Redraft's, a damaged one) is skipped."""
        found = 0
        for entry in records:
            try:
                current, near = str(entry["current"]), int(entry["at"])
                versions = [Version(str(v["label"]), str(v["text"]), float(v["at"])) for v in entry["versions"]]
            except (KeyError, TypeError, ValueError):
                continue
            start = self._find(current, near) if current else None
            if start is None or not versions:
                continue
            track = self._new_track(start, start + _qt_length(current), current)
            track.versions = versions
            found += 1
        return found


def _is_mark(character: str) -> bool:
    """A punctuation mark or symbol: not a letter, a digit, a space or a line break (Qt's paragraph separator is
    one of Python's spaces)."""
    return bool(character) and not (character.isalnum() or character.isspace())


def _qt_length(text: str) -> int:
    """``text``'s length in Qt document positions (UTF-16 code units)."""
    return len(text) + sum(1 for character in text if ord(character) > 0xFFFF)
