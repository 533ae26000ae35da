"""Which of the window's actions can run now, and why not: each disabled action says so as its tooltip and
status tip, and its shortcut, pressed anyway, says it in the status bar instead of typing into the text.
:class:`ActionStates` is inherited by the main window."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import QLabel, QMenu

from app.rewrite.rewrite_controller import RewriteController
from app.rewrite.run import RewriteRun
from app.rewrite.steering import Steering
from app.rewrite.word_choices import TIP as WORDS_TIP
from app.rewrite.word_choices import WordChoices
from app.window.announce import show_held
from app.window.editor_widget import Phase
from app.window.help_pages import HelpPages

StandardKey = QKeySequence.StandardKey

NO_MODEL = (
    "No model is loaded, so Redraft cannot rewrite yet: choose one in Settings ▸ Model "
    "(the notice above the text says what went wrong)."
)
DEMO_CANNOT_INSTRUCT = (
    "The demo model does not follow instructions; load an instruction-tuned checkpoint (Settings ▸ Model)."
)
NOT_INSTRUCTION_TUNED = (
    "This model is not instruction-tuned; load an instruction-tuned (-it) checkpoint (Settings ▸ Model)."
)


def span_locked(phase: Phase) -> str:
    """Why an edit of a rewrite's span (or at its edges, where it would join its words) was refused."""
    if phase is Phase.REVIEW:
        return "That draft is waiting: Enter accepts it, Esc rejects it; then it is yours to edit."
    return "That text is developing: wait for its drafts, or press Esc to cancel."


