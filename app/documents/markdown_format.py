"""Format ▸ Bold, Italic, Headings, Lists…: Markdown's marks put in or taken out of the writer's text, as Typora,
iA Writer or Obsidian do in their source views. Pure text in, text out (no Qt), so each rule is tested on strings;
``app/window/formatting.py`` applies an edit to the document as one undo step.

Every command toggles: Bold on bold text takes its ``**`` away, as a word processor's Bold button does. The text
given is whole lines (a paragraph's, or every line the selection touches) with the selection's offsets in it, in
code points; the edit returned is those lines' new text and where the selection lies in it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})


def is_markdown(path: Path | None) -> bool:
    """Whether Markdown cues suit ``path``; an untitled document is Markdown, as Save As offers .md first."""
    return path is None or path.suffix.lower() in MARKDOWN_SUFFIXES


@dataclass(frozen=True)
class Edit:
    """The lines' new text and the selection in it (``start == end``: a caret)."""

    text: str
    start: int
    end: int


FENCE = re.compile(r"^ {0,3}(```|~~~)")  # a fenced code block's opening or closing line


def lines_outside_code(text: str) -> Iterator[tuple[str, bool]]:
    """Each line of a Markdown ``text``, and whether it is prose: not a fenced code block's line or fence."""
    fenced = False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            yield line, False
        else:
            yield line, not fenced


class Inline(Enum):
    """An inline style and its mark. Italic's ``*`` shares its character with bold's ``**``: a run of three is
    both, so which styles a run holds is read from its length (``_holds``)."""

    BOLD = "**"
    ITALIC = "*"
    CODE = "`"
    STRIKE = "~~"


class LineKind(Enum):
    BULLET = "bullet"
    NUMBERED = "numbered"
    QUOTE = "quote"


HEADING = re.compile(r"^(#{1,6})(?:[ \t]+|$)")
BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+")
NUMBER = re.compile(r"^([ \t]*)\d{1,9}[.)][ \t]+")
QUOTE = re.compile(r"^>[ \t]?")
LINK = re.compile(r"\[([^\]\n]*)\]\(([^()\s]*)(?:[ \t]+\"[^\"\n]*\")?\)")
URL = re.compile(r"^(?:https?://|mailto:|www\.)\S+$", re.IGNORECASE)
WORD_CHARACTER = re.compile(r"[\w'’-]")


def _holds(style: Inline, run: int, character: str) -> bool:
    """Whether marks of ``run`` × ``character`` on both sides of a text make it ``style``."""
    if style is Inline.BOLD:
        return character in "*_" and run >= 2
    if style is Inline.ITALIC:
        return character in "*_" and run in (1, 3)
    if style is Inline.CODE:
        return character == "`" and run >= 1
    return character == "~" and run >= 2


def _run_before(line: str, position: int, character: str) -> int:
    count = 0
    while position - count > 0 and line[position - count - 1] == character:
        count += 1
    return count


def _run_after(line: str, position: int, character: str) -> int:
    count = 0
    while position + count < len(line) and line[position + count] == character:
        count += 1
    return count


def word_at(line: str, caret: int) -> tuple[int, int]:
    """The word around ``caret`` (letters, digits, apostrophes and inner hyphens); empty where there is none."""
    start = end = caret
    while start > 0 and WORD_CHARACTER.match(line[start - 1]):
        start -= 1
    while end < len(line) and WORD_CHARACTER.match(line[end]):
        end += 1
    return start, end


def _inner(line: str, start: int, end: int, style: Inline) -> tuple[int, int]:
    """The part of ``line[start:end]`` the style applies to: without the spaces at its edges (``** word**`` is no
    bold), and inside marks the selection itself took in (selecting ``**word**`` whole)."""
    while start < end and line[start].isspace():
        start += 1
    while end > start and line[end - 1].isspace():
        end -= 1
    character = style.value[0]
    family = "*_" if character in "*_" else character
    if end - start >= 2 and line[start] in family and line[end - 1] == line[start]:
        mark = line[start]
        lead, trail = _run_after(line, start, mark), _run_before(line, end, mark)
        shrink = min(lead, trail)
        if end - start > 2 * shrink and mark not in line[start + shrink : end - shrink]:
            start, end = start + shrink, end - shrink
    return start, end


