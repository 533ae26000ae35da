"""Edit ▸ Rewrap Paragraph: the paragraphs at the caret (or across the selection) wrapped again at their
document's width, as Emacs's fill-paragraph or Vim's gq do. A rewrite inside a hand-wrapped paragraph wraps
its own new text (model.edit.wrapping), but the writer's lines after it keep their breaks, so a longer or
shorter sentence leaves a ragged line; this mends the whole paragraph, as one undo step."""

from __future__ import annotations

from PySide6.QtGui import QTextBlock, QTextCursor

from app.window.editor_widget import RewriteEditor
from model.edit.wrapping import BLANK_LINES, DEFAULT_WRAP_WIDTH, prevailing_width, refill, wrap_width


def _is_blank(block: QTextBlock) -> bool:
    return not block.text().strip()


def paragraph_range(editor: RewriteEditor, start: int, end: int) -> tuple[int, int]:
    """The document positions of the paragraphs (blank lines apart) that [start, end] touches; blank lines at
    its edges (a selection from one) are not theirs."""
    document = editor.document()
    first, last = document.findBlock(start), document.findBlock(end)
    while _is_blank(first) and first.blockNumber() < last.blockNumber():
        first = first.next()
    while _is_blank(last) and last.blockNumber() > first.blockNumber():
        last = last.previous()
    while first.previous().isValid() and not _is_blank(first.previous()) and not _is_blank(first):
        first = first.previous()
    while last.next().isValid() and not _is_blank(last.next()) and not _is_blank(last):
        last = last.next()
    return first.position(), last.position() + last.length() - 1


def left_ragged(editor: RewriteEditor, position: int, width: int) -> bool:
    """Whether the paragraph at ``position``, hand-wrapped at ``width`` before a rewrite inside it, no longer
    passes for hand-wrapped (model.edit.wrapping) and Rewrap Paragraph would change it: a line the rewrite
    left shorter than the others."""
    text = editor.text_between(*paragraph_range(editor, position, position))
    return not wrap_width(text.split("\n")) and refill(text, width) != text


def rewrap_paragraphs(editor: RewriteEditor) -> str:
    """Rewrap the paragraphs at the caret; what the status bar says of it."""
    selection = editor.textCursor()
    start, end = paragraph_range(editor, selection.selectionStart(), selection.selectionEnd())
    old = editor.text_between(start, end)
    if not old.strip():
        return "Put the cursor in a paragraph to rewrap it."
    span = editor.live_span
    if span is not None and start < span.end and end > span.start:
        return "That paragraph is being rewritten: accept or reject the draft first, then rewrap it."
    measured = prevailing_width(editor.plain_text())
    width = measured or DEFAULT_WRAP_WIDTH
    new = refill(old, width)
    why = "this document's wrapped paragraphs" if measured else "no paragraph here is wrapped to measure"
    if new == old:
        return f"Already wrapped at {width} columns ({why})."
    # The caret stays before the same word: as many non-space characters before it as there were.
    caret = editor.textCursor().position()
    inked = sum(not char.isspace() for char in editor.text_between(start, max(start, min(caret, end))))
    before_a_word = caret < end and not editor.text_between(caret, caret + 1).isspace()
    cursor = QTextCursor(editor.document())
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    cursor.beginEditBlock()  # one undo step
    cursor.insertText(new)
    cursor.endEditBlock()
    seen, offset = 0, 0
    while offset < len(new) and seen < inked:
        seen += not new[offset].isspace()
        offset += 1
    while before_a_word and offset < len(new) and new[offset].isspace():
        offset += 1
    cursor.setPosition(start + len(new[:offset].encode("utf-16-le")) // 2)
    editor.setTextCursor(cursor)
    changed = sum(a != b for a, b in zip(BLANK_LINES.split(old), BLANK_LINES.split(new), strict=False))
    what = "the paragraph" if changed == 1 else f"{changed} paragraphs"
    return f"Rewrapped {what} at {width} columns ({why}). Ctrl+Z undoes it."
