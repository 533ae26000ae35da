"""Format ▸ Footnote (Ctrl+Alt+F): a Markdown footnote put in where the writer is, as Word's Insert Footnote does.
Pure text in, edits out (no Qt), so each rule is tested on strings; ``app/window/footnote_command.py`` applies
them to the document as one undo step.

A footnote is Pandoc's: ``[^1]`` in the text, ``[^1]: its words`` on a line of its own, which every export
numbers in the order the text refers to them (``app/window/docx_footnotes.py``). So that the numbers the writer
sees are the ones printed, a text whose notes are numbered 1, 2, 3… in the order they are referred to stays so:
the new note takes its place's number, the later ones move up by one (their references and definitions both),
and its definition goes in among the others in that order. A text that names its notes (``[^smith]``) or numbers
them in another order keeps every label; the new note takes the next free number and its definition goes last.

The same key goes between a note's two halves: on a reference, to the definition's words; on a definition's
line, back to where the text refers to it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.documents.markdown_format import FENCE

DEFINITION = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:[ \t]*(.*)$")
REFERENCE = re.compile(r"\[\^([^\]\s]+)\]")
FOOTNOTE_MARK = re.compile(r"\[\^[^\]\s]+\]:?")  # either: a reference, or the label a definition starts with
CONTINUATION = re.compile(r"^(?: {4}|\t)\S")  # a definition's own further line, indented under it


@dataclass(frozen=True)
class TextEdit:
    """``text`` in place of ``start``…``end`` of the old text (code points)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class NewFootnote:
    """The edits that put a note in (in order, none overlapping), its label, and where the caret goes in the new
    text: after ``[^label]: `` on its definition's line, for the writer to type the note."""

    edits: tuple[TextEdit, ...]
    label: str
    caret: int
    renumbered: int  # how many later notes moved up by one


@dataclass(frozen=True)
class _Line:
    start: int
    text: str
    prose: bool  # not a fenced code block's line or fence


def _lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    start = 0
    fenced = False
    for line in text.split("\n"):
        fence = bool(FENCE.match(line))
        fenced ^= fence
        lines.append(_Line(start, line, not fenced and not fence))
        start += len(line) + 1
    return lines


def _references(line: _Line) -> list[re.Match[str]]:
    """A prose line's references; a definition's own label is none."""
    if not line.prose:
        return []
    definition = DEFINITION.match(line.text)
    return list(REFERENCE.finditer(line.text, definition.end(1) + 2 if definition else 0))


def _definitions(lines: list[_Line]) -> dict[str, int]:
    """Each label's first definition: the index of its line."""
    found: dict[str, int] = {}
    for number, line in enumerate(lines):
        if line.prose and (definition := DEFINITION.match(line.text)):
            found.setdefault(definition.group(1), number)
    return found


def apply_edits(text: str, edits: tuple[TextEdit, ...]) -> str:
    """``text`` with ``edits`` (in order, none overlapping) made."""
    pieces: list[str] = []
    at = 0
    for edit in edits:
        pieces += [text[at : edit.start], edit.text]
        at = edit.end
    return "".join(pieces) + text[at:]


def definition_at(text: str, at: int) -> str | None:
    """The label of the footnote whose definition's line ``at`` is on (outside code), else None."""
    line = next(line for line in reversed(_lines(text)) if line.start <= at)
    definition = DEFINITION.match(line.text) if line.prose else None
    return definition.group(1) if definition else None


def footnote_words(text: str, label: str) -> str | None:
    """The words of footnote ``label``'s definition (its first, outside code; its indented lines joined), or None
    where the text defines no such note."""
    lines = _lines(text)
    found = _definitions(lines).get(label)
    if found is None:
        return None
    definition = DEFINITION.match(lines[found].text)
    words = [definition.group(2).strip() if definition else ""]
    for line in lines[found + 1 :]:
        if not CONTINUATION.match(line.text):
            break
        words.append(line.text.strip())
    return " ".join(word for word in words if word)


