"""The rewrite the editor shows now (:class:`RewriteRun`, the controller's ``run``), and what the status bar
says while it develops: the pass, and the time left from the passes measured so far."""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field, replace

from app.rewrite.worker import Ink, PaintedPass, Segment
from model import EditResult
from model.edit.request import Mode
from model.edit.shape import Shape
from model.edit.wrapping import as_prose, rewrap

WHITESPACE = re.compile(r"\s")


@dataclass
class RewriteRun:
    """The rewrite the editor shows now."""

    job_id: int
    mode: Mode
    instruction: str | None
    max_new_tokens: int | None
    passes: int = 0
    result: EditResult | None = None
    candidate: int = 0
    regenerations: int = 0
    asked_drafts: int = 1  # the drafts the request asked for (the engine may develop fewer where it is slow)
    keep: tuple[tuple[int, int], ...] = ()  # kept words, offsets in the writer's selection (app/rewrite/steering.py)
    # The writer's selection around the live span: the edge whitespace and sentence ending left outside it
    # (before, after; before is negative where the span took in the spaces before the selection, ``lead``), so
    # Esc selects what the writer selected.
    margins: tuple[int, int] = (0, 0)
    # A rewrite in a hand-wrapped paragraph: the spaces before its first word, in the live span (wrap_lead).
    lead: str = ""
    # Which of the selection's paragraphs were wrapped by hand (model.edit.wrapping; empty: none): the Drafts
    # panel shows those drafts as prose, its cards being narrower than the writer's lines.
    wrapped_paragraphs: tuple[bool, ...] = ()
    # The width its new text is wrapped at (model.edit.wrapping; 0: not wrapped): its passes are wrapped so too.
    wrap_width: int = 0
    # A fill's shape (model.edit.shape): its passes are painted with the space before and the ending it will have.
    fill_shape: Shape | None = None
    started: float = field(default_factory=time.monotonic)
    # Drafts side by side (app/rewrite/drafts_panel.py): the draft the writer chose while they develop (the span
    # follows it instead of the leader), and the last pass painted, to show that choice at once.
    pinned: int | None = None
    last_pass: PaintedPass | None = None
    # The text and label of the mix the writer made of the draft's changes, one by one (Show Changes,
    # app/rewrite/tracked_changes.py): what Enter lands instead of the whole draft.
    decided: tuple[str, str] | None = None
    # The passes shown in the current phase (live or veiled) and when its first arrived, to
    # measure the time a pass takes on this machine and say how long is left.
    phase: str = ""
    phase_passes: int = 0
    phase_started: float = 0.0

    def draft_label(self, candidate: int) -> str:
        """How a draft is named in the span's versions: its rank among the run's drafts, and the try."""
        result = self.result
        count = 1 if result is None else len(result.texts)
        rank = 1 if result is None else result.ranking.index(candidate) + 1
        name = "Fill" if self.mode == "fill" else "Draft"
        what = f"{name} {rank} of {count}" if count > 1 else name
        return what + (f", regeneration {self.regenerations}" if self.regenerations else "")


