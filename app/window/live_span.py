"""Where a developing span is in the document, what it replaced, and the state of its one undo block: two
cursors that move with the writer's edits elsewhere, the original text, and whether the text beneath the span
has changes of the writer's that are not saved yet."""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextDocument

from app.rewrite.drafts import hesitation
from app.rewrite.worker import Ink, Segment
from app.window.theme import CanvasColors


class LiveSpan:
    """Where the developing span is, what it replaced, and the state of its undo block."""

    def __init__(self, document: QTextDocument, start: int, end: int, original: str) -> None:
        self.document = document
        self._start = QTextCursor(document)
        self._start.setPosition(start)
        self._end = QTextCursor(document)
        self._end.setPosition(end)
        self._end.setKeepPositionOnInsert(True)
        self.original = original
        self.original_length = end - start  # in document positions (UTF-16 units, a line break is 1)
        self.painted = False  # whether our edit block is in the document now
        self.undo_steps_after_paint = -1
        self.last_paint: list[tuple[str, QTextCharFormat]] = []
        # Whether the text beneath the span (its original in place) differs from what was last saved:
        # the document's own flag also counts the passes painted over it.
        self.modified_beneath = document.isModified()

    @property
    def start(self) -> int:
        return self._start.position()

    @property
    def end(self) -> int:
        return max(self._start.position(), self._end.position())

    def place(self, start: int, end: int) -> None:
        self._start.setPosition(start)
        self._end.setPosition(end)

    def touches(self, first: int, last: int) -> bool:
        """Whether editing [first, last] (an insertion point when equal) would change the span. An insertion at
        either edge does: it joins the span's first or last word (the caret waits at the end after Ctrl+R, and a
        letter typed there went between the developing words and the sentence's full stop, held after them)."""
        start, end = self.start, self.end
        if first == last:
            return start <= first <= end
        return first < end and last > start

    def block_on_top(self) -> bool:
        return self.painted and self.document.availableUndoSteps() == self.undo_steps_after_paint


# A character past UTF-16's first plane (an emoji): two positions in Qt's document, one in Python's text.
ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def utf16_length(text: str) -> int:
    """How many document positions ``text`` takes: UTF-16 units (a line break is one)."""
    return len(text.encode("utf-16-le")) // 2


def positions_are_indices(text: str) -> bool:
    """Whether each character of ``text`` takes one document position (none is outside Unicode's first plane, as
    an emoji is), so Qt's positions are Python's indices: a long text's work can skip the UTF-16 counting."""
    return text.isascii() or utf16_length(text) == len(text)


def index_at(text: str, units: int) -> int:
    """The inverse of ``utf16_length``: the index in ``text`` of the character ``units`` document positions in."""
    return len(text.encode("utf-16-le")[: 2 * units].decode("utf-16-le", errors="ignore"))


def positions(runs: list[tuple[str, QTextCharFormat]]) -> int:
    return sum(utf16_length(text) for text, _ in runs)


def shared_ends(old: list[tuple[str, QTextCharFormat]], new: list[tuple[str, QTextCharFormat]]) -> tuple[int, int]:
    """How many runs ``old`` and ``new`` share at their start and, of the rest, at their end."""
    shortest = min(len(old), len(new))
    head = next((i for i in range(shortest) if old[i] != new[i]), shortest)
    tail = 0
    while tail < shortest - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


def text_format(foreground: object, background: object) -> QTextCharFormat:
    made = QTextCharFormat()
    made.setForeground(foreground)  # type: ignore[arg-type]
    made.setBackground(background)  # type: ignore[arg-type]
    return made


def pass_runs(
    segments: list[Segment], waiting: str, colors: CanvasColors, hesitant: QColor | None
) -> list[tuple[str, QTextCharFormat]]:
    """A pass's frame as the span paints it: settled ink, fresh ink highlighted, noise faded, each word shaded
    by its hesitation where ``hesitant`` (the shade) is given; then ``waiting``, the original words later
    blocks will replace, in the faded ink but off the canvas (the page's own background), so the block that
    develops is told from the writer's words that wait below it."""
    formats = {
        Ink.SETTLED: text_format(colors.ink, colors.canvas),
        Ink.FRESH: text_format(colors.ink, colors.fresh),
        Ink.NOISE: text_format(colors.noise, colors.canvas),
    }
    runs = []
    for segment in segments:
        amount = hesitation(segment.entropy) if hesitant is not None and segment.ink is not Ink.NOISE else 0.0
        if amount > 0:
            shade = QColor(hesitant)
            shade.setAlphaF(0.6 * amount)
            runs.append((segment.text, text_format(colors.ink, shade)))
        else:
            runs.append((segment.text, formats[segment.ink]))
    if waiting:
        off_canvas = QTextCharFormat()
        off_canvas.setForeground(colors.noise)
        runs.append((waiting, off_canvas))
    return runs
