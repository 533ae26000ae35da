"""Steering a rewrite from the editor (#37): words kept verbatim, gaps filled inside a selection, a rewrite's
length, and tone presets for instruction-tuned checkpoints. The engine's side is ``model/edit/holds.py``.

**Kept words** are marks on the writer's text, never in it: an underline drawn as an extra selection of the
editor, so marking is not an edit, not an undo step, and nothing of it is saved. Each mark is a pair of
cursors (:class:`QTextCursor`), so it moves with the writer's edits (text typed at either edge stays outside it) and
is dropped once its words are deleted. A rewrite of a selection holding marks asks the
engine to keep them (``EditRequest.keep``, offsets inside the span).

While a span develops its text is repainted every pass, which would collapse the marks inside it: when a
span begins they are set aside, relative to its start, from the positions last seen before it began. When
the span ends with the original text back (reject, cancel, a failure, regenerate) the marks come back with
it, so the writer can try again at once; an accepted rewrite clears them, since the words they kept are now
the new text's and a mark on them would say nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup, QColor, QKeySequence, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QLabel, QMenu, QStatusBar, QTextEdit, QToolBar

from app.dialogs.popups import INSTRUCTION_PRESETS
from app.rewrite.rewrite_controller import RewriteController
from app.rewrite.run import RewriteRun
from app.settings import Preferences
from app.window.editor_widget import RewriteEditor
from app.window.highlights import set_layer
from model.edit.request import GAP_MARK, Length

# Length ▸ choices: (value sent as EditRequest.length, menu text, toolbar text, what it does).
LENGTHS: tuple[tuple[Length, str, str, str], ...] = (
    ("shorter", "&Shorter", "Shorter", "Rewrites come out shorter than the selection"),
    ("same", "S&ame Length", "Same", "Rewrites come out about as long as the selection"),
    ("longer", "&Longer", "Longer", "Rewrites come out longer than the selection"),
)
# Gap marks are looked for in selections up to this long (every selection change); a longer one may
# hold some, and the engine says so if it does not.
GAP_SCAN_LIMIT = 200_000
KEEP_TIP = "Keep the selected words exactly as they are when the text around them is rewritten (Ctrl+K again unmarks)"
# Its own keys: Fill Gap at Cursor has Ctrl+Shift+G, and one key for two actions is listed twice in Help and
# is ambiguous to Qt whenever both are enabled.
GAPS_SHORTCUT = "Ctrl+Shift+F"
GAPS_TIP = "Write into every gap mark ([...] or ___) of the selection, leaving the rest as it is"


def _wordish(character: str) -> bool:
    return character.isalnum() or character in "'’-"


class _Mark:
    """One marked range as two cursors: text inserted at its start moves the start on (the text lands
    before the mark), at its end leaves the end where it is (after the mark). Once its text is deleted the
    two meet, and text then inserted there puts the start after the end: either way the mark is gone."""

    def __init__(self, editor: RewriteEditor, first: int, last: int) -> None:
        self.start = QTextCursor(editor.document())
        self.start.setPosition(first)
        self.end = QTextCursor(editor.document())
        self.end.setPosition(last)
        self.end.setKeepPositionOnInsert(True)

    @property
    def first(self) -> int:
        return self.start.position()

    @property
    def last(self) -> int:
        return self.end.position()

    def cursor(self) -> QTextCursor:
        """A cursor selecting the mark, to draw it."""
        cursor = QTextCursor(self.start)
        cursor.setPosition(self.last, QTextCursor.MoveMode.KeepAnchor)
        return cursor


class KeepMarks(QObject):
    """The words marked to keep in one editor, drawn underlined; see the module docstring."""

    def __init__(self, editor: RewriteEditor) -> None:
        super().__init__(editor)
        self.editor = editor
        self._marks: list[_Mark] = []
        self._known: list[tuple[int, int]] = []  # the marks as last seen while no span developed
        self._held: tuple[str, list[tuple[int, int]]] | None = None  # a span's original and its marks
        editor.document().contentsChanged.connect(self._sweep)

    # -- reading ----------------------------------------------------------------------------------

    def ranges(self) -> list[tuple[int, int]]:
        """The marked ranges, in document positions, in order."""
        return sorted((mark.first, mark.last) for mark in self._marks)

    def keep_for(self, start: int, end: int) -> tuple[tuple[int, int], ...]:
        """The marked words inside ``[start, end)`` as ``EditRequest.keep``: character offsets into the span's
        text (a mark the selection cuts through keeps the part inside it)."""
        keep = []
        for first, last in self.ranges():
            first, last = self._trimmed(max(first, start), min(last, end))
            if first < last:
                offset = len(self.editor.text_between(start, first))
                keep.append((offset, offset + len(self.editor.text_between(first, last))))
        return tuple(keep)

    # -- marking ----------------------------------------------------------------------------------

    def toggle(self) -> str:
        """Ctrl+K: mark the selected words (snapped to whole words), or unmark them if all are marked; with
        only a caret, the mark or word under it. Returns what happened, in words."""
        cursor = self.editor.textCursor()
        start, end = cursor.selectionStart(), cursor.selectionEnd()
        if start == end:
            for first, last in self.ranges():
                if first <= start <= last:
                    self._subtract(first, last)
                    return self._said("No longer kept", first, last)
        first, last = self._words(*self._trimmed(start, end))
        if first >= last:
            return "Select the words to keep first."
        if self._covered(first, last):
            self._subtract(first, last)
            return self._said("No longer kept", first, last)
        self._add(first, last)
        return self._said("Kept as written when the text around it is rewritten", first, last) + " (Ctrl+K unmarks)"

    def clear(self) -> None:
        self._marks = []
        self._refresh()

    def _said(self, what: str, first: int, last: int) -> str:
        text = " ".join(self.editor.text_between(first, last).split())
        return f"{what}: “{text if len(text) <= 40 else text[:39] + '…'}”"

    def _trimmed(self, first: int, last: int) -> tuple[int, int]:
        """``[first, last)`` without the spaces and line breaks at its edges (one position each)."""
        if first >= last:
            return first, first
        text = self.editor.text_between(first, last)
        stripped = text.strip()
        if not stripped:
            return first, first
        return first + len(text) - len(text.lstrip()), last - (len(text) - len(text.rstrip()))

    def _words(self, first: int, last: int) -> tuple[int, int]:
        """``[first, last)`` widened to whole words (a caret: the word it is in, if any)."""
        document = self.editor.document()
        while first > 0 and _wordish(document.characterAt(first - 1)):
            first -= 1
        end = self.editor.end_position()
        while last < end and _wordish(document.characterAt(last)):
            last += 1
        return first, last

    def _covered(self, first: int, last: int) -> bool:
        """Whether every word of ``[first, last)`` is marked already."""
        at = first
        for start, end in self.ranges():
            if end <= at or start >= last:
                continue
            if start > at and self.editor.text_between(at, start).strip():
                return False  # words between two marks, or before the first
            at = end
        return at >= last or not self.editor.text_between(at, last).strip()

    def _add(self, first: int, last: int) -> None:
        """Mark ``[first, last)``, merged with the marks it overlaps or touches."""
        kept = []
        for mark in self._marks:
            start, end = mark.first, mark.last
            if start <= last and end >= first:
                first, last = min(first, start), max(last, end)
            else:
                kept.append(mark)
        self._marks = [*kept, _Mark(self.editor, first, last)]
        self._refresh()

    def _subtract(self, first: int, last: int) -> None:
        """Unmark ``[first, last)``; what a mark holds outside it stays marked."""
        kept = []
        for mark in self._marks:
            start, end = mark.first, mark.last
            if start >= last or end <= first:
                kept.append(mark)
                continue
            for piece in ((start, first), (last, end)):
                left, right = self._trimmed(*piece)
                if left < right:
                    kept.append(_Mark(self.editor, left, right))
        self._marks = kept
        self._refresh()

    # -- following the document and the rewrites ---------------------------------------------------

    def _sweep(self) -> None:
        """The text changed: drop the marks whose words are gone, redraw the rest."""
        if self._marks:
            self._marks = [
                mark for mark in self._marks if mark.first < mark.last and mark.cursor().selectedText().strip()
            ]
            self._refresh()
        elif self.editor.live_span is None:
            self._known = []

    def _refresh(self) -> None:
        if self.editor.live_span is None:  # a developing span's repaints have collapsed the marks inside it
            self._known = self.ranges()
        look = QTextCharFormat()
        look.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        accent = self.editor.palette().color(QPalette.ColorRole.Link)
        look.setUnderlineColor(accent)
        tint = QColor(accent)
        tint.setAlpha(28)
        look.setBackground(tint)
        selections = []
        for mark in self._marks:
            selection = QTextEdit.ExtraSelection()
            selection.cursor = mark.cursor()  # type: ignore[misc]
            selection.format = look  # type: ignore[misc]
            selections.append(selection)
        set_layer(self.editor, "kept words", selections)

    def span_began(self, start: int, end: int, original: str) -> None:
        """A rewrite locked ``[start, end)``: set its marks aside, relative to its start."""
        inside = [(max(a, start) - start, min(b, end) - start) for a, b in self._known if a < end and b > start]
        self._held = (original, inside) if inside else None

    def span_ended(self, start: int, end: int) -> None:
        """The span is settled at ``[start, end)``: its marks come back if its original text did."""
        held, self._held = self._held, None
        if held is not None and self.editor.text_between(start, end) == held[0]:
            for first, last in held[1]:
                self._add(start + first, start + last)
        self._refresh()


class SteeringHost(Protocol):
    """What steering needs of the window (MainWindow is one): its text, preferences, rewrites and actions."""

    editor: RewriteEditor
    prefs: Preferences
    rewrites: RewriteController
    instruct_action: QAction
    fill_action: QAction

    @property
    def run(self) -> RewriteRun | None: ...

    def statusBar(self) -> QStatusBar: ...

    def rewrite_with_instruction(self, instruction: str) -> int | None: ...

    def _store(self, **changes: object) -> None: ...


class Steering(QObject):
    """The window's steering actions (Keep Words, Fill Gaps in Selection, Length, Tone) and the marks."""

    def __init__(self, window: SteeringHost) -> None:
        super().__init__(window.editor)  # lives as long as the window's text
        self.window = window
        self.marks = KeepMarks(window.editor)
        self.keep_action = self._action("&Keep Words", self.toggle_keep, "Ctrl+K")
        self.gaps_action = self._action("Fill Gaps in &Selection", self.fill_gaps, GAPS_SHORTCUT)
        self.length_group = QActionGroup(self)
        self.length_group.setExclusive(True)
        self.length_actions: dict[str, QAction] = {}
        for value, text, short, tip in LENGTHS:
            action = self._action(text, partial(self.set_length, value))
            action.setCheckable(True)
            action.setIconText(short)
            action.setToolTip(f"{tip} (Rewrite Selection; Rewrite ▸ Length)")
            action.setStatusTip(tip)
            action.setChecked(value == window.prefs.rewrite_length)
            self.length_group.addAction(action)
            self.length_actions[value] = action
        self.tone_actions: dict[QAction, str] = {}
        for label, instruction in INSTRUCTION_PRESETS.items():
            action = self._action(label, partial(window.rewrite_with_instruction, instruction))
            self.tone_actions[action] = instruction

    def _action(self, text: str, slot: Callable[[], object], shortcut: str | None = None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def add_to(self, rewrite_menu: QMenu) -> None:
        """Into the Rewrite menu: Fill Gaps after Fill Gap, Tone after Instruct, then Keep Words and Length."""
        actions = rewrite_menu.actions()
        window = self.window
        rewrite_menu.insertAction(window.instruct_action, self.gaps_action)
        after_instruct = actions[actions.index(window.instruct_action) + 1]  # the separator before Accept
        self.tone_menu = QMenu("&Tone", rewrite_menu)
        self.tone_menu.addActions(list(self.tone_actions))
        self.length_menu = QMenu("&Length", rewrite_menu)
        self.length_menu.addActions(list(self.length_actions.values()))
        rewrite_menu.insertMenu(after_instruct, self.tone_menu)
        rewrite_menu.insertSeparator(after_instruct)
        rewrite_menu.insertAction(after_instruct, self.keep_action)
        rewrite_menu.insertMenu(after_instruct, self.length_menu)
        for menu in (self.tone_menu, self.length_menu):
            menu.setToolTipsVisible(True)  # a greyed-out preset says why on hover

    def add_length_to(self, toolbar: QToolBar) -> None:
        label = QLabel(" Length: ")
        label.setToolTip("How long Rewrite Selection's new text comes out against the selection")
        toolbar.addWidget(label)
        toolbar.addActions(list(self.length_actions.values()))
        toolbar.addSeparator()

    # -- what the actions do -------------------------------------------------------------------------

    def toggle_keep(self) -> None:
        self.window.statusBar().showMessage(self.marks.toggle(), 6000)

    def fill_gaps(self) -> int | None:
        return self.window.rewrites.start("gaps")

    def set_length(self, value: str) -> None:
        if value != self.window.prefs.rewrite_length:
            self.window._store(rewrite_length=value)

    def selection_has_gaps(self) -> bool:
        cursor = self.window.editor.textCursor()
        start, end = cursor.selectionStart(), cursor.selectionEnd()
        if end - start > GAP_SCAN_LIMIT:
            return True
        return start != end and GAP_MARK.search(self.window.editor.text_between(start, end)) is not None

    def reasons(self, no_model: str, cannot_instruct: str, fill_reason: str) -> dict[QAction, str]:
        """Why each steering action cannot run now ("" where it can), and Fill Gap at Cursor's when the
        selection holds gap marks (Fill Gaps in Selection's shortcut then fills those instead)."""
        window = self.window
        cursor = window.editor.textCursor()
        selected = cursor.hasSelection()
        gaps = selected and self.selection_has_gaps()
        if window.run is not None:
            keep = "A rewrite is under way: accept or reject it first, then mark the words to keep."
        elif not selected and not self._word_at_caret():
            keep = "Select the words to keep first (or put the cursor in a word)."
        else:
            keep = ""
        if not selected:
            fill_gaps = "Select text holding gap marks ([...] or ___) first."
        elif not gaps:
            fill_gaps = "The selection holds no gap marks: type [...] where the model should write."
        else:
            fill_gaps = ""
        tone = cannot_instruct or no_model or ("" if selected else "Select the text to rewrite first.")
        reasons = {self.keep_action: keep, self.gaps_action: no_model or fill_gaps}
        reasons.update({action: tone for action in self.tone_actions})
        if gaps and not fill_reason:
            reasons[window.fill_action] = f"The selection holds gap marks: Fill Gaps in Selection ({GAPS_SHORTCUT})."
        return reasons

    def tips(self) -> dict[QAction, str]:
        tips = {self.keep_action: KEEP_TIP, self.gaps_action: GAPS_TIP}
        tips.update({action: f"Rewrite the selection: “{text}”" for action, text in self.tone_actions.items()})
        return tips

    def _word_at_caret(self) -> bool:
        editor = self.window.editor
        position = editor.textCursor().position()
        document = editor.document()
        return _wordish(document.characterAt(position)) or (
            position > 0 and _wordish(document.characterAt(position - 1))
        )