def waiting_original(original: str, block: int, blocks: int) -> str:
    """The part of a rewrite's original that the blocks after ``block`` will replace, from a word's edge: it
    waits, faded, below the developing block, so the rest of the selection (and the page below it) keeps
    its place until its block comes. Blocks are equal shares of the span, so the share is of characters."""
    if blocks <= 1 or block >= blocks - 1 or not original:
        return ""
    return original[word_edge(original, len(original) * (block + 1) // blocks, len(original)) :]


def wrapped_frame(segments: list[Segment], waiting: str, width: int, column: int, paragraphs: tuple[bool, ...],
                  tail: str) -> tuple[list[Segment], str]:  # fmt: skip
    """A pass's segments and the original's words that wait after them (:func:`waiting_original`), wrapped as
    the finished text will be (``model.edit.shape.Shape.restore``): line breaks inside hand-wrapped
    ``paragraphs`` spaces, long lines folded at ``width`` from ``column``, the last beside ``tail``. Both keep
    the text's length, so each segment keeps its ink and its share of the text."""
    pieces = [segment.text for segment in segments] + [waiting]
    wrapped = rewrap(as_prose("".join(pieces), paragraphs, in_place=True), width, column, tail, in_place=True)
    out, at = [], 0
    for piece in pieces:
        out.append(wrapped[at : at + len(piece)])
        at += len(piece)
    return [replace(segment, text=text) for segment, text in zip(segments, out, strict=False)], out[-1]


def wrap_lead(line_before: str) -> str:
    """The spaces that end ``line_before`` (a rewrite's line up to its first word, in a hand-wrapped paragraph),
    where words come before them: the live span takes them in, so that where the new first word no longer fits
    on the line, the line break that starts the next replaces them (:func:`with_lead`) instead of leaving them
    trailing on the line above. None at a line's start: an indent is the writer's."""
    words = line_before.rstrip(" \t")
    return line_before[len(words) :] if words.strip() else ""


def with_lead(text: str, lead: str) -> str:
    """A draft's text for a live span that starts with ``lead`` (:func:`wrap_lead`): the engine wrapped it
    from the column after the lead, and starts it with a line break where its first word did not fit there."""
    return text if text.startswith("\n") else lead + text


def without_lead(text: str, lead: str) -> str:
    """The words of a live span's text that starts with ``lead`` or with the line break put in its place
    (:func:`with_lead`): a span's versions are its words, so selecting them again finds the same track."""
    if lead and text.startswith("\n"):
        return text[1:]
    return text[len(lead) :] if text.startswith(lead) else text


def fill_frame(segments: list[Segment], shape: Shape) -> list[Segment]:
    """A fill's pass as its finished text will stand (``Shape.developing``): the space before it and the ending
    held after it, outside the canvas, painted as settled words around the model's."""
    before, *pieces, ending = shape.developing([segment.text for segment in segments])
    inner = [replace(segment, text=text) for segment, text in zip(segments, pieces, strict=True)]
    return [Segment(before, Ink.SETTLED), *inner, Segment(ending, Ink.SETTLED)]


def word_edge(text: str, at: int, otherwise: int) -> int:
    """Where the first whitespace at or after ``at`` is (a word's edge, so no word is cut), else ``otherwise``."""
    found = WHITESPACE.search(text, at)
    return found.start() if found else otherwise


# Passes measured before the time left is estimated: the first ones carry the context's encoding.
ESTIMATE_AFTER_PASSES = 4


def time_left_ms(run: RewriteRun, painted: PaintedPass, display_ms: int, now: float) -> float | None:
    """How long the run may still take, from the passes measured so far in this phase; None: too few
    measured, or no limit known."""
    if painted.most is None or run.phase_passes < ESTIMATE_AFTER_PASSES:
        return None
    per_pass = max((now - run.phase_started) * 1000 / (run.phase_passes - 1), display_ms)
    done = painted.raw.step + 1
    return max(0, painted.most - done) * per_pass


def progress_message(run: RewriteRun, painted: PaintedPass, left_ms: float | None) -> str:
    """The status bar while a rewrite develops: which pass of how many, and the time left."""
    step = painted.raw
    number = step.step + 1
    # A live run knows only its limit (it usually stops sooner).
    number_text = f"pass {number}" if painted.most is None else f"pass {number} of at most {painted.most}"
    blocks = f" · block {step.block + 1}/{step.blocks}" if step.blocks > 1 else ""
    drafts = len(step.pieces)
    what = f"Developing {drafts} drafts…" if drafts > 1 else "Developing…"
    left = f" · about {max(1, math.ceil(left_ms / 1000))} s left" if left_ms is not None else ""
    return f"{what} {number_text}{blocks}{left} · Esc cancels"
