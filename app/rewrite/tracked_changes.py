"""Rewrite ▸ Show Changes: a finished draft as tracked changes in the live span, each to take or leave.

The changes are :func:`model.edit.changes.word_changes` of the span's original and the draft it shows. In
the view, each undecided change shows the original's words struck through, then the draft's underlined
(``theme.change_colors``); Next Change and Previous Change move between them (the current one highlighted),
Accept Change and Reject Change decide one (a click or a right-click on a change offers both), and a decided
change shows the words it will land with (an accepted one's still in the added colour). Enter then lands the span as it
stands: the accepted and undecided changes made, the rejected ones keeping the original's words
(``RewriteRun.decided``); Esc rejects the whole rewrite.

The view is painted into the live span like a pass (``RewriteEditor.show_runs``), inside the rewrite's one
edit block, so whatever lands is one undo step from the original, and the recovery record keeps seeing the
span's original until then. The drafts panel shows each finished draft's changes the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QMouseEvent, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QMenu, QStatusBar

from app.rewrite.drafts_panel import DraftsPanel
from app.rewrite.rewrite_controller import RewriteController
from app.window.editor_widget import Phase, RewriteEditor
from app.window.text_changes import ACCEPT_CHANGE, REJECT_CHANGE, TextChanges
from app.window.theme import ChangeColors, change_colors
from model.edit.changes import Change, apply_changes, word_changes
from model.edit.wrapping import as_prose

# Keys that never type (the Alt+arrows beside Alt+Up/Down, which step through the drafts) and appear once each
# in Help ▸ Keyboard Shortcuts; Ctrl+Shift+E is a word processor's Track Changes key.
SHOW_KEYS = "Ctrl+Shift+E"
NEXT_KEYS, PREVIOUS_KEYS = "Alt+Right", "Alt+Left"
ACCEPT_KEYS, REJECT_KEYS = "Alt+Return", "Alt+Delete"
NOTHING_SHOWN = (
    "Show Changes (Ctrl+Shift+E) while a finished draft waits in the text, or open a Word document's tracked "
    "changes with Review Each, then step through the changes."
)
NO_CHANGES = "This draft changes nothing: Enter keeps the text as it is."


class TrackedWindow(Protocol):
    """What the tracked-changes view uses of the main window."""

    @property
    def editor(self) -> RewriteEditor: ...

    @property
    def rewrites(self) -> RewriteController: ...

    @property
    def drafts_panel(self) -> DraftsPanel: ...

    def statusBar(self) -> QStatusBar: ...


@dataclass
class Review:
    """One draft's changes against the span's original, and what the writer decided of each."""

    job_id: int
    candidate: int
    original: str
    draft: str
    changes: list[Change]
    decisions: list[bool | None]  # None: undecided (lands as the draft has it), True: accepted, False: rejected
    current: int = 0
    where: tuple[tuple[int, int], ...] = ()  # each change's painted range, in Qt positions from the span's start

    def landing(self) -> str:
        """The span as it stands: every change not rejected made."""
        kept = [change for change, decision in zip(self.changes, self.decisions, strict=True) if decision is not False]
        return apply_changes(self.original, kept)

    def taken(self) -> int:
        return sum(1 for decision in self.decisions if decision is not False)


def _qt_length(text: str) -> int:
    """``text``'s length in Qt document positions (UTF-16 code units)."""
    return len(text) + sum(1 for character in text if ord(character) > 0xFFFF)


def changes_html(original: str, draft: str, colors: ChangeColors) -> str:
    """``draft`` as rich text against ``original``: removed words struck through, added ones underlined."""

    def words(text: str) -> str:
        return escape(text).replace("\n", "<br>")

    out, position = [], 0
    for change in word_changes(original, draft):
        out.append(words(original[position : change.start]))
        if change.end > change.start:
            removed = words(original[change.start : change.end])
            out.append(f"<span style='color:{colors.removed.name()}; text-decoration:line-through'>{removed}</span>")
        if change.text:
            out.append(
                f"<span style='color:{colors.added.name()}; text-decoration:underline'>{words(change.text)}</span>"
            )
        position = change.end
    out.append(words(original[position:]))
    body = "".join(out)
    return f"<p style='white-space:pre-wrap; margin:0'>{body}</p>" if body else ""


