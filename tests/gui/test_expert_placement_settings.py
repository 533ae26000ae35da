"""Settings ▸ Model ▸ Routed experts (issue #41): the preference, the combo, the reload and the label."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from gui_helpers import SIGNAL_TIMEOUT_MS
from PySide6.QtCore import QSettings

from app.dialogs.settings import EXPERT_LABELS, SettingsDialog
from app.settings import EXPERT_PLACEMENTS, Preferences, SettingsStore
from app.window.main_window import MainWindow


def test_the_placement_survives_a_save_and_a_bad_value_falls_back_to_auto(tmp_path: Path) -> None:
    ini = str(tmp_path / "redraft.ini")
    assert Preferences().experts == "auto"
    SettingsStore(QSettings(ini, QSettings.Format.IniFormat)).save(Preferences(experts="host-compute"))
    assert SettingsStore(QSettings(ini, QSettings.Format.IniFormat)).load().experts == "host-compute"

    hand_edited = QSettings(ini, QSettings.Format.IniFormat)
    hand_edited.setValue("model/experts", "on-the-moon")
    hand_edited.sync()
    assert SettingsStore(QSettings(ini, QSettings.Format.IniFormat)).load().experts == "auto"
    assert Preferences(experts="GPU").sanitized().experts == "auto"


def test_the_model_page_reads_and_writes_the_placement(qtbot: Any) -> None:
    assert tuple(value for _, value in EXPERT_LABELS) == EXPERT_PLACEMENTS
    chosen = Preferences(model="google/diffusiongemma-26B-A4B-it", device="cuda", experts="host-compute")
    dialog = SettingsDialog(chosen)
    qtbot.addWidget(dialog)
    assert dialog.pages["Model"].isAncestorOf(dialog.experts)
    assert dialog.experts.currentData() == "host-compute"
    assert dialog.experts.isEnabled()
    assert "26B-A4B" in dialog.experts.toolTip()
    assert dialog.preferences() == chosen

    dialog.experts.setCurrentIndex(dialog.experts.findData("host-stream"))
    assert dialog.preferences().experts == "host-stream"
    dialog.restore_defaults()
    assert dialog.preferences().experts == "auto"


def test_the_placement_is_greyed_out_where_it_cannot_matter(qtbot: Any) -> None:
    dialog = SettingsDialog(Preferences(model="google/diffusiongemma-26B-A4B-it", device="cuda"))
    qtbot.addWidget(dialog)
    dialog.device.setCurrentIndex(dialog.device.findData("cpu"))
    assert not dialog.experts.isEnabled()  # the processor alone: host and device memory are the same
    dialog.device.setCurrentIndex(dialog.device.findData("auto"))
    assert dialog.experts.isEnabled()
    dialog.model_source.setCurrentIndex(dialog.model_source.findData("builtin"))
    assert not dialog.experts.isEnabled()  # the built-in model has no experts
    dialog.experts.setCurrentIndex(dialog.experts.findData("device"))
    assert dialog.preferences().experts == "device"  # greyed out, still kept


def test_a_changed_placement_reloads_the_model_at_4_bit(
    make_window: Callable[..., MainWindow], qtbot: Any
) -> None:
    window = make_window(device="auto")  # the tiny model: fp32 on a processor, bf16 on a graphics card
    assert window.model_info is not None and window.model_info.experts == "device"
    assert window.model_spec().experts == "auto"

    window.apply_preferences(replace(window.prefs, experts="host-stream"))
    assert window.model_info is None  # reloading in the worker, as for a new device
    assert window.model_spec().experts == "host-stream"
    qtbot.waitUntil(lambda: not window.model_loading, timeout=SIGNAL_TIMEOUT_MS)
    # The editor asks for "auto" precision, which a host placement makes 4 bit: the experts it keeps apart
    # are quantized ones.
    assert window.model_info is not None, window.message_bar.label.text()
    assert window.model_info.experts == "host-stream" and window.model_info.precision == "4bit"
    assert window.model_label.text().endswith(" · experts in host memory (streamed)")

    # Greyed out in Settings, not applied: the processor alone has no graphics card to keep experts off.
    window.apply_preferences(replace(window.prefs, device="cpu"))
    assert window.model_spec().experts == "auto"
    qtbot.waitUntil(lambda: window.model_info is not None, timeout=SIGNAL_TIMEOUT_MS)


def test_the_model_label_says_where_the_experts_are_only_when_off_the_device(
    make_window: Callable[..., MainWindow],
) -> None:
    window = make_window()
    info = window.model_info
    assert info is not None
    assert "experts" not in window.model_label.text()
    window._on_loaded(replace(info, experts="host-stream"))
    assert window.model_label.text().endswith(" · experts in host memory (streamed)")
    window._on_loaded(replace(info, experts="host-stream", resident_layers=21))
    assert window.model_label.text().endswith(" · experts in host memory (streamed, 21 layers' on the GPU)")
    window._on_loaded(replace(info, experts="host-compute"))
    assert window.model_label.text().endswith(" · experts in host memory (on the CPU)")
    window._on_loaded(replace(info, experts="device"))
    assert "experts" not in window.model_label.text()
