"""A Word document's styles (styles.xml) and lists (numbering.xml), as ``word_import`` needs them: which
paragraphs are headings and lists, and what a run's character style makes bold, italic or struck."""

from __future__ import annotations

import re
from xml.etree import ElementTree

from app.documents.markdown_blocks import Format, number

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MAX_COLUMNS = 63  # Word's widest table
TWIPS_A_QUOTE_LEVEL = 720  # half an inch: Word's indent step, and Export as Word Document's for each level
# Fixed-pitch faces a run is set in to mark code (Export as Word Document sets inline code in Courier New).
MONOSPACE = frozenset({"courier new", "courier", "consolas", "menlo", "monaco", "lucida console", "source code pro",
                       "dejavu sans mono", "liberation mono", "cascadia code", "cascadia mono", "sf mono"})  # fmt: skip
CODE_CHARACTER_STYLES = frozenset({"html code", "verbatim char", "source code", "macro text char"})


class Styles:
    """styles.xml: each style's name, parent, outline level, list numbering and run format."""

    def __init__(self, root: ElementTree.Element | None) -> None:
        self.by_id: dict[str, ElementTree.Element] = {}
        for style in root.findall(f"{W}style") if root is not None else ():
            self.by_id[style.get(f"{W}styleId", "")] = style

    def paragraph_style(self, properties: ElementTree.Element | None) -> str | None:
        found = properties.find(f"{W}pStyle") if properties is not None else None
        return found.get(f"{W}val") if found is not None else None

    def name_of(self, style: str | None) -> str:
        """The style's name in lower case ("heading 1", "quote"); Word writes built-in names in English
        whatever the language of its menus, where the id may be translated ("berschrift1")."""
        element = self.by_id.get(style or "")
        name = element.find(f"{W}name") if element is not None else None
        return (name.get(f"{W}val", "") if name is not None else "").lower()

    def _chain(self, style: str | None) -> list[ElementTree.Element]:
        chain: list[ElementTree.Element] = []
        while style and style in self.by_id and len(chain) < 20:
            element = self.by_id[style]
            chain.append(element)
            based = element.find(f"{W}basedOn")
            style = based.get(f"{W}val") if based is not None else None
        return chain

    def heading_level(self, style: str | None, properties: ElementTree.Element | None) -> int:
        """1-6 for a heading (a Heading or Title style, or an outline level), else 0."""
        for element in [properties, *(s.find(f"{W}pPr") for s in self._chain(style))]:
            level = element.find(f"{W}outlineLvl") if element is not None else None
            if level is not None:
                value = number(level.get(f"{W}val"), 9, 0, 9)
                return value + 1 if value < 6 else 0
        name = self.name_of(style)
        match = re.fullmatch(r"heading (\d)", name)
        if match:
            return min(6, max(1, int(match[1])))
        return 1 if name == "title" else 0

    def numbering_of(self, style: str | None) -> ElementTree.Element | None:
        """A list style's numbering (List Bullet carries its own), else None."""
        for element in self._chain(style):
            found = element.find(f"{W}pPr/{W}numPr")
            if found is not None:
                return found
        return None

    def run_format(self, properties: ElementTree.Element | None) -> Format:
        """(bold, italic, struck, code) of a run: its own properties over its character style's."""
        values = [False, False, False, False]
        tags = (f"{W}b", f"{W}i", f"{W}strike")
        style = properties.find(f"{W}rStyle") if properties is not None else None
        style_id = style.get(f"{W}val") if style is not None else None
        chain = self._chain(style_id)
        values[3] = self.name_of(style_id) in CODE_CHARACTER_STYLES
        for element in [*(s.find(f"{W}rPr") for s in reversed(chain)), properties]:
            if element is None:
                continue
            for index, tag in enumerate(tags):
                found = element.find(tag)
                if found is not None:
                    values[index] = on(found)
            if on(element.find(f"{W}dstrike")):
                values[2] = True
            fonts = element.find(f"{W}rFonts")
            if fonts is not None and fonts.get(f"{W}ascii") is not None:
                values[3] = fonts.get(f"{W}ascii", "").lower() in MONOSPACE
        return values[0], values[1], values[2], values[3]

    def quote_depth(self, style: str | None, properties: ElementTree.Element | None, quote_style: bool) -> int:
        """How many levels a paragraph is quoted: a quote style's, or one set in from both margins (as
        Export as Word Document and most writers set a quotation), one per half inch on the left."""
        indent = None
        for element in [properties, *(s.find(f"{W}pPr") for s in self._chain(style))]:
            indent = element.find(f"{W}ind") if element is not None else None
            if indent is not None:
                break
        left = right = 0
        if indent is not None:
            left = _twips(indent.get(f"{W}left", indent.get(f"{W}start")))
            right = _twips(indent.get(f"{W}right", indent.get(f"{W}end")))
        if not quote_style and not (left > 0 and right > 0):
            return 0
        return max(1, min(6, round(left / TWIPS_A_QUOTE_LEVEL)))


