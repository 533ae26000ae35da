"""The Settings dialog: a form over :class:`Preferences`; the window applies the result live."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app import server_key
from app.settings import Preferences
from model.edit.request import MAX_POLISH_ROUNDS

MODEL_SOURCES = (("Built-in model", "builtin"), ("Local folder", "folder"), ("Hugging Face Hub id", "hub"))
DEVICE_LABELS = (("Automatic", "auto"), ("CPU", "cpu"), ("CUDA GPU", "cuda"))
THEME_LABELS = (("Follow the system", "system"), ("Light", "light"), ("Dark", "dark"))
MODEL_DEFAULT = "Model default"
PASS_LABELS = (
    ("One request per edit (the text arrives whole)", "one-request"),
    ("One request per pass (every pass shows; fills read much worse)", "per-pass"),
)


class _ConnectionTest(QObject):
    """Runs ``model.server.connect`` off the GUI thread; ``done`` carries the line to show and success."""

    done = Signal(str, bool)

    def start(self, url: str, model: str | None, key: str | None) -> None:
        def probe() -> None:
            from model.server.contact import connect  # the standard library only: no torch for a test
            from model.server.http import Endpoint

            try:
                info = connect(Endpoint(url, key, timeout_s=20, connect_timeout_s=5), model)
            except Exception as error:  # every failure becomes the line the writer reads
                self.done.emit(f"✗ {error}", False)
                return
            others = [name for name in info.served if name != info.name]
            more = f" (also serves {', '.join(others)})" if others else ""
            self.done.emit(
                f"✓ {info.name}{more}: canvas {info.canvas_length} tokens, context {info.max_model_len} tokens", True
            )

        threading.Thread(target=probe, name="redraft-server-test", daemon=True).start()


def _combo(items: tuple[tuple[str, str], ...], current: str) -> QComboBox:
    combo = QComboBox()
    for label, value in items:
        combo.addItem(label, value)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


def _double(value: float, maximum: float, step: float, decimals: int = 2) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0.0, maximum)
    box.setDecimals(decimals)
    box.setSingleStep(step)
    box.setSpecialValueText(MODEL_DEFAULT)  # shown at 0: use the checkpoint's own default
    box.setValue(value)
    return box


def _integer(value: int, minimum: int, maximum: int, special: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(minimum, maximum)
    if special:
        box.setSpecialValueText(special)
    box.setValue(value)
    return box


class SettingsDialog(QDialog):
    def __init__(self, preferences: Preferences, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.original = preferences
        self.connection_ok: bool | None = None  # the last Test connection's outcome
        p = preferences

        source = (
            "builtin"
            if p.model in ("", "builtin")
            else ("folder" if Path(p.model).expanduser().exists() else "hub")
        )
        self.model_source = _combo(MODEL_SOURCES, source)
        self.model_path = QLineEdit("" if source == "builtin" else p.model)
        self.model_path.setPlaceholderText("/path/to/checkpoint or org/model-name")
        self.browse = QPushButton("Browse…")
        self.browse.clicked.connect(self._browse)
        self.device = _combo(DEVICE_LABELS, p.device)
        self.allow_download = QCheckBox("Allow downloading models from the Hugging Face Hub")
        self.allow_download.setChecked(p.allow_download)

        self.max_steps = _integer(p.max_denoising_steps, 0, 1024, MODEL_DEFAULT)
        self.t_max = _double(p.t_max, 10.0, 0.05)
        self.t_min = _double(p.t_min, 10.0, 0.05)
        self.entropy_bound = _double(p.entropy_bound, 10.0, 0.01, decimals=3)
        # Its own box: 0 is a real value (off), so "model default" sits one step below it.
        self.left_to_right_bias = _double(0.0, 10.0, 0.1)
        self.left_to_right_bias.setMinimum(-0.1)
        self.left_to_right_bias.setValue(p.left_to_right_bias if p.left_to_right_bias >= 0 else -0.1)
        self.left_to_right_bias.setToolTip(
            "How strongly each pass prefers to settle words from the left (nats per slot); 0 is the "
            "published DiffusionGemma sampler. Small models write more coherent text with it."
        )
        self.polish_rounds = _integer(p.polish_rounds, -1, MAX_POLISH_ROUNDS, MODEL_DEFAULT)
        self.polish_rounds.setToolTip(
            "After the text has developed, rounds in which its least likely words turn back into noise "
            "and develop again; 0 is the published sampler. Small models write cleaner text with a few."
        )
        self.candidates = _integer(p.candidates, 1, 8)
        self.candidates.setToolTip(
            "Versions developed side by side; the model's favourite is shown first. They also try shorter "
            "lengths (a gap: all of the tokens asked for, 2/3, 1/2, 1/3; a rewrite: around the selection's "
            "own length), so the model chooses the length."
        )
        self.strength = _integer(round(p.rewrite_strength * 100), 5, 100)
        self.strength.setSuffix(" % re-noised")
        self.strength.setToolTip("How much of the selection a rewrite starts from noise; less keeps more of it")
        self.random_seed = QCheckBox("Random seed for every rewrite")
        self.random_seed.setChecked(p.random_seed)
        self.seed = _integer(p.seed, 0, 2**31 - 1)
        self.random_seed.toggled.connect(lambda random: self.seed.setEnabled(not random))
        self.seed.setEnabled(not p.random_seed)
        self.context_budget = _integer(p.context_budget, 16, 32768)
        self.context_budget.setSuffix(" tokens")
        self.pass_display = _integer(p.pass_display_ms, 0, 2000, "As fast as the model runs")
        self.pass_display.setSuffix(" ms")
        self.theme = _combo(THEME_LABELS, p.theme)

        self.use_server = QCheckBox("Edit on a team's server instead of this computer")
        self.use_server.setChecked(p.use_server)
        self.server_url = QLineEdit(p.server_url)
        self.server_url.setPlaceholderText("http://gpu-box:8000")
        self.server_model = QLineEdit(p.server_model)
        self.server_model.setPlaceholderText("the first model the server lists")
        self.server_key = QLineEdit((server_key.load_key(p.server_url.strip()) or "") if p.server_url.strip() else "")
        self.server_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.server_key.setPlaceholderText("none")
        self.server_passes = _combo(PASS_LABELS, p.server_passes)
        self.test_connection = QPushButton("Test connection")
        self.connection_result = QLabel("")
        self.connection_result.setWordWrap(True)
        self.key_storage = QLabel(server_key.describe_storage())
        self.key_storage.setWordWrap(True)
        self._tester = _ConnectionTest(self)
        self._tester.done.connect(self._on_tested)
        self.test_connection.clicked.connect(self.run_connection_test)

        model_row = QHBoxLayout()
        model_row.addWidget(self.model_path, 1)
        model_row.addWidget(self.browse)
        model_form = QFormLayout()
        model_form.addRow("Model:", self.model_source)
        model_form.addRow("Location:", model_row)
        model_form.addRow("Device:", self.device)
        model_form.addRow("", self.allow_download)
        sampler_form = QFormLayout()
        sampler_form.addRow("Max denoising steps:", self.max_steps)
        sampler_form.addRow("Temperature at the start:", self.t_max)
        sampler_form.addRow("Temperature at the end:", self.t_min)
        sampler_form.addRow("Entropy bound:", self.entropy_bound)
        sampler_form.addRow("Left-to-right bias:", self.left_to_right_bias)
        sampler_form.addRow("Polish rounds:", self.polish_rounds)
        sampler_form.addRow("Rewrite strength:", self.strength)
        sampler_form.addRow("Candidates:", self.candidates)
        sampler_form.addRow("", self.random_seed)
        sampler_form.addRow("Seed:", self.seed)
        sampler_form.addRow("Context budget:", self.context_budget)
        sampler_form.addRow("Show each pass for at least:", self.pass_display)
        look_form = QFormLayout()
        look_form.addRow("Theme:", self.theme)
        server_form = QFormLayout()
        server_form.addRow("", self.use_server)
        server_form.addRow("Address:", self.server_url)
        server_form.addRow("Model:", self.server_model)
        server_form.addRow("API key:", self.server_key)
        server_form.addRow("", self.key_storage)
        server_form.addRow("Passes:", self.server_passes)
        server_form.addRow(self.test_connection, self.connection_result)

        layout = QVBoxLayout(self)
        groups = (("Model", model_form), ("Server", server_form), ("Rewriting", sampler_form))
        for title, form in (*groups, ("Appearance", look_form)):
            group = QGroupBox(title)
            group.setLayout(form)
            layout.addWidget(group)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        restore = buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)
        restore.clicked.connect(self.restore_defaults)
        layout.addWidget(buttons)
        self.model_source.currentIndexChanged.connect(self._update_model_row)
        self._update_model_row()

    def run_connection_test(self) -> None:
        """Ask the server what it serves (off the GUI thread); the answer appears beside the button."""
        url = self.server_url.text().strip()
        if not url:
            self._on_tested("✗ enter the server's address first", False)
            return
        self.test_connection.setEnabled(False)
        self.connection_result.setText("Connecting…")
        self._tester.start(url, self.server_model.text().strip() or None, self.server_key.text() or None)

    def _on_tested(self, line: str, ok: bool) -> None:
        self.test_connection.setEnabled(True)
        self.connection_result.setText(line)
        self.connection_ok = ok

    def api_key(self) -> str:
        """The key typed here; the window stores it (app/server_key.py), never with the preferences."""
        return self.server_key.text()

    def _update_model_row(self) -> None:
        source = self.model_source.currentData()
        self.model_path.setEnabled(source != "builtin")
        self.browse.setEnabled(source == "folder")

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a model folder", self.model_path.text())
        if folder:
            self.model_path.setText(folder)

    def restore_defaults(self) -> None:
        defaults = Preferences()
        kept = replace(defaults, recent_files=self.original.recent_files, zoom=self.original.zoom)
        fresh = SettingsDialog(kept)
        self._copy_from(fresh)

    def _copy_from(self, other: SettingsDialog) -> None:
        self.model_source.setCurrentIndex(other.model_source.currentIndex())
        self.model_path.setText(other.model_path.text())
        self.device.setCurrentIndex(other.device.currentIndex())
        self.allow_download.setChecked(other.allow_download.isChecked())
        spin_boxes = (
            "max_steps",
            "t_max",
            "t_min",
            "entropy_bound",
            "left_to_right_bias",
            "polish_rounds",
            "strength",
            "candidates",
            "seed",
        )
        for name in (*spin_boxes, "context_budget"):
            getattr(self, name).setValue(getattr(other, name).value())
        self.pass_display.setValue(other.pass_display.value())
        self.random_seed.setChecked(other.random_seed.isChecked())
        self.theme.setCurrentIndex(other.theme.currentIndex())
        self.use_server.setChecked(other.use_server.isChecked())
        self.server_url.setText(other.server_url.text())
        self.server_model.setText(other.server_model.text())
        self.server_passes.setCurrentIndex(other.server_passes.currentIndex())

    def preferences(self) -> Preferences:
        source = self.model_source.currentData()
        model = (
            "builtin"
            if source == "builtin" or not self.model_path.text().strip()
            else self.model_path.text().strip()
        )
        return replace(
            self.original,
            model=model,
            device=str(self.device.currentData()),
            allow_download=self.allow_download.isChecked(),
            max_denoising_steps=self.max_steps.value(),
            t_max=round(self.t_max.value(), 4),
            t_min=round(self.t_min.value(), 4),
            entropy_bound=round(self.entropy_bound.value(), 4),
            left_to_right_bias=round(bias, 4) if (bias := self.left_to_right_bias.value()) >= 0 else -1.0,
            polish_rounds=self.polish_rounds.value(),
            candidates=self.candidates.value(),
            rewrite_strength=self.strength.value() / 100,
            random_seed=self.random_seed.isChecked(),
            seed=self.seed.value(),
            context_budget=self.context_budget.value(),
            pass_display_ms=self.pass_display.value(),
            theme=str(self.theme.currentData()),
            use_server=self.use_server.isChecked(),
            server_url=self.server_url.text().strip(),
            server_model=self.server_model.text().strip(),
            server_passes=str(self.server_passes.currentData()),
        ).sanitized()
