"""Model threads still busy after their window closed, and leaving the process without crashing on them.

A load inside transformers cannot be interrupted (a large model's takes minutes), and Qt aborts the whole
process when a running QThread is destroyed: a writer who closed Redraft during a load got a crash on the
way out. A service whose thread did not stop in time hands it here, which keeps it and its worker alive,
and the editor's exit ends the process at once instead of destroying them.
"""

from __future__ import annotations

import logging
import os
import sys

from PySide6.QtCore import QObject, QThread

log = logging.getLogger(__name__)

_outliving: list[tuple[QThread, QObject]] = []


def keep_until_exit(thread: QThread, worker: QObject) -> None:
    """Keep a model thread that is still running (and the worker it runs) alive until the process ends."""
    _outliving.append((thread, worker))


def outliving_threads() -> list[QThread]:
    """The model threads handed over here that are still running."""
    return [thread for thread, _ in _outliving if thread.isRunning()]


def model_threads_outliving() -> bool:
    return bool(outliving_threads())


def end_process_if_outlived(status: int) -> None:
    """End the process now, with ``status``, if a model thread is still busy after its window closed.

    Everything the editor keeps is written by then (the document was saved or let go, the recovery records
    flushed at aboutToQuit); only Python's own teardown, which would destroy the running thread, is skipped."""
    if model_threads_outliving():
        log.info("leaving while the model thread is still busy (a load)")
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