def _is_styled(line: str, start: int, end: int, style: Inline) -> tuple[bool, str, int]:
    """Whether ``line[start:end]`` is already ``style``; the surrounding mark's character and run length."""
    if start == 0 or end >= len(line) or line[start - 1] != line[end]:
        return False, "", 0
    character = line[end]
    run = min(_run_before(line, start, character), _run_after(line, end, character))
    return _holds(style, run, character), character, run


def toggle_inline(text: str, start: int, end: int, style: Inline) -> Edit:
    """Put ``style``'s marks around the selection, or take them off where every selected line has them.

    With no selection, the word at the caret is the one styled; with no word there either, an empty pair of marks
    goes in with the caret between, to type into. A selection over several lines is styled line by line
    (Markdown's inline marks do not cross a line's end), each line's part trimmed of the spaces at its edges."""
    lines = text.split("\n")
    parts: list[tuple[int, int, int]] = []  # (line index, start, end) in that line
    offset = 0
    for index, line in enumerate(lines):
        line_end = offset + len(line)
        if start <= line_end and end >= offset and (start == end or (end > offset and start < line_end)):
            low, high = max(start, offset) - offset, min(end, line_end) - offset
            if start == end:
                low, high = word_at(line, low)
                if low == high:  # nothing to style: a pair of marks to type into
                    mark = style.value
                    new_line = line[:low] + mark + mark + line[low:]
                    lines[index] = new_line
                    caret = offset + low + len(mark)
                    return Edit("\n".join(lines), caret, caret)
            else:
                low, high = _inner(line, low, high, style)
            if high > low:
                parts.append((index, low, high))
        offset = line_end + 1
    if not parts:
        return Edit(text, start, end)
    remove = all(_is_styled(lines[i], low, high, style)[0] for i, low, high in parts)
    new_start = new_end = -1
    for index, low, high in parts:
        line = lines[index]
        if remove:
            _styled, character, run = _is_styled(line, low, high, style)
            width = 1 if style in (Inline.ITALIC, Inline.CODE) else 2
            if style is Inline.ITALIC and run == 3:
                width = 1
            lines[index] = line[: low - width] + line[low:high] + line[high + width :]
            low, high = low - width, high - width
        elif not _is_styled(line, low, high, style)[0]:  # a line styled already stays as it is
            mark = style.value
            lines[index] = line[:low] + mark + line[low:high] + mark + line[high:]
            # One line: its words stay selected. Several: the marks too, so that pressing it again finds them.
            low, high = (low + len(mark), high + len(mark)) if len(parts) == 1 else (low, high + 2 * len(mark))
        line_offset = sum(len(line) + 1 for line in lines[:index])
        if new_start < 0:
            new_start = line_offset + low
        new_end = line_offset + high
    return Edit("\n".join(lines), new_start, new_end)


def _touched(text: str, start: int, end: int) -> range:
    """The indices of the lines the selection touches (a selection ending at a line's start leaves it out)."""
    first = text.count("\n", 0, start)
    last = text.count("\n", 0, end)
    if end > start and (end == 0 or text[end - 1] == "\n"):
        last = max(first, last - 1)
    return range(first, last + 1)


