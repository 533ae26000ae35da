"""A Markdown document's footnotes (``[^1]`` in the text, ``[^1]: its words`` on a line of its own) as Word's own
footnotes in Export as Word Document: Word numbers them and sets them at the foot of their page. Qt's Markdown
reader has no footnotes (it would print the brackets), so each reference is marked before it reads the text
(docx_marks) and each definition's line taken out.

A reference with no definition stays as written; a definition no reference uses is left out. Footnotes are
numbered in the order the text refers to them, whatever their labels; a label referred to twice is two
footnotes of the same words (Word's footnote has one place). A definition is one line, as the import writes
them (``app.documents.word_import``), its **bold**, *italic* and `code` kept; lines inside a fenced code block
are never read as either.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol
from xml.sax.saxutils import escape

from app.documents.footnotes import DEFINITION, REFERENCE
from app.documents.markdown_format import lines_outside_code
from app.window.docx_marks import NOT_XML, R, W

MARK = re.compile("\ue002(\\d+)\ue003")  # private use, and not the comments' marks
SUPERSCRIPT = '<w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
INLINE = re.compile(r"(`[^`]+`|\*\*[^*]+\*\*|(?<!\\)\*[^*]+(?<!\\)\*)")
ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|~])")
CODE_FAMILY = "Courier New"  # as Export as Word Document sets code


class TrackedRuns(Protocol):
    """Tracked changes' marks followed run after run (docx_changes.Revisions)."""

    def pieces(self, text: str) -> Iterator[str]: ...

    def run(self, xml: str) -> str: ...


class Footnotes:
    """The footnotes of one export: marked in the text, then written as footnotes.xml and their references."""

    pattern = MARK

    def __init__(self, revisions: TrackedRuns | None = None) -> None:
        self.notes: list[str] = []  # by footnote id - 1 (Word keeps 0 and -1 for its separators)
        self.revisions = revisions  # where the words hold tracked changes' marks, to write as Word's

    def mark(self, text: str) -> str:
        """``text`` with its definitions' lines out and each defined reference marked."""
        definitions: dict[str, str] = {}
        kept: list[str] = []
        for line, prose in lines_outside_code(text):
            found = DEFINITION.match(line) if prose else None
            if found is not None:
                definitions.setdefault(found.group(1), found.group(2).strip())
            else:
                kept.append(line)
        if not definitions:
            return text

        def marked(match: re.Match[str]) -> str:
            label = match.group(1)
            if label not in definitions:
                return match.group(0)
            self.notes.append(definitions[label])
            return f"\ue002{len(self.notes)}\ue003"

        return "\n".join(REFERENCE.sub(marked, line) if prose else line
                         for line, prose in lines_outside_code("\n".join(kept)))

    def anchor_xml(self, index: int) -> str:
        """The footnote's number in the text, where Word counts it."""
        return f'<w:r>{SUPERSCRIPT}<w:footnoteReference w:id="{index}"/></w:r>'

    def content_types(self) -> str:
        kind = "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"
        return f'<Override PartName="/word/footnotes.xml" ContentType="{kind}"/>' if self.notes else ""

    def relationships(self) -> str:
        return f'<Relationship Id="rFootnotes" Type="{R}/footnotes" Target="footnotes.xml"/>' if self.notes else ""

    def parts(self) -> dict[str, str]:
        if not self.notes:
            return {}
        separators = ('<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
                      '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/>'
                      "</w:r></w:p></w:footnote>")  # fmt: skip
        notes = "".join(
            f'<w:footnote w:id="{index}"><w:p><w:pPr><w:spacing w:after="0"/></w:pPr><w:r>{SUPERSCRIPT}'
            f'<w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> </w:t></w:r>{_runs(words, self.revisions)}</w:p>'
            "</w:footnote>"
            for index, words in enumerate(self.notes, start=1)
        )
        head = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        return {"word/footnotes.xml": f'{head}<w:footnotes xmlns:w="{W}">{separators}{notes}</w:footnotes>'}


def _runs(words: str, revisions: TrackedRuns | None = None) -> str:
    """A footnote's words as runs: its **bold**, *italic* and `code` as Word's, Markdown's escapes undone, and
    (given ``revisions``) the words inside tracked changes' marks as Word's insertions and deletions."""
    xml = []
    for part in INLINE.split(words):
        if not part:
            continue
        formats, text = "", part
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            formats, text = f'<w:rFonts w:ascii="{CODE_FAMILY}" w:hAnsi="{CODE_FAMILY}"/>', part[1:-1]
        elif part.startswith("**") and part.endswith("**") and len(part) > 4:
            formats, text = "<w:b/>", part[2:-2]
        elif part.startswith("*") and part.endswith("*") and len(part) > 2:
            formats, text = "<w:i/>", part[1:-1]
        if not formats:
            text = ESCAPED.sub(r"\1", text)
        for piece in revisions.pieces(text) if revisions is not None else (text,):
            run = (f'<w:r><w:rPr>{formats}<w:sz w:val="20"/></w:rPr><w:t xml:space="preserve">'
                   f"{escape(NOT_XML.sub('', piece))}</w:t></w:r>")  # fmt: skip
            xml.append(revisions.run(run) if revisions is not None else run)
    return "".join(xml)