def _dark() -> bool:
    """Whether the palette in use is a dark one (the theme Settings or the system chose)."""
    return QGuiApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128


class TrackedChanges(QObject):
    """The Show Changes toggle, the four actions on a draft's changes, and the review they act on."""

    def __init__(self, window: TrackedWindow) -> None:
        super().__init__(window.editor)
        self.window = window
        self.review: Review | None = None
        self.menu: QMenu | None = None  # the Accept/Reject offer of the last click on a change
        owner = window.editor.window()
        self.show_action = self._action(owner, "Sh&ow Changes", SHOW_KEYS, self._toggled)
        self.show_action.setCheckable(True)
        self.next_action = self._action(owner, "Ne&xt Change", NEXT_KEYS, lambda: self.step(+1))
        self.previous_action = self._action(owner, "Previo&us Change", PREVIOUS_KEYS, lambda: self.step(-1))
        self.accept_action = self._action(owner, ACCEPT_CHANGE, ACCEPT_KEYS, lambda: self.decide(True))
        self.reject_action = self._action(owner, REJECT_CHANGE, REJECT_KEYS, lambda: self.decide(False))
        controller = window.rewrites
        controller.draftShown.connect(self._draft_shown)
        controller.stateChanged.connect(self._state_changed)
        controller.spanEnded.connect(lambda _start, _end: self._forget())
        # Kept: the filter compares with these, never asks a widget being destroyed for its viewport.
        self._editor, self._viewport = window.editor, window.editor.viewport()
        self._viewport.installEventFilter(self)  # a click on a change
        # A theme switch. (A change key pressed while it cannot run says why through the window's own filter,
        # app/window/action_states.py, from the action's status tip.)
        self._editor.installEventFilter(self)
        # While no draft waits, the same actions act on the changes marked in the text (app/window/text_changes.py).
        self.in_text = TextChanges(window.editor, window.statusBar, self)
        self.in_text.countChanged.connect(self._update_actions)
        controller.stateChanged.connect(self.in_text.recount)  # no rewrite in the text: they are available again
        window.editor.context_menu_extras.append(self._offer_in_menu)  # a right-click on a draft's change
        self._update_actions()

    @staticmethod
    def _action(owner: QObject, text: str, keys: str, slot: object) -> QAction:
        action = QAction(text, owner)
        action.setShortcut(QKeySequence(keys))
        action.triggered.connect(lambda _checked=False: slot())  # type: ignore[operator]
        return action

    @property
    def actions(self) -> list[QAction]:
        return [self.show_action, self.next_action, self.previous_action, self.accept_action, self.reject_action]

    def add_to(self, menu: QMenu) -> None:
        menu.addSeparator()
        menu.addActions(self.actions)

    def add_text_menu(self, menu: QMenu, before: QAction) -> QMenu:
        """Edit ▸ Tracked Changes: the same four actions, for the changes marked in the text, and All; the submenu."""
        submenu = QMenu("Tracked C&hanges", menu)
        submenu.setToolTipsVisible(True)
        submenu.addActions(self.actions[1:])
        submenu.addSeparator()
        submenu.addActions([self.in_text.accept_all_action, self.in_text.reject_all_action])
        by_author = submenu.addMenu("By &Author")
        by_author.aboutToShow.connect(lambda: self.in_text.fill_by_author(by_author))
        menu.insertMenu(before, submenu)
        return submenu

    # -- the controller's reports ---------------------------------------------------------------

    def _draft_shown(self, _text: str, _label: str) -> None:
        """A finished draft went into the span (the run's best, or one the writer chose): its changes."""
        run = self.window.rewrites.run
        span = self.window.editor.live_span
        if run is None or run.result is None or span is None:
            return
        review = self.review
        if review is None or (review.job_id, review.candidate) != (run.job_id, run.candidate):
            draft = run.result.texts[run.candidate]
            changes = word_changes(span.original, draft)
            self.review = Review(run.job_id, run.candidate, span.original, draft, changes, [None] * len(changes))
            run.decided = None  # decisions belong to the draft they were made on
        self._set_panel()
        if self.show_action.isChecked():
            self._paint()
        self._update_actions()

    def _state_changed(self) -> None:
        run = self.window.rewrites.run
        if self.review is not None and (run is None or run.job_id != self.review.job_id):
            self._forget()
        self._update_actions()

    def _forget(self) -> None:
        self.review = None
        if self.menu is not None:
            self.menu.close()
        self._update_actions()

    # -- what the writer asks for -----------------------------------------------------------------

    def active(self) -> Review | None:
        """The review the view shows now: Show Changes on, a finished draft waiting in the span."""
        editor = self.window.editor
        showing = self.show_action.isChecked() and editor.phase is Phase.REVIEW and editor.live_span is not None
        return self.review if showing else None

    def _toggled(self) -> None:
        self._set_panel()
        review = self.review
        if review is not None and self.window.editor.phase is Phase.REVIEW:
            if self.show_action.isChecked():
                self._paint()
            else:  # the span as it stands, in the plain review ink; Enter lands the same text
                self.window.editor.show_result(review.landing())
        if self.show_action.isChecked() and review is None:
            self.window.statusBar().showMessage("Changes show once a draft is finished in the text.", 4000)
        self._update_actions()

    def step(self, by: int) -> None:
        review = self.active()
        if review is None and self.in_text.available():
            self.in_text.step(by)
            return
        if review is None or not review.changes:
            return
        review.current = (review.current + by) % len(review.changes)
        self._paint()

    def decide(self, accept: bool, index: int | None = None) -> None:
        """Accept or reject the current change (or change ``index``), then move to the next undecided one."""
        review = self.active()
        if review is None and self.in_text.available():
            self.in_text.decide(accept)
            return
        if review is None or not review.changes:
            return
        at = review.current if index is None else index
        review.decisions[at] = accept
        count = len(review.changes)
        undecided = [i for i in (*range(at + 1, count), *range(at)) if review.decisions[i] is None]
        review.current = undecided[0] if undecided else at
        run = self.window.rewrites.run
        if run is not None:
            text = review.landing()
            label = run.draft_label(review.candidate)
            mixed = text != review.draft
            run.decided = (text, f"{label}, {review.taken()} of {count} changes") if mixed else None
        self._paint()

    # -- painting -------------------------------------------------------------------------------

    def _runs(self, review: Review) -> tuple[list[tuple[str, QTextCharFormat]], tuple[tuple[int, int], ...]]:
        """The span's runs: kept text in the review ink, each change as it would land or, undecided, as its
        struck-through and underlined words; and where each change lies, from the span's start."""
        ink, back = self.window.editor.colors.ink, self.window.editor.colors.review
        colors = change_colors(_dark())

        def style(foreground: object, mark: str = "", current: bool = False) -> QTextCharFormat:
            text_format = QTextCharFormat()
            text_format.setForeground(foreground)  # type: ignore[arg-type]
            text_format.setBackground(colors.current if current else back)
            text_format.setFontStrikeOut(mark == "strike")
            text_format.setFontUnderline(mark == "underline")
            return text_format

        runs: list[tuple[str, QTextCharFormat]] = []
        where: list[tuple[int, int]] = []
        position, at = 0, 0
        for index, (change, decision) in enumerate(zip(review.changes, review.decisions, strict=True)):
            kept = review.original[position : change.start]
            runs.append((kept, style(ink)))
            at += _qt_length(kept)
            current = index == review.current
            removed = review.original[change.start : change.end]
            if decision is None:
                parts = [(removed, style(colors.removed, "strike", current)),
                         (change.text, style(colors.added, "underline", current))]  # fmt: skip
            elif decision:  # accepted: the draft's words, in the added colour still, no longer underlined
                parts = [(change.text, style(colors.added, "", current))]
            else:  # rejected: the original's words, plain
                parts = [(removed, style(ink, "", current))]
            start = at
            for text, text_format in parts:
                runs.append((text, text_format))
                at += _qt_length(text)
            where.append((start, at))
            position = change.end
        runs.append((review.original[position:], style(ink)))
        return [(text, text_format) for text, text_format in runs if text], tuple(where)

    def _paint(self) -> None:
        review = self.review
        editor = self.window.editor
        span = editor.live_span
        if review is None or span is None:
            return
        runs, review.where = self._runs(review)
        editor.show_runs(runs)
        if review.changes:
            # The caret on the current change (inside the span, where Enter accepts), scrolled into view.
            cursor = editor.textCursor()
            cursor.setPosition(span.start + review.where[review.current][0])
            editor.setTextCursor(cursor)
            editor.ensureCursorVisible()
            decision = review.decisions[review.current]
            state = "undecided" if decision is None else ("accepted" if decision else "rejected")
            self.window.statusBar().showMessage(
                f"Change {review.current + 1} of {len(review.changes)} ({state}) · Alt+Return accepts it, "
                "Alt+Delete rejects it · Enter: the text as it stands · Esc: the original"
            )
        else:
            self.window.statusBar().showMessage(NO_CHANGES)
        self._update_actions()

    def _set_panel(self) -> None:
        """The drafts panel shows each finished draft's changes while the view is on."""
        panel = self.window.drafts_panel
        review = self.review
        if self.show_action.isChecked() and review is not None:
            # Hand-wrapped paragraphs as prose, both sides: the card is narrower than their lines.
            wrapped = panel.wrapped_paragraphs
            original = as_prose(review.original, wrapped)
            panel.changes_html = lambda draft: changes_html(original, as_prose(draft, wrapped), change_colors(_dark()))
        elif not self.show_action.isChecked():
            panel.changes_html = None
        panel.refresh()

    def _update_actions(self) -> None:
        review = self.active()
        if review is None:
            why = "" if self.in_text.available() else NOTHING_SHOWN
        else:
            why = "" if review.changes else NO_CHANGES
        for action in (self.next_action, self.previous_action, self.accept_action, self.reject_action):
            action.setEnabled(not why)
            action.setStatusTip(why)
            action.setToolTip(why or action.text())

    # -- clicks and theme switches ----------------------------------------------------------------

    def change_at(self, point: QPoint) -> int | None:
        """The change under ``point`` (viewport coordinates), if the view shows one there."""
        return self._change_at_position(self.window.editor.cursorForPosition(point).position())

    def _change_at_position(self, position: int) -> int | None:
        review = self.active()
        span = self.window.editor.live_span
        if review is None or span is None:
            return None
        offset = position - span.start
        return next((i for i, (start, end) in enumerate(review.where) if start <= offset < end), None)

    def _offer_in_menu(self, menu: QMenu, pointer: QTextCursor) -> None:
        """The right-click menu on a draft's change, Show Changes on: that change becomes the current one, and its
        Accept Change and Reject Change come first, above the whole draft's Accept and Reject."""
        index = self._change_at_position(pointer.position())
        review = self.active()
        if index is None or review is None or not menu.actions():
            return
        review.current = index
        self._paint()
        top = menu.actions()[0]
        menu.insertActions(top, [self.accept_action, self.reject_action])
        menu.insertSeparator(top)

    def offer(self, index: int, at: QPoint) -> QMenu:
        """Make change ``index`` the current one and offer Accept Change and Reject Change beside it."""
        review = self.active()
        assert review is not None
        review.current = index
        self._paint()
        menu = QMenu(self.window.editor)
        menu.addActions([self.accept_action, self.reject_action])
        self.menu = menu
        menu.popup(at)
        return menu

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.MouseButtonRelease and watched is self._viewport and isinstance(event, QMouseEvent):
            index = self.change_at(event.position().toPoint())
            if event.button() == Qt.MouseButton.LeftButton and index is not None:
                self.offer(index, self._viewport.mapToGlobal(event.position().toPoint()))
        elif kind == QEvent.Type.PaletteChange and watched is self._editor and self.active() is not None:
            QTimer.singleShot(0, self._paint)  # after the window has given the editor the new theme's colours
        return super().eventFilter(watched, event)
