"""A Markdown document's notes (``<!-- Maya: Every one? -->``) as Word comments, where the writer asks for them
(Export as Word Document, when the text has notes): the way back for an editor's comments that came in from
Word (``app.documents.word_import`` makes them notes), answered or not.

A note inside a paragraph becomes a comment at its place: "Name: words" is the comment's author and its words, as
the import writes them; a note without a name, or one that starts "TODO:" or the like, is the writer's own, signed
with their name from Settings ▸ Documents (Redraft's where none is set). The notes are
marked in the Markdown before Qt reads it (Qt's reader drops HTML comments) by private-use characters that carry
their number through, and the writer puts each comment's anchor where its mark lands. A note on a line of its own,
or inside a fenced code block, stays out, as notes do in every export.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from xml.sax.saxutils import escape, quoteattr

from app.documents.markdown_blocks import comment_note
from app.documents.markdown_format import lines_outside_code
from app.window.docx_marks import NOT_XML, R, W

NOTE = re.compile(r"<!--(.*?)-->")
MARK = re.compile("\ue000(\\d+)\ue001")  # private use: no text a writer types has them
AUTHOR = re.compile(r"^\s*([^:\n]{1,40}?):\s+(.+?)\s*$", re.S)
DEFAULT_AUTHOR = "Redraft"
# Words a writer starts a note to self with, which are not anyone's name: "TODO: check" is Redraft's comment.
NOT_AUTHORS = frozenset({"todo", "fixme", "note", "nb", "n.b.", "tk", "xxx", "check", "query", "q", "idea"})


def _lines(text: str) -> Iterator[tuple[str, bool]]:
    """Each line of ``text``, and whether its notes are inline (words beside them, outside a code block)."""
    for line, prose in lines_outside_code(text):
        yield line, prose and NOTE.search(line) is not None and bool(NOTE.sub("", line).strip())


def inline_notes(text: str) -> list[str]:
    """The notes written inside a paragraph's line (not on a line of their own, not in a code block)."""
    return [match.group(1) for line, inline in _lines(text) if inline for match in NOTE.finditer(line)]


def initials(name: str) -> str:
    """The initials Word shows beside a comment: "ME" for Maya Editor, up to three letters."""
    return "".join(word[0] for word in name.split())[:3].upper()


class Comments:
    """The notes of one export: marked in the text, then written as comments.xml and their anchors."""

    pattern = MARK

    def __init__(self, writer: str = "") -> None:
        self.notes: list[tuple[str, str]] = []  # (author, words) by comment id
        self.writer = writer.strip() or DEFAULT_AUTHOR  # who signs the notes that name no one

    def mark(self, text: str) -> str:
        """``text`` with each inline note replaced by its mark (see ``inline_notes``)."""
        return "\n".join(NOTE.sub(self._marked, line) if inline else line for line, inline in _lines(text))

    def _marked(self, match: re.Match[str]) -> str:
        words = comment_note("", match.group(1).strip())
        named = AUTHOR.match(words)
        if named and named.group(1).strip().lower() not in NOT_AUTHORS:
            self.notes.append((named.group(1).strip(), named.group(2)))
        else:
            self.notes.append((self.writer, words))
        return f"\ue000{len(self.notes) - 1}\ue001"

    def anchor_xml(self, index: int) -> str:
        """A comment at one point of the text: its range (empty) and the reference Word shows it by."""
        return (f'<w:commentRangeStart w:id="{index}"/><w:commentRangeEnd w:id="{index}"/>'
                f'<w:r><w:commentReference w:id="{index}"/></w:r>')  # fmt: skip

    def content_types(self) -> str:
        kind = "application/vnd.openxmlformats-officedocument.wordprocessingml.comments+xml"
        return f'<Override PartName="/word/comments.xml" ContentType="{kind}"/>' if self.notes else ""

    def relationships(self) -> str:
        return f'<Relationship Id="rComments" Type="{R}/comments" Target="comments.xml"/>' if self.notes else ""

    def parts(self) -> dict[str, str]:
        if not self.notes:
            return {}
        comments = "".join(
            f'<w:comment w:id="{index}" w:author={quoteattr(NOT_XML.sub("", author))} '
            f'w:initials={quoteattr(initials(NOT_XML.sub("", author)))}><w:p><w:r><w:t xml:space="preserve">'
            f"{escape(NOT_XML.sub('', words))}</w:t></w:r></w:p></w:comment>"
            for index, (author, words) in enumerate(self.notes)
        )
        head = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        return {"word/comments.xml": f'{head}<w:comments xmlns:w="{W}">{comments}</w:comments>'}
