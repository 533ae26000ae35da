"""Time from Ctrl+R to the first readable draft in the span, with several drafts (the default 4).

    python bench/first_draft.py                          # this checkout, the built-in model, offscreen
    python bench/first_draft.py --tree /tmp/before       # another checkout of Redraft (a git worktree)
    python bench/first_draft.py --json bench/results/first_draft.json
    python bench/first_draft.py --model runs/transplant --rounds 1   # a model folder instead of the built-in

"Readable" is the first pass painted in the span whose shown draft has at least half of its slots
accepted (``app.rewrite.drafts.readable``); the clock runs from the request (``rewrite_selection``, what Ctrl+R
calls) to the moment the GUI thread has painted that pass, and on to the result. The real window and
worker thread, the default preferences (4 candidates, 35 ms a pass at least on screen), a fixed seed
per rewrite. Run it on the commit before #38 (``--tree`` on a worktree of it) for the editor that veiled
the span until all drafts finished and then replayed the winner: the same measure then counts the
veiled passes and the replay up to the winner's readable pass.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SENTENCES = (
    "She wrote the letter twice, then tore up both copies and walked to the harbour instead.",
    "The lighthouse keeper climbed the stairs every evening and counted the steps as his father had.",
    "Rain fell on the market square; the stalls folded their awnings and the pigeons took cover.",
    "By the time the train reached the coast, the children had forgotten why they were angry.",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the Redraft checkout to measure (default: this one)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=2, help="rewrites of each sentence")
    parser.add_argument("--model", type=Path, default=None, help="a model folder (default: the built-in model)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--hide-panel", action="store_true", help="View > Drafts Panel off (#38's trees only)")
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree.resolve()))

    import torch
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.settings import SettingsStore
    from app.window.main_window import MainWindow

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    app = QApplication(sys.argv)
    scratch = Path(tempfile.mkdtemp(prefix="redraft-first-draft-"))
    settings = SettingsStore(QSettings(str(scratch / "redraft.ini"), QSettings.Format.IniFormat))
    model = str(args.model.resolve()) if args.model else "builtin"
    settings.update(model=model, device="cpu", random_seed=False)
    if args.hide_panel:
        settings.update(drafts_panel=False)
    window = MainWindow(settings)
    window.show()
    text = "\n\n".join(SENTENCES) + "\n"
    window.editor.setPlainText(text)
    deadline = time.monotonic() + 300
    while window.model_info is None and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    assert window.model_info is not None, "the built-in model did not load"

    state: dict[str, Any] = {}
    passes: list[int] = []

    def on_pass(_job: int, painted: Any) -> None:  # the GUI thread, after the window painted this pass
        if "readable" in state or painted.veiled:
            return
        accepted = painted.raw.accepted[painted.shown]
        if accepted and sum(accepted) / len(accepted) >= 0.5:
            state["readable"] = time.perf_counter()

    window.service.worker.passReady.connect(on_pass)

    def rewrite(sentence: str, seed: int) -> tuple[float, float]:
        """(ms to the first readable draft, ms to the result) for one Ctrl+R on ``sentence``."""
        window.prefs = window.settings.update(seed=seed)
        begin = window.editor.plain_text().index(sentence)
        window.editor.select_range(begin, begin + len(sentence))
        state.clear()
        started = time.perf_counter()
        window.rewrite_selection()
        while window.run is None or window.run.result is None:
            app.processEvents()
            time.sleep(0.001)
        done = time.perf_counter()
        passes.append(window.run.result.passes)
        window.reject_rewrite()
        return (state.get("readable", done) - started) * 1000, (done - started) * 1000

    rewrite(SENTENCES[0], 999)  # warm-up: traces and caches of the first rewrite are not the figure
    readable, finished = [], []
    for round_ in range(args.rounds):
        for number, sentence in enumerate(SENTENCES):
            first, total = rewrite(sentence, round_ * len(SENTENCES) + number)
            readable.append(first)
            finished.append(total)
            print(f"{sentence[:40]!r:44} readable {first:7.0f} ms   result {total:7.0f} ms", flush=True)
    report = {
        "tree": str(args.tree), "model": model, "candidates": window.prefs.candidates, "rewrites": len(readable),
        "readable_ms_median": statistics.median(readable), "readable_ms_min": min(readable),
        "readable_ms_max": max(readable), "result_ms_median": statistics.median(finished),
        "cpus": os.cpu_count(), "load_average": os.getloadavg()[0], "panel": not args.hide_panel,
        "passes_median": statistics.median(passes),
    }  # fmt: skip
    print(json.dumps(report, indent=2))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    window.editor.document().setModified(False)
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
