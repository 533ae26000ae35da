"""The main window: it builds the editor, its actions, menus and toolbar, and wires the rooms together.

What it inherits, each a module of its own (a chain of bases, as each needs the window's fields):

* :mod:`app.window.action_states`: which actions can run now, and why not;
* :mod:`app.window.help_pages`: the Help menu's pages and the one-time welcome;
* :mod:`app.window.status_bar`: the model's loading and the status bar that shows it;
* :mod:`app.window.file_commands`: the File menu (its path is the window's).

What it holds: the rewrite controller (``self.rewrites``, :mod:`app.rewrite.rewrite_controller`), steering
(:mod:`app.rewrite.steering`), the drafts panel and versions, the dialogs (:mod:`app.dialogs`) and the text
widget with the live span a rewrite develops in (:mod:`app.window.editor_widget`).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QIcon, QKeySequence
from PySide6.QtWidgets import QApplication, QLabel, QToolBar, QVBoxLayout, QWidget

from app.dialogs.help import HelpPage, WelcomeDialog
from app.dialogs.message_bar import MessageBar
from app.dialogs.model_manager import install_model_manager
from app.dialogs.popups import FillGapPopup, InstructionPopup, show_within_screen
from app.dialogs.screen_fit import place_of, restore_place
from app.dialogs.versions import choose_version
from app.documents.fileio import TextDocument
from app.model_sources.model_downloads import ModelDownloads
from app.rewrite.drafts_panel import DraftsPanel, hesitant_color
from app.rewrite.rewrite_controller import RewriteController
from app.rewrite.steering import Steering
from app.rewrite.tracked_changes import TrackedChanges
from app.rewrite.versions import SpanVersions
from app.rewrite.word_choices import WordChoices
from app.rewrite.worker import ModelInfo, RewriteService
from app.settings import MAX_INSTRUCTION_HISTORY, Preferences, SettingsStore
from app.window.action_states import DEMO_CANNOT_INSTRUCT, NO_MODEL, NOT_INSTRUCTION_TUNED, ActionStates, span_locked
from app.window.announce import draft_announcement, show_held
from app.window.editor_widget import RewriteEditor
from app.window.find_bar import FindBar
from app.window.focus_mode import FocusMode
from app.window.formatting import Formatting
from app.window.headings import GoToHeading
from app.window.mark_changes import ChangeMarker
from app.window.notes import Notes
from app.window.outline import OutlinePanel
from app.window.panes import PaneKeys
from app.window.reading_places import ReadingPlaces
from app.window.rewrap import ParagraphClicks, add_join_action, rewrap_paragraphs
from app.window.spelling import Spelling
from app.window.theme import apply_theme, canvas_colors
from app.window.typed_marks import TypedMarks
from app.window.typewriter import Typewriter
from app.window.window_family import WindowFamily
from model import EditResult
from model.checkpoint.folders import resources_dir

log = logging.getLogger(__name__)
__all__ = ["DEMO_CANNOT_INSTRUCT", "NO_MODEL", "NOT_INSTRUCTION_TUNED", "MainWindow"]

StandardKey = QKeySequence.StandardKey


def icon(name: str) -> QIcon:
    return QIcon(str(resources_dir() / "icons" / f"{name}.svg"))


class MainWindow(ActionStates):
    """Redraft's window. ``settings`` is injectable so tests use a private settings file."""

    windowMade = Signal(object)  # File ▸ New Window's window, for the process to protect as it does this one
    closed = Signal()  # the window closed, its document saved or let go

    def __init__(self, settings: SettingsStore | None = None, model_spec: str | None = None,
                 service: RewriteService | None = None, downloads: ModelDownloads | None = None) -> None:  # fmt: skip
        super().__init__()
        self.settings = settings if settings is not None else SettingsStore()
        self.prefs: Preferences = self.settings.load()
        self._model_override = model_spec
        self.path: Path | None = None
        self.file_format = TextDocument(text="")
        self.model_info: ModelInfo | None = None
        self.model_loading = False
        # Why each action that cannot run now cannot, said when its shortcut is pressed (``eventFilter``).
        self.blocked: dict[QAction, str] = {}
        self.help_page: HelpPage | None = None
        self.welcome: WelcomeDialog | None = None

        self.editor = RewriteEditor(self)
        self.editor.setAccessibleName("Document")  # what a screen reader calls the text; the title names the file
        self.message_bar = MessageBar(self)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.message_bar)
        self.find_bar = FindBar(self.editor, central)  # Edit ▸ Find and Replace, above the text
        layout.addWidget(self.find_bar)
        layout.addWidget(self.editor, 1)
        self.setCentralWidget(central)

        self._build_status_bar()
        self.documentReplaced.connect(lambda _text: self.find_bar.forget_passage())
        self._build_actions()
        self._build_menus_and_toolbar()
        # Model ▸ Manage Models… and the download's status-bar label (app/dialogs/model_manager.py).
        wiring = install_model_manager(self, lambda: self.prefs.model, self.use_model, downloads)  # the family's
        self.model_downloads = wiring.downloads
        self.manage_models_action = wiring.action
        self.show_model_manager = wiring.show
        # File ▸ New Window, Close Window, the Window menu: windows on one model, each made as this one was.
        self.family = WindowFamily(
            self, self, lambda: MainWindow(self.settings, self._model_override, self.service, self.model_downloads)
        )

        self.service = service if service is not None else RewriteService(self)  # shared: app.window.window_family
        worker = self.service.worker
        worker.loadProgress.connect(self._on_load_progress)
        worker.loaded.connect(self._on_loaded)
        worker.loadFailed.connect(self._on_load_failed)
        self.rewrites = RewriteController(self, self)
        self.rewrites.stateChanged.connect(self._update_actions)
        self.rewrites.spanBegan.connect(self.steering.marks.span_began)
        self.rewrites.spanEnded.connect(self.steering.marks.span_ended)
        self.rewrites.draftShown.connect(self._say_draft)  # unseen, a draft is heard: its words
        self._install_drafts_and_versions()

        document = self.editor.document()
        document.modificationChanged.connect(self.setWindowModified)
        self.editor.textChanged.connect(self._recount_soon)
        self.rewrites.spanEnded.connect(lambda _start, _end: self._count_timer.start())  # the passes' text is in
        self.editor.selectionChanged.connect(self._count_timer.start)  # the selection's own counts
        self.editor.acceptRequested.connect(self.accept_rewrite)
        self.editor.escapeRequested.connect(self.rewrites.escape)
        self.editor.interrupted.connect(lambda undo: self.undo() if undo else self._end_live_span())
        self.editor.spanLocked.connect(lambda: show_held(self.statusBar(), span_locked(self.editor.phase), 4000))
        self.editor.selectionChanged.connect(self._update_actions)
        self.editor.cursorPositionChanged.connect(self._update_actions)
        self.editor.installEventFilter(self)  # the shortcut of an action that cannot run says why

        self.setWindowIcon(icon("redraft"))
        # At most the screen's room: a fixed 760 px plus a title bar hid the status bar on 1366x768 laptops.
        restore_place(self, self.prefs.window_geometry, QSize(1100, 760))
        self.apply_theme()
        self.editor.set_prose_font(self.prefs.font_family)
        self.editor.apply_zoom(self.prefs.zoom)
        hints = QGuiApplication.styleHints()
        hints.colorSchemeChanged.connect(lambda _scheme: self.apply_theme())
        self.update_title()
        self._update_counts()
        self._update_actions()
        self.family.join_model()

    # -- construction ---------------------------------------------------------------------------

    def _action(
        self,
        text: str,
        slot: object,
        shortcut: QKeySequence | StandardKey | str | None = None,
        icon_name: str = "",
    ) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if icon_name:
            action.setIcon(icon(icon_name))
        action.triggered.connect(lambda _checked=False: slot())  # type: ignore[operator]
        return action

    def _build_actions(self) -> None:
        a = self._action
        self.undo_action = a("&Undo", self.undo, StandardKey.Undo)
        self.redo_action = a("&Redo", self.redo, StandardKey.Redo)
        self.cut_action = a("Cu&t", self.editor.cut, StandardKey.Cut)
        self.copy_action = a("&Copy", self.editor.copy, StandardKey.Copy)
        self.paste_action = a("&Paste", self.editor.paste, StandardKey.Paste)
        self.select_all_action = a("Select &All", self.editor.selectAll, StandardKey.SelectAll)
        self.find_action = a("&Find…", lambda: self.find_bar.open(), StandardKey.Find)
        self.replace_action = a("R&eplace…", lambda: self.find_bar.open(replace=True), "Ctrl+H")
        # Not StandardKey.FindNext/FindPrevious: on Linux they hold Ctrl+Shift+G, Fill Gap's keys.
        self.find_next_action = a("Find Ne&xt", lambda: self.find_bar.step_or_open(+1), "F3")
        self.find_previous_action = a("Find Pre&vious", lambda: self.find_bar.step_or_open(-1), "Shift+F3")
        self.rewrap_action = a("Re&wrap Paragraph", lambda: self.statusBar().showMessage(
            rewrap_paragraphs(self.editor), 8000), "Alt+Q")  # fmt: skip
        self.rewrap_action.setToolTip("Wrap the paragraph at the cursor again at the document's width")
        self.paragraph_clicks = ParagraphClicks(self.editor)  # a triple-click: a hand-wrapped paragraph, not a line
        self.zoom_in_action = a("Zoom &In", lambda: self.zoom(+1), StandardKey.ZoomIn)
        self.zoom_out_action = a("Zoom O&ut", lambda: self.zoom(-1), StandardKey.ZoomOut)
        self.zoom_reset_action = a("&Actual Size", lambda: self.zoom(None), "Ctrl+0")
        self.rewrite_action = a("&Rewrite Selection", self.rewrite_selection, "Ctrl+R", "rewrite")
        self.rewrite_action.setIconText("Rewrite")
        self.fill_action = a("&Fill Gap at Cursor…", self.show_fill_popup, "Ctrl+Shift+G", "fill")
        self.fill_action.setIconText("Fill")
        self.instruct_action = a("Rewrite with &Instruction…", self.show_instruction_popup, "Ctrl+I", "instruct")
        self.instruct_action.setIconText("Instruct")
        self.accept_action = a("&Accept", self.accept_rewrite, None, "accept")
        self.reject_action = a("Re&ject", self.reject_rewrite, None, "reject")
        self.cancel_action = a("&Cancel Rewrite", self.cancel_rewrite, None, "reject")
        self.cancel_action.setIconText("Cancel")
        # Enter, Tab and Esc are handled by the editor itself (they type otherwise); show them here.
        for action, keys in ((self.accept_action, "Return"), (self.reject_action, "Esc"), (self.cancel_action, "Esc")):
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.regenerate_action = a("Re&generate", self.regenerate, "Ctrl+Shift+R", "regenerate")
        self.previous_action = a("&Previous Candidate", lambda: self.cycle_candidate(-1), "Alt+Up", "previous")
        self.next_action = a("&Next Candidate", lambda: self.cycle_candidate(+1), "Alt+Down", "next")
        self.previous_action.setIconText("Previous")  # short in the toolbar: it fits 1100 px (1366x768)
        self.next_action.setIconText("Next")
        self.versions_action = a("&Versions…", lambda: choose_version(self), "Ctrl+Shift+V")
        self.settings_action = a("&Settings…", self.show_settings, StandardKey.Preferences)
        if self.settings_action.shortcut().isEmpty():
            self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        self.shortcuts_action = a("&Keyboard Shortcuts", self.show_shortcuts)
        self.how_action = a("&How Redraft Works", self.show_how_it_works, StandardKey.HelpContents)  # F1
        self.files_action = a("&Where Your Files Are", self.show_files)
        self.about_action = a("&About Redraft", self.show_about)
        self.steering = Steering(self)  # Keep Words, Fill Gaps in Selection, Length, Tone (app/rewrite/steering.py)

    def _build_menus_and_toolbar(self) -> None:
        menus = self.menuBar()
        self._build_file_menu(menus, self._action)  # app/window/file_commands.py
        edit_menu = self.edit_menu = menus.addMenu("&Edit")
        edit_menu.addActions([self.undo_action, self.redo_action])
        edit_menu.addSeparator()
        edit_menu.addActions([self.cut_action, self.copy_action, self.paste_action, self.select_all_action])
        edit_menu.addSeparator()
        edit_menu.addActions([self.find_action, self.replace_action, self.find_next_action, self.find_previous_action])
        edit_menu.addActions([self.rewrap_action, self.settings_action])
        self.join_action = add_join_action(self, self.editor, edit_menu, self.settings_action, self.message_bar,
                                           self.documentReplaced)  # fmt: skip
        self.paste_plain_action = self.editor.add_paste_plain(edit_menu, self.select_all_action)
        view_menu = menus.addMenu("&View")
        view_menu.addActions([self.zoom_in_action, self.zoom_out_action, self.zoom_reset_action])
        self.view_menu = view_menu
        rewrite_menu = menus.addMenu("&Rewrite")
        self.rewrite_menu = rewrite_menu
        rewrite_menu.addActions([self.rewrite_action, self.fill_action, self.instruct_action])
        rewrite_menu.addSeparator()
        rewrite_menu.addActions([self.accept_action, self.reject_action, self.regenerate_action])
        rewrite_menu.addActions([self.previous_action, self.next_action, self.cancel_action])
        self.steering.add_to(rewrite_menu)
        rewrite_menu.addSeparator()
        rewrite_menu.addAction(self.versions_action)
        help_menu = menus.addMenu("&Help")
        help_menu.addActions([self.shortcuts_action, self.how_action, self.files_action])
        help_menu.addSeparator()
        help_menu.addAction(self.about_action)
        for menu in (rewrite_menu, edit_menu):
            menu.setToolTipsVisible(True)  # a greyed-out action says why on hover

        toolbar = QToolBar("Rewrite", self)
        toolbar.setObjectName("rewriteToolbar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        toolbar.addActions([self.rewrite_action, self.fill_action, self.instruct_action])
        toolbar.addSeparator()
        self.steering.add_length_to(toolbar)
        toolbar.addActions([self.accept_action, self.reject_action, self.regenerate_action])
        toolbar.addActions([self.previous_action, self.next_action])
        self.candidate_label = QLabel("")
        toolbar.addWidget(self.candidate_label)
        toolbar.addAction(self.cancel_action)
        self.addToolBar(toolbar)
        self.toolbar = toolbar

    def _install_drafts_and_versions(self) -> None:
        """The drafts panel beside the text (rewrite/drafts_panel.py) and every span's versions (rewrite/versions)."""
        self.versions = SpanVersions(self.editor)
        self.rewrites.spanBegan.connect(self.versions.span_began)
        self.rewrites.draftShown.connect(self.versions.draft_shown)
        self.rewrites.spanEnded.connect(self.versions.span_ended)
        panel = self.drafts_panel = DraftsPanel(self, self.rewrites)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, panel)
        panel.setVisible(self.prefs.drafts_panel)
        panel.shownByWriter.connect(lambda shown: self._store(drafts_panel=shown))
        panel.shade_action.setChecked(self.prefs.shade_span)
        self.editor.shade_hesitation = self.prefs.shade_span
        panel.shade_action.toggled.connect(self._shade_span)
        self.view_menu.addSeparator()
        self.view_menu.addActions([panel.toggle_action, panel.shade_action])
        self.editor.context_menu_extras.append(self.as_window_actions)
        self.spelling = Spelling(self, self)  # View ▸ Check Spelling: underlines and right-click offers
        self.spelling.action.toggled.connect(lambda on: self._store(check_spelling=on))
        self.rewrites.spanEnded.connect(self.spelling.span_ended)
        self.spelling.languageChosen.connect(lambda code: self._store(spelling_language=code))
        self.view_menu.addAction(self.spelling.action)
        self.view_menu.addMenu(self.spelling.language_menu)
        self.outline = OutlinePanel(self, self)  # View ▸ Outline: the headings beside the text, on the left
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.outline)
        self.outline.setVisible(self.prefs.outline_panel)
        self.outline.shownByWriter.connect(lambda shown: self._store(outline_panel=shown))
        self.panes = PaneKeys(self, self.outline, panel)  # F6 and Shift+F6: the keys round the text and the panels
        self.view_menu.insertActions(panel.toggle_action, [self.outline.toggle_action, *self.panes.actions])
        self.focus_mode = FocusMode(self, self.toolbar, [panel, self.outline], self)  # View ▸ Focus Mode (F11)
        self.typewriter = Typewriter(self.editor, self.prefs.typewriter_scrolling, self)  # View ▸ Typewriter Scrolling
        self.typewriter.action.toggled.connect(lambda on: self._store(typewriter_scrolling=on))
        self.go_to_heading = GoToHeading(self, self)  # Edit ▸ Go to Heading…
        # ' " and -- typed as the text has them (‘ ’ “ ” —), or a new text's first mark as its language prints it
        self.typed_marks = TypedMarks(self.editor, lambda: self.spelling.language, self.statusBar())
        self.edit_menu.insertActions(self.rewrap_action, [self.go_to_heading.action, *self.outline.edit_actions])
        self.view_menu.insertSeparator(self.view_menu.actions()[0])
        self.view_menu.insertAction(self.view_menu.actions()[0], self.focus_mode.action)
        self.view_menu.insertAction(self.view_menu.actions()[1], self.typewriter.action)
        self.view_menu.insertAction(self.view_menu.actions()[2], self.session_goal.action)
        self.edit_menu.insertAction(self.rewrap_action, self.spelling.next_action)  # Edit ▸ Next Misspelling
        self.notes = Notes(self, self)  # Edit ▸ Next Note: <!-- … -->, as Word's comments arrive
        self.edit_menu.insertActions(self.rewrap_action, [self.notes.new_action, self.notes.action])
        panel.draft_menu(self.rewrite_menu)
        self.tracked_changes = TrackedChanges(self)  # Rewrite ▸ Show Changes (app/rewrite/tracked_changes.py)
        self.tracked_changes.add_to(self.rewrite_menu)
        self.change_marker = ChangeMarker(self, self.tracked_changes.add_text_menu(self.edit_menu, self.rewrap_action))
        self.formatting = Formatting(self, self)  # Format ▸ Bold, Italic, Headings, Lists (Markdown's marks)
        self.menuBar().insertMenu(self.rewrite_menu.menuAction(), self.formatting.menu)
        self.word_choices = WordChoices(self, self.spelling.dictionary, self.rewrite_menu, self.steering.keep_action)
        self.places = ReadingPlaces(self, self.editor, lambda: self.path, self.documentReplaced,  # opens where it was
                                    lambda: self.prefs.reading_places, lambda kept: self._store(reading_places=kept))

    def _say_draft(self, text: str, label: str) -> None:
        if self.rewrites.run is not None:  # in review, not the version an accept puts in
            self.announcer.say(draft_announcement(label, text))

    def _shade_span(self, shade: bool) -> None:
        self.editor.shade_hesitation = shade
        self._store(shade_span=shade)

    def versions_record(self) -> list[dict[str, Any]]:
        """The spans' versions for the recovery record (app/documents/autosave.py)."""
        return self.versions.record()

    def restore_versions(self, records: list[dict[str, Any]]) -> int:
        return self.versions.restore(records)

    def new_document(self) -> None:
        super().new_document()
        if not self.editor.document().isModified() and not self.editor.plain_text():
            self.versions.clear()
            self.drafts_panel.clear()  # the last document's drafts are not this one's

    def open_path(self, path: Path, encoding: str | None = None, ask_encoding: bool = False) -> bool:
        if path != self.path and self.family.bring_forward_showing(path):
            return True  # open in another window already: that one comes forward, as a word processor's does
        before = self.path
        opened = super().open_path(path, encoding, ask_encoding)
        if opened and path != before:  # a reload of the same file keeps them (found again by their text)
            self.versions.clear()
            self.drafts_panel.clear()  # the last document's drafts are not this one's
        return opened

    def load_unsaved(self, text: str, path: Path | None, file_format: TextDocument,
                     imported_from: Path | None = None) -> None:  # fmt: skip
        super().load_unsaved(text, path, file_format, imported_from)
        self.versions.clear()
        self.drafts_panel.clear()

    # -- rewriting (app/rewrite/rewrite_controller.py) --------------------------------------------------

    @property
    def last_result(self) -> EditResult | None:
        return self.rewrites.last_result

    @property
    def text_language(self) -> str:
        """The document's language, as spelling reads it (app/window/spelling.py)."""
        return self.spelling.language

    def rewrite_selection(self) -> int | None:
        cursor = self.editor.textCursor()
        keep = self.steering.marks.keep_for(cursor.selectionStart(), cursor.selectionEnd())
        return self.rewrites.start("rewrite", keep=keep)

    def fill_gap(self, max_new_tokens: int | None = None) -> int | None:
        tokens = max_new_tokens or self.prefs.fill_max_tokens
        if tokens != self.prefs.fill_max_tokens:
            self._store(fill_max_tokens=tokens)
        return self.rewrites.start("fill", max_new_tokens=tokens)

    def rewrite_with_instruction(self, instruction: str) -> int | None:
        history = (instruction, *(item for item in self.prefs.instruction_history if item != instruction))
        self._store(instruction_history=history[:MAX_INSTRUCTION_HISTORY])
        return self.rewrites.start("instruct", instruction=instruction)

    def accept_rewrite(self) -> None:
        self.rewrites.accept()

    def reject_rewrite(self) -> None:
        self.rewrites.reject()

    def cancel_rewrite(self) -> None:
        self.rewrites.cancel()

    def regenerate(self) -> int | None:
        return self.rewrites.regenerate()

    def cycle_candidate(self, step: int) -> None:
        self.rewrites.cycle_candidate(step)

    def _end_live_span(self, select_original: bool = True) -> None:
        self.rewrites.end_live_span(select_original)

    # -- popups ---------------------------------------------------------------------------------

    def _show_popup(self, popup: QWidget) -> None:
        """Below the line after the caret's, so both stay in sight (the popup covered the next line), kept on
        the screen (near a line's end it moves left, near the bottom above the caret)."""
        rect = self.editor.cursorRect()
        viewport = self.editor.viewport()
        below = viewport.mapToGlobal(rect.bottomLeft() + QPoint(0, rect.height() + 6))
        above = viewport.mapToGlobal(rect.topLeft() - QPoint(0, 6))
        show_within_screen(popup, below, above)

    def show_fill_popup(self) -> None:
        popup = FillGapPopup(self, self.prefs.fill_max_tokens)
        popup.chosen.connect(lambda tokens: self.fill_gap(tokens))
        self.fill_popup = popup
        self._show_popup(popup)
        popup.length.setFocus()

    def show_instruction_popup(self) -> None:
        if not self.editor.textCursor().hasSelection():
            self.statusBar().showMessage("Select the text you want to rewrite first.", 4000)
            return
        popup = InstructionPopup(self, self.prefs.instruction_history)
        popup.chosen.connect(self.rewrite_with_instruction)
        self._show_popup(popup)
        popup.prompt.setFocus()

    # -- editing --------------------------------------------------------------------------------

    def undo(self) -> None:
        if self.editor.live_span is not None:  # the rewrite is the newest step: undo it, and only it
            run = self.rewrites.run
            self._end_live_span()
            what = "Fill" if run is not None and run.mode in ("fill", "gaps") else "Rewrite"  # not Enter's hint
            self.statusBar().showMessage(f"{what} undone; the original is back.", 3000)  # as after an accept
            return
        self.undo_in_place(undo=True)

    def redo(self) -> None:
        self._end_live_span()
        self.undo_in_place(undo=False)

    def zoom(self, step: int | None) -> None:
        level = 0 if step is None else min(max(self.editor.zoom_level + step, -8), 24)
        self.editor.apply_zoom(level)
        self._store(zoom=level)

    # -- settings and theme -----------------------------------------------------------------------

    def _store(self, **changes: object) -> None:
        self.prefs = replace(self.prefs, **changes)  # type: ignore[arg-type]
        self.settings.save(self.prefs)
        self.family.share(changes)  # the other windows' copies: none saves an older one over it

    def apply_theme(self) -> None:
        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return
        dark = apply_theme(app, self.prefs.theme)
        self.editor.set_colors(canvas_colors(dark), app.palette().color(app.palette().ColorRole.Link))
        self.drafts_panel.set_colors(canvas_colors(dark), dark)
        self.editor.hesitant = hesitant_color(dark)
        self.message_bar.restyle()

    def closeEvent(self, event: QCloseEvent) -> None:
        # Asked with the rewrite still in place: Cancel means nothing happened, and the rewrite goes on.
        # What would be saved is the text with the span's original (``saved_text``).
        if not self.maybe_save():
            event.ignore()
            return
        if self.editor.live_span is not None:
            self._end_live_span()
        self.focus_mode.action.setChecked(False)  # its menus back, and the window's own place to remember
        self._store(window_geometry=place_of(self))
        self.family.leave()
        event.accept()
        self.closed.emit()
