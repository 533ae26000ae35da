"""Where the caret goes when an undo step is undone or redone, for the steps that say so.

Qt leaves the caret at the far end of a step's last edit. For most steps that is where the text changed, but a
section moved from the Outline is two edits far apart: undone, the caret landed at the end of the section put back
(on the next heading, which the Outline then marked), not on the moved section's heading. A step that knows better
remembers its carets here, by its place in the undo stack; a new step at that place forgets them.
"""

from __future__ import annotations

from PySide6.QtGui import QTextDocument


class UndoCarets:
    """The remembered carets of one document's undo steps: Qt's undo count at a step's end → (caret undone, caret
    redone)."""

    def __init__(self, document: QTextDocument) -> None:
        self.document = document
        self.carets: dict[int, tuple[int, int]] = {}
        document.undoCommandAdded.connect(self._forget_replaced)

    def remember(self, undone_at: int, redone_at: int) -> None:
        """The newest step's carets: where the caret goes once it is undone, and once it is redone."""
        self.carets[self.document.availableUndoSteps()] = (undone_at, redone_at)

    def _forget_replaced(self) -> None:
        """A new edit: steps remembered as ending at its count or later were undone, and are gone from the stack."""
        newest = self.document.availableUndoSteps()
        for step in [step for step in self.carets if step >= newest]:
            del self.carets[step]

    def caret(self, undo: bool, steps_before: int) -> int | None:
        """Where the caret goes after one undo (or redo) from ``steps_before``, if the step undone (or redone) said.
        Qt's count is of edits, not of steps (a step is an edit block), so a step is known by the count at its end."""
        steps_after = self.document.availableUndoSteps()
        if steps_after == steps_before:
            return None  # nothing to undo or redo
        carets = self.carets.get(steps_before if undo else steps_after)
        if carets is None:
            return None
        return min(carets[0] if undo else carets[1], self.document.characterCount() - 1)
