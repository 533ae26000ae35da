"""Export as Word Document with the tracked changes still marked in the text (CriticMarkup,
``app/documents/critic_markup.py``) as Word's own tracked changes, for an editor to see what is still to decide.

Before Qt reads the Markdown, each change's signs become private-use marks (docx_marks), which Qt keeps as text:
its removed words between one pair, its added words between another. The writer then follows the marks through
the body's runs in order (:class:`Revisions`): a run's words inside added words go in a ``w:ins``, inside removed
ones in a ``w:del`` (as ``w:delText``), and a paragraph that ends inside a change has its paragraph mark tracked
too, so that a paragraph added or taken out whole comes and goes with its break. Each is the change of whoever
the comment after it names (``{>>Maya<<}``, as Review Each signs an editor's changes), else of "Redraft". A
change inside a footnote's definition is tracked in Word's footnote (docx_footnotes follows the marks the same
way); one inside a note is a Word comment's text, which has no place for it: it goes in accepted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from xml.sax.saxutils import quoteattr

from app.documents.critic_markup import marks
from app.window.docx_comments import NOTE

# Private use, and none of the comments' (E000, E001) or the footnotes' (E002, E003) marks.
ADDED, ADDED_END, REMOVED, REMOVED_END = "\ue004", "\ue005", "\ue006", "\ue007"
# Who made a change, right after its opening mark: each character of the name moved into plane 15's private use,
# where Markdown sees no sign and Qt keeps it as text.
NAME_BASE, NAME_LAST = 0xF0000, 0xFFFFD
SIGN = re.compile(f"[\ue004-\ue007]|[{chr(NAME_BASE)}-{chr(NAME_LAST)}]+")
AUTHOR = "Redraft"  # a change's author where its comment names none


def _name_signs(author: str) -> str:
    return "".join(chr(NAME_BASE + ord(c)) for c in author if ord(c) <= NAME_LAST - NAME_BASE)


def mark_changes(text: str, signed: bool = False) -> str:
    """``text`` with each tracked change's signs as the marks :class:`Revisions` follows (``signed``: with its
    author's name); those in a note accepted."""
    found = marks(text)
    if not found:
        return text
    outside = [(match.start(), match.end()) for match in NOTE.finditer(text)]
    parts, position = [], 0
    for mark in found:
        parts.append(text[position : mark.start])
        if any(start < mark.start < end for start, end in outside):
            parts.append(mark.added)
        else:
            name = _name_signs(mark.author) if signed else ""
            parts.append((REMOVED + name + mark.removed + REMOVED_END if mark.removed else "")
                         + (ADDED + name + mark.added + ADDED_END if mark.added else ""))  # fmt: skip
        position = mark.end
    parts.append(text[position:])
    return "".join(parts)


class Revisions:
    """Where the body's runs stand against the change marks, run after run, and their XML as Word's revisions."""

    def __init__(self, when: datetime | None = None, first_id: int = 1) -> None:
        self.state = ""  # "ins" inside added words, "del" inside removed ones
        self.author = ""  # who made the change the state is in, where its signs name them
        self.count = first_id - 1  # revision ids given (a part of its own starts far from the body's)
        self.date = (when or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def pieces(self, text: str) -> Iterator[str]:
        """``text``'s words between the marks, in order; the state, as each is yielded, is the one it is in."""
        position = 0
        for match in SIGN.finditer(text):
            if match.start() > position:
                yield text[position : match.start()]
            sign = match.group()
            if sign[0] >= chr(NAME_BASE):
                self.author = "".join(chr(ord(c) - NAME_BASE) for c in sign)
            else:
                self.state, self.author = {ADDED: "ins", REMOVED: "del"}.get(sign, ""), ""
            position = match.end()
        if position < len(text):
            yield text[position:]

    def _attributes(self) -> str:
        self.count += 1
        return f'w:id="{self.count}" w:author={quoteattr(self.author or AUTHOR)} w:date="{self.date}"'

    def run(self, xml: str) -> str:
        """A run's XML as the state has it: inserted, deleted (its text as deleted text) or as it is."""
        if not self.state or not xml:
            return xml
        if self.state == "del":
            xml = xml.replace("<w:t ", "<w:delText ").replace("</w:t>", "</w:delText>")
        return f"<w:{self.state} {self._attributes()}>{xml}</w:{self.state}>"

    def paragraph_mark(self) -> str:
        """The run properties of a paragraph's mark (pPr's last child) where the paragraph ends inside a change."""
        return f"<w:rPr><w:{self.state} {self._attributes()}/></w:rPr>" if self.state else ""
