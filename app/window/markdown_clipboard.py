"""Copy, Cut and Paste in a Markdown document, with the formatting other programs read and write.

Copied or cut, a passage goes on the clipboard twice: as written (its Markdown, which plain-text places and Redraft
itself paste; ``text/markdown`` too, which Qt had escaped as if it were plain text: "\\# The Harbour") and as
formatted HTML (``epub_export.passage_html``), which word processors, mail and web editors paste: its emphasis,
headings, lists, quotes and links as the editor shows them, not asterisks and hashes. Qt's own HTML of a plain-text
editor's selection is its plain words in the editor's typeface, and LibreOffice prefers the OpenDocument copy Qt
adds beside it, as plain: a passage pasted into Word or Writer came with its ``**`` and ``#`` as text.

Pasted, formatted text (a web page's, a word processor's, a mail's HTML) comes in as Markdown, as File ▸ Open
brings a Word document's: emphasis, headings, lists, quotes, code, links and tables as marks, the writer's own
``*`` and ``#`` escaped; a Word list's bullet or number typed as text becomes an item. Where the clipboard also
holds Markdown (Redraft's copy, another Markdown editor's, Qt's) or only monospaced text (a code editor's), its
plain text is pasted as before. Edit ▸ Paste Without Formatting always pastes the plain text.

A plain text's copy is its words alone (``QT_COPIES``: Qt's formats, which would carry the editor's typeface and
size into a word processor), and its paste Qt's own: its ``*`` and ``#`` are the writer's characters.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from PySide6.QtCore import QMimeData
from PySide6.QtGui import (
    QAction,
    QFont,
    QImage,
    QKeySequence,
    QTextBlock,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextFragment,
    QTextListFormat,
)
from PySide6.QtWidgets import QApplication, QMenu, QPlainTextEdit

from app.documents.markdown_blocks import (
    PLAIN,
    Block,
    Format,
    emphasised,
    escape_block_start,
    escape_inline,
    join_blocks,
    linked,
    one_line,
    pipe_table,
)
from app.window.markdown_highlighter import MarkdownHighlighter

log = logging.getLogger(__name__)

# A passage longer than this goes as its Markdown alone, Copy not held up for it: War and Peace's 3.2 million
# characters took 0.4 s to read and write again as HTML (two cores, busy).
RICH_COPY_LIMIT = 4_000_000  # characters
MARKDOWN = "text/markdown"
# What Qt adds to a plain-text editor's copy: its words as HTML in the editor's typeface and size (which a word
# processor pastes as such), as Markdown escaped and wrapped at 80 columns, and as an OpenDocument text as plain
# (which LibreOffice takes first). A copy is the plain words, and a Markdown passage's Markdown and HTML.
QT_COPIES = ("text/html", MARKDOWN, "application/vnd.oasis.opendocument.text")
PASTE_PLAIN_KEYS = "Ctrl+Alt+V"
ListStyle = QTextListFormat.Style
NUMBERED = {ListStyle.ListDecimal, ListStyle.ListLowerAlpha, ListStyle.ListUpperAlpha, ListStyle.ListLowerRoman,
            ListStyle.ListUpperRoman}  # fmt: skip
QUOTE_INDENT_PX = 40  # Qt's margin for each <blockquote> it is inside
# A list item Word writes into its HTML as a paragraph: its bullet (in the Symbol font, "·") or its number typed,
# then no-break spaces.
TYPED_BULLET = re.compile(r"^\s*[·•▪◦§o-] *\u00a0[\s\u00a0]*(?=\S)")
TYPED_NUMBER = re.compile(r"^\s*(\d{1,3})[.)] *\u00a0[\s\u00a0]*(?=\S)")
TYPED_MARKER = re.compile(r"^(?:[·•▪◦§o-]|\d{1,3}[.)]) ")  # as the words read once their spacing is one space
LAYOUT_SPACES = re.compile(r"[ \u00a0]{2,}")  # a word processor's spacing, not the writer's words
# Typefaces a code editor copies its lines in ("mono" in a name says so too: DejaVu Sans Mono, SF Mono…).
MONOSPACED = frozenset({"monospace", "courier", "courier new", "consolas", "menlo", "monaco", "lucida console",
                        "source code pro", "fira code", "cascadia code"})  # fmt: skip


def pasted_markdown(html: str) -> str | None:
    """Formatted text (HTML) as Markdown (see the module's docstring); None where its text is all monospaced, as
    a code editor copies its lines: its plain text is what was meant. The HTML is read once, for both."""
    document = QTextDocument()
    document.setHtml(html)
    return None if _only_monospaced(document) else _markdown_of(document)


def _markdown_of(document: QTextDocument) -> str:
    blocks: list[Block] = []
    tables: set[int] = set()
    block = document.begin()
    while block.isValid():
        table = QTextCursor(block).currentTable()
        if table is None:
            found = _block(block)
            if found is not None:
                blocks.append(found)
        elif table.objectIndex() not in tables:
            tables.add(table.objectIndex())
            # The first row is the header, which Markdown sets off itself (its cells' bold is the header's).
            rows = [[one_line(_pieces(table.cellAt(row, column).firstCursorPosition().block(), bold=row > 0))
                     for column in range(table.columns())] for row in range(table.rows())]  # fmt: skip
            blocks.append(Block("table", pipe_table(rows)))
        block = block.next()
    return join_blocks(blocks)


def _only_monospaced(document: QTextDocument) -> bool:
    """Whether the document's text is all in a monospaced typeface."""
    block, seen = document.begin(), False
    while block.isValid():
        if block.text().strip():
            seen = True
            if not (block.blockFormat().nonBreakableLines() or all(_monospaced(f) for f in _fragments(block))):
                return False
        block = block.next()
    return seen


def _block(block: QTextBlock) -> Block | None:
    form = block.blockFormat()
    if form.nonBreakableLines():  # <pre>
        return Block("code", block.text().replace("\u2028", "\n"))
    if form.hasProperty(QTextFormat.Property.BlockTrailingHorizontalRulerWidth):
        return Block("paragraph", "---")
    level = form.headingLevel()
    pieces = _pieces(block, bold=not level)  # a heading's words are bold already
    text = emphasised(pieces).strip()
    if not text:
        return None
    if level:
        return Block("heading", f"{'#' * min(6, level)} {text}")
    listed = block.textList()
    if listed is not None:
        style = listed.format().style()
        marker = f"{listed.itemNumber(block) + listed.format().start()}." if style in NUMBERED else "-"
        return Block("item", text, depth=max(0, listed.format().indent() - 1), marker=marker,
                     list_id=str(listed.objectIndex()))  # fmt: skip
    if form.hasProperty(QTextFormat.Property.BlockQuoteLevel):
        depth = max(1, round(form.leftMargin() / QUOTE_INDENT_PX))
        return Block("quote", "> " * depth + escape_block_start(text))
    bullet, number = TYPED_BULLET.match(block.text()), TYPED_NUMBER.match(block.text())
    if (bullet or number) and (marker := TYPED_MARKER.match(text)) is not None:
        return Block("item", text[marker.end() :], marker=f"{number.group(1)}." if number else "-",
                     list_id="typed numbers" if number else "typed bullets")  # fmt: skip
    return Block("paragraph", escape_block_start(text))


def _pieces(block: QTextBlock, bold: bool = True) -> list[tuple[str, Format]]:
    """A paragraph's words with their formats, its links as Markdown links, pictures left out."""
    pieces: list[tuple[str, Format]] = []
    link: list[tuple[str, Format]] = []
    target = ""
    for fragment in _fragments(block):
        form = fragment.charFormat()
        if form.isImageFormat():
            continue
        code = _monospaced(fragment)
        style: Format = (bold and form.fontWeight() >= QFont.Weight.DemiBold, form.fontItalic(), form.fontStrikeOut(),
                         code)  # fmt: skip
        words = LAYOUT_SPACES.sub(" ", fragment.text().replace("\ufffc", ""))
        words = words if code else escape_inline(words)
        href = form.anchorHref() if form.isAnchor() else ""
        if href != target:
            pieces.extend(linked(link, target))
            link, target = [], href
        for index, line in enumerate(words.split("\u2028")):  # <br>: a hard line break
            if index:
                link.append(("\\\n", PLAIN))
            if line:
                link.append((line, style))
    pieces.extend(linked(link, target))
    return pieces


def _fragments(block: QTextBlock) -> list[QTextFragment]:
    found = []
    it = block.begin()
    while not it.atEnd():
        fragment = it.fragment()
        if fragment.isValid():
            found.append(fragment)
        it += 1
    return found


def _monospaced(fragment: QTextFragment) -> bool:
    form = fragment.charFormat()
    families = form.fontFamilies() or []
    return form.fontFixedPitch() or any("mono" in name.lower() or name.lower() in MONOSPACED for name in families)


class MarkdownClipboard(QPlainTextEdit):
    """The editor's clipboard: a Markdown passage copied as its Markdown and as HTML, formatted text pasted as
    Markdown."""

    highlighter: MarkdownHighlighter  # the editor's, which knows whether the text is Markdown
    # A Markdown passage as HTML, as the exports read Markdown: the window's to give (epub_export.passage_html), as
    # the exports' modules import the editor's. None: a passage goes as its Markdown alone.
    html_of_markdown: Callable[[str], str] | None = None
    # A picture on the clipboard (a screenshot) kept as a file and put in the text: the window's to give
    # (picture_command.PictureCommand.paste). None: an image alone pastes nothing, as Qt's editor does.
    paste_picture: Callable[[QImage], bool] | None = None
    context_menu_extras: list[Callable[[QMenu, QTextCursor], None]]  # the editor's right-click additions

    def createMimeDataFromSelection(self) -> QMimeData:  # noqa: N802 - Qt's name
        mime = super().createMimeDataFromSelection()
        text = mime.text()  # asked first: Qt makes its own formats on the first read, which would overwrite these
        for qt_own in QT_COPIES:
            mime.removeFormat(qt_own)
        if self.highlighter.markdown:
            mime.setData(MARKDOWN, text.encode("utf-8"))
            if self.html_of_markdown is not None and text.strip() and len(text) <= RICH_COPY_LIMIT:
                mime.setHtml(self.html_of_markdown(text))
        return mime

    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # noqa: N802 - Qt's name
        return self._picture_alone(source) or super().canInsertFromMimeData(source)

    def _picture_alone(self, source: QMimeData) -> bool:
        """A picture with no words beside it (a screenshot, an image copied from an editor), where one can go in."""
        return self.paste_picture is not None and source.hasImage() and not source.text().strip()

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802 - Qt's name
        if self.paste_picture is not None and self._picture_alone(source):
            image = source.imageData()
            if isinstance(image, QImage) and not image.isNull():
                self.paste_picture(image)
            return
        if self.highlighter.markdown and source.hasHtml() and not source.hasFormat(MARKDOWN):
            html = source.html()
            try:
                markdown = pasted_markdown(html)
            except Exception:  # noqa: BLE001  whatever the page held, the words still come in, as plain text
                log.exception("pasted HTML could not be read as Markdown; pasting its plain text")
                markdown = None
            if markdown is not None:
                converted = QMimeData()
                converted.setText(markdown)
                super().insertFromMimeData(converted)
                return
        super().insertFromMimeData(source)

    def add_paste_plain(self, menu: QMenu, before: QAction) -> QAction:
        """Edit ▸ Paste Without Formatting, put in ``menu`` before ``before`` (Ctrl+Alt+V: Word's Paste Special
        keys; Ctrl+Shift+V, a browser's, is Rewrite ▸ Versions… here)."""
        action = QAction("Paste W&ithout Formatting", self.window())
        action.setShortcut(QKeySequence(PASTE_PLAIN_KEYS))
        action.setStatusTip("Paste the clipboard's plain text: no headings, emphasis or links from what was copied")
        action.triggered.connect(lambda _checked=False: self.paste_plain())
        menu.insertAction(before, action)

        def beside_paste(context: QMenu, _cursor: QTextCursor) -> None:  # the right-click menu's, after its Paste
            entries = context.actions()
            at = next((i for i, entry in enumerate(entries) if entry.objectName() == "edit-paste"), None)
            if at is not None and at + 1 < len(entries):
                keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                entry = QAction(f"{action.text()}\t{keys}", context)
                entry.setEnabled(entries[at].isEnabled())  # as Qt's Paste: nothing to paste, nothing pasted
                entry.triggered.connect(lambda _checked=False: self.paste_plain())
                context.insertAction(entries[at + 1], entry)

        self.context_menu_extras.append(beside_paste)
        return action

    def paste_plain(self) -> None:
        """Edit ▸ Paste Without Formatting: the clipboard's plain text, whatever else it holds."""
        plain = QMimeData()
        plain.setText(QApplication.clipboard().text())
        self.insertFromMimeData(plain)  # the editor's own: a developing rewrite's words stay out of reach
