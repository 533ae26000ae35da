"""For test_drafts.py: the real editor rewrites a span twice, keeps the second draft, waits until the
recovery record holds the versions, writes OUT/ready.txt, and waits to be killed.

    python tests/gui/versions_kill_driver.py OUT MODEL

ready.txt holds, NUL-separated, the document's text and then each version of the span, oldest first.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtGui import QTextCursor  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.documents.recovery import RECORD_SUFFIX  # noqa: E402
from app.gui import run_editor  # noqa: E402
from app.settings import SettingsStore  # noqa: E402
from app.window.main_window import MainWindow  # noqa: E402

TEXT = "The lighthouse keeper climbed the stairs every evening.\n"
SPAN = "climbed the stairs"


def main() -> None:
    out, model = Path(sys.argv[1]), sys.argv[2]
    app = QApplication(sys.argv)
    SettingsStore().update(model=model, device="cpu", max_denoising_steps=6, pass_display_ms=0,
                           random_seed=False, seed=3, candidates=2)  # fmt: skip
    state = {"tries": 0}

    def window() -> MainWindow | None:
        return next((w for w in app.topLevelWidgets() if isinstance(w, MainWindow)), None)

    def begin() -> None:
        main_window = window()
        if main_window is None or main_window.model_info is None:
            QTimer.singleShot(20, begin)
            return
        main_window.editor.setPlainText(TEXT)
        cursor = main_window.editor.textCursor()
        cursor.setPosition(TEXT.index(SPAN))
        cursor.setPosition(TEXT.index(SPAN) + len(SPAN), QTextCursor.MoveMode.KeepAnchor)
        main_window.editor.setTextCursor(cursor)
        main_window.rewrite_selection()
        QTimer.singleShot(20, lambda: step(main_window))

    def step(main_window: MainWindow) -> None:
        run = main_window.run
        if run is not None and run.result is not None:
            if state["tries"] == 0:
                state["tries"] = 1
                main_window.regenerate()
            else:
                main_window.accept_rewrite()
                QTimer.singleShot(20, lambda: recorded(main_window))
                return
        QTimer.singleShot(20, lambda: step(main_window))

    def recorded(main_window: MainWindow) -> None:
        autosaver = main_window.autosaver  # type: ignore[attr-defined]
        autosaver.write_now()
        autosaver.flush()
        folder = autosaver.area.folder
        if folder is None or not any(folder.glob(f"*{RECORD_SUFFIX}")):
            QTimer.singleShot(50, lambda: recorded(main_window))
            return
        track = main_window.versions.tracks[0]
        texts = [main_window.editor.plain_text(), *(version.text for version in track.versions)]
        (out / "ready.tmp").write_text("\0".join(texts), encoding="utf-8")
        (out / "ready.tmp").replace(out / "ready.txt")

    QTimer.singleShot(0, begin)
    run_editor(model_spec=model)


if __name__ == "__main__":
    main()
