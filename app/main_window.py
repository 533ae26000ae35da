"""The main window: the editor, its actions, menus and status bar, model loading, settings.

Each other responsibility lives in a module of its own, and this one wires them together:

* :mod:`app.rewrite_controller`, the rewrite controller (``self.rewrites``): starting, painting,
  accepting, rejecting, cancelling and regenerating a rewrite;
* :mod:`app.file_commands`, the File menu, which this window inherits (its path is the window's);
* :mod:`app.dialogs`, the dialogs, the popups at the cursor and the notice bar;
* :mod:`app.editor_widget`, the text widget and the live span a rewrite develops in.

It is near 500 lines because the window's ~25 actions, its menus, toolbar and status bar (the model's
loading and the local or server indicator) are built here, next to the short handlers they name; the
rewrite handlers are one-line hand-offs to the controller. Splitting further would pass the window's
fields between mixins rather than make smaller rooms.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QGuiApplication,
    QIcon,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QLabel,
    QMessageBox,
    QProgressBar,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app import server_key
from app.dialogs.find_replace import FindReplaceDialog
from app.dialogs.message_bar import MessageBar
from app.dialogs.popups import FillGapPopup, InstructionPopup
from app.dialogs.settings import SettingsDialog
from app.editor_widget import RewriteEditor
from app.file_commands import FileCommands
from app.fileio import TextDocument
from app.rewrite_controller import RewriteController, RewriteRun
from app.settings import MAX_INSTRUCTION_HISTORY, Preferences, SettingsStore
from app.theme import apply_theme, canvas_colors
from app.worker import ModelInfo, ModelSpec, RewriteService, ServerSpec
from model import EditResult
from model.checkpoint.folders import resources_dir

if TYPE_CHECKING:
    from model.server import PassMode

log = logging.getLogger(__name__)

StandardKey = QKeySequence.StandardKey


def icon(name: str) -> QIcon:
    return QIcon(str(resources_dir() / "icons" / f"{name}.svg"))


class MainWindow(FileCommands):
    """Redraft's window. ``settings`` is injectable so tests use a private settings file."""

    def __init__(self, settings: SettingsStore | None = None, model_spec: str | None = None) -> None:
        super().__init__()
        self.settings = settings if settings is not None else SettingsStore()
        self.prefs: Preferences = self.settings.load()
        self._model_override = model_spec
        self.path: Path | None = None
        self.file_format = TextDocument(text="")
        self.model_info: ModelInfo | None = None
        self.model_loading = False

        self.editor = RewriteEditor(self)
        self.message_bar = MessageBar(self)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.message_bar)
        layout.addWidget(self.editor, 1)
        self.setCentralWidget(central)
        self.find_dialog: FindReplaceDialog | None = None

        self._build_status_bar()
        self._build_actions()
        self._build_menus_and_toolbar()

        self.service = RewriteService(self)
        worker = self.service.worker
        worker.loadProgress.connect(self._on_load_progress)
        worker.loaded.connect(self._on_loaded)
        worker.loadFailed.connect(self._on_load_failed)
        self.rewrites = RewriteController(self, self)
        self.rewrites.stateChanged.connect(self._update_actions)

        document = self.editor.document()
        document.modificationChanged.connect(self.setWindowModified)
        self.editor.textChanged.connect(self._count_timer.start)
        self.editor.acceptRequested.connect(self.accept_rewrite)
        self.editor.escapeRequested.connect(self.rewrites.escape)
        self.editor.interrupted.connect(self._end_live_span)
        self.editor.spanLocked.connect(
            lambda: self.statusBar().showMessage("That text is developing; Accept or Reject it first.", 3000)
        )
        self.editor.selectionChanged.connect(self._update_actions)
        self.editor.cursorPositionChanged.connect(self._update_actions)

        self.setWindowIcon(icon("redraft"))
        self.resize(1100, 760)
        self.apply_theme()
        self.editor.apply_zoom(self.prefs.zoom)
        hints = QGuiApplication.styleHints()
        hints.colorSchemeChanged.connect(lambda _scheme: self.apply_theme())
        self.update_title()
        self._update_counts()
        self._update_actions()
        self.load_model()

    # -- construction ---------------------------------------------------------------------------

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.model_label = QLabel("No model")
        self.figures_label = QLabel("")
        self.counts_label = QLabel("")
        self.load_progress = QProgressBar()
        self.load_progress.setRange(0, 100)
        self.load_progress.setMaximumWidth(160)
        self.load_progress.setTextVisible(False)
        self.load_progress.hide()
        # Where edits run: this computer, or a team's server (what leaves the machine differs).
        self.backend_label = QLabel("")
        for widget in (self.load_progress, self.backend_label, self.model_label, self.figures_label, self.counts_label):
            bar.addPermanentWidget(widget)
        self._count_timer = QTimer(self)
        self._count_timer.setSingleShot(True)
        self._count_timer.setInterval(150)
        self._count_timer.timeout.connect(self._update_counts)

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
        self.new_action = a("&New", self.new_document, StandardKey.New)
        self.open_action = a("&Open…", self.open_dialog, StandardKey.Open)
        self.save_action = a("&Save", self.save, StandardKey.Save)
        self.save_as_action = a("Save &As…", self.save_as, StandardKey.SaveAs)
        self.quit_action = a("&Quit", self.close, StandardKey.Quit)
        self.undo_action = a("&Undo", self.undo, StandardKey.Undo)
        self.redo_action = a("&Redo", self.redo, StandardKey.Redo)
        self.cut_action = a("Cu&t", self.editor.cut, StandardKey.Cut)
        self.copy_action = a("&Copy", self.editor.copy, StandardKey.Copy)
        self.paste_action = a("&Paste", self.editor.paste, StandardKey.Paste)
        self.select_all_action = a("Select &All", self.editor.selectAll, StandardKey.SelectAll)
        self.find_action = a("&Find and Replace…", self.show_find, StandardKey.Find)
        self.zoom_in_action = a("Zoom &In", lambda: self.zoom(+1), StandardKey.ZoomIn)
        self.zoom_out_action = a("Zoom &Out", lambda: self.zoom(-1), StandardKey.ZoomOut)
        self.zoom_reset_action = a("&Actual Size", lambda: self.zoom(None), "Ctrl+0")
        self.rewrite_action = a("&Rewrite Selection", self.rewrite_selection, "Ctrl+R", "rewrite")
        self.rewrite_action.setIconText("Rewrite")
        self.fill_action = a("&Fill Gap at Cursor…", self.show_fill_popup, "Ctrl+Shift+G", "fill")
        self.fill_action.setIconText("Fill gap")
        self.instruct_action = a(
            "Rewrite with &Instruction…", self.show_instruction_popup, "Ctrl+I", "instruct"
        )
        self.instruct_action.setIconText("Instruct")
        self.accept_action = a("&Accept", self.accept_rewrite, None, "accept")
        self.reject_action = a("Re&ject", self.reject_rewrite, None, "reject")
        self.cancel_action = a("&Cancel Rewrite", self.cancel_rewrite)
        # Enter, Tab and Esc are handled by the editor itself (they type otherwise); show them here.
        for action, keys in (
            (self.accept_action, "Return"),
            (self.reject_action, "Esc"),
            (self.cancel_action, "Esc"),
        ):
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.regenerate_action = a("Re&generate", self.regenerate, "Ctrl+Shift+R", "regenerate")
        self.previous_action = a(
            "&Previous Candidate", lambda: self.cycle_candidate(-1), "Alt+Up", "previous"
        )
        self.next_action = a("&Next Candidate", lambda: self.cycle_candidate(+1), "Alt+Down", "next")
        self.settings_action = a("&Settings…", self.show_settings, StandardKey.Preferences)
        if self.settings_action.shortcut().isEmpty():
            self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        self.about_action = a("&About Redraft", self.show_about)

    def _build_menus_and_toolbar(self) -> None:
        menus = self.menuBar()
        file_menu = menus.addMenu("&File")
        file_menu.addActions([self.new_action, self.open_action])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addSeparator()
        file_menu.addActions([self.save_action, self.save_as_action])
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = menus.addMenu("&Edit")
        edit_menu.addActions([self.undo_action, self.redo_action])
        edit_menu.addSeparator()
        edit_menu.addActions([self.cut_action, self.copy_action, self.paste_action, self.select_all_action])
        edit_menu.addSeparator()
        edit_menu.addActions([self.find_action, self.settings_action])
        view_menu = menus.addMenu("&View")
        view_menu.addActions([self.zoom_in_action, self.zoom_out_action, self.zoom_reset_action])
        rewrite_menu = menus.addMenu("&Rewrite")
        rewrite_menu.addActions([self.rewrite_action, self.fill_action, self.instruct_action])
        rewrite_menu.addSeparator()
        rewrite_menu.addActions([self.accept_action, self.reject_action, self.regenerate_action])
        rewrite_menu.addActions([self.previous_action, self.next_action, self.cancel_action])
        help_menu = menus.addMenu("&Help")
        help_menu.addAction(self.about_action)

        toolbar = QToolBar("Rewrite", self)
        toolbar.setObjectName("rewriteToolbar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        toolbar.addActions([self.rewrite_action, self.fill_action, self.instruct_action])
        toolbar.addSeparator()
        toolbar.addActions([self.accept_action, self.reject_action, self.regenerate_action])
        toolbar.addActions([self.previous_action, self.next_action])
        self.candidate_label = QLabel("")
        toolbar.addWidget(self.candidate_label)
        self.addToolBar(toolbar)

    # -- model ----------------------------------------------------------------------------------

    def model_spec(self) -> ModelSpec:
        spec = self._model_override if self._model_override is not None else self.prefs.model_spec()
        prefs = self.prefs
        server = None
        if prefs.use_server and self._model_override is None:
            url = prefs.server_url
            passes: PassMode = "per-pass" if prefs.server_passes == "per-pass" else "one-request"
            server = ServerSpec(url, prefs.server_model or None, server_key.load_key(url), passes)
        return ModelSpec(spec, prefs.device, prefs.allow_download, server)

    def load_model(self) -> None:
        self._end_live_span()
        self.model_info = None
        self.model_loading = True
        self.load_progress.setValue(0)
        self.load_progress.show()
        self.model_label.setText("Loading model…")
        self.service.load_model(self.model_spec())

    def _on_load_progress(self, stage: str, fraction: float) -> None:
        self.load_progress.setValue(int(fraction * 100))
        self.model_label.setText(f"Loading model: {stage}…")

    def _on_loaded(self, info: ModelInfo) -> None:
        self.model_info = info
        self.model_loading = False
        self.load_progress.hide()
        self.model_label.setText(f"{Path(info.name).name or info.name} · {info.device} · {info.precision}")
        self._show_backend(info.precision == "server")
        self._update_actions()

    def _show_backend(self, server: bool | None) -> None:
        """The status bar's local/server indicator; None: nothing is ready."""
        if server is None:
            self.backend_label.setText("")
            self.backend_label.setToolTip("")
        elif server:
            self.backend_label.setText("⇅ Server")
            self.backend_label.setToolTip(
                f"Edits run on {self.prefs.server_url}: each sends the text around the span to it"
            )
        else:
            self.backend_label.setText("● Local")
            self.backend_label.setToolTip("Edits run on this computer; nothing leaves it")

    def _on_load_failed(self, message: str) -> None:
        self.model_loading = False
        self.load_progress.hide()
        self.model_label.setText("No model")
        if self.model_spec().server is not None:
            # Edits are meant for the server: say it is not reachable rather than show nothing.
            self.backend_label.setText("⇅ Server: not connected")
            self.backend_label.setToolTip(f"Edits would run on {self.prefs.server_url}: {message}")
        else:
            self._show_backend(None)
        self.message_bar.show_message(
            f"{message}. Redraft still works as a plain editor; see Settings → Model."
        )
        self._update_actions()

    # -- rewriting (app/rewrite_controller.py) --------------------------------------------------

    @property
    def run(self) -> RewriteRun | None:
        return self.rewrites.run

    @property
    def last_result(self) -> EditResult | None:
        return self.rewrites.last_result

    def rewrite_selection(self) -> int | None:
        return self.rewrites.start("rewrite")

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

    def _update_actions(self) -> None:
        run = self.run
        reviewing = run is not None and run.result is not None
        self.accept_action.setEnabled(reviewing)
        self.reject_action.setEnabled(reviewing)
        self.cancel_action.setEnabled(run is not None and not reviewing)
        self.regenerate_action.setEnabled(run is not None)
        many = reviewing and run is not None and run.result is not None and len(run.result.texts) > 1
        self.previous_action.setEnabled(bool(many))
        self.next_action.setEnabled(bool(many))
        if many and run is not None and run.result is not None:
            rank = run.result.ranking.index(run.candidate) + 1
            self.candidate_label.setText(f"  Candidate {rank} of {len(run.result.texts)}  ")
        else:
            self.candidate_label.setText("")
        has_selection = self.editor.textCursor().hasSelection()
        self.rewrite_action.setEnabled(has_selection or run is not None)
        instructable = self.model_info is None or self.model_info.follows_instructions
        self.instruct_action.setEnabled(instructable and (has_selection or run is not None))
        self.instruct_action.setToolTip(
            "Rewrite the selection following an instruction"
            if instructable
            else "This model is not instruction-tuned; choose an -it checkpoint in Settings"
        )

    # -- popups ---------------------------------------------------------------------------------

    def _popup_position(self) -> QPoint:
        rect = self.editor.cursorRect()
        return self.editor.viewport().mapToGlobal(rect.bottomLeft() + QPoint(0, 6))

    def show_fill_popup(self) -> None:
        popup = FillGapPopup(self, self.prefs.fill_max_tokens)
        popup.chosen.connect(lambda tokens: self.fill_gap(tokens))
        popup.move(self._popup_position())
        popup.show()
        popup.tokens.setFocus()

    def show_instruction_popup(self) -> None:
        if not self.editor.textCursor().hasSelection():
            self.statusBar().showMessage("Select the text you want to rewrite first.", 4000)
            return
        popup = InstructionPopup(self, self.prefs.instruction_history)
        popup.chosen.connect(self.rewrite_with_instruction)
        popup.move(self._popup_position())
        popup.show()
        popup.prompt.setFocus()

    # -- editing --------------------------------------------------------------------------------

    def undo(self) -> None:
        self._end_live_span()
        self.editor.undo()

    def redo(self) -> None:
        self._end_live_span()
        self.editor.redo()

    def show_find(self) -> None:
        if self.find_dialog is None:
            self.find_dialog = FindReplaceDialog(self.editor, self)
        selected = self.editor.textCursor().selectedText()
        if selected and "\u2029" not in selected:
            self.find_dialog.find_text.setText(selected)
        self.find_dialog.show()
        self.find_dialog.raise_()
        self.find_dialog.find_text.setFocus()

    def zoom(self, step: int | None) -> None:
        level = 0 if step is None else min(max(self.editor.zoom_level + step, -8), 24)
        self.editor.apply_zoom(level)
        self._store(zoom=level)

    def _update_counts(self) -> None:
        text = self.editor.plain_text()
        words = len(text.split())
        self.counts_label.setText(f"{words:,} word{'s' if words != 1 else ''} · {len(text):,} characters")

    # -- settings and theme -----------------------------------------------------------------------

    def _store(self, **changes: object) -> None:
        self.prefs = replace(self.prefs, **changes)  # type: ignore[arg-type]
        self.settings.save(self.prefs)

    def show_settings(self) -> None:
        dialog = SettingsDialog(self.prefs, self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            new = dialog.preferences()
            key_changed = new.server_url and dialog.api_key() != (server_key.load_key(new.server_url) or "")
            if new.server_url:
                kept = server_key.save_key(new.server_url, dialog.api_key())
                if key_changed and dialog.api_key() and not kept and server_key.keyring_available():
                    # The page promised the keyring; a locked or refusing one must not fail silently.
                    self.message_bar.show_message(
                        "The system keyring did not take the server's API key, so it is kept for this session "
                        "only (never in the settings file); enter it again after a restart."
                    )
            self.apply_preferences(new, reconnect=bool(key_changed))

    def apply_preferences(self, new: Preferences, reconnect: bool = False) -> None:
        """Save and apply without a restart; a different model, device or server reloads in the worker."""
        old = self.prefs
        self.prefs = new.sanitized()
        self.settings.save(self.prefs)
        if new.theme != old.theme:
            self.apply_theme()
        server = (new.use_server, new.server_url, new.server_model, new.server_passes)
        old_server = (old.use_server, old.server_url, old.server_model, old.server_passes)
        local = (new.model, new.device, new.allow_download) != (old.model, old.device, old.allow_download)
        if local or server != old_server or (reconnect and new.use_server):
            self._model_override = None
            self.load_model()

    def apply_theme(self) -> None:
        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return
        dark = apply_theme(app, self.prefs.theme)
        self.editor.set_colors(canvas_colors(dark), app.palette().color(app.palette().ColorRole.Link))

    def show_about(self) -> None:
        QMessageBox.about(
            self,
            "About Redraft",
            "<h3>Redraft</h3><p>Select a sentence and watch a text-diffusion model redraft it in place, "
            "pass by pass.</p>",
        )

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.editor.live_span is not None:
            self._end_live_span()
        if not self.maybe_save():
            event.ignore()
            return
        self.service.shutdown()
        event.accept()
