"""The main window: file handling, menus, status bar, and the rewrite controller.

The controller turns a writer's request into an :class:`EditRequest` for the model thread and paints
what comes back into the editor's live span. Only the newest job is ever painted: a pass, result or
failure from any other job id is stale and ignored, which is what makes "a second request cancels the
first" and "cancel restores at once" safe without waiting for the worker.

Its dialogs and popups live in :mod:`app.dialogs`. What stays is one window's state and its handlers
(about 700 lines): actions and menus, model loading, the rewrite controller, files, settings. They
share the window's fields (the editor, the current run, the path, the preferences), so splitting them
further would mean mixins passing the same state around rather than smaller rooms.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

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
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.dialogs.find_replace import FindReplaceDialog
from app.dialogs.message_bar import MessageBar
from app.dialogs.popups import FillGapPopup, InstructionPopup
from app.dialogs.settings import SettingsDialog
from app.editor_widget import Phase, RewriteEditor
from app.fileio import (
    FALLBACK_ENCODINGS,
    BinaryFileError,
    FileError,
    TextDocument,
    UnknownEncodingError,
    read_document,
    save_document,
)
from app.settings import MAX_INSTRUCTION_HISTORY, MAX_RECENT_FILES, Preferences, SettingsStore
from app.theme import apply_theme, canvas_colors
from app.worker import ModelInfo, ModelSpec, PaintedPass, RewriteService
from model import EditRequest, EditResult
from model.loading import resources_dir
from model.request import CONTEXT_CHARS_PER_TOKEN, MAX_CANVAS_TOKENS, Mode

log = logging.getLogger(__name__)

StandardKey = QKeySequence.StandardKey


def icon(name: str) -> QIcon:
    return QIcon(str(resources_dir() / "icons" / f"{name}.svg"))


@dataclass
class RewriteRun:
    """The rewrite the editor shows now."""

    job_id: int
    mode: Mode
    instruction: str | None
    max_new_tokens: int | None
    passes: int = 0
    result: EditResult | None = None
    candidate: int = 0
    regenerations: int = 0



class MainWindow(QMainWindow):
    """Redraft's window. ``settings`` is injectable so tests use a private settings file."""

    def __init__(self, settings: SettingsStore | None = None, model_spec: str | None = None) -> None:
        super().__init__()
        self.settings = settings if settings is not None else SettingsStore()
        self.prefs: Preferences = self.settings.load()
        self._model_override = model_spec
        self.path: Path | None = None
        self.file_format = TextDocument(text="")
        self.run: RewriteRun | None = None
        self.model_info: ModelInfo | None = None
        self.model_loading = False
        self.last_result: EditResult | None = None

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
        worker.passReady.connect(self._on_pass)
        worker.editFinished.connect(self._on_finished)
        worker.editFailed.connect(self._on_failed)

        document = self.editor.document()
        document.modificationChanged.connect(self.setWindowModified)
        self.editor.textChanged.connect(self._count_timer.start)
        self.editor.acceptRequested.connect(self.accept_rewrite)
        self.editor.escapeRequested.connect(self._on_escape)
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
        self._update_title()
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
        for widget in (self.load_progress, self.model_label, self.figures_label, self.counts_label):
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
        return ModelSpec(spec, self.prefs.device, self.prefs.allow_download)

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
        self._update_actions()

    def _on_load_failed(self, message: str) -> None:
        self.model_loading = False
        self.load_progress.hide()
        self.model_label.setText("No model")
        self.message_bar.show_message(
            f"{message}. Redraft still works as a plain editor; see Settings → Model."
        )
        self._update_actions()

    # -- rewrite controller ---------------------------------------------------------------------

    def rewrite_selection(self) -> int | None:
        return self._start("rewrite")

    def fill_gap(self, max_new_tokens: int | None = None) -> int | None:
        tokens = max_new_tokens or self.prefs.fill_max_tokens
        if tokens != self.prefs.fill_max_tokens:
            self._store(fill_max_tokens=tokens)
        return self._start("fill", max_new_tokens=tokens)

    def rewrite_with_instruction(self, instruction: str) -> int | None:
        history = (instruction, *(item for item in self.prefs.instruction_history if item != instruction))
        self._store(instruction_history=history[:MAX_INSTRUCTION_HISTORY])
        return self._start("instruct", instruction=instruction)

    def _start(
        self,
        mode: Mode,
        instruction: str | None = None,
        max_new_tokens: int | None = None,
        regenerations: int = 0,
    ) -> int | None:
        """Lock the span, send the request to the model thread; a running rewrite is cancelled first."""
        self._end_live_span(select_original=False)
        editor = self.editor
        cursor = editor.textCursor()
        if mode == "fill":
            start = end = cursor.position()
        else:
            start, end = cursor.selectionStart(), cursor.selectionEnd()
            if start == end:
                self.statusBar().showMessage("Select the text you want to rewrite first.", 4000)
                return None
            if not editor.text_between(start, end).strip():
                self.statusBar().showMessage(
                    "The selection is only spaces or line breaks: select words to rewrite, or put the cursor "
                    "in a gap to fill it.",
                    6000,
                )
                return None
        prefs = self.prefs
        seed = None if prefs.random_seed else prefs.seed + regenerations
        # Only the context the model can read crosses to the worker (the engine reads at most
        # CONTEXT_CHARS_PER_TOKEN characters a token, the budget before the span and up to a canvas
        # after it), so a rewrite in a 10 MB novel costs no more than in a short story.
        context = max(prefs.context_budget, MAX_CANVAS_TOKENS) * CONTEXT_CHARS_PER_TOKEN
        request = EditRequest(
            prefix=editor.text_between(max(0, start - context), start),
            span=None if mode == "fill" else editor.text_between(start, end),
            suffix=editor.text_between(end, min(editor.end_position(), end + context)),
            mode=mode,
            instruction=instruction,
            max_new_tokens=max_new_tokens,
            options=prefs.denoise_options(),
            seed=seed,
            candidates=prefs.candidates,
            context_budget=prefs.context_budget,
            strength=prefs.rewrite_strength,
        )
        editor.begin_live_span(start, end)
        job_id = self.service.submit(request, prefs.pass_display_ms)
        self.run = RewriteRun(job_id, mode, instruction, max_new_tokens, regenerations=regenerations)
        self.message_bar.hide()
        self.statusBar().showMessage("Waiting for the model…" if self.model_loading else "Developing…")
        self._update_actions()
        return job_id

    def _current(self, job_id: int) -> RewriteRun | None:
        run = self.run
        return run if run is not None and run.job_id == job_id else None

    def _on_pass(self, job_id: int, painted: PaintedPass) -> None:
        run = self._current(job_id)
        if run is None or self.editor.phase is not Phase.DEVELOPING:
            return
        run.passes += 1
        step = painted.raw
        self.editor.paint_pass(painted.frames[painted.shown])
        blocks = f" · block {step.block + 1}/{step.blocks}" if step.blocks > 1 else ""
        if painted.veiled:
            message = f"Developing {len(step.pieces)} candidates… pass {step.step + 1}{blocks}"
        elif painted.replay:
            message = f"Developing the best candidate… pass {step.step + 1}{blocks}"
        else:
            message = f"Developing… pass {step.step + 1}{blocks}"
        self.statusBar().showMessage(message)

    def _on_finished(self, job_id: int, result: EditResult) -> None:
        run = self._current(job_id)
        if run is None:
            return
        run.result = result
        run.candidate = result.ranking[0]  # several candidates: the one the model rates best comes first
        self.last_result = result
        self.editor.show_result(result.texts[run.candidate])
        self.figures_label.setText(
            f"{result.passes} passes · {result.tokens_per_forward:.1f} tokens/pass · "
            f"{result.ms_per_pass:.0f} ms/pass"
        )
        hint = "Enter: accept · Esc: reject · Ctrl+Shift+R: regenerate"
        if not result.texts[run.candidate]:
            hint = "The model wrote nothing here. " + hint
        self.statusBar().showMessage(hint)
        self._update_actions()

    def _on_failed(self, job_id: int, message: str) -> None:
        if self._current(job_id) is None:
            return
        self._end_live_span()
        self.message_bar.show_message(f"The rewrite failed: {message}. Your text is unchanged.")
        self.statusBar().showMessage("Rewrite failed", 4000)

    def _on_escape(self) -> None:
        if self.editor.phase is Phase.REVIEW:
            self.reject_rewrite()
        else:
            self.cancel_rewrite()

    def _end_live_span(self, select_original: bool = True) -> None:
        """Cancel the running job (if any) and put the original span back."""
        if self.run is not None:
            self.service.cancel(self.run.job_id)
            self.run = None
        if self.editor.live_span is not None:
            self.editor.restore_live_span(select_original)
        self._update_actions()

    def cancel_rewrite(self) -> None:
        if self.run is None:
            return
        self._end_live_span()
        self.statusBar().showMessage("Rewrite cancelled; the original is back.", 3000)

    def reject_rewrite(self) -> None:
        if self.run is None:
            return
        self._end_live_span()
        self.statusBar().showMessage("Rewrite rejected; the original is back.", 3000)

    def accept_rewrite(self) -> None:
        run = self.run
        if run is None or run.result is None:
            return
        self.run = None
        self.editor.accept_live_span(run.result.texts[run.candidate])
        self.statusBar().showMessage("Rewrite accepted (Ctrl+Z undoes it).", 3000)
        self._update_actions()

    def regenerate(self) -> int | None:
        run = self.run
        if run is None:
            return None
        self._end_live_span()  # the original span is selected again (or the cursor is at the gap)
        return self._start(run.mode, run.instruction, run.max_new_tokens, run.regenerations + 1)

    def cycle_candidate(self, step: int) -> None:
        run = self.run
        if run is None or run.result is None or len(run.result.texts) < 2:
            return
        ranking = run.result.ranking
        run.candidate = ranking[(ranking.index(run.candidate) + step) % len(ranking)]
        self.editor.show_result(run.result.texts[run.candidate])
        self._update_actions()

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

    # -- files ----------------------------------------------------------------------------------

    def _update_title(self) -> None:
        name = self.path.name if self.path is not None else "Untitled"
        self.setWindowTitle(f"{name}[*] — Redraft")
        self.setWindowModified(self.editor.document().isModified())

    def saved_text(self) -> str:
        """The document's text with any developing span shown as its original."""
        editor = self.editor
        live = editor.live_range()
        span = editor.live_span
        if live is None or span is None:
            return editor.plain_text()
        start, end = live
        return editor.text_between(0, start) + span.original + editor.text_between(end, editor.end_position())

    def maybe_save(self) -> bool:
        """Whether it is fine to discard the document now (asking the writer if it has changes)."""
        if not self.editor.document().isModified():
            return True
        name = self.path.name if self.path is not None else "Untitled"
        answer = QMessageBox.warning(
            self,
            "Unsaved changes",
            f"“{name}” has unsaved changes. Save them before closing?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def new_document(self) -> None:
        if not self.maybe_save():
            return
        self._end_live_span()
        self.editor.setPlainText("")
        self.path = None
        self.file_format = TextDocument(text="")
        self.editor.document().setModified(False)
        self._update_title()

    def open_dialog(self) -> None:
        if not self.maybe_save():
            return
        folder = str(self.path.parent) if self.path is not None else str(Path.home())
        name, _filter = QFileDialog.getOpenFileName(
            self, "Open", folder, "Text and Markdown (*.txt *.md *.markdown *.text);;All files (*)"
        )
        if name:
            self.open_path(Path(name), ask_encoding=True)

    def open_path(self, path: Path, encoding: str | None = None, ask_encoding: bool = False) -> bool:
        """Load ``path`` into the editor; on any problem show why and leave the current document alone."""
        try:
            loaded = read_document(path, encoding)
        except UnknownEncodingError as error:
            chosen = self._ask_encoding(path, str(error)) if ask_encoding else None
            if chosen is None:
                self.message_bar.show_message(f"Could not open {path.name}: {error}.")
                return False
            return self.open_path(path, chosen, ask_encoding)
        except BinaryFileError as error:
            self.message_bar.show_message(f"Could not open {path.name}: {error}.")
            return False
        except FileError as error:
            self.message_bar.show_message(f"Could not open {path.name}: {error}.")
            return False
        self._end_live_span()
        self.editor.setPlainText(loaded.text)
        self.editor.document().setModified(False)
        self.path = path
        self.file_format = replace(loaded, text="")
        self._remember_recent(path)
        self.message_bar.hide()
        self._update_title()
        self.statusBar().showMessage(f"Opened {path.name} ({loaded.encoding})", 3000)
        return True

    def _ask_encoding(self, path: Path, reason: str) -> str | None:
        encoding, ok = QInputDialog.getItem(
            self,
            "Choose the encoding",
            f"{path.name}: {reason}.\nWhich encoding was it written in?",
            list(FALLBACK_ENCODINGS),
            0,
            False,
        )
        return encoding if ok else None

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self.save_to(self.path)

    def save_as(self) -> bool:
        folder = str(self.path) if self.path is not None else str(Path.home() / "Untitled.md")
        name, _filter = QFileDialog.getSaveFileName(
            self, "Save As", folder, "Markdown (*.md);;Text (*.txt);;All files (*)"
        )
        return self.save_to(Path(name)) if name else False

    def save_to(self, path: Path) -> bool:
        try:
            save_document(path, replace(self.file_format, text=self.saved_text()))
        except FileError as error:
            self.message_bar.show_message(f"Could not save: {error}.")
            return False
        self.path = path
        if self.editor.live_span is None:
            self.editor.document().setModified(False)
        self._remember_recent(path)
        self._update_title()
        self.statusBar().showMessage(f"Saved {path.name}", 3000)
        return True

    def _remember_recent(self, path: Path) -> None:
        entry = str(path.resolve())
        recent = (entry, *(item for item in self.prefs.recent_files if item != entry))
        self._store(recent_files=recent[:MAX_RECENT_FILES])

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        for entry in self.prefs.recent_files:
            action = self.recent_menu.addAction(entry)
            action.triggered.connect(lambda _checked=False, name=entry: self._open_recent(Path(name)))
        if not self.prefs.recent_files:
            self.recent_menu.addAction("No recent files").setEnabled(False)

    def _open_recent(self, path: Path) -> None:
        if self.maybe_save():
            self.open_path(path, ask_encoding=True)

    # -- settings and theme -----------------------------------------------------------------------

    def _store(self, **changes: object) -> None:
        self.prefs = replace(self.prefs, **changes)  # type: ignore[arg-type]
        self.settings.save(self.prefs)

    def show_settings(self) -> None:
        dialog = SettingsDialog(self.prefs, self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.apply_preferences(dialog.preferences())

    def apply_preferences(self, new: Preferences) -> None:
        """Save and apply without a restart; a different model or device reloads in the worker."""
        old = self.prefs
        self.prefs = new.sanitized()
        self.settings.save(self.prefs)
        if new.theme != old.theme:
            self.apply_theme()
        if (new.model, new.device, new.allow_download) != (old.model, old.device, old.allow_download):
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
