"""Which of the model thread's jobs are cancelled (app/rewrite/worker.py), read by both threads. One model thread
serves every window of the process (app/window/window_family.py), so a job belongs to an owner, its window: a
window's new job cancels its own earlier one, another window's waits its turn; a new model, or the end, cancels
every window's."""

from __future__ import annotations

import threading


class CancelBoard:
    """Which jobs are cancelled; shared by both threads. A job is also cancelled once its owner (a window: one
    model serves every window of the process) asks for a newer one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest = 0
        self._owners: dict[int, int] = {}  # job id: its owner
        self._newest: dict[int, int] = {}  # owner: its newest job
        self._cancelled: set[int] = set()
        self._latest_preparation = 0
        self.closing = threading.Event()  # the window is closing: a load in progress stops at its next stage

    def new_preparation(self) -> int:
        with self._lock:
            self._latest_preparation += 1
            return self._latest_preparation

    def is_stale_preparation(self, ticket: int) -> bool:
        """A newer preparation was asked for: this one's context is no longer where the writer is."""
        with self._lock:
            return ticket != self._latest_preparation

    def new_job(self, owner: int = 0) -> int:
        with self._lock:
            self._latest += 1
            self._owners.pop(self._newest.get(owner, 0), None)  # ended now, or cancelled by this one
            self._owners[self._latest] = owner
            self._newest[owner] = self._latest
            return self._latest

    def cancel(self, job_id: int) -> None:
        with self._lock:
            self._cancelled.add(job_id)

    def cancel_all(self) -> None:
        """Every owner's job cancelled (a new model, or the end)."""
        with self._lock:
            self._cancelled.update(self._newest.values())

    def is_cancelled(self, job_id: int) -> bool:
        with self._lock:
            owner = self._owners.get(job_id)
            return job_id in self._cancelled or owner is None or self._newest.get(owner) != job_id
