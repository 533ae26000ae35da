"""GUI test fixtures: offscreen Qt, a private settings file per test, windows on the tiny model."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before anything imports Qt

from collections.abc import Callable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from gui_helpers import DOCUMENT, SIGNAL_TIMEOUT_MS  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402

from app.settings import SettingsStore  # noqa: E402
from app.window.main_window import MainWindow  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture()
def settings_store(tmp_path: Path) -> SettingsStore:
    """A settings file of this test's own, so nothing touches the writer's real settings."""
    return SettingsStore(QSettings(str(tmp_path / "settings" / "redraft.ini"), QSettings.Format.IniFormat))


def _close_quietly(window: MainWindow) -> None:
    if window.editor.live_span is not None:
        window.cancel_rewrite()
    window.editor.document().setModified(False)  # no "unsaved changes" prompt at teardown


@pytest.fixture()
def make_window(
    qtbot: Any, tiny_checkpoint: Path, settings_store: SettingsStore
) -> Callable[..., MainWindow]:
    """A shown window on the tiny model with fast, reproducible settings; overrides go to Preferences."""

    def make(wait_for_model: bool = True, **overrides: Any) -> MainWindow:
        values: dict[str, Any] = {
            "model": str(tiny_checkpoint),
            "device": "cpu",
            "max_denoising_steps": 8,
            "pass_display_ms": 0,
            "random_seed": False,
            "seed": 7,
        }
        values.update(overrides)
        settings_store.update(**values)
        window = MainWindow(settings_store)
        qtbot.addWidget(window, before_close_func=_close_quietly)
        window.show()
        if wait_for_model:
            qtbot.waitUntil(lambda: window.model_info is not None, timeout=SIGNAL_TIMEOUT_MS)
        return window

    return make


@pytest.fixture()
def document_window(make_window: Callable[..., MainWindow]) -> Iterator[Callable[..., MainWindow]]:
    """A window holding DOCUMENT, unmodified, with an empty undo history."""

    def make(text: str = DOCUMENT, **overrides: Any) -> MainWindow:
        window = make_window(**overrides)
        window.editor.setPlainText(text)
        window.editor.document().setModified(False)
        return window

    yield make


@pytest.fixture(autouse=True)
def own_user_folders(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's data, logs and recovery in a folder of its own (app.userdirs), never the machine's: a window's
    saves keep their versions in the data folder (File ▸ Saved Versions…). A test may move it again."""
    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="session", autouse=True)
def model_threads_finish_before_the_end() -> Iterator[None]:
    """A window's model thread that outlived its test (a load on a slow machine, app.rewrite.outliving) is
    waited for before pytest leaves: Python's teardown destroying it running would abort the whole run."""
    yield
    from app.rewrite.outliving import outliving_threads

    for thread in outliving_threads():
        thread.wait(120_000)
