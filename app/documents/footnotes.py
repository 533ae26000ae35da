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
line, back to where the text refers to it.

Format ▸ Renumber Footnotes puts numbered notes back in order after a cut and paste or Edit ▸ Move Section put
them out of it (``[^5]`` before ``[^3]``): each numbered label becomes its note's place in the order the text first
refers to them, in the text and on the notes' lines, and notes' lines that stand together are sorted so too. Named
notes keep their names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from app.documents.markdown_format import lines_outside_code

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


class _Line(NamedTuple):
    start: int
    text: str
    prose: bool  # not a fenced code block's line or fence


def _lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    start = 0
    for line, prose in lines_outside_code(text):
        lines.append(_Line(start, line, prose))
        start += len(line) + 1
    return lines


def _definition(line: _Line) -> re.Match[str] | None:
    """A prose line's start as a note's definition, if it is one."""
    if not line.prose or "[^" not in line.text:  # most lines of a novel: no regex to run
        return None
    return DEFINITION.match(line.text)


def _references(line: _Line) -> list[re.Match[str]]:
    """A prose line's references; a definition's own label is none."""
    if not line.prose or "[^" not in line.text:
        return []
    definition = DEFINITION.match(line.text)
    return list(REFERENCE.finditer(line.text, definition.end(1) + 2 if definition else 0))


def _definitions(lines: list[_Line]) -> dict[str, int]:
    """Each label's first definition: the index of its line."""
    found: dict[str, int] = {}
    for number, line in enumerate(lines):
        if definition := _definition(line):
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


def _no_mark_at(text: str, at: int) -> bool:
    """Whether the line ``at`` is on holds no footnote mark: then nothing of the rest needs reading."""
    return "[^" not in text[text.rfind("\n", 0, at) + 1 : (text.find("\n", at) + 1 or len(text) + 1) - 1]


def definition_at(text: str, at: int) -> str | None:
    """The label of the footnote whose definition's line ``at`` is on (outside code), else None."""
    if _no_mark_at(text, at):
        return None
    line = next(line for line in reversed(_lines(text)) if line.start <= at)
    definition = _definition(line)
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
    if _no_mark_at(text, at):
        return None
    lines = _lines(text)
    line = next(line for line in reversed(lines) if line.start <= at)
    definition = _definition(line)
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
            definition = _definition(line)
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
    return end, "\n" if _definition(last) else "\n\n"


def renumbering(text: str) -> tuple[TextEdit, ...]:
    """The edits that number the numbered notes 1, 2, 3… in the order the text first refers to them (a number no
    reference uses comes after, in the order of its line) and sort the notes' lines where they stand together;
    none where they are in order already."""
    lines = _lines(text)
    order = list(dict.fromkeys(reference.group(1) for line in lines for reference in _references(line)))
    order += [label for label in _definitions(lines) if label not in order]
    numbered = [label for label in order if label.isdigit()]
    new_label = {label: str(number) for number, label in enumerate(numbered, start=1)}
    edits: list[TextEdit] = []
    block = _definition_block(lines)
    for index, line in enumerate(lines):
        if block is not None and block[0] <= index < block[1]:
            continue  # rewritten whole below, sorted
        definition = _definition(line)
        for match in [*([definition] if definition else []), *_references(line)]:
            label = match.group(1)
            if new_label.get(label, label) != label:
                edits.append(TextEdit(line.start + match.start(1), line.start + match.end(1), new_label[label]))
    if block is not None:
        records = _records(lines, *block)
        relabelled = [REFERENCE.sub(lambda found: f"[^{new_label.get(found.group(1), found.group(1))}]", record)
                      for _, record in records]  # fmt: skip
        keys = [_sort_key(new_label.get(label, label)) for label, _ in records]
        ordered = [record for _, record in sorted(zip(keys, relabelled, strict=True), key=lambda pair: pair[0])]
        start, end = lines[block[0]].start, lines[block[1] - 1].start + len(lines[block[1] - 1].text)
        if "\n".join(ordered) != text[start:end]:
            edits.append(TextEdit(start, end, "\n".join(ordered)))
    return tuple(sorted(edits, key=lambda edit: edit.start))


def _sort_key(label: str) -> tuple[int, int, str]:
    return (0, int(label), "") if label.isdigit() else (1, 0, label)


def _definition_block(lines: list[_Line]) -> tuple[int, int] | None:
    """The lines of the notes' lines where they all stand together (each note's line and its indented lines, one
    after another, nothing between), else None: scattered notes keep their places."""
    firsts = [index for index, line in enumerate(lines) if _definition(line)]
    if len(firsts) < 2:
        return None
    end = firsts[0]
    for first in firsts:
        if first != end:
            return None
        end = first + 1
        while end < len(lines) and CONTINUATION.match(lines[end].text):
            end += 1
    return firsts[0], end


def _records(lines: list[_Line], start: int, end: int) -> list[tuple[str, str]]:
    """Each note in lines ``start``…``end``: its label and its lines' text."""
    records: list[tuple[str, list[str]]] = []
    for line in lines[start:end]:
        definition = DEFINITION.match(line.text)
        if definition is not None:
            records.append((definition.group(1), [line.text]))
        else:
            records[-1][1].append(line.text)
    return [(label, "\n".join(texts)) for label, texts in records]


def notes_start(text: str) -> int:
    """Where the notes' lines at the text's end begin (blank lines between them allowed); the text's length where
    it does not end with them."""
    lines = _lines(text)
    start = len(text)
    for line in reversed(lines):
        if not line.text.strip() or CONTINUATION.match(line.text):
            continue
        if not _definition(line):
            break
        start = line.start
    return start

