"""Light Markdown cues in the editor (headings, emphasis, code): display only, never part of the text or undo."""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument


class MarkdownHighlighter(QSyntaxHighlighter):
    """Light Markdown cues (headings, emphasis, code). Display only: never part of the text or undo."""

    _INLINE = (
        (re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__"), "bold"),
        (re.compile(r"(?<![*\w])\*[^*\n]+\*(?!\*)|(?<![_\w])_[^_\n]+_(?!\w)"), "italic"),
        (re.compile(r"`[^`\n]+`"), "code"),
    )

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.heading_color = QColor("#24211d")

    def highlightBlock(self, text: str) -> None:
        heading = re.match(r"#{1,6} ", text)
        if heading:
            text_format = QTextCharFormat()
            text_format.setFontWeight(QFont.Weight.Bold)
            text_format.setForeground(self.heading_color)
            self.setFormat(0, len(text), text_format)
            return
        for pattern, style in self._INLINE:
            for match in pattern.finditer(text):
                text_format = QTextCharFormat()
                if style == "bold":
                    text_format.setFontWeight(QFont.Weight.Bold)
                elif style == "italic":
                    text_format.setFontItalic(True)
                else:
                    text_format.setFontFamilies(["DejaVu Sans Mono", "monospace"])
                self.setFormat(match.start(), match.end() - match.start(), text_format)
