"""Paragraphs wrapped by hand: a plain-text file, an e-mail or a Project Gutenberg book breaks its lines at a
fixed width, so a line break inside such a paragraph is where the line was full, not the writer's layout.

A rewrite across lines holds each run of line breaks as layout (:func:`model.edit.shape.with_layout_held`).
Inside a hand-wrapped paragraph that cut the paragraph into one free region a line, each rewritten on its own
to about its line's length: sentences broken where the old lines were, and a line the model wrote little for
left as a lone mark ("." on a line of its own). Here such a paragraph's inner breaks are found
(:func:`wrapped_breaks`), so they are left free; the model writes the paragraph as prose, and the new text is
wrapped again at the width the writer's lines had (:func:`rewrap`). New text inside one of its lines (a sentence
rewritten, a gap filled) is wrapped there too, so the line does not run on past the others.

Lines that are paragraphs of their own (one Enter between paragraphs, as a writer types in the editor) must
never be taken for wrapped ones, so the test is strict. A paragraph is hand-wrapped when it has at least
three lines, its longest (the width) is 50 to 100 characters, and every line but the last is full: it fills
at least three quarters of the width, the next line's first word would not have fitted after it (within a
few columns), and at most half of those lines end a sentence. No line may start with a list, heading or quote marker.
"""

from __future__ import annotations

import re
from collections import Counter
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
    return width if _few_sentence_ends(lines) else 0


def _few_sentence_ends(lines: list[str]) -> bool:
    """Whether at most half the lines before the last end a sentence: lines typed a sentence each do."""
    endings = sum(bool(SENTENCE_END.search(line.rstrip())) for line in lines[:-1])
    return 2 * endings <= len(lines) - 1


class Wrapping(NamedTuple):
    """What :func:`wrapped_breaks` finds in a selection."""

    breaks: list[tuple[int, int]]  # the line breaks inside hand-wrapped paragraphs (ranges into the core)
    # The width those were wrapped at, or the width of the one hand-wrapped paragraph the core lies inside
    # (within a line, or an empty core: a gap); 0: none.
    width: int
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
    widths: list[int] = []
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
            widths.append(paragraph_width)
        blank = BLANK_LINES.match(context, paragraph_end)
        paragraph_start = blank.end() if blank else paragraph_end
    if not width and len(widths) == 1:
        # Inside one line of a hand-wrapped paragraph (or a point in one): new text there wraps as its lines do.
        width = widths[0]
    return Wrapping(breaks, width, tuple(paragraphs))


def as_prose(text: str, paragraphs: tuple[bool, ...], in_place: bool = False) -> str:
    """``text`` (new words for a selection whose ``paragraphs`` say which were hand-wrapped) with every line
    break inside a hand-wrapped paragraph a space: there a break only says where a line was full, so one the
    model wrote (a model trained on wrapped books wraps at its own width) would break the prose where
    :func:`rewrap` cannot mend it. Paragraph breaks stay. Where the model wrote more or fewer paragraphs than
    the selection had, only an all-wrapped selection is joined: which of its paragraphs is which is unknown.

    ``in_place``: each character of a break a space, so the text keeps its length (a developing pass's text,
    whose inks are ranges of it); otherwise a break with the spaces around it is one space."""
    pieces, gaps = BLANK_LINES.split(text), BLANK_LINES.findall(text)
    if paragraphs and all(paragraphs):
        flags = [True] * len(pieces)
    elif len(pieces) == len(paragraphs):
        flags = list(paragraphs)
    else:
        return text
    def join(piece: str) -> str:
        return breaks_as_spaces(piece) if in_place else LINE_BREAK.sub(" ", piece)

    joined = [join(piece) if wrapped else piece for piece, wrapped in zip(pieces, flags, strict=True)]
    return "".join(piece + gap for piece, gap in zip(joined, [*gaps, ""], strict=True))