def _relined(text: str, start: int, end: int, prefixes: dict[int, tuple[int, str]]) -> Edit:
    """``text`` with line ``i``'s first ``cut`` characters replaced by ``new`` for each ``i: (cut, new)`` in
    ``prefixes``; the selection moves with the words it was on (inside a removed prefix: to the new one's end)."""
    lines = text.split("\n")

    def moved(position: int) -> int:
        index = text.count("\n", 0, position)
        column = position - (text.rfind("\n", 0, position) + 1)
        cut, new = prefixes.get(index, (0, ""))
        shifted = len(new) + max(0, column - cut)
        before = sum(
            len(line) + 1 - prefixes.get(i, (0, ""))[0] + len(prefixes.get(i, (0, ""))[1])
            for i, line in enumerate(lines[:index])
        )
        return before + shifted

    new_lines = [new + line[cut:] for line, (cut, new) in
                 ((line, prefixes.get(i, (0, ""))) for i, line in enumerate(lines))]  # fmt: skip
    return Edit("\n".join(new_lines), moved(start), moved(end))


def set_heading(text: str, start: int, end: int, level: int) -> Edit:
    """Make the touched lines headings of ``level`` (0: body text), or body text where they all are that level
    already: pressing Heading 2 twice gives the line back as it was."""
    lines = text.split("\n")
    touched = [i for i in _touched(text, start, end) if lines[i].strip()]
    if not touched:
        return Edit(text, start, end)
    found = {i: HEADING.match(lines[i]) for i in touched}
    if level and all((m := found[i]) is not None and len(m.group(1)) == level for i in touched):
        level = 0
    prefix = "#" * level + " " if level else ""
    prefixes = {i: ((m.end() if (m := found[i]) else 0), prefix) for i in touched}
    return _relined(text, start, end, prefixes)


def _list_prefix(line: str) -> tuple[LineKind | None, int, str]:
    """The list or quote mark a line starts with: its kind, length, and the indent before it."""
    for kind, pattern in ((LineKind.QUOTE, QUOTE), (LineKind.BULLET, BULLET), (LineKind.NUMBERED, NUMBER)):
        match = pattern.match(line)
        if match:
            return kind, match.end(), match.group(1) if kind is not LineKind.QUOTE else ""
    return None, 0, ""


def toggle_lines(text: str, start: int, end: int, kind: LineKind) -> Edit:
    """Make each touched line an item of a bulleted or numbered list, or quote the lines; where every touched
    line is that already, take the marks off. A line's other list mark gives way (bullets become numbers);
    its indent stays. Blank lines are left as they are, except inside a quote, which they would end."""
    lines = text.split("\n")
    touched = list(_touched(text, start, end))
    filled = [i for i in touched if lines[i].strip()]
    if not filled:
        return Edit(text, start, end)
    marks = {i: _list_prefix(lines[i]) for i in touched}
    on = not all(marks[i][0] is kind for i in filled)
    prefixes: dict[int, tuple[int, str]] = {}
    number = 0
    for i in touched:
        found, length, indent = marks[i]
        if not lines[i].strip():
            if kind is LineKind.QUOTE and on and filled[0] < i < filled[-1]:
                prefixes[i] = (len(lines[i]), ">")
            continue
        if not on:
            prefixes[i] = (length, indent) if found is kind else (0, "")
            continue
        number += 1
        keep = length if found is not None and found is not LineKind.QUOTE and kind is not LineKind.QUOTE else 0
        if kind is LineKind.QUOTE:
            prefixes[i] = (0, "> ")
        elif kind is LineKind.BULLET:
            prefixes[i] = (keep, indent + "- ") if keep else (0, "- ")
        else:
            prefixes[i] = (keep, f"{indent}{number}. ") if keep else (0, f"{number}. ")
    return _relined(text, start, end, prefixes)


