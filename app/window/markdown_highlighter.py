"""Light cues in the editor, display only, never part of the text or undo: gap marks and tracked changes
(CriticMarkup, ``app/documents/critic_markup.py``) always, Markdown's headings, emphasis, strikethrough, quotes
and code only in a Markdown file (a .txt is plain: its ``*`` and ``_`` are the writer's), its front matter
(``app/documents/front_matter.py``) quiet, as no export prints it, and the misspelled words' underline while
View ▸ Check Spelling is on (``app/window/spelling.py``)."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import accumulate

from PySide6.QtCore import QTimer
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QPalette,
    QSyntaxHighlighter,
    QTextBlock,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)

from app.documents.critic_markup import OUTSIDE, painted
from app.documents.footnotes import FOOTNOTE_MARK
from app.documents.front_matter import MOST_CHARS, OPENING, read_front_matter
from app.window.live_span import ASTRAL
from app.window.theme import change_colors
from model.edit.request import GAP_MARK

# A block's text and where it starts -> its misspelled words' ranges (Qt's positions in the block).
Misspellings = Callable[[str, int], list[tuple[int, int]]]
# The wavy underline's colour in both themes: the red every word processor uses for a misspelling.
MISSPELLED_RED = QColor("#e0321f")

# Showing every block again: a text of more blocks than this is done a slice at a time, each slice up to SLICE_MS.
SLICE_BLOCKS = 400
SLICE_MS = 12

class MarkdownHighlighter(QSyntaxHighlighter):
    """Gap marks tinted (never bold); Markdown cues while ``markdown`` is on. Display only."""

    # Underscore runs are bold or italic only when they are not part of a longer run: "___" is a gap mark.
    _INLINE = (
        (re.compile(r"\*\*[^*\n]+\*\*|(?<!_)__[^_\n]+__(?!_)"), "bold"),
        (re.compile(r"(?<![*\w])\*[^*\n]+\*(?!\*)|(?<![_\w])_[^_\n]+_(?![_\w])"), "italic"),
        (re.compile(r"`[^`\n]+`"), "code"),
        # A note to self (and a Word comment brought in as one): quiet, as exports leave it out.
        (re.compile(r"<!--.*?-->"), "note"),
        (FOOTNOTE_MARK, "footnote"),
        # A link's or a picture's address: quiet, as the exports print the words (or the picture), not it.
        (re.compile(r"(?<=\])\((?:<[^>\n]+>|[^)\s]+)(?:\s+\"[^\"\n]*\")?\)"), "address"),
        # Not a tracked change's signs: "~~}, kept {~~" between two replacements ({~~old~>new~~}) is no pair.
        (re.compile(r"(?<![{~])~~(?![}~])[^~\n]+(?<![{~])~~(?![}~])"), "struck"),
        (re.compile(r"\*\*\*[^*\n]+\*\*\*"), "bold italic"),  # after bold's and italic's, which see only part
    )

    def __init__(self, document: QTextDocument, first_visible: Callable[[], QTextBlock] | None = None) -> None:
        super().__init__(document)
        self._first_visible = first_visible  # the view's top block: shown first when every block is shown again
        self._next_block: QTextCursor | None = None  # where showing every block again goes on (a cursor moves
        self._slices = QTimer(self)  # with the writer's edits meanwhile)
        self._slices.setInterval(0)
        self._slices.timeout.connect(self._show_slice)
        self._slices_end: QTextCursor | None = None  # where they stop (None: at the text's end)
        self._holding = False  # an edit of many places going in: its blocks highlighted after it (held)
        self.heading_color = QColor("#24211d")
        self._markdown = True
        self._misspellings: Misspellings | None = None
        self._units: list[int] | None = None  # the block's Qt position of each character, where they differ
        self._front_revision = -1  # the document's revision the front matter was last looked for in
        self._front_lines = ""  # the lines it was read from
        self._front_blocks = 0  # how many blocks it takes, its closing line's included

    @property
    def markdown(self) -> bool:
        return self._markdown

    def set_markdown(self, markdown: bool, show_now: bool = True) -> None:
        """Markdown's cues on or off; ``show_now`` False just before the document's text is replaced, which is
        highlighted as it goes in: a long book's blocks shown once, not as Markdown and again as plain text."""
        if markdown != self._markdown:
            self._markdown = markdown
            if show_now:
                self.show_again()

    @property
    def checks_spelling(self) -> bool:
        return self._misspellings is not None

    def set_misspellings(self, misspellings: Misspellings | None) -> None:
        """Underline what ``misspellings`` finds in each block (None: nothing)."""
        if misspellings is not self._misspellings:
            self._misspellings = misspellings
            self.show_again()

    @contextmanager
    def text_going_in(self, markdown: bool, lines: int) -> Iterator[None]:
        """Around a text going in, ``lines`` long (another document's, or a paste): Markdown's cues on or off first,
        so its blocks are highlighted once, as they go in; in a long text its spelling after, the view's underlines
        at once and the rest in slices (show_again). War and Peace opened in 3.0 s (pasted, 3.8), its spelling
        checked as it went in."""
        self.set_markdown(markdown, show_now=False)
        misspellings = self._misspellings
        later = misspellings is not None and lines > SLICE_BLOCKS
        if later:
            self._misspellings = None
        try:
            yield
        finally:
            if later:
                self.set_misspellings(misspellings)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Around an edit of many places at once in a long text (Replace All, an undo of one): Qt highlights every
        block from its first change to its last as the edit ends, 2.6 s for 1,964 names replaced in War and
        Peace; held, those blocks are highlighted after it, the view's at once and the rest in slices."""
        document = self.document()
        if document is None or document.blockCount() <= SLICE_BLOCKS or self._holding:
            yield
            return
        reach: list[int] = []

        def note(position: int, _removed: int, added: int) -> None:
            reach.extend((position, position + added))

        document.contentsChange.connect(note)
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
            document.contentsChange.disconnect(note)
            if reach:
                self.show_again(min(reach), max(reach))

    def show_again(self, start: int = 0, end: int | None = None) -> None:
        """Highlight the blocks from position ``start`` to ``end`` (every block by default) again: spelling
        turned on, a word added to the dictionary, another theme. At once in a short text; in a long one the
        view's blocks at once and the rest a slice at a time between the writer's keystrokes, as
        QSyntaxHighlighter.rehighlight froze War and Peace for two seconds."""
        document = self.document()
        if document is None:
            return
        if document.blockCount() <= SLICE_BLOCKS:
            self._slices.stop()
            self._next_block = None
            self.rehighlight()
            return
        block = self._first_visible() if self._first_visible is not None else document.firstBlock()
        self._rehighlight_run(block, SLICE_BLOCKS // 4, math.inf)  # a tall window's worth, at once
        if self._slices.isActive() and self._next_block is not None:  # a pass already under way: it goes on, over
            start = min(start, self._next_block.position())  # both stretches
            end = None if end is None or self._slices_end is None else max(end, self._slices_end.position())
        self._next_block = QTextCursor(document.findBlock(min(start, document.characterCount() - 1)))
        self._slices_end = None
        if end is not None:
            self._slices_end = QTextCursor(document)
            self._slices_end.setPosition(min(end, document.characterCount() - 1))
        self._slices.start()

    def _show_slice(self) -> None:
        """The next blocks of show_again's, for SLICE_MS at most."""
        block = self._next_block.block() if self._next_block is not None else QTextBlock()
        block = self._rehighlight_run(block, math.inf, time.perf_counter() + SLICE_MS / 1000)
        if block.isValid() and self._slices_end is not None and block.position() > self._slices_end.position():
            block = QTextBlock()  # past the stretch asked for
        if block.isValid() and self._next_block is not None:
            self._next_block.setPosition(block.position())
        else:
            self._slices.stop()
            self._next_block = None

    def _rehighlight_run(self, block: QTextBlock, most: float, ends: float) -> QTextBlock:
        """rehighlightBlock from ``block`` on, ``most`` blocks at most or until ``ends`` (perf_counter); the block
        after the last one done. In one edit block, as rehighlight does the whole text: the layout is redone once,
        not after every block (ten times the cost). With the document's signals held: a format is no change to the
        text, which its contentsChanged would tell autosave, the counts and the rewrite's wait for stillness."""
        document = self.document()
        batch = QTextCursor(document)
        held = document.blockSignals(True)
        batch.beginEditBlock()
        try:
            done = 0
            while block.isValid() and done < most and (done % 32 or time.perf_counter() < ends):
                self.rehighlightBlock(block)
                block = block.next()
                done += 1
        finally:
            batch.endEditBlock()
            document.blockSignals(held)
        return block

    @property
    def showing_again(self) -> bool:
        """Whether show_again's slices are still under way."""
        return self._slices.isActive()

    def gap_format(self) -> QTextCharFormat:
        """A gap mark: the theme's link ink on a tint of its selection colour, upright and regular weight."""
        palette = QGuiApplication.palette()
        tint = QColor(palette.color(QPalette.ColorRole.Highlight))
        tint.setAlphaF(0.18)
        text_format = QTextCharFormat()
        text_format.setBackground(tint)
        text_format.setForeground(palette.color(QPalette.ColorRole.Link))
        text_format.setFontWeight(QFont.Weight.Normal)
        text_format.setFontItalic(False)
        return text_format

    def _unit(self, index: int) -> int:
        """The block's position (UTF-16 units, as Qt counts) of the character at ``index`` in its Python text."""
        return index if self._units is None else self._units[index]

    def _format_chars(self, start: int, end: int, text_format: QTextCharFormat) -> None:
        """``setFormat`` for the characters ``start:end`` of the block's Python text: past an emoji, Qt's positions
        run ahead of Python's (it counts the emoji as two), and a bold word after one was drawn a letter off."""
        first = self._unit(start)
        self.setFormat(first, self._unit(end) - first, text_format)

    def highlightBlock(self, text: str) -> None:
        if self._holding:  # done after the edit (held): the block's state kept, so Qt goes no further than its edit
            self.setCurrentBlockState(self.currentBlockState())
            return
        astral = not text.isascii() and ASTRAL.search(text) is not None
        self._units = list(accumulate((1 + (ord(c) > 0xFFFF) for c in text), initial=0)) if astral else None
        front = self._markdown and self.currentBlock().blockNumber() < self._front_matter_blocks()
        if front:
            quiet = QTextCharFormat()
            quiet.setForeground(QGuiApplication.palette().color(QPalette.ColorRole.PlaceholderText))
            self._format_chars(0, len(text), quiet)
        elif self._markdown:
            self._markdown_block(text)
        gap = None  # made for a block that has a gap mark only: most have none, and a long book has many blocks
        for match in GAP_MARK.finditer(text):
            if gap is None:
                gap = self.gap_format()
            self._format_chars(match.start(), match.end(), gap)
        self._tracked_changes(text)
        if self._misspellings is not None and not front:  # its keys and values are no prose
            for start, end in self._misspellings(text, self.currentBlock().position()):
                underlined = QTextCharFormat(self.format(start))  # over a heading's or emphasis's format
                underlined.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SpellCheckUnderline)
                underlined.setUnderlineColor(MISSPELLED_RED)
                self.setFormat(start, end - start, underlined)

    def _front_matter_blocks(self) -> int:
        """How many of the first blocks are front matter (0: none), read again only when the text has changed and
        then its YAML only when the lines at the top have. Where that changes, the blocks it moved over are shown
        again: typing the closing ``---`` turns the lines above it quiet."""
        document = self.document()
        if document is None or document.revision() == self._front_revision:
            return self._front_blocks
        self._front_revision = document.revision()
        lines, block, size = [], document.firstBlock(), 0
        if OPENING.match(block.text() + "\n"):
            while block.isValid() and size < MOST_CHARS:
                lines.append(block.text())
                size += len(lines[-1]) + 1
                block = block.next()
        top = "\n".join(lines) + "\n"
        if top != self._front_lines:
            self._front_lines = top
            found = read_front_matter(top) if lines else None
            blocks = top[: found.end].count("\n") if found is not None else 0
            if blocks != self._front_blocks:
                moved = max(blocks, self._front_blocks)
                QTimer.singleShot(0, self, lambda: self._show_again(moved))  # not inside a block's highlighting
                self._front_blocks = blocks
        return self._front_blocks

    def _show_again(self, blocks: int) -> None:
        document = self.document()
        block = document.firstBlock() if document is not None else None
        while block is not None and block.isValid() and block.blockNumber() < blocks:
            self.rehighlightBlock(block)
            block = block.next()

    def _tracked_changes(self, text: str) -> None:
        """Added words underlined and removed ones struck through, in the Show Changes inks; the signs around
        them, and the comment that names who made a change, faded. A change may run over a paragraph break: the
        block's state says where it began."""
        state = max(self.previousBlockState(), OUTSIDE)
        ranges, state = painted(text, state) if state != OUTSIDE or "{" in text else ([], OUTSIDE)
        self.setCurrentBlockState(state)
        if not ranges:
            return
        palette = QGuiApplication.palette()
        colors = change_colors(palette.color(QPalette.ColorRole.Base).lightness() < 128)
        for start, end, style in ranges:
            text_format = QTextCharFormat(self.format(self._unit(start)))  # over a heading's or emphasis's format
            if style in ("delimiter", "comment"):  # the signs, and the name of who made the change: quiet
                text_format.setForeground(palette.color(QPalette.ColorRole.PlaceholderText))
                if style == "comment":
                    text_format.setFontItalic(True)
            else:
                text_format.setForeground(colors.added if style == "added" else colors.removed)
                text_format.setFontUnderline(style == "added")
                text_format.setFontStrikeOut(style == "removed")
            self._format_chars(start, end, text_format)

    def _markdown_block(self, text: str) -> None:
        if re.match(r"#{1,6} ", text):
            text_format = QTextCharFormat()
            text_format.setFontWeight(QFont.Weight.Bold)
            text_format.setForeground(self.heading_color)
            self._format_chars(0, len(text), text_format)
            return
        if text.startswith(">"):  # a quote: set apart as the exports set it, in italic
            quoted = QTextCharFormat()
            quoted.setFontItalic(True)
            self._format_chars(0, len(text), quoted)
        for pattern, style in self._INLINE:
            for match in pattern.finditer(text):
                text_format = QTextCharFormat()
                if style.startswith("bold"):
                    text_format.setFontWeight(QFont.Weight.Bold)
                    text_format.setFontItalic(style == "bold italic")
                elif style == "italic":
                    text_format.setFontItalic(True)
                elif style == "struck":
                    text_format.setFontStrikeOut(True)
                elif style in ("note", "footnote", "address"):
                    text_format.setFontItalic(style == "note")
                    text_format.setForeground(QGuiApplication.palette().color(QPalette.ColorRole.PlaceholderText))
                else:
                    text_format.setFontFamilies(["DejaVu Sans Mono", "monospace"])
                self._format_chars(match.start(), match.end(), text_format)
