"""Tracked changes kept in the text itself, as CriticMarkup: ``{++added++}``, ``{--removed--}`` and
``{~~old~>new~~}``, each followed by a comment that names who made it where that is known: ``{>>Maya<<}``.

A Word or LibreOffice document's tracked changes come in this way when the writer chooses to review them one
by one (File ▸ Open): the text carries every change still to decide, so it can be saved halfway through, read
by other CriticMarkup tools, recovered after a crash and undone, like any other words. :func:`mark_up` writes
the changes that turn the text as it was before them into the text with them made; :func:`marks` finds them
again; :func:`settle` makes or drops them. Nothing here needs Qt.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from app.documents.markdown_blocks import CHANGES_ACCEPTED, ImportedDocument, Revision
from model.edit.changes import Change, word_changes

# An import's note on its tracked changes, when they are marked in the text to be reviewed.
CHANGES_MARKED = "its tracked changes are marked in the text, to accept or reject one by one"

# One mark, its parts by name, and the comment right after it (who made it). Non-greedy and across lines: a
# change may take in a paragraph break; its comment is one line.
MARK = re.compile(r"(?:\{\+\+(?P<added>.*?)\+\+\}|\{--(?P<removed>.*?)--\}|\{~~(?P<old>.*?)~>(?P<new>.*?)~~\})"
                  r"(?:\{>>(?P<author>[^\n]*?)<<\})?", re.DOTALL)  # fmt: skip
# How far a paragraph's change may slide to start at its break: a sentence's end, a closing mark or two.
_SLIDE = 8
# A line with the blank lines after it (the last may have no line break).
# A run of changed lines longer than this (in characters, on either side) is marked as one change, not word by
# word: diffing its words would take seconds (War and Peace against another novel: 8 s), and a run that long is
# a text replaced, not a text edited.
WORD_BY_WORD_LIMIT = 100_000
_LINE = re.compile(r"[^\n]*\n(?:[ \t]*\n)*|[^\n]+\Z")

# Where a line starts, for :func:`painted`: outside any mark, or inside one of its parts; what ends each, and
# the state each delimiter leads to.
OUTSIDE, IN_ADDED, IN_REMOVED, IN_OLD, IN_NEW, IN_COMMENT = range(6)
_ENDS = {
    OUTSIDE: re.compile(r"\{\+\+|\{--|\{~~|\{>>"),
    IN_ADDED: re.compile(r"\+\+\}"),
    IN_REMOVED: re.compile(r"--\}"),
    IN_OLD: re.compile(r"~>"),
    IN_NEW: re.compile(r"~~\}"),
    IN_COMMENT: re.compile(r"<<\}"),
}
_NEXT = {OUTSIDE: {"{++": IN_ADDED, "{--": IN_REMOVED, "{~~": IN_OLD, "{>>": IN_COMMENT}, IN_OLD: {"~>": IN_NEW}}
_PAINT = {IN_ADDED: "added", IN_NEW: "added", IN_REMOVED: "removed", IN_OLD: "removed", IN_COMMENT: "comment"}
# What a change's words are compared by, to find whose they are: no spaces, nor the signs Markdown adds.
_NOT_COMPARED = re.compile(r"[\s\\*_~`]+")
_EDGES = re.compile(r"^\W+|\W+$")
_WORD = re.compile(r"\w+(?:['’]\w+)*")
_KEPT_BETWEEN = 2  # words of a rewritten sentence kept by chance between two of its changes (_rewrites_whole)


@dataclass(frozen=True, slots=True)
class Mark:
    """One tracked change at ``[start, end)`` of the text (its delimiters and comment included): ``removed`` is
    what it takes out, ``added`` what it puts in, ``author`` who made it ("" where no comment says)."""

    start: int
    end: int
    removed: str
    added: str
    author: str = ""

    @property
    def kind(self) -> str:
        if not self.removed:
            return "insertion"
        return "deletion" if not self.added else "replacement"

    def settled(self, accept: bool) -> str:
        """The words this change leaves: its new ones when accepted, its old ones when rejected."""
        return self.added if accept else self.removed


def marks(text: str) -> list[Mark]:
    """The tracked changes in ``text``, in order."""
    return list(_marks(text))


def _marks(text: str) -> Iterator[Mark]:
    if "{++" not in text and "{--" not in text and "{~~" not in text:  # most texts: no scan at all
        return
    for match in MARK.finditer(text):
        author = (match.group("author") or "").strip()
        if match.group("added") is not None:
            yield Mark(match.start(), match.end(), "", match.group("added"), author)
        elif match.group("removed") is not None:
            yield Mark(match.start(), match.end(), match.group("removed"), "", author)
        else:
            yield Mark(match.start(), match.end(), match.group("old"), match.group("new"), author)


def settle(text: str, accept: bool, which: Iterable[Mark] | None = None) -> str:
    """``text`` with the changes ``which`` (all of them: None) made (``accept``) or dropped."""
    chosen = marks(text) if which is None else sorted(which, key=lambda mark: mark.start)
    parts, position = [], 0
    for mark in chosen:
        parts.append(text[position : mark.start])
        parts.append(mark.settled(accept))
        position = mark.end
    parts.append(text[position:])
    return "".join(parts)


def changes_between(before: str, after: str) -> list[Change]:
    """The word-level changes from ``before`` to ``after``, diffed line by line first: a book with a change in
    every chapter is then as quick to diff as the changed lines. A line keeps the blank lines after it, so that
    they never anchor a match of their own between two changed paragraphs. A run of changed lines past
    ``WORD_BY_WORD_LIMIT`` is one change."""
    old_lines, new_lines = _LINE.findall(before), _LINE.findall(after)
    old_at = [0]
    for line in old_lines:
        old_at.append(old_at[-1] + len(line))
    new_at = [0]
    for line in new_lines:
        new_at.append(new_at[-1] + len(line))
    found: list[Change] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines).get_opcodes():
        if tag == "equal":
            continue
        shift = old_at[i1]
        old_run, new_run = before[old_at[i1] : old_at[i2]], after[new_at[j1] : new_at[j2]]
        if max(len(old_run), len(new_run)) > WORD_BY_WORD_LIMIT:
            found.append(Change(old_at[i1], old_at[i2], new_run))
            continue
        for change in word_changes(old_run, new_run):
            found.append(_after_words(before, Change(change.start + shift, change.end + shift, change.text)))
    return found


def _after_words(before: str, change: Change) -> Change:
    """An insertion or a deletion placed where a writer looks for it: a whole paragraph's starting at its break,
    right after the words before it ("lamp.{++\n\nThe sea.++}\n", not "lamp.\n{++\nThe sea.\n++}" nor
    "lamp{++.\n\nThe sea++}."), else a sentence's at its first word ("few. {--He left. --}On", not
    "few{--. He left--}. On"), or, at a paragraph's end, at the space before it ("lit.{++ It burned.++}\n", not
    "lit{++. It burned++}.\n"). The same change either way; it slides only over the characters it repeats."""
    start, end, text = change.start, change.end, change.text
    inserted = start == end
    if not inserted and text:
        return change  # a replacement stays where the words differ
    moved = text if inserted else before[start:end]
    for wanted in (
        lambda words: words.startswith("\n"),
        lambda words: words[:1].isalnum(),
        lambda words: words[:1] == " " and words[1:2].isalnum(),
    ):
        slid = _slid(before, start, end, moved, inserted, wanted)
        if slid is not None:
            start, end, moved = slid
            break
    while start > 0 and moved and before[start - 1] == "\n" and moved[-1] == "\n":
        moved = "\n" + moved[:-1]
        start, end = start - 1, end - 1
    return Change(start, end, moved if inserted else "")


def _slid(before: str, start: int, end: int, moved: str, inserted: bool,
          wanted: Callable[[str], bool]) -> tuple[int, int, str] | None:  # fmt: skip
    """The change slid right (its first character taken from after it) until its words are ``wanted``, within
    ``_SLIDE`` characters; None where they never are."""
    for _ in range(_SLIDE + 1):
        if wanted(moved):
            return start, end, moved
        if not moved or end >= len(before) or before[end] != moved[0]:
            return None
        moved, end = moved[1:] + before[end], end + 1
        start = end if inserted else start + 1
    return None


class _Authors:
    """Who made each change :func:`_changes` finds, from the file's own ``revisions``: a diff of two readings
    knows nothing of authors, so its changes are matched to the file's by their words, in order. A file whose
    changes are all one person's needs no matching."""

    def __init__(self, revisions: Sequence[Revision]) -> None:
        names = {revision.author for revision in revisions}
        self.only = next(iter(names)) if len(names) == 1 else ""
        # Per kind (inserted or not): the words of all its revisions end to end, each character's author, and
        # each revision's place in them; and how far the changes already matched have read.
        self.words = {True: "", False: ""}
        self.owners: dict[bool, list[str]] = {True: [], False: []}
        self.spans: dict[bool, list[tuple[int, int]]] = {True: [], False: []}
        self.read = {True: 0, False: 0}
        # Changes of spaces and breaks alone (a paragraph split): where they fall among the words, and whose.
        self.blank: dict[bool, list[tuple[int, str]]] = {True: [], False: []}
        for revision in revisions:
            words = _NOT_COMPARED.sub("", revision.words)
            start = len(self.words[revision.inserted])
            if not words and revision.words:
                self.blank[revision.inserted].append((start, revision.author))
            self.words[revision.inserted] += words
            self.owners[revision.inserted].extend([revision.author] * len(words))
            self.spans[revision.inserted].append((start, start + len(words)))

    def of(self, removed: str, added: str) -> tuple[str, str]:
        """Who took out ``removed`` and who put in ``added`` ("Maya", "Maya and Ed"); "" where that is not known."""
        if self.only or not self.words[True] + self.words[False]:
            return self.only, self.only
        return self._names(False, removed), self._names(True, added)

    def _names(self, inserted: bool, words: str) -> str:
        return " and ".join(dict.fromkeys(name for name in self._owners(inserted, words) if name))

    def _owners(self, inserted: bool, words: str) -> list[str]:
        key = _NOT_COMPARED.sub("", words)
        if not key:  # spaces or breaks alone: the first such change of the file's not yet matched, from here on
            blanks = self.blank[inserted]
            first = next((index for index, (at, _name) in enumerate(blanks) if at >= self.read[inserted]), None)
            return [blanks.pop(first)[1]] if first is not None and words else []
        stream, read = self.words[inserted], self.read[inserted]
        # As it is, else without the stops and commas at its ends: a change slides over the characters it repeats
        # ("down{++. Nobody read it++}." for the file's "Nobody read it.").
        for wanted in dict.fromkeys((key, _EDGES.sub("", key) or key)):
            at = stream.find(wanted, read)
            at = stream.find(wanted) if at < 0 else at  # a footnote's changes: read with the body, written after it
            if at >= 0:
                self.read[inserted] = max(read, at + len(wanted))
                return self.owners[inserted][at : at + len(wanted)]
        # Wider than the file's own changes (a word one letter of which was changed): those that lie inside it.
        found: list[str] = []
        for start, end in self.spans[inserted]:
            if start < read or start == end:
                continue
            if stream[start:end] not in key:
                if found or start - read > len(key):
                    break
                continue
            found.append(self.owners[inserted][start])
            self.read[inserted] = end
        return found


