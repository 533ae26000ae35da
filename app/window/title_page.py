"""What every export says the document is: its title, its authors and its language, and the title block its front
matter (``app.documents.front_matter``) puts at the top of the first page.

The title is the front matter's, else a Markdown document's first heading, else the file's name; the authors are
the front matter's, else the writer's name (Settings ▸ Documents), else none. The title block is set as a book's
title page sets it: centred, the title large, then the subtitle, the authors and the date; each of its blocks
keeps its part's name (``TITLE_PART``), so the Word export gives it Word's Title and Subtitle styles and the
e-book its classes.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat

from app.documents.critic_markup import settle
from app.documents.front_matter import TitlePage, without_front_matter
from app.window.headings import each_heading

TITLE_PART = QTextFormat.Property.UserProperty + 41  # a title block's block: "Title", "Subtitle", "Author", "Date"
# Each part's size against the body's, and its style; the space under the block before the text starts (px).
PART_LOOKS = {"Title": (2.4, False), "Subtitle": (1.5, True), "Author": (1.2, False), "Date": (1.0, False)}
SPACE_UNDER_BLOCK = 48.0


@dataclass(frozen=True)
class Described:
    """A document as an export sees it."""

    page: TitlePage  # what its front matter says, for the title block
    body: str  # the text after its front matter
    title: str
    authors: tuple[str, ...]


def title_of(text: str, markdown: bool, name: str) -> str:
    """A text's title where no front matter gives one: a Markdown document's first heading, else ``name`` (the
    file's, without its suffix)."""
    heading = next(each_heading(text, markdown=True), None) if markdown else None
    return heading.title.strip() if heading else name


def describe(text: str, markdown: bool, name: str, author: str = "", tracked: bool = False) -> Described:
    """``text`` (a Markdown document if ``markdown``; only those have front matter) as the exports describe it;
    ``author`` is the writer's name, ``tracked``: the text still has its tracked changes marked (the title is
    read with them made)."""
    page, body = without_front_matter(text) if markdown else (TitlePage(), text)
    title = page.title or title_of(settle(body, accept=True) if tracked else body, markdown, name)
    authors = page.authors or ((author.strip(),) if author.strip() else ())
    return Described(page, body, title, authors)


def put_title_page(document: QTextDocument, page: TitlePage) -> None:
    """``page``'s title block above the first block of ``document`` (whose own format, a heading's or a list's, is
    kept), centred, each block marked with its part."""
    lines = page.lines()
    if not lines:
        return
    cursor = QTextCursor(document)
    first = cursor.block()
    cursor.insertBlock(first.blockFormat(), first.charFormat())  # the first block's words move down, as they were
    cursor.movePosition(QTextCursor.MoveOperation.Start)
    top = cursor.block()
    if top.textList() is not None:
        top.textList().remove(top)
    size = document.defaultFont().pointSizeF()
    for index, (part, words) in enumerate(lines):
        if index:
            cursor.insertBlock()
        scale, italic = PART_LOOKS[part]
        block = QTextBlockFormat()
        block.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        block.setBottomMargin(SPACE_UNDER_BLOCK if index == len(lines) - 1 else size * scale * 0.6)
        block.setProperty(TITLE_PART, part)
        look = QTextCharFormat()
        look.setFontPointSize(size * scale)
        look.setFontItalic(italic)
        look.setFontWeight(QFont.Weight.Bold if part == "Title" else QFont.Weight.Normal)
        cursor.setBlockFormat(block)
        cursor.setBlockCharFormat(look)
        cursor.insertText(words, look)
