"""A writer at the keyboard, for test_kill_recovery.py: the real editor, typing, then killed by the test.

    python tests/gui/kill_driver.py OUT_FOLDER ITERATION MODEL [rewrite]

Starts Redraft through its real entry (app.gui.run_editor: recovery area, autosave, recovery offer).
If a previous instance died with unsaved work, the recovery dialog appears: the driver recovers it and
writes what the window then holds to OUT/recovered-ITERATION.txt. Then it starts a new document and
types TEXT one character every few milliseconds, logging "index monotonic-time" to
OUT/typed-ITERATION.log after each one; with "rewrite", it first puts in a sentence and rewrites it,
slowly, so that kills land while the span develops. The test kills it with SIGKILL at a random moment.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtGui import QTextCursor  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.dialogs.recovery import RecoveryDialog  # noqa: E402
from app.gui import run_editor  # noqa: E402
from app.settings import SettingsStore  # noqa: E402
from app.window.main_window import MainWindow  # noqa: E402

SENTENCE = "The lighthouse keeper climbed the stairs every evening."
TEXT = (
    "She wrote the letter twice, then tore up both copies and walked to the harbour instead. "
    "Rain fell on the market square; the stalls folded their awnings and the pigeons took cover. "
) * 20
TYPE_EVERY_MS = 4
DIALOG_WAIT_S = 1.5


def main() -> None:
    out, iteration, model = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rewrite = sys.argv[4:] == ["rewrite"]
    app = QApplication(sys.argv)
    SettingsStore().update(model=model, device="cpu", max_denoising_steps=40, pass_display_ms=150,
                           random_seed=False, seed=iteration, candidates=1)  # fmt: skip
    log = open(out / f"typed-{iteration}.log", "w", buffering=1)  # noqa: SIM115  line by line, to the kill
    started = time.monotonic()
    state = {"typed": 0, "base": 0}

    def window() -> MainWindow | None:
        return next((w for w in app.topLevelWidgets() if isinstance(w, MainWindow)), None)

    def recover() -> None:
        dialog = next((w for w in app.topLevelWidgets() if isinstance(w, RecoveryDialog) and w.isVisible()), None)
        main_window = window()
        if dialog is None and time.monotonic() - started < DIALOG_WAIT_S or main_window is None:
            QTimer.singleShot(20, recover)
            return
        if dialog is not None:
            dialog.recover_button.click()
            (out / f"recovered-{iteration}.txt").write_text(main_window.editor.plain_text(), encoding="utf-8")
        main_window.editor.document().setModified(False)  # recorded above; no "save changes?" question
        main_window.new_document()
        log.write(f"start {time.monotonic()}\n")
        if rewrite:
            main_window.editor.insertPlainText(SENTENCE + " ")
            state["base"] = len(SENTENCE) + 1
            log.write(f"base {time.monotonic()}\n")
            QTimer.singleShot(0, lambda: start_rewrite(main_window))
        type_next()

    def start_rewrite(main_window: MainWindow) -> None:
        if main_window.model_info is None:
            QTimer.singleShot(20, lambda: start_rewrite(main_window))
            return
        cursor = main_window.editor.textCursor()
        cursor.setPosition(0)
        cursor.setPosition(len(SENTENCE), QTextCursor.MoveMode.KeepAnchor)
        main_window.editor.setTextCursor(cursor)
        main_window.rewrite_selection()
        log.write(f"rewrite {time.monotonic()}\n")

    def type_next() -> None:
        main_window = window()
        assert main_window is not None
        index = state["typed"]
        if index < len(TEXT):
            cursor = main_window.editor.textCursor()
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(TEXT[index])
            state["typed"] = index + 1
            log.write(f"{index + 1} {time.monotonic()}\n")
        QTimer.singleShot(TYPE_EVERY_MS, type_next)

    QTimer.singleShot(0, recover)
    run_editor(model_spec=model)


if __name__ == "__main__":
    main()
