"""Take docs/tracked-changes.png: the real window under Xvfb, a finished draft shown as tracked changes (#48).

Run:  xvfb-run -s "-screen 0 1366x768x24" python scripts/screenshot_changes.py [light|dark] [OUT]
The whole screen is taken with ImageMagick's ``import -window root``, as a writer on a 1366x768 laptop sees
it. On the built-in model: the sentence below rewritten into three drafts, Show Changes on, the second
change accepted and the view on the next one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "xcb")

import torch  # noqa: E402
from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from screenshot import keep_small, rewrite_when_ready  # noqa: E402  (scripts/, run as a script)

from app.settings import SettingsStore  # noqa: E402
from app.window.main_window import MainWindow  # noqa: E402
from model.checkpoint.loading import resources_dir  # noqa: E402

SENTENCE = "She wrote the letter twice, then tore up both copies and walked to the harbour instead."


def main() -> int:
    torch.set_num_threads(1)
    theme = sys.argv[1] if len(sys.argv) > 1 else "light"
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("docs/tracked-changes.png")
    scratch = Path(tempfile.mkdtemp(prefix="redraft-changes-shot-"))
    app = QApplication(sys.argv)
    settings = SettingsStore(QSettings(str(scratch / "redraft.ini"), QSettings.Format.IniFormat))
    settings.update(
        model="builtin", device="cpu", candidates=3, max_denoising_steps=24, pass_display_ms=0, theme=theme,
        random_seed=False, seed=4, drafts_panel=True,
    )  # fmt: skip
    window = MainWindow(settings)
    window.move(0, 0)
    window.resize(1366, 768)
    window.show()
    window.open_path(resources_dir() / "sample.md")

    def wait() -> None:
        run = window.run
        if run is None or run.result is None:
            QTimer.singleShot(50, wait)
            return
        tracked = window.tracked_changes
        tracked.show_action.trigger()
        review = tracked.active()
        if review is not None and len(review.changes) > 1:
            tracked.step(+1)
            tracked.decide(True)
        QTimer.singleShot(400, shoot)

    def shoot() -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["import", "-window", "root", str(out)], check=True)
        keep_small(out)
        review = window.tracked_changes.active()
        print(f"saved {out}: {len(review.changes) if review else 0} changes; {window.statusBar().currentMessage()}")
        window.cancel_rewrite()
        window.editor.document().setModified(False)
        window.close()

    QTimer.singleShot(300, lambda: rewrite_when_ready(window, SENTENCE, wait))
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
