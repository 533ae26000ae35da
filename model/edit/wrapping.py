"""Paragraphs wrapped by hand: a plain-text file, an e-mail or a Project Gutenberg book breaks its lines at a
fixed width, so a line break inside such a paragraph is where the line was full, not the writer's layout.

A rewrite across lines holds each run of line breaks as layout (:func:`model.edit.shape.with_layout_held`).
Inside a hand-wrapped paragraph that cut the paragraph into one free region a line, each rewritten on its own
to about its line's length: sentences broken where the old lines were, and a line the model wrote little for
left as a lone mark ("." on a line of its own). Here such a paragraph's inner breaks are found
(:func:`wrapped_breaks`), so they are left free; the model writes the paragraph as prose, and the new text is
wrapped again at the width the writer's lines had (:func:`rewrap`).

Lines that are paragraphs of their own (one Enter between paragraphs, as a writer types in the editor) must
never be taken for wrapped ones, so the test is strict. A paragraph is hand-wrapped when it has at least
three lines, its longest (the width) is 50 to 100 characters, and every line but the last is full: it fills
at least three quarters of the width, the next line's first word would not have fitted after it (within a
few columns), and at most half of those lines end a sentence. No line may start with a list, heading or quote marker.
"""

from __future__ import annotations

import re
import textwrap
from typing import NamedTuple

HARD_WRAP_MIN_LINES = 3
HARD_WRAP_MIN_WIDTH = 50
HARD_WRAP_MAX_WIDTH = 100  # hand wrapping is 60-80 columns; a typed paragraph on one line is longer
HARD_WRAP_FILL = 0.75
# Wrappers differ by a few columns (< or <= the width, a margin): a next word that would have fitted by up to
# this many characters still counts as not fitting. bench/hand_wrapping.py, six Gutenberg books (4,892
# paragraphs of three lines or more) against 2,000 paragraphs of their one-line sentences typed a line each:
# slack 0 found 79% of the books' and 4 found 96%; neither took a single typed one.
HARD_WRAP_SLACK = 4
# Terminal punctuation, then closing quotes or brackets (model.edit.shape holds it after a sentence's rewrite).
SENTENCE_ENDING = r"[.!?…]+[\"'”’»)\]]*"
SENTENCE_END = re.compile(SENTENCE_ENDING + r"\Z")
# The Markdown marker that starts a list item, a heading or a quote: the writer's layout, whatever the length.
LINE_MARKER_PATTERN = r"(?:#{1,6} +|[-*+] +|> ?|\d{1,3}[.)] +)"
LINE_MARKER = re.compile(r"[ \t]*" + LINE_MARKER_PATTERN)
BLANK_LINES = re.compile(r"\n[ \t]*\n[ \t\n]*")
# A break between lines, as str.splitlines finds them (a model may write any: a carriage return, a form feed).
LINE_BREAK = re.compile(r"[ \t]*[\n\r\v\f\x1c-\x1e\x85\u2028\u2029][ \t\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*")
# How far before and after a selection its first and last paragraphs are looked for.
CONTEXT_CHARS = 4000


def wrap_width(lines: list[str]) -> int:
    """The width a paragraph's ``lines`` were wrapped at by hand (their longest), or 0 if they were not."""
    lengths = [len(line.rstrip()) for line in lines]
    width = max(lengths, default=0)
    if len(lines) < HARD_WRAP_MIN_LINES or not HARD_WRAP_MIN_WIDTH <= width <= HARD_WRAP_MAX_WIDTH:
        return 0
    if any(LINE_MARKER.match(line) for line in lines[1:]):
        return 0
    for length, following in zip(lengths, lines[1:], strict=False):
        next_word = following.split(maxsplit=1)[0] if following.strip() else ""
        if length < HARD_WRAP_FILL * width or length + 1 + len(next_word) <= width - HARD_WRAP_SLACK:
            return 0
    endings = sum(bool(SENTENCE_END.search(line.rstrip())) for line in lines[:-1])
    return width if 2 * endings <= len(lines) - 1 else 0


class Wrapping(NamedTuple):
    """What :func:`wrapped_breaks` finds in a selection."""

    breaks: list[tuple[int, int]]  # the line breaks inside hand-wrapped paragraphs (ranges into the core)
    width: int  # the width those were wrapped at (0: none)
    paragraphs: tuple[bool, ...]  # for each of the core's paragraphs (BLANK_LINES apart): whether hand-wrapped