class ActionStates(HelpPages):
    """Enable, disable and explain the window's actions; MainWindow builds the actions named below."""

    rewrites: RewriteController
    steering: Steering
    word_choices: WordChoices
    candidate_label: QLabel
    blocked: dict[QAction, str]  # why each action that cannot run now cannot, said when its shortcut is pressed
    rewrite_action: QAction
    fill_action: QAction
    instruct_action: QAction
    accept_action: QAction
    reject_action: QAction
    cancel_action: QAction
    regenerate_action: QAction
    previous_action: QAction
    next_action: QAction
    undo_action: QAction
    redo_action: QAction
    cut_action: QAction
    copy_action: QAction
    paste_action: QAction
    select_all_action: QAction

    @property
    def run(self) -> RewriteRun | None:
        return self.rewrites.run

    def _update_actions(self) -> None:
        run = self.run
        reviewing = run is not None and run.result is not None
        developing = run is not None and not reviewing
        many = reviewing and run is not None and run.result is not None and len(run.result.texts) > 1
        if many and run is not None and run.result is not None:
            rank = run.result.ranking.index(run.candidate) + 1
            self.candidate_label.setText(f" {rank} of {len(run.result.texts)} ")  # short: the toolbar fits
            self.candidate_label.setToolTip(f"Candidate {rank} of {len(run.result.texts)} (Alt+Up, Alt+Down)")
        else:
            self.candidate_label.setText("")
        self.cancel_button.setVisible(developing)
        # The counts stand still while a span develops (it counts as its original): their room goes to the
        # pass-by-pass message beside Cancel, which was clipped at 1366x768. So does the last run's "4 drafts ·
        # 1.3 s", which read as this run's while one draft of a long selection developed.
        self.counts_label.setVisible(not developing)
        self.figures_label.setVisible(not developing)

        has_selection = self.editor.textCursor().hasSelection()
        no_model = self.model_info is None and not self.model_loading and run is None
        if self.model_info is not None and not self.model_info.follows_instructions:
            cannot_instruct = DEMO_CANNOT_INSTRUCT if self.is_demo_model() else NOT_INSTRUCTION_TUNED
        else:
            cannot_instruct = ""
        nothing_developing = "Nothing is developing: select text and press Ctrl+R to rewrite it."
        waiting = "The rewrite is still developing: wait for it to finish, or cancel it (Esc)."
        reasons: dict[QAction, str] = {
            self.rewrite_action: NO_MODEL if no_model else (
                "" if has_selection or run is not None else "Select some text to rewrite first."
            ),
            self.fill_action: NO_MODEL if no_model else "",
            self.instruct_action: cannot_instruct or (NO_MODEL if no_model else (
                "" if has_selection or run is not None else "Select the text to rewrite with an instruction first."
            )),
            self.accept_action: "" if reviewing else (waiting if developing else nothing_developing),
            self.reject_action: "" if reviewing else (waiting if developing else nothing_developing),
            self.cancel_action: "" if developing else "Nothing is developing to cancel.",
            self.regenerate_action: "" if run is not None else "Nothing to regenerate: rewrite a selection first.",
            self.previous_action: "" if many else "There are no other drafts to show.",
            self.next_action: "" if many else "There are no other drafts to show.",
        }
        tips = {
            self.rewrite_action: "Redraft the selected text in place",
            self.fill_action: "Write new text at the cursor",
            self.instruct_action: "Rewrite the selection following an instruction",
        }
        reasons.update(self.steering.reasons(NO_MODEL if no_model else "", cannot_instruct, reasons[self.fill_action]))
        reasons[self.word_choices.action] = self.word_choices.reason(NO_MODEL if no_model else "", developing)
        tips.update(self.steering.tips())
        tips[self.word_choices.action] = WORDS_TIP
        self.blocked = {action: why for action, why in reasons.items() if why}
        for action, why in reasons.items():
            action.setEnabled(not why)
            action.setStatusTip(why)
            if action in tips:
                action.setToolTip(why or tips[action])

    def as_window_actions(self, menu: QMenu, _cursor: QTextCursor) -> None:
        """Qt's right-click entries (Undo, Redo, Cut…) with the Edit menu's shortcuts and behaviour: Qt labels
        them with the keys it picks for the platform, which need not be the Edit menu's, and its Undo of an
        accepted rewrite left the caret at the top of the document, not where the text changed. Each keeps
        Qt's enabled state (nothing to undo, no selection to cut)."""
        ours = {
            "edit-undo": self.undo_action, "edit-redo": self.redo_action, "edit-cut": self.cut_action,
            "edit-copy": self.copy_action, "edit-paste": self.paste_action, "select-all": self.select_all_action,
        }  # fmt: skip
        for entry in menu.actions():
            action = ours.get(entry.objectName())
            if action is None:
                continue
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            entry.setText(action.text() + (f"\t{keys}" if keys else ""))
            entry.triggered.disconnect()
            entry.triggered.connect(action.trigger)
        # While a rewrite is open, what it waits for comes first: a draft's Accept, Reject and the others, or Cancel.
        phase = self.editor.phase
        if phase is Phase.REVIEW:
            first = [self.accept_action, self.reject_action, self.regenerate_action, self.previous_action,
                     self.next_action]  # fmt: skip
        else:
            first = [self.cancel_action] if phase is Phase.DEVELOPING else []
        if first and menu.actions():  # Qt's Copy and Select All are always there
            top = menu.actions()[0]
            menu.insertActions(top, first)
            menu.insertSeparator(top)

    def undo_in_place(self, undo: bool = True) -> None:
        """Undo (or redo) with the caret left where the text changed: Qt put it at the top of the document
        after undoing an accepted rewrite (its edit block's cursor), far from the span."""
        document = self.editor.document()
        changed: list[int] = []

        def note(position: int, removed: int, added: int) -> None:
            if removed or added:
                changed.append(position + added)

        steps_before = document.availableUndoSteps()
        document.contentsChange.connect(note)
        # A Replace All undone in a novel: its blocks highlighted after it, those in view (where the caret goes)
        # first.
        with self.editor.highlighter.held():
            try:
                self.editor.undo() if undo else self.editor.redo()
            finally:
                document.contentsChange.disconnect(note)
            caret = self.editor.undo_carets.caret(undo, steps_before)  # a step that knows where better
            if caret is not None or changed:
                cursor = self.editor.textCursor()
                cursor.setPosition(caret if caret is not None else min(changed[-1], document.characterCount() - 1))
                self.editor.setTextCursor(cursor)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A disabled action's shortcut reaches the editor as a plain key: say why the action cannot run."""
        if watched is self.editor and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if self.editor.live_span is None and (event.matches(StandardKey.Undo) or event.matches(StandardKey.Redo)):
                self.undo_in_place(event.matches(StandardKey.Undo))  # the editor's own Ctrl+Z, caret kept in place
                return True
            pressed = QKeySequence(event.keyCombination())
            for action, why in self.blocked.items():
                context = action.shortcutContext()
                if context != Qt.ShortcutContext.WidgetShortcut and pressed in action.shortcuts():
                    show_held(self.statusBar(), why, 6000)
                    return True
            if event.modifiers() & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
                # Any other disabled action's keys (Alt+1…9 with no drafts) say why too, and never type.
                for action in self.findChildren(QAction):
                    shortcut = action.shortcutContext() != Qt.ShortcutContext.WidgetShortcut
                    if shortcut and not action.isEnabled() and pressed in action.shortcuts():
                        name = action.text().replace("&", "")
                        show_held(self.statusBar(), action.statusTip() or f"{name} cannot run now.", 6000)
                        return True
        return super().eventFilter(watched, event)