def breaks_as_spaces(text: str) -> str:
    """``text`` with each line break (and the spaces beside it) as as many spaces: it keeps its length, so a
    developing pass's inks, which are ranges of it, stay where they were."""
    return LINE_BREAK.sub(lambda found: " " * len(found.group()), text)


def rewrap(text: str, width: int, column: int = 0, tail: str = "", in_place: bool = False) -> str:
    """``text`` with each line longer than ``width`` wrapped at it (words are never split), its first line
    starting ``column`` characters in; shorter lines (a heading, a short paragraph) stay as they are. Only
    spaces become line breaks, one for one: the text keeps its length (:func:`fold`).

    ``tail`` is the rest of the line after the text (the words after a selection, up to their line's end): the
    text's last line is wrapped so that it fits beside them where it can, the last two lines split evenly
    where the tail would otherwise stand alone on its line. The tail is not the text's to move,
    so where not even the text's last word fits beside it, the last line runs over as it would without one.

    Where the text's first word does not fit in its line either, the text starts on a line of its own: the
    space before it, if the text has it; else a line break before it (the space before it is the document's,
    left at the end of the line above), unless ``in_place`` (a pass being painted) keeps the length.
    """
    first_word = text.split(" ", 1)[0].split("\n", 1)[0]  # empty where the text starts with a space
    if column and first_word and column + len(first_word) > width and not in_place:
        return "\n" + rewrap(text, width, 0, tail)
    if not tail.strip() or not text.strip():
        return fold(text, width, column)
    # The tail as one unbreakable word of its length, after a space where it starts with one.
    stand_in = "\0" * len(tail.lstrip())
    joiner = " " if tail[:1].isspace() else ""
    lines = fold(text + joiner + stand_in, width, column).split("\n")
    # A space between them (the tail's, or the text's own last one: a fill before a word) is a place to break.
    own_space = not joiner and text.endswith(" ")
    if (joiner or own_space) and lines[-1] == stand_in and len(lines) > 1:
        # Alone on a line of its own: the line before may give it the words that fit beside it, or (the text's
        # own space) simply end there. Of these the most even split of the two lines is taken (the least
        # squared room left), so neither is left a stub that reads like a paragraph's end.
        before = lines[-2]
        indent = column if len(lines) == 2 else 0
        splits: dict[int | None, int] = {
            at: (width - indent - at) ** 2 + (width - len(before) + at - len(stand_in)) ** 2
            for at, char in enumerate(before)
            if char == " " and before[:at].strip() and len(before) - at + len(stand_in) <= width
        }
        if own_space:
            splits[None] = (width - indent - len(before)) ** 2 + (width - len(stand_in)) ** 2
        if not splits:
            return fold(text, width, column)
        at = min(splits, key=splits.__getitem__)
        if at is not None:
            lines[-2:] = [before[:at], before[at + 1 :] + " " + stand_in]
    wrapped = "\n".join(lines)
    return wrapped[: len(wrapped) - len(stand_in) - len(joiner)]


WORD = re.compile(r"[^ ]+")


def fold(text: str, width: int, column: int = 0) -> str:
    """``text`` with each line longer than ``width`` broken at spaces so that its lines fit (a word longer than
    the width gets a line of its own), the first line starting ``column`` characters in. Each break replaces
    the last space before a word, so the text keeps its length and characters (the same positions hold the
    same words): a developing pass can be wrapped as the finished text will be."""
    out = list(text)
    line_start = 0  # where the text's current line starts, and the column it starts in
    indent = column
    for line in text.split("\n"):
        line_end = line_start + len(line)
        if indent + len(line) > width:
            begin = line_start  # where the wrapped line being filled starts
            for word in WORD.finditer(line):
                start, end = line_start + word.start(), line_start + word.end()
                # Not before the line's first word, unless the line starts with a space in its column.
                if indent + end - begin > width and (text[begin:start].strip() or (indent and start > begin)):
                    out[start - 1] = "\n"  # the space just before the word
                    begin, indent = start, 0
        line_start, indent = line_end + 1, 0
    return "".join(out)


