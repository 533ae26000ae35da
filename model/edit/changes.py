"""A rewrite as tracked changes: the word-level differences between the original span and a draft.

:func:`word_changes` lists them as :class:`Change` records (``start``, ``end``: character offsets into the
original; ``text``: what replaces that range in the draft), in order and never overlapping, so a writer can
take or leave each one: :func:`apply_changes` with any subset gives the original with exactly those hunks
replaced (all of them: the draft; none: the original, byte for byte). The CLI's ``--json`` and
``--changes``, the server path and the editor's tracked-changes view all use this one module.

The diff is the standard library's :class:`difflib.SequenceMatcher` over the words and marks of
punctuation, each with the whitespace after it, so spaces never anchor a match of their own: a sentence
rewritten word for word is one hunk, and two hunks always have a word or a mark the draft kept between
them. Each hunk is then cut to the tokens (a word, a run of whitespace, one mark) that differ, so a change
starts and ends between tokens, never inside a word, and a deleted word takes the space after it along. A
word keeps its inner apostrophes and hyphens ("don't", "well-known"), a number its separators ("3.14",
"1,000"), and combining marks stay with the letter or symbol they follow (an emoji's modifiers and joined
parts too). Past 200 words, difflib's autojunk keeps a word that makes up over 1% of the draft from
starting a match (it may still extend one): without it a span that repeats one word hundreds of times
takes minutes; with it such a span may come out as fewer, larger hunks.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

# Between two word characters these keep the word whole: apostrophes and hyphens.
_WORD_JOINERS = frozenset("'’-‐")
# Between two digits these keep a number whole.
_NUMBER_JOINERS = frozenset(".,")
_ZERO_WIDTH_JOINER = "\u200d"


@dataclass(frozen=True, slots=True)
class Change:
    """Replace the original's ``[start, end)`` with ``text``: an insertion when ``start == end``, a deletion
    when ``text`` is empty."""

    start: int
    end: int
    text: str

    def removed(self, original: str) -> str:
        """The original's words this change takes out."""
        return original[self.start : self.end]

    def as_dict(self) -> dict[str, int | str]:
        return {"start": self.start, "end": self.end, "text": self.text}


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _extends(char: str) -> bool:
    """A character that belongs to whatever comes before it: combining marks, variation selectors, emoji
    skin tones (category Sk in the emoji range)."""
    category = unicodedata.category(char)
    return category.startswith("M") or (category == "Sk" and ord(char) >= 0x1F3FB)


def token_bounds(text: str) -> list[int]:
    """Where ``text``'s tokens start, and its length last: a word, a run of whitespace, or one other mark,
    each with the combining characters that follow it."""
    bounds = [0]
    n, i = len(text), 0
    while i < n:
        char = text[i]
        i += 1
        if char.isspace():
            while i < n and text[i].isspace():
                i += 1
        elif _is_word_char(char) or _extends(char):
            while i < n:
                nxt = text[i]
                if _is_word_char(nxt) or _extends(nxt):
                    i += 1
                elif (
                    i + 1 < n
                    and _is_word_char(text[i + 1])
                    and (
                        nxt in _WORD_JOINERS
                        or nxt == _ZERO_WIDTH_JOINER
                        or (nxt in _NUMBER_JOINERS and text[i - 1].isdigit() and text[i + 1].isdigit())
                    )
                ):
                    i += 2
                else:
                    break
        else:
            # One mark with what extends it; a zero-width joiner binds the next symbol too (emoji sequences),
            # and two regional indicators are one flag.
            if 0x1F1E6 <= ord(char) <= 0x1F1FF and i < n and 0x1F1E6 <= ord(text[i]) <= 0x1F1FF:
                i += 1
            while i < n:
                if _extends(text[i]):
                    i += 1
                elif text[i] == _ZERO_WIDTH_JOINER and i + 1 < n and not text[i + 1].isspace():
                    i += 2
                else:
                    break
        bounds.append(i)
    return bounds


