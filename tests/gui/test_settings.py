"""Settings: one table of defaults, typed reads that survive a restart, live application."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from gui_helpers import SIGNAL_TIMEOUT_MS
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QLabel, QWidget

from app.dialogs.settings import SettingsDialog
from app.settings import Preferences, SettingsStore
from model.checkpoint.tiny import build_tiny_checkpoint


def test_settings_persist_across_a_restart_with_their_types(tmp_path: Path) -> None:
    ini = str(tmp_path / "redraft.ini")
    chosen = Preferences(
        model="/models/mine",
        device="cpu",
        allow_download=True,
        max_denoising_steps=12,
        t_max=0.9,
        t_min=0.3,
        entropy_bound=0.25,
        left_to_right_bias=0.0,
        polish_rounds=2,
        candidates=3,
        rewrite_strength=0.6,
        random_seed=False,
        seed=1234,
        context_budget=512,
        theme="dark",
        zoom=2,
        recent_files=("/a.md", "/b.md"),
        instruction_history=(),
    )
    SettingsStore(QSettings(ini, QSettings.Format.IniFormat)).save(chosen)

    # A restart is a new process: QSettings caches files per process, so read it from another one.
    reader = (
        "import json, sys\n"
        "from PySide6.QtCore import QSettings\n"
        "from app.settings import SettingsStore\n"
        "raw = QSettings(sys.argv[1], QSettings.Format.IniFormat)\n"
        "untyped = type(raw.value('rewrite/candidates')).__name__\n"
        "loaded = SettingsStore(raw).load()\n"
        "print(json.dumps({'untyped': untyped, 'repr': repr(loaded),\n"
        "  'types': {k: type(v).__name__ for k, v in vars(loaded).items()}}))\n"
    )
    root = Path(__file__).resolve().parents[2]
    output = subprocess.run(
        [sys.executable, "-c", reader, ini], capture_output=True, text=True, check=True, cwd=root
    ).stdout
    seen = json.loads(output.strip().splitlines()[-1])
    assert seen["untyped"] == "str"  # what an untyped read gets after a restart: why reads name types
    assert seen["repr"] == repr(chosen)
    assert seen["types"] == {spec.name: type(spec.default).__name__ for spec in fields(Preferences)}


def test_defaults_and_unreadable_values(tmp_path: Path) -> None:
    ini = str(tmp_path / "redraft.ini")
    assert SettingsStore(QSettings(ini, QSettings.Format.IniFormat)).load() == Preferences()
    broken = QSettings(ini, QSettings.Format.IniFormat)
    broken.setValue("files/recent", "not json")
    broken.setValue("ui/theme", "purple")
    broken.setValue("rewrite/candidates", "99")
    broken.setValue("sampler/polish_rounds", "500")
    broken.sync()
    loaded = SettingsStore(QSettings(ini, QSettings.Format.IniFormat)).load()
    assert loaded.recent_files == ()
    assert loaded.theme == "system"
    assert loaded.candidates == 8  # clamped
    assert loaded.polish_rounds == 64


def test_settings_dialog_applies_live_and_reloads_a_changed_model(
    make_window, qtbot, tmp_path: Path, settings_store: SettingsStore
) -> None:
    window = make_window()
    first_model = window.model_info
    other = build_tiny_checkpoint(tmp_path / "other-tiny", seed=1)

    dialog = SettingsDialog(window.prefs, window)
    dialog.model_source.setCurrentIndex(dialog.model_source.findData("folder"))
    dialog.model_path.setText(str(other))
    dialog.max_steps.setValue(5)
    dialog.t_max.setValue(0.7)
    dialog.candidates.setValue(2)
    dialog.strength.setValue(40)
    dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
    chosen = dialog.preferences()
    assert (chosen.max_denoising_steps, chosen.t_max, chosen.candidates) == (5, 0.7, 2)
    assert chosen.rewrite_strength == 0.4
    # The bias box starts at "model default" (one step below 0), and 0 is kept as a real choice.
    assert chosen.left_to_right_bias == -1.0 and chosen.denoise_options().left_to_right_bias is None
    dialog.left_to_right_bias.setValue(0.0)
    assert dialog.left_to_right_bias.text() != "Model default"
    assert dialog.preferences().denoise_options().left_to_right_bias == 0.0
    dialog.left_to_right_bias.setValue(2.5)
    chosen = dialog.preferences()
    assert chosen.denoise_options().left_to_right_bias == 2.5
    # Polish rounds the same way: "model default" below 0, and 0 (off) kept.
    assert dialog.polish_rounds.text() == "Model default" and chosen.denoise_options().polish_rounds is None
    dialog.polish_rounds.setValue(0)
    assert dialog.preferences().denoise_options().polish_rounds == 0
    dialog.polish_rounds.setValue(3)
    chosen = dialog.preferences()
    assert chosen.denoise_options().polish_rounds == 3

    window.apply_preferences(chosen)
    assert window.model_info is None  # reloading in the worker
    qtbot.waitUntil(lambda: window.model_info is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert window.model_info != first_model
    assert window.model_info.name == str(other)
    assert window.palette().color(window.palette().ColorRole.Window).lightness() < 100  # dark theme now

    settings_file = settings_store.qsettings.fileName()
    reopened = SettingsStore(QSettings(settings_file, QSettings.Format.IniFormat)).load()
    assert reopened == chosen


# -- pages and plain words (issue #36) ------------------------------------------------------------------

CHOSEN_VALUES: dict[str, Any] = dict(
    model="org/some-model", device="cuda", experts="host-stream", allow_download=True, use_server=True, server_url="http://box:8000",
    server_model="gemma", server_passes="per-pass", max_denoising_steps=12, t_max=0.9, t_min=0.3,
    entropy_bound=0.25, left_to_right_bias=0.0, polish_rounds=2, candidates=3, random_seed=False, seed=1234,
    context_budget=512, fill_max_tokens=40, rewrite_strength=0.35, rewrite_length="longer", pass_display_ms=120,
    theme="dark", font_family="A Family Not Installed", zoom=3, spelling_language="fr", window_geometry="AdnQyw==",
    recent_files=("/a.md",), instruction_history=("Shorter",), session_goal=750, author_name="Maya Okafor",
    reading_places=("120\t/a.md",),
)  # fmt: skip
# Every setting away from its default, so that passing through the dialog proves something; settings the
# dialog does not show (a View menu's toggles) are flipped here and must come back untouched.
CHOSEN = Preferences(**CHOSEN_VALUES, **{f.name: not f.default for f in fields(Preferences)
                                          if isinstance(f.default, bool) and f.name not in CHOSEN_VALUES})  # fmt: skip


def _visible_words(page: QWidget) -> str:
    """Everything a writer reads on a page, tooltips excepted (experts' names may live there)."""
    words = [label.text() for label in page.findChildren(QLabel)]
    words += [box.text() for box in page.findChildren(QAbstractButton)]
    for spin in page.findChildren(QAbstractSpinBox):
        words += [spin.text(), getattr(spin, "suffix", lambda: "")(), spin.specialValueText()]
    for combo in page.findChildren(QComboBox):
        words += [combo.itemText(i) for i in range(combo.count())]
    return " ".join(words)


def test_settings_are_pages_and_keep_every_setting(qtbot: Any) -> None:
    assert [f.name for f in fields(Preferences) if getattr(CHOSEN, f.name) == f.default] == []
    dialog = SettingsDialog(CHOSEN)
    qtbot.addWidget(dialog)
    assert list(dialog.pages) == ["Model", "Server", "Rewriting", "Appearance", "Documents", "Advanced"]
    assert dialog.preferences() == CHOSEN  # nothing lost or changed by passing through the pages
    dialog.show_page("Appearance")
    assert dialog.stack.currentWidget() is dialog.pages["Appearance"]
    assert dialog.page_list.currentItem().text() == "Appearance"
    homes = {
        "Model": ("model_source", "model_path", "device", "experts", "allow_download"),
        "Server": ("use_server", "server_url", "server_model", "server_key", "server_passes", "test_connection"),
        "Rewriting": ("strength", "candidates", "fewer_drafts", "fill_words", "random_seed", "seed"),
        "Appearance": ("theme", "font_family", "pass_display"),
        "Documents": ("author_name",),
        "Advanced": ("max_steps", "t_max", "t_min", "entropy_bound", "left_to_right_bias", "polish_rounds",
                     "context_budget"),
    }  # fmt: skip
    for page, names in homes.items():
        for name in names:
            assert dialog.pages[page].isAncestorOf(getattr(dialog, name)), (page, name)


def test_the_rewriting_page_speaks_of_words_and_the_sampler_lives_under_advanced(qtbot: Any) -> None:
    dialog = SettingsDialog(Preferences())
    qtbot.addWidget(dialog)
    rewriting = _visible_words(dialog.pages["Rewriting"]).lower()
    for jargon in ("token", "denois", "entropy", "noised", "candidate", "sampler", "temperature", "seed"):
        assert jargon not in rewriting, jargon
    assert "drafts" in rewriting and "words" in rewriting
    advanced = _visible_words(dialog.pages["Advanced"])
    for jargon in ("Max denoising steps", "Entropy bound", "Left-to-right bias", "re-noised"):
        assert jargon not in advanced and jargon not in rewriting
    # Each of the sampler's dials has a plain sentence under it (a wrapped label beside the control).
    for name in ("max_steps", "t_max", "t_min", "entropy_bound", "left_to_right_bias", "polish_rounds"):
        box = getattr(dialog, name).parentWidget()
        sentences = [label.text() for label in box.findChildren(QLabel) if label.wordWrap()]
        assert len(sentences) == 1 and sentences[0].endswith("."), name
        assert getattr(dialog, name).toolTip(), name  # the expert's name stays in the tooltip


def test_how_much_to_change_is_said_in_words_and_saved_as_the_same_strength(qtbot: Any) -> None:
    dialog = SettingsDialog(Preferences())
    qtbot.addWidget(dialog)
    assert dialog.strength_words.text().startswith("Balanced: each draft starts from about 30% of your words")
    dialog.strength.setValue(30)
    # The engine keeps none of them for sure (every slot stays free): the sentence promises no kept words.
    said = dialog.strength_words.text()
    assert said.startswith("Stay close: each draft starts from about 70% of your words")
    assert "may still change any of them" in said and "Keep Words (Ctrl+K)" in said
    assert dialog.preferences().rewrite_strength == 0.3
    dialog.strength.setValue(100)
    assert dialog.strength_words.text().startswith("Free:") and dialog.preferences().rewrite_strength == 1.0
    dialog.candidates.setValue(1)
    assert dialog.candidates.text() == "1 draft"
    dialog.context_budget.setValue(2048)
    # The built-in model reads no more than it was trained on (its redraft_sampler.json), and says so.
    assert dialog.context_words.text() == "about 1,500 words; the built-in model reads at most 128 tokens"
    dialog.model_source.setCurrentIndex(dialog.model_source.findData("folder"))
    assert dialog.context_words.text() == "about 1,500 words"
    dialog.model_source.setCurrentIndex(dialog.model_source.findData("builtin"))
    dialog.context_budget.setValue(100)
    assert dialog.context_words.text() == "about 80 words"
    dialog.context_budget.setValue(2048)
    assert dialog.fill_words.text() == "18 words"  # the default 24 tokens
    dialog.fill_words.setValue(30)
    assert dialog.preferences().fill_max_tokens == 40
    dialog.restore_defaults()
    assert dialog.strength.value() == 70 and dialog.candidates.value() == Preferences().candidates
    assert dialog.preferences().fill_max_tokens == Preferences().fill_max_tokens
