"""Where the writer's settings file lives (app/settings.py's default_qsettings): the settings folder of
app.userdirs, which REDRAFT_HOME moves, and Qt's own place for it taken over once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app import settings as settings_module
from app.settings import APPLICATION, ORGANIZATION, SETTINGS_FILE, SettingsStore, default_qsettings
from app.userdirs import UserDirs


@pytest.fixture
def qt_place(tmp_path: Path) -> Iterator[Path]:
    """Qt's own place for the settings file, moved into this test's folder for the test."""
    was = Path(QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION).fileName())
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "qt"))
    yield Path(QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION).fileName())
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(was.parent.parent))


def write_theme(path: Path, theme: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"[ui]\ntheme={theme}\n", encoding="utf-8")


def test_redraft_home_moves_the_settings_with_the_rest(tmp_path: Path, monkeypatch, qt_place: Path) -> None:
    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path / "portable"))
    write_theme(qt_place, "dark")  # the machine's: a portable copy never reads it
    store = SettingsStore(default_qsettings())
    assert Path(store.qsettings.fileName()) == tmp_path / "portable" / "settings" / SETTINGS_FILE
    assert store.load().theme == "system"
    store.update(theme="light")
    store.qsettings.sync()
    assert "theme=light" in (tmp_path / "portable" / "settings" / SETTINGS_FILE).read_text()


def test_settings_in_qts_own_place_are_taken_over_once(tmp_path: Path, monkeypatch, qt_place: Path) -> None:
    monkeypatch.delenv("REDRAFT_HOME", raising=False)
    folders = UserDirs(tmp_path / "config", tmp_path / "logs", tmp_path / "models", tmp_path / "rec", tmp_path / "data")
    monkeypatch.setattr(settings_module, "user_dirs", lambda: folders)
    write_theme(qt_place, "dark")  # where an earlier Redraft kept them (Windows: %APPDATA%)
    assert SettingsStore(default_qsettings()).load().theme == "dark"
    assert (tmp_path / "config" / SETTINGS_FILE).is_file()  # where Help ▸ Where Your Files Are points
    write_theme(qt_place, "light")  # taken over once: the settings folder's own file is the writer's now
    assert SettingsStore(default_qsettings()).load().theme == "dark"