def wrapped_breaks(before: str, core: str, after: str) -> Wrapping:
    """The line breaks inside ``core`` that hand-wrapped paragraphs have, the width those were wrapped at, and
    which of its paragraphs are hand-wrapped. ``before`` and ``after`` are the text around it: a selection's
    first and last paragraphs are judged whole."""
    head = before[-CONTEXT_CHARS:]
    blanks = list(BLANK_LINES.finditer(head))
    head = head[blanks[-1].end() :] if blanks else head
    tail = after[:CONTEXT_CHARS]
    next_blank = BLANK_LINES.search(tail)
    context = head + core + (tail[: next_blank.start()] if next_blank else tail)
    start, end = len(head), len(head) + len(core)
    breaks: list[tuple[int, int]] = []
    width = 0
    paragraphs: list[bool] = []
    paragraph_start = 0
    for paragraph_end in [*(m.start() for m in BLANK_LINES.finditer(context)), len(context)]:
        paragraph = context[paragraph_start:paragraph_end]
        # Without the line breaks at its ends (a file's last line ends with one): not lines of the paragraph.
        lead = len(paragraph) - len(paragraph.lstrip("\n"))
        body = paragraph.strip("\n")
        paragraph_width = wrap_width(body.split("\n"))
        inside = [paragraph_start + lead + m.start() for m in re.finditer(r"\n", body)]
        inside = [at - start for at in inside if start <= at < end]
        if paragraph_width and inside:
            breaks.extend((at, at + 1) for at in inside)
            width = max(width, paragraph_width)
        if paragraph_start < end and paragraph_end >= start:  # one of the core's paragraphs, or part of it
            paragraphs.append(bool(paragraph_width))
        blank = BLANK_LINES.match(context, paragraph_end)
        paragraph_start = blank.end() if blank else paragraph_end
    return Wrapping(breaks, width, tuple(paragraphs))


def as_prose(text: str, paragraphs: tuple[bool, ...]) -> str:
    """``text`` (new words for a selection whose ``paragraphs`` say which were hand-wrapped) with every line
    break inside a hand-wrapped paragraph a space: there a break only says where a line was full, so one the
    model wrote (a model trained on wrapped books wraps at its own width) would break the prose where
    :func:`rewrap` cannot mend it. Paragraph breaks stay. Where the model wrote more or fewer paragraphs than
    the selection had, only an all-wrapped selection is joined: which of its paragraphs is which is unknown."""
    pieces, gaps = BLANK_LINES.split(text), BLANK_LINES.findall(text)
    if paragraphs and all(paragraphs):
        flags = [True] * len(pieces)
    elif len(pieces) == len(paragraphs):
        flags = list(paragraphs)
    else:
        return text
    joined = [LINE_BREAK.sub(" ", piece) if wrapped else piece for piece, wrapped in zip(pieces, flags, strict=True)]
    return "".join(piece + gap for piece, gap in zip(joined, [*gaps, ""], strict=True))


def rewrap(text: str, width: int, column: int = 0, tail: str = "") -> str:
    """``text`` with each line longer than ``width`` wrapped at it (words are never split), its first line
    starting ``column`` characters in; shorter lines (a heading, a short paragraph) stay as they are.

    ``tail`` is the rest of the line after the text (the words after a selection, up to their line's end): the
    text's last line is wrapped so that it fits beside them where it can. The tail is not the text's to move,
    so where not even the text's last word fits beside it, the last line runs over as it would without one.
    """
    if not tail.strip() or not text.strip():
        return _rewrap(text, width, column)
    # The tail as one unbreakable word of its length, after a space where it starts with one.
    stand_in = "\0" * len(tail.lstrip())
    spaced = tail[:1].isspace()
    lines = _rewrap(text + (" " if spaced else "") + stand_in, width, column).split("\n")
    if spaced and lines[-1] == stand_in and len(lines) > 1:
        # Alone on a line of its own: the line before gives it the words that fit beside it.
        words = lines[-2].split(" ")
        moved: list[str] = []
        while len(words) > 1 and len(" ".join([words[-1], *moved, stand_in])) <= width:
            moved.insert(0, words.pop())
        if not moved:
            return _rewrap(text, width, column)
        lines[-2:] = [" ".join(words), " ".join([*moved, stand_in])]
    wrapped = "\n".join(lines)
    return wrapped[: len(wrapped) - len(stand_in) - spaced]


def _rewrap(text: str, width: int, column: int) -> str:
    out = []
    for index, line in enumerate(text.split("\n")):
        indent = column if index == 0 else 0
        if indent + len(line) <= width:
            out.append(line)
            continue
        pieces = textwrap.wrap(line, width, initial_indent=" " * indent, break_long_words=False,
                               break_on_hyphens=False)  # fmt: skip
        if pieces and indent:
            pieces[0] = pieces[0][indent:]
        out.append("\n".join(pieces) if pieces else line)
    return "\n".join(out)
