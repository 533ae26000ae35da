"""A read-only preview that shows one text as a change from another, the way Rewrite ▸ Show Changes shows a draft:
the words only the shown text has underlined, the words only the other has struck through, in the theme's change
colours, the first change in view. File ▸ Saved Versions… shows what Restore would do with it, the recovery dialog
what a crash would have lost, Mark Changes Since… the marks it would write.

The texts are whole documents, so they are compared line by line first (``critic_markup.changes_between``): a
novel with a changed word in every chapter is marked in a fraction of a second."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from app.documents.critic_markup import changes_between
from app.window.live_span import utf16_length
from app.window.theme import change_colors


def show_change(preview: QPlainTextEdit, before: str | None, after: str) -> int:
    """Put ``after`` in ``preview``, marked as a change from ``before`` (plain when ``before`` is None), with the
    first change centred in view (else the start). Returns how many changes are marked."""
    preview.setUndoRedoEnabled(False)  # a preview is never undone: no second copy of a novel on its undo stack
    changes = changes_between(before, after) if before is not None and before != after else []
    colors = change_colors(preview.palette().color(QPalette.ColorRole.Base).lightness() < 128)
    kept, removed, added = QTextCharFormat(), QTextCharFormat(), QTextCharFormat()
    removed.setForeground(colors.removed)
    removed.setFontStrikeOut(True)
    added.setForeground(colors.added)
    added.setFontUnderline(True)
    runs = [(after, kept)]
    if before is not None and changes:
        runs, position = [], 0
        for change in changes:
            # A line break taken out shows as a struck ¶, as Word shows it: the preview keeps the new text's lines.
            taken_out = before[change.start : change.end].replace("\n", "¶")
            runs += [(before[position : change.start], kept), (taken_out, removed)]
            runs.append((change.text, added))
            position = change.end
        runs.append((before[position:], kept))
    preview.clear()
    preview.setCurrentCharFormat(kept)  # nothing of an earlier preview's marks carries over
    cursor = QTextCursor(preview.document())
    cursor.beginEditBlock()  # one layout at the end, not one per piece
    for text, look in runs:
        if text:
            cursor.insertText(text, look)
    cursor.endEditBlock()
    first = utf16_length(before[: changes[0].start]) if before is not None and changes else 0
    shown = preview.textCursor()
    shown.setPosition(first)
    preview.setTextCursor(shown)
    preview.centerCursor()
    # Again once the dialog is laid out: a preview not yet shown has no height to centre in.
    QTimer.singleShot(0, preview, preview.centerCursor)
    return len(changes)
