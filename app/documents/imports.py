"""Which reader opens another program's document (File ▸ Open, a file dropped on the window, the command line):
Word's .docx and .doc, LibreOffice's .odt and RTF, each as Markdown. Nothing here needs Qt."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.documents.doc_import import is_doc_file, read_doc
from app.documents.markdown_blocks import ImportedDocument
from app.documents.odf_import import is_odf_text, read_odf_text
from app.documents.rtf_import import is_rtf, read_rtf
from app.documents.word_import import is_word_file, read_word_document

# A reader: the path, and whether its tracked changes are read accepted (else as the text was before them).
Reader = Callable[[Path, bool], ImportedDocument]


def reader_for(path: Path) -> tuple[str, Reader] | None:
    """The kind of document ``path`` is, as the writer would name it, and its reader; None for a text file."""
    if is_odf_text(path):
        return "OpenDocument", read_odf_text
    if is_rtf(path):  # before Word's: WordPad's RTF is often named .doc
        return "RTF", read_rtf
    if is_doc_file(path):
        return "Word 97–2003", read_doc
    if is_word_file(path):
        return "Word", read_word_document
    return None
