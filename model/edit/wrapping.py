"""Paragraphs wrapped by hand: a plain-text file, an e-mail or a Project Gutenberg book breaks its lines at a
fixed width, so a line break inside such a paragraph is where the line was full, not the writer's layout.

A rewrite across lines holds each run of line breaks as layout (:func:`model.edit.shape.with_layout_held`).
Inside a hand-wrapped paragraph that cut the paragraph into one free region a line, each rewritten on its own
to about its line's length: sentences broken where the old lines were, and a line the model wrote little for
left as a lone mark ("." on a line of its own). Here such a paragraph's inner breaks are found
(:func:`wrapped_breaks`), so they are left free; the model writes the paragraph as prose, and the new text is
wrapped again at the width the writer's lines had (:func:`rewrap`).
"""

from __future__ import annotations

import re
import textwrap

# A paragraph is hand-wrapped when it has two or more lines, its longest is at least this many characters,
# and every line but its last fills at least HARD_WRAP_FILL of that: lines broken where they were full.
HARD_WRAP_MIN_WIDTH = 50
HARD_WRAP_FILL = 0.75
# A line that starts a list item, a heading or a quote is the writer's layout, whatever its length.
LINE_MARKER = re.compile(r"[ \t]*(?:#{1,6} |[-*+] |> ?|\d{1,3}[.)] )")
BLANK_LINES = re.compile(r"\n[ \t]*\n[ \t\n]*")


def wrapped_breaks(text: str, column: int = 0, line_after: int = 0) -> tuple[list[tuple[int, int]], int]:
    """The line breaks inside ``text``'s hand-wrapped paragraphs (ranges into ``text``) and the width they
    were wrapped at (their longest line; 0: none is). ``text`` starts ``column`` characters into its first
    line and its last line goes on for ``line_after`` characters after it: a selection's first and last lines
    are measured whole."""
    breaks: list[tuple[int, int]] = []
    width = 0
    start = 0
    for paragraph_end in [*(m.start() for m in BLANK_LINES.finditer(text)), len(text)]:
        paragraph = text[start:paragraph_end]
        line_starts = [start] + [start + m.end() for m in re.finditer(r"\n", paragraph)]
        lengths = [len(line.rstrip()) for line in paragraph.split("\n")]
        if start == 0:
            lengths[0] += column
        if paragraph_end == len(text):
            lengths[-1] += line_after
        longest = max(lengths)
        marked = any(LINE_MARKER.match(text, at) for at in line_starts[1:])
        if (
            len(lengths) >= 2
            and not marked
            and longest >= HARD_WRAP_MIN_WIDTH
            and all(length >= HARD_WRAP_FILL * longest for length in lengths[:-1])
        ):
            breaks.extend((at - 1, at) for at in line_starts[1:])
            width = max(width, longest)
        blank = BLANK_LINES.match(text, paragraph_end)
        start = blank.end() if blank else paragraph_end
    return breaks, width


def rewrap(text: str, width: int, column: int = 0) -> str:
    """``text`` with each line longer than ``width`` wrapped at it (words are never split), its first line
    starting ``column`` characters in; shorter lines (a heading, a short paragraph) stay as they are."""
    lines = text.split("\n")
    out = []
    for index, line in enumerate(lines):
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
