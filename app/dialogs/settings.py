"""The Settings dialog: a form over :class:`Preferences`; the window applies the result live."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

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
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.settings import Preferences
from model.request import MAX_POLISH_ROUNDS

MODEL_SOURCES = (("Built-in model", "builtin"), ("Local folder", "folder"), ("Hugging Face Hub id", "hub"))
DEVICE_LABELS = (("Automatic", "auto"), ("CPU", "cpu"), ("CUDA GPU", "cuda"))
THEME_LABELS = (("Follow the system", "system"), ("Light", "light"), ("Dark", "dark"))
MODEL_DEFAULT = "Model default"


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

        layout = QVBoxLayout(self)
        for title, form in (("Model", model_form), ("Rewriting", sampler_form), ("Appearance", look_form)):
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
        ).sanitized()