def toggle_link(text: str, start: int, end: int, clipboard: str = "") -> Edit:
    """Make the selection (or the word at the caret) a link's text, ``[text](address)``: the address is the
    clipboard's where it holds one, and the caret waits between the brackets for it otherwise; a selected address
    becomes the address, with the caret in the brackets for its words. Inside a link already, the link comes off
    and its words stay."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    line = text[line_start:line_end]
    low, high = start - line_start, min(end, line_end) - line_start
    for match in LINK.finditer(line):
        if match.start() <= low and high <= match.end() and (low < match.end() or low == high):
            words = match.group(1)
            new_line = line[: match.start()] + words + line[match.end() :]
            at = line_start + match.start()
            return Edit(text[:line_start] + new_line + text[line_end:], at, at + len(words))
    if low == high:
        low, high = word_at(line, low)
    else:
        while low < high and line[low].isspace():
            low += 1
        while high > low and line[high - 1].isspace():
            high -= 1
    chosen = line[low:high]
    address = clipboard.strip() if URL.match(clipboard.strip()) else ""
    if chosen and URL.match(chosen):
        new_line = line[:low] + f"[]({chosen})" + line[high:]
        caret = line_start + low + 1
        return Edit(text[:line_start] + new_line + text[line_end:], caret, caret)
    new_line = line[:low] + f"[{chosen}]({address})" + line[high:]
    if not chosen:  # the caret waits for the link's words
        caret = line_start + low + 1
    elif address:  # a whole link: the caret after it
        caret = line_start + low + len(chosen) + len(address) + 4
    else:  # the caret waits for the address
        caret = line_start + low + len(chosen) + 3
    return Edit(text[:line_start] + new_line + text[line_end:], caret, caret)


LIST_ITEM = re.compile(r"^([ \t]*)(?:([-*+])|(\d{1,9})([.)]))([ \t]+)(\[[ xX]\][ \t]+)?")
QUOTE_LEAD = re.compile(r"^(?:>[ \t]?)+")


@dataclass(frozen=True)
class NewLine:
    """What Enter does at the end of a list item or a quoted line: ``prefix`` starts the new line (the next
    item's mark: a bullet, the next number, an empty task box, the quote's ``>``); or, on an item left empty,
    ``end`` the list: the mark is taken off and no line is added, as a word processor's Enter on an empty bullet."""

    prefix: str = ""
    end: bool = False


def continuation(line: str, column: int) -> NewLine | None:
    """What Enter does with the caret at ``column`` of ``line``; None: a plain new line (not a list item or a quoted
    line, or the caret inside its mark)."""
    lead = LIST_ITEM.match(line) or QUOTE_LEAD.match(line)
    if lead is None or column < lead.end():
        return None
    if not line[lead.end() :].strip():
        return NewLine(end=True)
    if lead.re is QUOTE_LEAD:
        return NewLine(lead.group().rstrip() + " ")
    indent, bullet, number, closer, space, task = lead.groups()
    mark = bullet if bullet else f"{int(number) + 1}{closer}"
    return NewLine(indent + mark + space + ("[ ] " if task else ""))


def indent_items(text: str, start: int, end: int, outdent: bool = False) -> Edit | None:
    """Tab (Shift+Tab: ``outdent``) on list items: each touched item one level deeper, under the item before it (its
    words' column, as CommonMark nests: two spaces under ``- ``, three under ``1. ``), or one level up, to the
    column of the nearest item above that is shallower. None where a touched line is not a list item (Tab types
    a tab there, as ever)."""
    lines = text.split("\n")
    touched = [i for i in _touched(text, start, end) if lines[i].strip()]
    items = {i: LIST_ITEM.match(lines[i]) for i in touched}
    if not touched or any(item is None for item in items.values()):
        return None
    prefixes: dict[int, tuple[int, str]] = {}
    for i in touched:
        depth = len(lines[i]) - len(lines[i].lstrip(" \t"))
        above = [m for m in (LIST_ITEM.match(line) for line in reversed(lines[:i])) if m is not None]
        if outdent:
            shallower = next((len(m.group(1)) for m in above if len(m.group(1)) < depth), 0)
            prefixes[i] = (depth, " " * shallower)
        else:
            parent = next((m for m in above if len(m.group(1)) <= depth), None)
            column = parent.end() - len(parent.group(6) or "") if parent is not None else 0
            prefixes[i] = (depth, " " * (column if column > depth else depth + 2))
    if all(cut == len(new) for cut, new in prefixes.values()):
        return Edit(text, start, end)  # already as far out as it goes
    return _relined(text, start, end, prefixes)
