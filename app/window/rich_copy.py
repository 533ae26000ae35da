"""Copy and Cut in a Markdown document put the passage on the clipboard twice: as written (its Markdown, which
plain-text places and Redraft itself paste) and as formatted HTML, which word processors, mail and web editors
paste: its emphasis, headings, lists, quotes and links as the editor shows them, not asterisks and hashes. Its
``text/markdown`` is the passage as written too (Qt's escaped the writer's Markdown as if it were plain text).

Qt's own HTML of a plain-text editor's selection is its plain words in the editor's typeface, and LibreOffice
prefers the OpenDocument copy Qt adds beside it, which is as plain: a passage pasted into Word or Writer came
with its ``**`` and ``#`` as text. The HTML here is read as the exports read Markdown (Qt's reader, then
``docx_export.markdown_body`` and the EPUB's XHTML): tracked changes made, as the counts take them; notes
numbered in the text and set after it, as the PDF sets them; a picture by its name. A plain text's copy is left
as Qt makes it.
"""

from __future__ import annotations

from PySide6.QtCore import QMimeData
from PySide6.QtWidgets import QPlainTextEdit

from app.documents.critic_markup import settle
from app.documents.front_matter import without_front_matter
from app.window.markdown_highlighter import MarkdownHighlighter

# A passage longer than this goes as its Markdown alone, Copy not held up for it: War and Peace's 3.2 million
# characters took 0.4 s to read and write again as HTML (two cores, busy).
RICH_COPY_LIMIT = 4_000_000  # characters
MARKDOWN = "text/markdown"
ODF = "application/vnd.oasis.opendocument.text"  # Qt's plain copy, which LibreOffice would take over the HTML
PAGE = '<html><head><meta charset="utf-8"/></head><body>\n{body}\n</body></html>'


def passage_html(markdown: str) -> str:
    """A Markdown passage as an HTML page (see the module's docstring)."""
    # Here, not above: the exports' modules import the editor's (Go to Heading's fences, the Word marks).
    from app.window.docx_export import Lists, markdown_body
    from app.window.epub_export import Book, xhtml_body
    from app.window.pdf_export import typeset

    lists = Lists()
    text = without_front_matter(settle(markdown, accept=True))[1]
    body = markdown_body(typeset(text, markdown=True), lists)
    return PAGE.format(body=xhtml_body(body, lists, Book(None), []))


class RichCopyEditor(QPlainTextEdit):
    """The editor's copying: a Markdown passage as its Markdown and as HTML."""

    highlighter: MarkdownHighlighter  # the editor's, which knows whether the text is Markdown

    def createMimeDataFromSelection(self) -> QMimeData:  # noqa: N802 - Qt's name
        mime = super().createMimeDataFromSelection()
        if not self.highlighter.markdown:
            return mime
        text = mime.text()  # asked first: Qt makes its own formats on the first read, which would overwrite these
        # Qt's Markdown of the selection escapes the writer's own ("\\# The Harbour"): the passage is Markdown.
        mime.setData(MARKDOWN, text.encode("utf-8"))
        if text.strip() and len(text) <= RICH_COPY_LIMIT:
            mime.setHtml(passage_html(text))
            mime.removeFormat(ODF)
        return mime
