"""What Export as Word Document's extra parts share (its comments, its footnotes): each marks its places in the
Markdown with private-use characters before Qt reads it (Qt's reader would drop or mangle what they stand for),
and the writer puts that part's XML where each mark lands in a run's text."""

from __future__ import annotations

import re
from typing import Protocol

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
# Characters XML 1.0 cannot hold (a stray control character in a pasted text): left out rather than a broken file.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


class MarkedPart(Protocol):
    pattern: re.Pattern[str]  # a mark, its one group the number it carries

    def mark(self, text: str) -> str: ...

    def anchor_xml(self, index: int) -> str: ...

    def content_types(self) -> str: ...

    def relationships(self) -> str: ...

    def parts(self) -> dict[str, str]: ...


def split_marks(text: str, pattern: re.Pattern[str]) -> list[str | int]:
    """A run's text in pieces: its words, and the numbers of the marks between them."""
    pieces: list[str | int] = []
    at = 0
    for match in pattern.finditer(text):
        pieces.append(text[at : match.start()])
        pieces.append(int(match.group(1)))
        at = match.end()
    pieces.append(text[at:])
    return [piece for piece in pieces if piece != ""]