def _signed(author: str) -> str:
    """The comment that names a change's ``author``, with nothing in the name that could end it early."""
    name = " ".join(re.sub(r"[{}<>]", "", author).split())
    return f"{{>>{name}<<}}" if name else ""


def _rewrites_whole(before: str, changes: list[Change]) -> list[Change]:
    """``changes`` with those of one rewritten sentence joined: two changes of two words or more each, with no
    more than ``_KEPT_BETWEEN`` words and no line break between them, become one. A sentence the model rewrote
    keeps a "she" or an "in the" of the old one by chance; marked word by word it reads as six changes with
    those between, where a reader wants the old sentence and the new. A typo mended beside another stays two."""
    joined: list[Change] = []
    for change in changes:
        last = joined[-1] if joined else None
        if last is not None and _words(last, before) >= 2 and _words(change, before) >= 2:
            kept = before[last.end : change.start]
            if "\n" not in kept and len(_WORD.findall(kept)) <= _KEPT_BETWEEN:
                joined[-1] = Change(last.start, change.end, last.text + kept + change.text)
                continue
        joined.append(change)
    return joined


def _words(change: Change, before: str) -> int:
    """How many words ``change`` touches: those it takes out or those it puts in, whichever are more."""
    return max(len(_WORD.findall(before[change.start : change.end])), len(_WORD.findall(change.text)))