def footnote_partner(text: str, at: int) -> tuple[int, str] | None:
    """Where the other half of the note at ``at`` is, and its label: from a reference (the caret in it or just after
    it) the start of its definition's words, from a definition's line the end of the text's first reference to it;
    None where ``at`` is on neither, or the other half is missing."""
    lines = _lines(text)
    line = next(line for line in reversed(lines) if line.start <= at)
    definition = DEFINITION.match(line.text) if line.prose else None
    if definition is not None:
        label = definition.group(1)
        return next(((each.start + reference.end(), label) for each in lines for reference in _references(each)
                     if reference.group(1) == label), None)  # fmt: skip
    for reference in _references(line):
        if line.start + reference.start() < at <= line.start + reference.end():
            target = _definitions(lines).get(reference.group(1))
            if target is None:
                return None
            found = DEFINITION.match(lines[target].text)
            return lines[target].start + (found.start(2) if found else 0), reference.group(1)
    return None


def add_footnote(text: str, at: int) -> NewFootnote:
    """The edits that put a new note's reference at ``at`` and its empty definition where it belongs. A caret
    just after a word's spaces puts the reference against the word ("table. |Next" -> "table.[^1] Next"); one
    inside a reference puts it after that one."""
    while at > 1 and text[at - 1] in " \t" and text[at - 2] not in " \t\n":
        at -= 1
    lines = _lines(text)
    first_seen: dict[str, int] = {}  # each label, where the text first refers to it
    for line in lines:
        for reference in _references(line):
            first_seen.setdefault(reference.group(1), line.start + reference.start())
            if line.start + reference.start() < at < line.start + reference.end():
                at = line.start + reference.end()
    definitions = _definitions(lines)
    labels = list(first_seen)
    edits: list[TextEdit] = []
    renumbered = 0
    if labels == [str(number) for number in range(1, len(labels) + 1)] and set(definitions) <= set(labels):
        number = 1 + sum(start < at for start in first_seen.values())
        label = str(number)
        renumbered = len(labels) - number + 1
        for line in lines:  # every later label up by one, in the text and on the definitions' lines
            definition = DEFINITION.match(line.text) if line.prose else None
            matches = [*([definition] if definition else []), *_references(line)]
            edits += [TextEdit(line.start + match.start(1), line.start + match.end(1), str(int(match.group(1)) + 1))
                      for match in matches if int(match.group(1)) >= number]  # fmt: skip
        place, definition_text, caret_offset = _in_order(text, lines, definitions, number, at)
    else:
        used = [int(label) for label in [*labels, *definitions] if label.isdigit()]
        label = str(max(used, default=0) + 1)
        place, separator = _at_the_end(text, lines, at)
        definition_text, caret_offset = f"{separator}[^{label}]: ", len(f"{separator}[^{label}]: ")
    new_reference = TextEdit(at, at, f"[^{label}]")
    # The reference before the definition where both go in at one place (a caret at the text's very end).
    ordered = tuple(sorted([*edits, new_reference, TextEdit(place, place, definition_text)],
                           key=lambda edit: (edit.start, edit is not new_reference)))  # fmt: skip
    before = sum(len(edit.text) - (edit.end - edit.start) for edit in ordered
                 if edit.start < place or edit is new_reference and edit.start == place)  # fmt: skip
    return NewFootnote(ordered, label, place + before + caret_offset, renumbered)


def _in_order(text: str, lines: list[_Line], definitions: dict[str, int], number: int, at: int) -> tuple[int, str, int]:
    """Where note ``number``'s definition goes among notes numbered in order, its text and the caret in it: before
    the definition of the note it comes before, else after the one before it (and its indented lines)."""
    words = f"[^{number}]: "
    if (later := definitions.get(str(number))) is not None:
        return lines[later].start, words + "\n", len(words)
    if (earlier := definitions.get(str(number - 1))) is not None:
        while earlier + 1 < len(lines) and CONTINUATION.match(lines[earlier + 1].text):
            earlier += 1
        return lines[earlier].start + len(lines[earlier].text), "\n" + words, 1 + len(words)
    place, separator = _at_the_end(text, lines, at)
    return place, separator + words, len(separator) + len(words)


def _at_the_end(text: str, lines: list[_Line], at: int) -> tuple[int, str]:
    """Where a definition goes after the text's last words (the blank lines and line break after them stay after
    it; after the new reference where that is last), and what separates it from them: a line break after other
    definitions, else a blank line."""
    end = len(text.rstrip())
    if at >= end:
        return at, "\n\n"
    last = next(line for line in reversed(lines) if line.start <= end and line.text.strip())
    return end, "\n" if last.prose and DEFINITION.match(last.text) else "\n\n"
