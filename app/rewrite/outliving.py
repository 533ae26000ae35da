"""Threads still busy after their window closed, and leaving the process without crashing on them.

A load inside transformers cannot be interrupted (a large model's takes minutes), nor can a download's
request to a hub that stopped answering, and Qt aborts the whole process when a running QThread is
destroyed: a writer who closed Redraft during a load got a crash on the way out. A thread that did not stop
in time is handed here, which keeps it (and what it runs) alive, and the editor's exit ends the process at
once instead of destroying it.
"""

from __future__ import annotations

import logging
import os
import sys

from PySide6.QtCore import QObject, QThread

log = logging.getLogger(__name__)

_outliving: list[tuple[QThread, tuple[QObject, ...]]] = []


def keep_until_exit(thread: QThread, *running: QObject) -> None:
    """Keep a thread that is still running (and the objects it runs) alive until the process ends. A thread
    with a Qt parent is taken from it: the parent, going with its window, would destroy it."""
    thread.setParent(None)
    _outliving.append((thread, running))


def outliving_threads() -> list[QThread]:
    """The threads handed over here that are still running."""
    return [thread for thread, _ in _outliving if thread.isRunning()]


def end_process_if_outlived(status: int) -> None:
    """End the process now, with ``status``, if a thread is still busy after its window closed.

    Everything the editor keeps is written by then (the document was saved or let go, the recovery records
    flushed at aboutToQuit); only Python's own teardown, which would destroy the running thread, is skipped."""
    if outliving_threads():
        log.info("leaving while a thread is still busy (a model load or a download)")
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