def mark_up(before: str, after: str, revisions: Sequence[Revision] = (), whole_rewrites: bool = False) -> str | None:
    """``before`` with the changes that make ``after`` of it written in as CriticMarkup, each signed with its
    author where the file's ``revisions`` tell (a file's own changes, marked as they are); with ``whole_rewrites``
    a rewritten sentence as one change (:func:`_rewrites_whole`). None where the texts themselves hold the
    delimiters, so that the marks could not be told from the words."""
    parts, position = [], 0
    authors = _Authors(revisions)
    changes = changes_between(before, after)
    for change in _rewrites_whole(before, changes) if whole_rewrites else changes:
        parts.append(before[position : change.start])
        removed = before[change.start : change.end]
        taken_by, put_by = authors.of(removed, change.text)
        if not removed:
            parts.append(f"{{++{change.text}++}}{_signed(put_by)}")
        elif not change.text:
            parts.append(f"{{--{removed}--}}{_signed(taken_by)}")
        elif taken_by and put_by and taken_by != put_by:  # one took out, another put in: two changes, each theirs
            parts.append(f"{{--{removed}--}}{_signed(taken_by)}{{++{change.text}++}}{_signed(put_by)}")
        else:
            both = " and ".join(dict.fromkeys(name for name in (taken_by, put_by) if name))
            parts.append(f"{{~~{removed}~>{change.text}~~}}{_signed(both)}")
        position = change.end
    parts.append(before[position:])
    marked = "".join(parts)
    if settle(marked, accept=False) != before or settle(marked, accept=True) != after:
        return None
    return marked


