"""The main window: the editor, its actions, menus and status bar, model loading, settings.

Each other responsibility lives in a module of its own, and this one wires them together:

* :mod:`app.rewrite.rewrite_controller`, the rewrite controller (``self.rewrites``): starting, painting,
  accepting, rejecting, cancelling and regenerating a rewrite;
* :mod:`app.window.file_commands`, the File menu, which this window inherits (its path is the window's);
* :mod:`app.dialogs`, the dialogs, the popups at the cursor and the notice bar;
* :mod:`app.window.editor_widget`, the text widget and the live span a rewrite develops in.

It is near 500 lines because the window's ~25 actions, its menus, toolbar and status bar (the model's
loading and the local or server indicator) are built here, next to the short handlers they name; the
rewrite handlers are one-line hand-offs to the controller. Splitting further would pass the window's
fields between mixins rather than make smaller rooms.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QPoint, QSize, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QGuiApplication,
    QIcon,
    QKeyEvent,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.dialogs.find_replace import FindReplaceDialog
from app.dialogs.help import HOW_IT_WORKS, HelpPage, WelcomeDialog, files_html, shortcuts_html
from app.dialogs.message_bar import MessageBar
from app.dialogs.model_manager import install_model_manager
from app.dialogs.popups import FillGapPopup, InstructionPopup, show_within_screen
from app.dialogs.screen_fit import fitted
from app.dialogs.settings import SettingsDialog
from app.dialogs.versions import choose_version
from app.documents.fileio import TextDocument
from app.model_sources import server_key
from app.rewrite.drafts_panel import DraftsPanel, hesitant_color
from app.rewrite.rewrite_controller import RewriteController, RewriteRun
from app.rewrite.steering import Steering
from app.rewrite.versions import SpanVersions
from app.rewrite.worker import ModelInfo, ModelSpec, RewriteService, ServerSpec
from app.settings import MAX_INSTRUCTION_HISTORY, Preferences, SettingsStore
from app.userdirs import user_dirs
from app.window.editor_widget import RewriteEditor
from app.window.file_commands import FileCommands
from app.window.theme import apply_theme, canvas_colors
from model import EditResult
from model.checkpoint.folders import resources_dir

if TYPE_CHECKING:
    from model.server import PassMode

log = logging.getLogger(__name__)

StandardKey = QKeySequence.StandardKey
WELCOME_SHOWN_KEY = "ui/welcome_shown"  # the built-in model's welcome has been shown once
# The preferences a local model is loaded with: a change to any of them loads it again.
LOCAL_MODEL_SETTINGS = ("model", "device", "experts", "allow_download")
# What the model label adds when the routed experts are not on the model's device (ModelInfo.experts).
EXPERTS_WHERE = {"host-stream": "streamed", "host-compute": "on the CPU"}
LOAD_TOPIC = "model"  # the notice bar's topic for a model that did not load (a later load resolves it)
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
        # Why each action that cannot run now cannot, said when its shortcut is pressed (``eventFilter``).
        self.blocked: dict[QAction, str] = {}
        self.help_page: HelpPage | None = None
        self.welcome: WelcomeDialog | None = None

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
        # Model ▸ Manage Models… and the download's status-bar label (app/dialogs/model_manager.py).
        self.model_downloads = install_model_manager(self)

        self.service = RewriteService(self)
        worker = self.service.worker
        worker.loadProgress.connect(self._on_load_progress)
        worker.loaded.connect(self._on_loaded)
        worker.loadFailed.connect(self._on_load_failed)
        self.rewrites = RewriteController(self, self)
        self.rewrites.stateChanged.connect(self._update_actions)
        self.rewrites.spanBegan.connect(self.steering.marks.span_began)
        self.rewrites.spanEnded.connect(self.steering.marks.span_ended)
        self._install_drafts_and_versions()

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
        self.editor.installEventFilter(self)  # the shortcut of an action that cannot run says why

        self.setWindowIcon(icon("redraft"))
        # At most the screen's room: a fixed 760 px plus a title bar hid the status bar on 1366x768 laptops.
        self.resize(fitted(self, QSize(1100, 760)))
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
        # A visible way out while a rewrite develops (Esc does the same).
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the rewrite and put the original back (Esc)")
        self.cancel_button.clicked.connect(self.cancel_rewrite)
        self.cancel_button.hide()
        widgets = (
            self.cancel_button,
            self.load_progress,
            self.backend_label,
            self.model_label,
            self.figures_label,
            self.counts_label,
        )
        for widget in widgets:
            if isinstance(widget, QLabel):
                widget.setContentsMargins(6, 0, 6, 0)  # the figures read as separate items, not one run
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
        self.cancel_action = a("&Cancel Rewrite", self.cancel_rewrite, None, "reject")
        self.cancel_action.setIconText("Cancel")
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
        self.versions_action = a("&Versions…", lambda: choose_version(self), "Ctrl+Shift+V")
        self.settings_action = a("&Settings…", self.show_settings, StandardKey.Preferences)
        if self.settings_action.shortcut().isEmpty():
            self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        self.shortcuts_action = a("&Keyboard Shortcuts", self.show_shortcuts)
        self.how_action = a("&How Redraft Works", self.show_how_it_works)
        self.files_action = a("&Where Your Files Are", self.show_files)
        self.about_action = a("&About Redraft", self.show_about)
        self.steering = Steering(self)  # Keep Words, Fill Gaps in Selection, Length, Tone (app/rewrite/steering.py)

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
        panel.draft_menu(self.rewrite_menu)

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

    def open_path(self, path: Path, encoding: str | None = None, ask_encoding: bool = False) -> bool:
        before = self.path
        opened = super().open_path(path, encoding, ask_encoding)
        if opened and path != before:  # a reload of the same file keeps them (found again by their text)
            self.versions.clear()
        return opened

    def load_unsaved(self, text: str, path: Path | None, file_format: TextDocument) -> None:
        super().load_unsaved(text, path, file_format)
        self.versions.clear()

    # -- model ----------------------------------------------------------------------------------

    def model_spec(self) -> ModelSpec:
        spec = self._model_override if self._model_override is not None else self.prefs.model_spec()
        prefs = self.prefs
        server = None
        if prefs.use_server and self._model_override is None:
            url = prefs.server_url
            passes: PassMode = "per-pass" if prefs.server_passes == "per-pass" else "one-request"
            server = ServerSpec(url, prefs.server_model or None, server_key.load_key(url), passes)
        # As Settings greys it out: on the processor alone, or for the built-in model, the placement cannot
        # matter, and asking for a host one would load at 4 bit instead of the processor's faster fp32.
        experts = prefs.experts if spec is not None and prefs.device != "cpu" else "auto"
        return ModelSpec(spec, prefs.device, prefs.allow_download, server, experts)

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
        if self.is_demo_model():
            self.model_label.setText(f"Demo model · {info.device}")
            self.model_label.setToolTip(
                "Redraft's built-in demonstration model: it shows how text develops but does not write well. "
                "Settings ▸ Model or Server for real rewrites."
            )
        else:
            where = EXPERTS_WHERE.get(info.experts)  # said only when they are not on the model's device
            if where and info.resident_layers:
                where += f", {info.resident_layers} layers' on the GPU"
            self.model_label.setText(
                f"{Path(info.name).name or info.name} · {info.device} · {info.precision}"
                + (f" · experts in host memory ({where})" if where else "")
            )
            self.model_label.setToolTip(info.name)
        self._show_backend(info.precision == "server")
        self.message_bar.resolve(LOAD_TOPIC)  # the model that failed to load before is here now
        self._update_actions()

    def is_demo_model(self) -> bool:
        """Whether edits run on the built-in model (not a checkpoint of the writer's, not a server)."""
        spec = self.model_spec()
        return spec.spec is None and spec.server is None

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
        self.model_label.setToolTip(message)
        if self.model_spec().server is not None:
            # Edits are meant for the server: say it is not reachable rather than show nothing.
            self.backend_label.setText("⇅ Server: not connected")
            self.backend_label.setToolTip(f"Edits would run on {self.prefs.server_url}: {message}")
        else:
            self._show_backend(None)
        self.message_bar.show_message(
            f"{message}. Redraft still works as a plain editor; see Settings ▸ Model.", topic=LOAD_TOPIC
        )
        self._update_actions()

    # -- rewriting (app/rewrite/rewrite_controller.py) --------------------------------------------------

    @property
    def run(self) -> RewriteRun | None:
        return self.rewrites.run

    @property
    def last_result(self) -> EditResult | None:
        return self.rewrites.last_result

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

    def _update_actions(self) -> None:
        run = self.run
        reviewing = run is not None and run.result is not None
        developing = run is not None and not reviewing
        many = reviewing and run is not None and run.result is not None and len(run.result.texts) > 1
        if many and run is not None and run.result is not None:
            rank = run.result.ranking.index(run.candidate) + 1
            self.candidate_label.setText(f"  Candidate {rank} of {len(run.result.texts)}  ")
        else:
            self.candidate_label.setText("")
        self.cancel_button.setVisible(developing)

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
        tips.update(self.steering.tips())
        self.blocked = {action: why for action, why in reasons.items() if why}
        for action, why in reasons.items():
            action.setEnabled(not why)
            action.setStatusTip(why)
            if action in tips:
                action.setToolTip(why or tips[action])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A disabled action's shortcut reaches the editor as a plain key: say why the action cannot run."""
        if watched is self.editor and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            pressed = QKeySequence(event.keyCombination())
            for action, why in self.blocked.items():
                context = action.shortcutContext()
                if context != Qt.ShortcutContext.WidgetShortcut and pressed in action.shortcuts():
                    self.statusBar().showMessage(why, 6000)
                    return True
        return super().eventFilter(watched, event)

    # -- popups ---------------------------------------------------------------------------------

    def _show_popup(self, popup: QWidget) -> None:
        """Below the caret, kept on the screen (near a line's end it moves left, near the bottom above)."""
        rect = self.editor.cursorRect()
        viewport = self.editor.viewport()
        below = viewport.mapToGlobal(rect.bottomLeft() + QPoint(0, 6))
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
        text = self.saved_text()  # a developing span counts as its original, not as its noise
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
        """Save and apply without a restart; a different model, device, expert placement or server reloads in
        the worker."""
        old = self.prefs
        self.prefs = new.sanitized()
        self.settings.save(self.prefs)
        if new.theme != old.theme:
            self.apply_theme()
        server = (new.use_server, new.server_url, new.server_model, new.server_passes)
        old_server = (old.use_server, old.server_url, old.server_model, old.server_passes)
        local = any(getattr(new, name) != getattr(old, name) for name in LOCAL_MODEL_SETTINGS)
        if local or server != old_server or (reconnect and new.use_server):
            self._model_override = None
            self.load_model()

    def apply_theme(self) -> None:
        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return
        dark = apply_theme(app, self.prefs.theme)
        self.editor.set_colors(canvas_colors(dark), app.palette().color(app.palette().ColorRole.Link))
        self.drafts_panel.set_colors(canvas_colors(dark), dark)
        self.editor.hesitant = hesitant_color(dark)
        self.message_bar.restyle()

    # -- help -------------------------------------------------------------------------------------

    def _show_help(self, title: str, html: str) -> HelpPage:
        if self.help_page is not None:
            self.help_page.close()
        page = HelpPage(self, title, html)
        page.destroyed.connect(lambda: setattr(self, "help_page", None))
        self.help_page = page
        page.show()
        return page

    def show_shortcuts(self) -> HelpPage:
        menus = [action.menu() for action in self.menuBar().actions()]
        return self._show_help("Keyboard Shortcuts", shortcuts_html(m for m in menus if isinstance(m, QMenu)))

    def show_how_it_works(self) -> HelpPage:
        return self._show_help("How Redraft Works", HOW_IT_WORKS)

    def show_files(self) -> HelpPage:
        return self._show_help("Where Your Files Are", files_html(user_dirs()))

    def offer_welcome(self) -> WelcomeDialog | None:
        """On the first start with the built-in model, say once what it is and how to get real rewrites."""
        qsettings = self.settings.qsettings
        if not self.is_demo_model() or qsettings.value(WELCOME_SHOWN_KEY, False, type=bool):
            return None
        qsettings.setValue(WELCOME_SHOWN_KEY, True)
        qsettings.sync()
        dialog = WelcomeDialog(self)
        dialog.settingsRequested.connect(self.show_settings)
        self.welcome = dialog
        dialog.show()
        return dialog

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