# The width Rewrap Paragraph uses where a document has no hand-wrapped paragraph to measure: Project
# Gutenberg's and e-mail's (RFC 3676 asks for lines of at most 78, most mailers wrap at 72).
DEFAULT_WRAP_WIDTH = 72


def prevailing_width(document: str) -> int:
    """The width most of ``document``'s hand-wrapped paragraphs were wrapped at (the wider on a tie), or 0."""
    counts = Counter(wrap_width(piece.strip("\n").split("\n")) for piece in BLANK_LINES.split(document))
    counts.pop(0, None)
    return max(counts, key=lambda width: (counts[width], width)) if counts else 0


def refill(paragraphs: str, width: int) -> str:
    """``paragraphs`` (whole ones, blank lines apart) each as one piece of prose wrapped at ``width``, as Rewrap
    Paragraph gives them: its line breaks spaces, its first line's indent kept. A paragraph with a line that
    starts with a list, heading or quote marker keeps its lines: they are the writer's layout."""
    pieces, gaps = BLANK_LINES.split(paragraphs), BLANK_LINES.findall(paragraphs)
    out = []
    for piece in pieces:
        if not piece.strip() or any(LINE_MARKER.match(line) for line in piece.split("\n")):
            out.append(piece)
            continue
        body = piece.lstrip()  # its leading line breaks (a blank line's) stay, and its first line's indent
        lead = piece[: len(piece) - len(body)]
        indent = len(re.split(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]", lead)[-1])
        out.append(lead + fold(LINE_BREAK.sub(" ", body.rstrip()), width, indent) + piece[len(piece.rstrip()) :])
    return "".join(piece + gap for piece, gap in zip(out, [*gaps, ""], strict=True))


def _joinable(lines: list[str], width: int) -> bool:
    """Whether a paragraph's ``lines`` read as wrapped by hand, for a writer who asked to unwrap them: as
    :func:`wrap_width` finds, or more loosely at the document's ``width`` (its prevailing one; 0: no paragraph of
    it passes, so none is taken on less), since wrappers are not exact: every line but the last (but one in
    four, left short by a rewrite) fills three quarters of it, none runs past it, and at most half of them end
    a sentence (lines typed a sentence each do)."""
    if len(lines) < 2 or any(LINE_MARKER.match(line) for line in lines):
        return False
    if wrap_width(lines):
        return True
    lengths = [len(line.rstrip()) for line in lines]
    if not HARD_WRAP_MIN_WIDTH <= width <= HARD_WRAP_MAX_WIDTH or max(lengths) > width + HARD_WRAP_SLACK:
        return False
    # One short line in four is a rewrite's ragged end inside it (Rewrap Paragraph's case), not the writer's.
    if sum(length < HARD_WRAP_FILL * width for length in lengths[:-1]) > (len(lines) - 1) // 4:
        return False
    return _few_sentence_ends(lines)


def unwrap(paragraphs: str, width: int) -> str:
    """``paragraphs`` with each hand-wrapped one (:func:`_joinable`) joined into a single line, its line breaks
    spaces and its first line's indent kept, for the window to wrap at its own width: Edit ▸ Join Wrapped Lines.
    Lists, headings, quotes, verse and paragraphs typed a line each keep their breaks."""
    pieces, gaps = BLANK_LINES.split(paragraphs), BLANK_LINES.findall(paragraphs)
    out = []
    for piece in pieces:
        body = piece.strip("\n")
        if not _joinable(body.split("\n"), width):
            out.append(piece)
            continue
        lead, tail = piece[: piece.index(body)], piece[piece.index(body) + len(body) :]
        indent = body[: len(body) - len(body.lstrip(" \t"))]
        out.append(lead + indent + LINE_BREAK.sub(" ", body.strip()) + tail)
    return "".join(piece + gap for piece, gap in zip(out, [*gaps, ""], strict=True))
