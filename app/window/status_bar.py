"""The window's status bar and the model behind it: loading with its progress, the model's name (or "Demo
model"), where edits run (this computer or a team's server), the word and character counts, and Cancel.

:class:`ModelStatusBar` is the status half of :class:`app.window.main_window.MainWindow`, which inherits it
(through :class:`app.window.action_states.ActionStates`); the loading itself runs on the model thread
(:mod:`app.rewrite.worker`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDialog, QLabel, QProgressBar, QPushButton

from app.dialogs.settings import SettingsDialog
from app.documents.critic_markup import settle
from app.documents.markdown_format import is_markdown
from app.documents.word_count import WordCounter, manuscript, without_notes
from app.model_sources import server_key
from app.rewrite.worker import ModelInfo, ModelSpec, RewriteService, ServerSpec
from app.settings import Preferences, SettingsStore
from app.window.announce import Announcer
from app.window.file_commands import FileCommands
from app.window.find_bar import FindBar
from app.window.session_goal import SessionGoal
from app.window.status_room import MessageRoom

if TYPE_CHECKING:
    from app.window.window_family import WindowFamily
    from model.server import PassMode

# What the model label adds when the routed experts are not on the model's device (ModelInfo.experts).
EXPERTS_WHERE = {"host-stream": "streamed", "host-compute": "on the CPU"}
MODEL_NAME_PX = 160
# The preferences a local model is loaded with: a change to any of them loads it again.
LOCAL_MODEL_SETTINGS = ("model", "device", "experts", "allow_download")
LOAD_TOPIC = "model"  # the notice bar's topic for a model that did not load (a later load resolves it)


class ModelStatusBar(FileCommands):
    """The model's loading and the status bar that shows it; MainWindow sets the fields below and the hooks."""

    service: RewriteService
    find_bar: FindBar
    model_info: ModelInfo | None
    model_loading: bool
    _model_override: str | None
    family: WindowFamily
    settings: SettingsStore

    def apply_theme(self) -> None:
        """The theme's palette and the text's colours (MainWindow's)."""
        raise NotImplementedError

    def _update_actions(self) -> None:
        """Enable and explain the actions for the state now (ActionStates')."""
        raise NotImplementedError

    def cancel_rewrite(self) -> None:
        """Stop a developing rewrite and put the original back (MainWindow's)."""
        raise NotImplementedError

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.model_label = QLabel("No model")
        self.figures_label = QLabel("")
        self.counts_label = QLabel("")
        self.word_counter = WordCounter()  # the status bar's and the Outline's: a long book's lines counted once
        # View ▸ Session Word Goal…: the words written since the document was opened, towards the goal.
        self.session_goal = SessionGoal(self, self.prefs.session_goal, self._keep_session_goal, self)
        self.documentReplaced.connect(lambda text: self.session_goal.begin(self._words_of(text)))
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
            self.session_goal.label,
            self.counts_label,
        )
        for widget in widgets:
            if isinstance(widget, QLabel):
                widget.setContentsMargins(6, 0, 6, 0)  # the figures read as separate items, not one run
            bar.addPermanentWidget(widget)
        # A message too long for the room these leave squeezes them, least needed first, until it clears.
        expendable = (self.figures_label, self.session_goal.label, self.counts_label, self.model_label,
                      self.backend_label)  # fmt: skip
        self.message_room = MessageRoom(bar, expendable)
        self._count_timer = QTimer(self)
        self._count_timer.setSingleShot(True)
        self._count_timer.setInterval(150)
        self._count_timer.timeout.connect(self._update_counts)
        # What the status bar, the notices and the find bar show, said to a screen reader (app/window/announce.py).
        self.announcer = Announcer(self)
        self.announcer.follow_status_bar(bar)
        self.message_bar.shown.connect(lambda text, kind: self.announcer.say(text, assertive=kind == "error"))
        self.find_bar.counted.connect(
            lambda said, at_once: self.announcer.say(said) if at_once else self.announcer.say_settled(said)
        )

    def _recount_soon(self) -> None:
        """Count again once the typing pauses; not for a pass painted in a rewrite, which the counts read as its
        original until it ends: a long book's count at every pass stalled the window 60-100 ms each time."""
        if not self.editor.painting:
            self._count_timer.start()

    def _keep_session_goal(self, goal: int) -> None:
        self._store(session_goal=goal)

    def _counted_text(self, text: str) -> str:
        """``text`` as the counts see it: tracked changes still to decide as made (their new words once), and a
        Markdown text without its front matter and notes, which no export prints as words."""
        return manuscript(text, is_markdown(self.path))

    def _words_of(self, text: str) -> int:
        """The words the status bar would count in ``text``: the session goal's start counts them the same way."""
        return self.word_counter(self._counted_text(text))

    def _update_counts(self) -> None:
        text = self._counted_text(self.saved_text())  # a developing span counts as its original, not its noise
        words, characters = self.word_counter(text), len(text)
        self.session_goal.counted(words)
        cursor = self.editor.textCursor()
        if cursor.hasSelection() and self.editor.live_span is None:  # "12 of 479 words": what the selection holds
            selected = settle(self.editor.text_between(cursor.selectionStart(), cursor.selectionEnd()), accept=True)
            selected = without_notes(selected) if is_markdown(self.path) else selected
            self.counts_label.setText(f"{self.word_counter(selected):,} of {counted(words, 'word')} · "
                                      f"{len(selected):,} of {counted(characters, 'character')}")  # fmt: skip
            return
        self.counts_label.setText(f"{counted(words, 'word')} · {counted(characters, 'character')}")

    # -- the model ----------------------------------------------------------------------------------

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
        """Load the model the settings name, for this window and the others that share its model thread."""
        self.show_loading()
        self.service.load_model(self.model_spec())
        self.family.follow_load()

    def show_loading(self, end_span: bool = True) -> None:
        """The window waits for a model; ``end_span``: its rewrite is put back first (a load asked for here)."""
        if end_span:
            self._end_live_span()
        self.model_info = None
        self.model_loading = True
        self.load_progress.setValue(0)
        self.load_progress.show()
        self.model_label.setText("Loading model…")

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
        self.family.share_all(self.prefs)  # the other windows' settings too
        if new.theme != old.theme:
            self.apply_theme()
        if new.font_family != old.font_family:
            self.editor.set_prose_font(new.font_family)
        server = (new.use_server, new.server_url, new.server_model, new.server_passes)
        old_server = (old.use_server, old.server_url, old.server_model, old.server_passes)
        local = any(getattr(new, name) != getattr(old, name) for name in LOCAL_MODEL_SETTINGS)
        if local or server != old_server or (reconnect and new.use_server):
            self._model_override = None
            self.load_model()

    def use_model(self, name: str) -> None:
        """Switch to an installed model (the model manager's "Use this model")."""
        self.apply_preferences(replace(self.prefs, model=name, use_server=False))


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
            # The name at most MODEL_NAME_PX, its middle elided: a long one left the status bar's messages no
            # room at 1366x768 (the whole of it is in the tooltip).
            name = self.model_label.fontMetrics().elidedText(
                Path(info.name).name or info.name, Qt.TextElideMode.ElideMiddle, MODEL_NAME_PX
            )
            said = f"{name} · {info.device} · {info.precision}" + (
                f" · experts in host memory ({where})" if where else ""
            )
            self.model_label.setText(said)
            self.model_label.setToolTip(info.name)
        self._show_backend(info.precision == "server")
        self.announcer.say(f"Model ready: {self.model_label.text()}")  # Rewrite waited for it
        self.message_bar.resolve(LOAD_TOPIC)  # the model that failed to load before is here now
        self._update_actions()

    def is_demo_model(self) -> bool:
        """Whether edits run on the built-in model (not a checkpoint of the writer's, not a server)."""
        spec = self.model_spec()
        return spec.spec is None and spec.server is None

    def _show_backend(self, server: bool | None) -> None:
        """The status bar's local/server indicator; None: nothing is ready."""
        self.backend_label.setAccessibleName("")  # its text, but where a glyph leads it
        if server is None:
            self.backend_label.setText("")
            self.backend_label.setToolTip("")
        elif server:
            self.backend_label.setText("⇅ Server")
            self.backend_label.setAccessibleName("Edits run on a server")
            self.backend_label.setToolTip(
                f"Edits run on {self.prefs.server_url}: each sends the text around the span to it"
            )
        else:
            self.backend_label.setText("● Local")
            self.backend_label.setAccessibleName("Edits run on this computer")
            self.backend_label.setToolTip("Edits run on this computer; nothing leaves it")

    def _on_load_failed(self, message: str) -> None:
        self.model_loading = False
        self.load_progress.hide()
        self.model_label.setText("No model")
        self.model_label.setToolTip(message)
        if self.model_spec().server is not None:
            # Edits are meant for the server: say it is not reachable rather than show nothing.
            self.backend_label.setText("⇅ Server: not connected")
            self.backend_label.setAccessibleName("Server not connected")
            self.backend_label.setToolTip(f"Edits would run on {self.prefs.server_url}: {message}")
        else:
            self._show_backend(None)
        self.message_bar.show_message(
            f"{message}. Redraft still works as a plain editor; see Settings ▸ Model.", topic=LOAD_TOPIC
        )
        self._update_actions()


def counted(number: int, noun: str) -> str:
    """``number`` of ``noun``, plural but for one: "1 word", "2,496 characters"."""
    return f"{number:,} {noun}{'s' if number != 1 else ''}"
