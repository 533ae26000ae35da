"""How the editor feels: start-up, the first painted pass, the event loop during a rewrite, memory.

    python bench/editor_speed.py                  # the built-in model, offscreen
    python bench/editor_speed.py --json bench/results/editor.json

The real window and the real worker thread, offscreen. Start-up is measured in a child process from its launch
(Python's own start included, as a writer waits for it) to the window being shown and to the model being ready. Then
rewrites of 64-token spans with about 2k tokens of context before each (the built-in model reads the last 128: its
``max_context_tokens``; a new span every time): time from the request to the first pass painted in the span and to
the result, asked for three ways: the moment the span is selected in one gesture (a double or triple click, a
shift-click: nothing could be encoded ahead), the moment a drag ends (the mouse went down at the span's start and
the end moved for ``DRAG_MS``; the editor encodes the context before a start that holds still), and after a writer's
half-second pause on a selection. Meanwhile the event loop's delay (a 5 ms timer probe: p50, p99, max) and resident
memory, idle and while it develops. Last, what painting one pass costs in a chapter-long selection
(``measure_long_span_paint``).
Targets (issue: speed, measured side by side): first pass painted <= 250 ms, p99 delay <= 30 ms,
window shown <= 1.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

WORDS = (
    "the keeper climbed the stairs of the lighthouse every evening and counted the steps as his father had "
    "done before him while the sea turned grey and the gulls went quiet over the harbour"
).split()
PROBE_MS = 5
TARGETS = {
    "first_pass_ms": 250.0, "first_pass_after_drag_ms": 250.0, "first_pass_after_pause_ms": 250.0,
    "delay_p99_ms": 30.0, "window_shown_s": 1.5,
}  # fmt: skip
# Between selecting a span and pressing Ctrl+R a writer takes at least this long.
WRITER_PAUSE_MS = 500
# A quick drag across a 64-token span (about three lines): the end moves every frame (16 ms) this long.
DRAG_MS = 300
FRAME_MS = 16
# How each rewrite is asked for, in turn (see the module docstring).
GESTURES = ("one gesture", "drag", "pause")


def resident_mib() -> float | None:
    """This process's resident memory (Linux /proc; None elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def startup_child() -> None:
    """Child mode: print when the window is shown and when the model is ready, as seconds since launch."""
    launched = float(os.environ["REDRAFT_BENCH_LAUNCHED"])
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.settings import SettingsStore
    from app.window.main_window import MainWindow

    app = QApplication(sys.argv)
    window = MainWindow(SettingsStore())
    window.show()
    QTimer.singleShot(0, lambda: print(f"shown {time.time() - launched:.3f}", flush=True))

    # Polled on the GUI thread: a plain function connected to the worker's signal would run on the
    # worker's thread, where touching the window deadlocks.
    def ready() -> None:
        if window.model_info is None:
            return
        print(f"ready {time.time() - launched:.3f}", flush=True)
        window.editor.document().setModified(False)
        app.quit()

    poll = QTimer()
    poll.timeout.connect(ready)
    poll.start(5)
    app.exec()
    window.service.shutdown()


def measure_startup(runs: int) -> dict[str, float]:
    shown, ready = [], []
    with tempfile.TemporaryDirectory() as home:
        for _ in range(runs):
            env = {**os.environ, "REDRAFT_HOME": home, "XDG_CONFIG_HOME": home, "QT_QPA_PLATFORM": "offscreen",
                   "REDRAFT_BENCH_LAUNCHED": repr(time.time())}  # fmt: skip
            done = subprocess.run([sys.executable, __file__, "--startup-child"], env=env, capture_output=True,
                                  text=True, timeout=300, cwd=ROOT)  # fmt: skip
            figures = dict(line.split() for line in done.stdout.splitlines() if line[:5] in ("shown", "ready"))
            shown.append(float(figures["shown"]))
            ready.append(float(figures["ready"]))
    return {"window_shown_s": statistics.median(shown), "model_ready_s": statistics.median(ready)}


