"""Every window Redraft opens fits a 1366x768 laptop, with every button within reach (issue #36).

tests/gui/screen_fit_driver.py opens them in a real Qt process whose one screen is 1366x728: the
available area of a 1366x768 screen less a 40 px taskbar (Qt's offscreen platform cannot set a
taskbar, so the screen is made that size). A window fits when its size hint, its minimum size and
the size it opens at fit that area less a window manager's frame (app/dialogs/screen_fit.py), it
opens on the screen, no list or text area scrolls sideways, and each visible button lies inside the
window or can be scrolled into view.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAPTOP = {"name": "laptop", "x": 0, "y": 0, "width": 1366, "height": 768 - 40, "logicalDpi": 96,
          "logicalBaseDpi": 96, "dpr": 1}  # fmt: skip
SETTINGS_PAGES = ("Model", "Server", "Rewriting", "Appearance", "Advanced")


@pytest.fixture(scope="module")
def measured(tiny_checkpoint: Path, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("screen-fit")
    screens = folder / "screens.json"
    screens.write_text(json.dumps({"screens": [LAPTOP]}))
    out = folder / "measured.json"
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={screens}", "REDRAFT_HOME": str(folder / "home"),
           "XDG_CONFIG_HOME": str(folder / "config"), "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}  # fmt: skip
    driver = ROOT / "tests" / "gui" / "screen_fit_driver.py"
    done = subprocess.run([sys.executable, str(driver), str(tiny_checkpoint), str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return list(json.loads(out.read_text()))


def _problems(results: list[dict[str, Any]]) -> list[str]:
    return [f"{result['name']}: {problem}" for result in results for problem in result["problems"]]


def test_every_dialog_and_popup_fits_a_1366x768_laptop(measured: list[dict[str, Any]]) -> None:
    names = {result["name"] for result in measured}
    kinds = {result["kind"] for result in measured}
    assert {f"Settings ▸ {page}" for page in SETTINGS_PAGES} <= names
    assert {"Recovery", "Help ▸ About Redraft", "main window with the find bar"} <= names
    assert {"FillGapPopup", "InstructionPopup", "QMessageBox"} <= kinds
    dialogs = [result for result in measured if result["kind"] != "MainWindow"]
    assert all(result["buttons"] > 0 for result in dialogs if result["kind"] != "disabled")
    assert _problems(dialogs) == []


def test_the_main_window_and_its_status_bar_fit_a_1366x768_laptop(measured: list[dict[str, Any]]) -> None:
    mains = [result for result in measured if result["kind"] == "MainWindow"]
    assert len(mains) == 2 and _problems(mains) == []  # with Edit ▸ Replace…'s bar open too