def signed_by(author: str) -> list[Revision]:
    """What :func:`mark_up` needs to sign every change with ``author``: a text's changes all one person's."""
    return [Revision(True, author, "")] if author.strip() else []


def placements(after: str, marked: str) -> list[tuple[int, int, str]]:
    """Where each mark of ``marked`` (``after``'s words marked up: :func:`mark_up`) goes into ``after``: the stretch
    of ``after`` it stands for (its new words; none for a deletion) and the mark itself, in order. Writing each in
    place of its stretch turns ``after`` into ``marked`` and leaves every word between them as it was."""
    found, shift = [], 0
    for mark in marks(marked):
        start = mark.start - shift
        found.append((start, start + len(mark.added), marked[mark.start : mark.end]))
        shift += mark.end - mark.start - len(mark.added)
    return found


def reviewed(accepted: ImportedDocument, before: ImportedDocument) -> ImportedDocument | None:
    """An imported document's text with its tracked changes marked, from its reading with them ``accepted`` and
    its reading ``before`` them; None where :func:`mark_up` cannot mark them."""
    marked = mark_up(before.text, accepted.text, accepted.revisions)
    if marked is None:
        return None
    return replace(accepted, text=marked, notes=tuple(note.replace(CHANGES_ACCEPTED, CHANGES_MARKED)
                                                      for note in accepted.notes))  # fmt: skip


def painted(line: str, state: int) -> tuple[list[tuple[int, int, str]], int]:
    """How to paint one line that starts in ``state`` (``OUTSIDE``, or inside a mark's part, where the line
    before ended): its ranges as ``(start, end, "delimiter" | "added" | "removed" | "comment")``, and the state
    it ends in.
    Line by line, it reads the marks as :func:`marks` reads the whole text: each part ends at the first of the
    delimiters that can end it."""
    ranges: list[tuple[int, int, str]] = []
    position = 0
    while True:
        found = _ENDS[state].search(line, position)
        end = len(line) if found is None else found.start()
        if end > position and state != OUTSIDE:
            ranges.append((position, end, _PAINT[state]))
        if found is None:
            return ranges, state
        ranges.append((found.start(), found.end(), "delimiter"))
        position, state = found.end(), _NEXT.get(state, {}).get(found.group(), OUTSIDE)