def measure_rewrite(model: str | None, candidates: int, repeats: int) -> dict[str, Any]:
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtGui import QTextCursor
    from PySide6.QtWidgets import QApplication

    from app.settings import SettingsStore
    from app.window.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv)
    scratch = Path(tempfile.mkdtemp(prefix="redraft-bench-"))
    settings = SettingsStore(QSettings(str(scratch / "redraft.ini"), QSettings.Format.IniFormat))
    settings.update(model=model or "builtin", device="cpu", candidates=candidates)
    window = MainWindow(settings)
    window.show()
    while window.model_info is None:
        app.processEvents()
        time.sleep(0.01)
    before = " ".join(WORDS[i % len(WORDS)] for i in range(1600)) + ".\n"  # about 2k tokens
    # One span of about 64 tokens per rewrite, each after its own context: no rewrite finds its prompt
    # already encoded by an earlier one (a regeneration would).
    spans = [" ".join(WORDS[(i * 7 + r) % len(WORDS)] for i in range(48)) + "." for r in range(len(GESTURES) * repeats)]
    window.editor.setPlainText(before + "\n".join(spans) + "\nThe end of the chapter.\n")
    idle_mib = resident_mib()
    rows: list[dict[str, Any]] = []

    def wait(ms: float) -> None:
        begun = time.perf_counter()
        while (time.perf_counter() - begun) * 1000 < ms:
            app.processEvents()
            time.sleep(0.001)

    for index in range(len(GESTURES) * repeats):
        gesture = GESTURES[index % len(GESTURES)]
        start = len(before) + sum(len(span) + 1 for span in spans[:index])
        end = start + len(spans[index])
        cursor = window.editor.textCursor()
        cursor.setPosition(start)
        if gesture == "drag":
            window.editor.setTextCursor(cursor)  # the mouse goes down at the start
            frames = DRAG_MS // FRAME_MS
            for frame in range(1, frames + 1):
                wait(FRAME_MS)
                cursor.setPosition(start + (end - start) * frame // frames, QTextCursor.MoveMode.KeepAnchor)
                window.editor.setTextCursor(cursor)
        else:
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            window.editor.setTextCursor(cursor)
            wait(WRITER_PAUSE_MS if gesture == "pause" else 0)
        delays: list[float] = []
        marks: dict[str, float] = {}
        busy_mib: list[float] = []
        last = [time.perf_counter()]

        def probe(last: list[float] = last, delays: list[float] = delays, busy_mib: list[float] = busy_mib) -> None:
            now = time.perf_counter()
            delays.append(max(0.0, (now - last[0]) * 1000 - PROBE_MS))
            last[0] = now
            if len(delays) % 50 == 0:
                busy_mib.append(resident_mib() or 0.0)

        # When the GUI thread paints (not when the worker emits): the editor's own paint calls, wrapped.
        editor = window.editor
        paint_pass, show_result = editor.paint_pass, editor.show_result

        # The marks and the wrapped call bound now (the loop makes a closure per rewrite); the paint's own
        # arguments pass through whatever they are.
        def painted(*args: Any, marks: dict[str, float] = marks, paint: Any = paint_pass, **kwargs: Any) -> None:
            paint(*args, **kwargs)
            marks.setdefault("first", time.perf_counter())

        def finished(text: str, marks: dict[str, float] = marks, show: Any = show_result) -> None:
            show(text)
            marks["done"] = time.perf_counter()

        editor.paint_pass = painted  # type: ignore[method-assign,assignment]
        editor.show_result = finished  # type: ignore[method-assign]
        timer = QTimer()
        timer.timeout.connect(probe)
        timer.start(PROBE_MS)
        started = time.perf_counter()
        window.rewrite_selection()
        while "done" not in marks:
            app.processEvents()
            time.sleep(0.0005)
        timer.stop()
        editor.paint_pass, editor.show_result = paint_pass, show_result  # type: ignore[method-assign]
        window.reject_rewrite()
        delays.sort()
        rows.append({
            "gesture": gesture,
            "first_pass_ms": (marks["first"] - started) * 1000,
            "result_ms": (marks["done"] - started) * 1000,
            "delay_p50_ms": delays[len(delays) // 2],
            "delay_p99_ms": delays[min(len(delays) - 1, int(len(delays) * 0.99))],
            "delay_max_ms": delays[-1],
            "busy_mib": max(busy_mib, default=resident_mib() or 0.0),
        })  # fmt: skip
    window.editor.document().setModified(False)
    window.service.shutdown()
    window.close()

    def of(gesture: str) -> list[dict[str, Any]]:
        return [row for row in rows if row["gesture"] == gesture]

    # The event loop and memory over every rewrite; the times per gesture.
    median = {key: statistics.median(row[key] for row in rows) for key in rows[0] if key.startswith(("delay", "busy"))}
    median["delay_max_ms"] = max(row["delay_max_ms"] for row in rows)
    for gesture, suffix in (("one gesture", ""), ("drag", "_after_drag"), ("pause", "_after_pause")):
        for key in ("first_pass_ms", "result_ms"):
            median[key.replace("_ms", f"{suffix}_ms")] = statistics.median(row[key] for row in of(gesture))
    return {
        **median, "idle_mib": idle_mib, "candidates": candidates, "repeats": repeats, "pause_ms": WRITER_PAUSE_MS,
        "drag_ms": DRAG_MS,
    }  # fmt: skip


def measure_long_span_paint(characters: int = 40_000, passes: int = 20) -> dict[str, float]:
    """Painting one pass of a chapter-long selection's rewrite (its third block developing: the finished blocks
    before it, the original's waiting words after): the editor's paint of only the runs that changed, and the
    whole span re-inserted as every pass once was. Milliseconds, median, offscreen."""
    from PySide6.QtWidgets import QApplication

    from app.rewrite.worker import Ink, Segment
    from app.window.editor_widget import RewriteEditor

    app = QApplication.instance() or QApplication([])
    paragraph = " ".join(WORDS) + ".\n"
    text = (paragraph * (characters // len(paragraph) + 1))[:characters]
    editor = RewriteEditor()
    editor.resize(1000, 700)
    editor.show()
    editor.setPlainText(text)
    editor.begin_live_span(0, len(text))
    figures = {}
    for name, whole in (("long_span_pass_paint_ms", False), ("long_span_whole_repaint_ms", True)):
        times = []
        for n in range(passes):
            frame = [Segment(text[: len(text) // 8], Ink.SETTLED), Segment(f"pass {n} " * 30, Ink.FRESH),
                     Segment("noise " * 12, Ink.NOISE)]  # fmt: skip
            started = time.perf_counter()
            if whole:
                editor.repaint_live_span()
            else:
                editor.paint_pass(frame, text[len(text) // 4 :])
            app.processEvents()
            times.append((time.perf_counter() - started) * 1000)
        figures[name] = statistics.median(times)
    editor.restore_live_span()
    editor.document().setModified(False)
    editor.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="model folder (default: the built-in model)")
    parser.add_argument("--candidates", type=int, default=4, help="as Settings (the editor's default: 4)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--startup-runs", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--startup-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.startup_child:
        startup_child()
        return
    figures = {**measure_startup(args.startup_runs), **measure_rewrite(args.model, args.candidates, args.repeats),
               **measure_long_span_paint()}  # fmt: skip
    print(f"{'figure':<28} {'value':>10}  target")
    for key, value in figures.items():
        if isinstance(value, float):
            target = TARGETS.get(key)
            verdict = "" if target is None else f"<= {target:g} {'met' if value <= target else 'MISSED'}"
            print(f"{key:<28} {value:>10.1f}  {verdict}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
