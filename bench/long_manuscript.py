"""A whole novel in one file, as some writers keep theirs: what opening, typing, spelling, the Outline, saving, a
Replace All (a name through the book) and its undo, and a rewrite cost in it, and the longest the window stops
answering meanwhile.

    python bench/long_manuscript.py                        # War and Peace from ../shared/corpus (3.2 MB)
    python bench/long_manuscript.py --text book.txt --json bench/results/long.json

The real window, offscreen, on the built-in model. "Stall" is the longest gap between the ticks of a 5 ms timer
(the event loop not answering): what a writer feels as keys that lag. Without the corpus a 3 MB text of chapters
is made up. Figures are only comparable on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
NOVEL = ROOT.parent / "shared" / "corpus" / "gutenberg_02600_war_and_peace.txt"
KEY_PACE_S = 0.12  # a brisk typist's gap between keys
PARAGRAPH = ("The keeper climbed the stairs every evening and counted the steps as his father had done before "
             "him. The sea turned grey and the gulls went quiet over the harbour.\n\n")  # fmt: skip


class Stalls:
    """The longest gap between a 5 ms timer's ticks while it runs."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.longest = 0.0
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.timeout.connect(self._tick)
        self._timer.start(5)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, now - self._last)
        self._last = now

    def stop(self) -> float:
        self._timer.stop()
        return round(self.longest * 1000)


def made_up_novel() -> str:
    return "".join(f"CHAPTER {n}\n\n" + PARAGRAPH * 120 for n in range(1, 130))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--text", type=Path, default=NOVEL if NOVEL.is_file() else None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    from PySide6.QtCore import QSettings
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv)
    from app.settings import SettingsStore
    from app.window.main_window import MainWindow
    from app.window.spelling import Spelling

    scratch = Path(tempfile.mkdtemp(prefix="redraft-long-"))
    os.environ["REDRAFT_HOME"] = str(scratch / "home")
    book = scratch / (args.text.name if args.text else "novel.txt")
    if args.text:
        shutil.copyfile(args.text, book)
    else:
        book.write_text(made_up_novel(), encoding="utf-8")
    settings = SettingsStore(QSettings(str(scratch / "redraft.ini"), QSettings.Format.IniFormat))
    settings.update(model="builtin", device="cpu", check_spelling=True, spelling_language="en")
    window = MainWindow(settings)
    window.resize(1366, 768)
    window.show()
    editor, figures = window.editor, dict[str, float | int | None]()

    def wait(seconds: float) -> None:
        ends = time.perf_counter() + seconds
        while time.perf_counter() < ends:
            app.processEvents()

    def until(done: Callable[[], bool], limit: float = 120) -> None:
        ends = time.perf_counter() + limit
        while not done() and time.perf_counter() < ends:
            app.processEvents()

    spelling = window.spelling
    assert isinstance(spelling, Spelling)
    until(lambda: window.model_info is not None and spelling.dictionary.ready)
    wait(1)
    begun = time.perf_counter()
    window.open_path(book)
    figures["open_ms"] = round((time.perf_counter() - begun) * 1000)
    stalls = Stalls()
    wait(4)
    figures["after_open_stall_ms"] = stalls.stop()
    figures["words"] = len(editor.plain_text().split())

    cursor = editor.textCursor()
    cursor.setPosition(editor.end_position() // 2)
    editor.setTextCursor(cursor)
    editor.setFocus()
    keys, stalls = [], Stalls()
    for letter in "and then the writer typed a line":
        begun = time.perf_counter()
        QTest.keyClicks(editor, letter)
        keys.append(time.perf_counter() - begun)
        wait(KEY_PACE_S)
    wait(1)
    figures |= {"key_p50_ms": round(statistics.median(keys) * 1000, 1), "key_max_ms": round(max(keys) * 1000, 1),
                "typing_stall_ms": stalls.stop()}  # fmt: skip

    highlighter = window.editor.highlighter
    spelling.action.setChecked(False)
    until(lambda: not highlighter.showing_again)
    stalls, begun = Stalls(), time.perf_counter()
    spelling.action.setChecked(True)
    figures["spelling_view_ms"] = round((time.perf_counter() - begun) * 1000)
    until(lambda: not highlighter.showing_again)
    figures["spelling_all_s"] = round(time.perf_counter() - begun, 2)
    figures["spelling_stall_ms"] = stalls.stop()

    window.outline.setVisible(True)
    wait(0.5)
    begun = time.perf_counter()
    window.outline.refresh()
    figures["outline_refresh_ms"] = round((time.perf_counter() - begun) * 1000)
    figures["outline_headings"] = len(window.outline.found)
    QTest.keyClicks(editor, "y")  # a pause in the typing with the Outline open: the refresh it waits for
    begun = time.perf_counter()
    window.outline.refresh()
    figures["outline_after_typing_ms"] = round((time.perf_counter() - begun) * 1000)

    for name in ("first_save_ms", "save_ms"):
        QTest.keyClicks(editor, "x")
        begun = time.perf_counter()
        window.save()
        figures[name] = round((time.perf_counter() - begun) * 1000)
        wait(0.5)

    text = editor.plain_text()
    counts = Counter(re.findall(r"\b[A-Z][a-z]{4,}\b", text))  # a character's name, say, renamed through the book
    name = next((word for word, count in counts.most_common() if count <= 3000), "keeper")
    bar = window.find_bar
    bar.open(replace=True)
    bar.find_text.setText(name)
    bar.replace_text.setText(name[::-1].title())
    wait(0.5)
    begun = time.perf_counter()
    replaced = bar.replace_all()
    figures |= {"replaced": replaced, "replace_all_ms": round((time.perf_counter() - begun) * 1000)}
    wait(0.5)
    begun = time.perf_counter()
    window.undo()
    figures["undo_replace_all_ms"] = round((time.perf_counter() - begun) * 1000)
    stalls = Stalls()
    until(lambda: not highlighter.showing_again)  # the blocks it changed highlighted again, a slice at a time
    figures["after_undo_stall_ms"] = stalls.stop()
    bar.close_bar()
    text = editor.plain_text()
    start = text.index(". ", len(text) // 2) + 2
    editor.select_range(start, text.index(".", start) + 1)
    wait(0.6)  # a writer's pause before Ctrl+R
    passes: list[float] = []
    worker = window.service.worker
    worker.passReady.connect(lambda _job, _painted: passes.append(time.perf_counter()))
    stalls, begun = Stalls(), time.perf_counter()
    window.rewrite_selection()
    until(lambda: window.last_result is not None)
    figures |= {"rewrite_first_pass_ms": round((passes[0] - begun) * 1000) if passes else None,
                "rewrite_s": round(time.perf_counter() - begun, 2), "rewrite_passes": len(passes),
                "rewrite_stall_ms": stalls.stop()}  # fmt: skip
    window.cancel_rewrite()
    editor.document().setModified(False)
    window.service.shutdown()

    print(f"{book.name}: {figures['words']:,} words")
    for name, value in figures.items():
        if name != "words":
            print(f"  {name:24} {value}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"text": book.name, **figures}, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