def _twips(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0  # a measure Word writes otherwise ("1in") in strict documents: no indent read


class Numbering:
    """numbering.xml: which lists are numbered or bulleted, from where, at each level."""

    def __init__(self, root: ElementTree.Element | None) -> None:
        self.abstract: dict[str, ElementTree.Element] = {}
        self.nums: dict[str, ElementTree.Element] = {}
        for element in root if root is not None else ():
            if element.tag == f"{W}abstractNum":
                self.abstract[element.get(f"{W}abstractNumId", "")] = element
            elif element.tag == f"{W}num":
                self.nums[element.get(f"{W}numId", "")] = element

    def list_of(self, properties: ElementTree.Element | None,
                inherited: ElementTree.Element | None) -> tuple[str, int] | None:  # fmt: skip
        """(numId, level) of a list paragraph, its own numbering over its style's; None for numId 0 or none."""
        own = properties.find(f"{W}numPr") if properties is not None else None
        num_id = level = None
        for numbering in (inherited, own):
            if numbering is None:
                continue
            found_id, found_level = numbering.find(f"{W}numId"), numbering.find(f"{W}ilvl")
            num_id = found_id.get(f"{W}val") if found_id is not None else num_id
            level = found_level.get(f"{W}val") if found_level is not None else level
        if num_id is None or num_id == "0":
            return None
        return num_id, number(level, 0, 0, 8)

    def format_of(self, num_id: str, level: int) -> tuple[bool, int]:
        """(numbered, first number) at ``level`` of list ``num_id``; a list Word no longer defines is bulleted."""
        num = self.nums.get(num_id)
        start = None
        if num is not None:
            for override in num.findall(f"{W}lvlOverride"):
                restart = override.find(f"{W}startOverride")
                if override.get(f"{W}ilvl") == str(level) and restart is not None:
                    start = number(restart.get(f"{W}val"), 1, 0, 10**6)
        abstract_id = num.find(f"{W}abstractNumId") if num is not None else None
        abstract = self.abstract.get(abstract_id.get(f"{W}val", "") if abstract_id is not None else "")
        for lvl in abstract.findall(f"{W}lvl") if abstract is not None else ():
            if lvl.get(f"{W}ilvl") == str(level):
                fmt, first = lvl.find(f"{W}numFmt"), lvl.find(f"{W}start")
                numbered = fmt is not None and fmt.get(f"{W}val") not in ("bullet", "none")
                first_number = number(first.get(f"{W}val") if first is not None else None, 1, 0, 10**6)
                return numbered, start if start is not None else first_number
        return False, 1


def on(element: ElementTree.Element | None) -> bool:
    """A toggle property: present means on unless its value says off."""
    return element is not None and element.get(f"{W}val", "true").lower() not in ("0", "false", "off", "none")
