"""``redraft --self-test``: how every frozen build is checked, and a writer's first answer to "does it work?".

It loads the built-in model from the bundle, fills one gap headless, starts Qt on its offscreen platform
(so the bundled Qt libraries and plugins load too), reads the English spelling word list and finds the other
languages' (bundled data), prints the text and the timings, and exits 0 -- or names the step that failed and
exits 1. Needs no network, no display and no GPU.
"""

from __future__ import annotations

import os
import pkgutil
import platform
import sys
import time
from typing import TextIO

PREFIX = "The rain had stopped by the time we reached the harbour, and "
SUFFIX = " before the last ferry left."


def self_test(out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    started = time.perf_counter()

    def say(line: str) -> None:
        stream.write(line + "\n")
        stream.flush()

    from app.model_sources import gpu_env
    from app.userdirs import user_dirs

    system = f"{platform.system()} {platform.machine()}"
    say(f"Redraft self-test: Python {platform.python_version()} on {system} ({_kind()})")
    step = "import torch"
    try:
        say(gpu_env.describe_torch())
        step = "load the built-in model"
        from model import EditRequest, Engine, load
        from model.checkpoint.loading import builtin_model_folder

        imported = time.perf_counter()
        loaded = load(None, precision="fp32", device="cpu")
        load_s = time.perf_counter() - imported
        say(f"model: {builtin_model_folder()} ({load_s:.2f} s to load)")
        step = "fill a gap"
        engine = Engine(loaded)
        fill_start = time.perf_counter()
        result = engine.run(EditRequest(prefix=PREFIX, suffix=SUFFIX, mode="fill", max_new_tokens=16, seed=0))
        fill_s = time.perf_counter() - fill_start
        if not result.text.strip():
            raise RuntimeError("the model wrote nothing")
        say(f"fill: {PREFIX}[{result.text}]{SUFFIX}")
        say(f"      {result.passes} passes, {result.ms_per_pass:.1f} ms per pass, {fill_s:.2f} s")
        step = "start Qt (offscreen)"
        qt_s = _qt_check()
        say(f"Qt: offscreen platform started in {qt_s:.2f} s")
        step = "load the spelling word list"
        from app.window.dictionary import LANGUAGES, Dictionary

        words = Dictionary(user_dirs().data / "self-test-words.txt")  # read only: never written here
        words.load()
        if words.error or not words.knows("harbour") or words.knows("climbd"):
            raise RuntimeError(words.error or "the English word list does not read as English")
        step = "find every spelling language's word list"
        missing = [name for code, name in LANGUAGES.items()
                   if not pkgutil.get_data("spellchecker", f"resources/{code}.json.gz")]  # fmt: skip
        if missing:
            raise RuntimeError(f"no word list for {', '.join(missing)}")
        say(f"spelling: the English word list is in, and the lists for {len(LANGUAGES) - 1} other languages")
    except Exception as error:  # every failure is a finding here: name the step and stop
        say(f"FAILED at '{step}': {type(error).__name__}: {error}")
        return 1
    for name, path in user_dirs().as_rows():
        say(f"{name:>9}: {path}")
    say(f"self-test passed in {time.perf_counter() - started:.2f} s")
    return 0


def _kind() -> str:
    """Which kind of copy runs: a frozen bundle, an installed package (the embedded-Python one), a checkout."""
    if getattr(sys, "frozen", False):
        return "frozen bundle"
    from pathlib import Path

    checkout = Path(__file__).resolve().parent.parent / "pyproject.toml"
    return "source checkout" if checkout.is_file() else "installed package"


def _qt_check() -> float:
    """Start a QGuiApplication on the offscreen platform in this process, then leave it to exit."""
    start = time.perf_counter()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication, QImage, QPainter

    app = QGuiApplication.instance() or QGuiApplication(["redraft"])
    image = QImage(32, 32, QImage.Format.Format_ARGB32)
    painter = QPainter(image)  # draws through the bundled Qt; fails if its libraries are missing
    painter.drawText(2, 20, "R")
    painter.end()
    del app
    return time.perf_counter() - start
