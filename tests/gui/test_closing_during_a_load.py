"""Closing Redraft while its model still loads: no crash on the way out, and the load stops at its next stage.

A load inside transformers cannot be interrupted (a large model's takes minutes); Qt aborts the process when a
running QThread is destroyed. Here a real load of the tiny model is held at its start, as a long one would be.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import model
from app.rewrite.outliving import outliving_threads
from app.rewrite.worker import ModelSpec, RewriteService

ROOT = Path(__file__).resolve().parents[2]

# A process that closes its service while the load is held, then leaves as the editor does (app.gui).
LEAVING = """
import os, sys, threading
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
import model
real_load, started, held = model.load, threading.Event(), threading.Event()
def held_load(*args, **kwargs):
    started.set()
    held.wait()  # a load that outlasts the window (never released here)
    return real_load(*args, **kwargs)
model.load = held_load
from app.rewrite.outliving import end_process_if_outlived
from app.rewrite.worker import ModelSpec, RewriteService
service = RewriteService()
service.load_model(ModelSpec(sys.argv[1], device="cpu"))
assert started.wait(60)
service.shutdown(timeout_ms=300)
del service
print("closed", flush=True)
end_process_if_outlived(3)
print("not reached", flush=True)
"""


def test_leaving_while_a_load_runs_ends_the_process_without_a_crash(tiny_checkpoint: Path) -> None:
    done = subprocess.run([sys.executable, "-c", LEAVING, str(tiny_checkpoint)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    # Without the hand-over, Python's teardown destroyed the running thread: "QThread: Destroyed while thread
    # 'redraft-model' is still running" and SIGABRT (status -6).
    assert done.returncode == 3, done.stderr[-2000:]
    assert done.stdout.split() == ["closed"] and "Destroyed while thread" not in done.stderr


def test_a_load_whose_window_closed_stops_at_its_next_stage(
    qtbot: Any, tiny_checkpoint: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_load, started, release = model.load, threading.Event(), threading.Event()
    stages: list[str] = []

    def held_load(*args: Any, **kwargs: Any) -> Any:
        started.set()
        release.wait(30)
        report = kwargs["progress"]
        kwargs["progress"] = lambda stage, fraction: (stages.append(stage), report(stage, fraction))
        return real_load(*args, **kwargs)

    monkeypatch.setattr(model, "load", held_load)
    service = RewriteService()
    loaded: list[object] = []
    service.worker.loaded.connect(loaded.append)
    service.load_model(ModelSpec(str(tiny_checkpoint), device="cpu"))
    assert started.wait(30)
    service.shutdown(timeout_ms=200)
    assert outliving_threads() == [service.model_thread]  # held: still running, kept alive rather than destroyed
    release.set()
    qtbot.waitUntil(lambda: not service.model_thread.isRunning(), timeout=30_000)
    assert outliving_threads() == []
    assert stages == ["finding the model"]  # abandoned at its first report: no weights read, no engine
    assert loaded == [] and service.worker._engine is None