def tokens(text: str) -> list[str]:
    """``text`` cut into tokens; joined they give ``text`` back."""
    bounds = token_bounds(text)
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def word_changes(original: str, draft: str) -> list[Change]:
    """The hunks that turn ``original`` into ``draft``, in order, not overlapping, each from one token
    boundary of the original to another; ``apply_changes(original, word_changes(original, draft)) == draft``."""
    if original == draft:
        return []
    a, b = tokens(original), tokens(draft)
    a_units, b_units = _units(a), _units(b)
    a_keys = ["".join(a[i:j]) for i, j in zip(a_units, a_units[1:], strict=False)]
    b_keys = ["".join(b[i:j]) for i, j in zip(b_units, b_units[1:], strict=False)]
    # The common head and tail first: a local edit of a long span diffs only its middle.
    head = 0
    while head < min(len(a_keys), len(b_keys)) and a_keys[head] == b_keys[head]:
        head += 1
    tail = 0
    while tail < min(len(a_keys), len(b_keys)) - head and a_keys[-1 - tail] == b_keys[-1 - tail]:
        tail += 1
    # autojunk (the default) on purpose: see the module's docstring.
    matcher = difflib.SequenceMatcher(None, a_keys[head : len(a_keys) - tail], b_keys[head : len(b_keys) - tail])
    # (i1, i2, j1, j2): the original's tokens [i1, i2) become the draft's [j1, j2).
    hunks = [
        _trim(a_units[head + u1], a_units[head + u2], b_units[head + v1], b_units[head + v2], a, b)
        for tag, u1, u2, v1, v2 in matcher.get_opcodes()
        if tag != "equal"
    ]
    a_at = _offsets(a)
    return [Change(a_at[i1], a_at[i2], "".join(b[j1:j2])) for i1, i2, j1, j2 in hunks]


def _units(parts: Sequence[str]) -> list[int]:
    """Where the units the matcher compares start among ``parts`` (and their count last): each word or mark
    with the whitespace after it, so the spaces between words never anchor a match of their own (and the
    matcher, quadratic in a repeated element, never sees thousands of identical spaces)."""
    starts = [i for i, part in enumerate(parts) if i == 0 or not part.isspace()]
    return [*starts, len(parts)]


def _trim(i1: int, i2: int, j1: int, j2: int, a: list[str], b: list[str]) -> tuple[int, int, int, int]:
    """A hunk less the tokens both sides share at its edges: "sat" → "sat down" adds " down", and the space
    after a replaced word stays unchanged."""
    while i1 < i2 and j1 < j2 and a[i1] == b[j1]:
        i1, j1 = i1 + 1, j1 + 1
    while i1 < i2 and j1 < j2 and a[i2 - 1] == b[j2 - 1]:
        i2, j2 = i2 - 1, j2 - 1
    return i1, i2, j1, j2


def _offsets(parts: Sequence[str]) -> list[int]:
    at = [0]
    for part in parts:
        at.append(at[-1] + len(part))
    return at


def check_changes(original: str, changes: Sequence[Change]) -> None:
    """Refuse changes that are out of order, overlap, or reach outside ``original``, naming the first."""
    position = 0
    for index, change in enumerate(changes):
        if not 0 <= change.start <= change.end <= len(original):
            raise ValueError(
                f"change {index} covers [{change.start}, {change.end}), "
                f"outside the original's {len(original)} characters"
            )
        if change.start < position:
            raise ValueError(f"change {index} starts at {change.start}, before the previous change ended ({position})")
        position = change.end


def apply_changes(original: str, changes: Sequence[Change]) -> str:
    """``original`` with each of ``changes`` (any in-order subset of one :func:`word_changes` list) made."""
    check_changes(original, changes)
    parts: list[str] = []
    position = 0
    for change in changes:
        parts.append(original[position : change.start])
        parts.append(change.text)
        position = change.end
    parts.append(original[position:])
    return "".join(parts)


def accept_some(original: str, changes: Sequence[Change], accepted: Collection[int]) -> str:
    """``original`` with the changes at the indices in ``accepted`` made and the others left as they were."""
    return apply_changes(original, [change for index, change in enumerate(changes) if index in accepted])


def draft_ranges(changes: Iterable[Change]) -> list[tuple[int, int]]:
    """Where each change's text lies in the text they make (all of them accepted): ``[start, end)`` each."""
    ranges: list[tuple[int, int]] = []
    shift = 0
    for change in changes:
        start = change.start + shift
        ranges.append((start, start + len(change.text)))
        shift += len(change.text) - (change.end - change.start)
    return ranges


def word_diff(original: str, changes: Sequence[Change]) -> str:
    """The original with each change written in as ``[-removed-]{+added+}``, as ``git diff --word-diff`` does."""
    check_changes(original, changes)
    parts: list[str] = []
    position = 0
    for change in changes:
        parts.append(original[position : change.start])
        if change.end > change.start:
            parts.append(f"[-{original[change.start : change.end]}-]")
        if change.text:
            parts.append(f"{{+{change.text}+}}")
        position = change.end
    parts.append(original[position:])
    return "".join(parts)
