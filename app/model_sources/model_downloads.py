"""A model download off the GUI thread, owned by the first window so it outlives the Model Manager dialog.

One download at a time for the whole process, in a QThread; its progress, end and failure cross to the GUI
thread as queued signals, and a label in every window's status bar shows it while the dialog is closed. The
windows of one family share it (app.window.window_family): the model a download in one brings is the others'
too, a second download of it from another window could only collide with the first, and the window that started
it may close while it goes on. Cancel sets an event the download checks between chunks; what arrived is kept, so
downloading the same model again resumes it.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QThread, Signal
from PySide6.QtWidgets import QLabel, QStatusBar

from app.rewrite.outliving import keep_until_exit
from model.checkpoint.hub import DownloadError, Progress, check_space, plan_download, quiet_hub
from model.checkpoint.hub_transfer import download


class _DownloadThread(QThread):
    planned = Signal(str)
    progressed = Signal(str, int)  # the words, and the share done in thousandths
    done = Signal(str, str)  # repo id, snapshot folder
    failed = Signal(str, str)  # message, kind

    def __init__(self, repo_id: str, revision: str | None, token: str | None, parent: QObject) -> None:
        super().__init__(parent)
        self.repo_id, self.revision, self.token = repo_id, revision, token
        self.cancel = threading.Event()

    def run(self) -> None:
        try:
            with quiet_hub():
                plan = plan_download(self.repo_id, self.revision, self.token)
                self.planned.emit(plan.describe())
                check_space(plan)
                folder = download(plan, self.token, progress=self._progress, cancel=self.cancel)
            self.done.emit(plan.repo_id, str(folder))
        except DownloadError as error:
            self.failed.emit(str(error), error.kind)
        except Exception as error:  # a bug of ours must end the download in words, not kill the thread silently
            self.failed.emit(f"the download failed inside Redraft ({type(error).__name__}: {error})", "bug")

    def _progress(self, progress: Progress) -> None:
        share = int(1000 * progress.done / progress.total) if progress.total else 0
        self.progressed.emit(progress.describe(), share)


class ModelDownloads(QObject):
    """The app's one running download; ``start`` refuses a second while one runs."""

    started = Signal(str)
    planned = Signal(str)
    progressed = Signal(str, int)
    finished = Signal(str, str)
    failed = Signal(str, str)
    idle = Signal()  # the thread has ended (after finished or failed)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.worker: _DownloadThread | None = None
        self.repo_id = ""
        self.labels: list[QLabel] = []  # one in each window's status bar
        self.shown = ""

    @property
    def busy(self) -> bool:
        return self.worker is not None

    def start(self, repo_id: str, revision: str | None = None, token: str | None = None) -> bool:
        if self.worker is not None:
            return False
        self.repo_id = repo_id.strip()
        thread = _DownloadThread(self.repo_id, revision or None, token or None, self)
        thread.planned.connect(self.planned)
        thread.progressed.connect(self._on_progress)
        thread.done.connect(self._on_done)
        thread.failed.connect(self._on_failed)
        thread.finished.connect(self._on_thread_end)
        self.worker = thread
        thread.start()
        self.started.emit(self.repo_id)
        self._show(f"Downloading {self.repo_id}…")
        return True

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel.set()

    def wait(self, ms: int = 10_000) -> bool:
        """For shutdown: cancel and wait for the thread (the part downloaded stays for a resume). One still
        inside a request to a hub that stopped answering outlives its window (app.rewrite.outliving)."""
        if self.worker is None:
            return True
        self.worker.cancel.set()
        if self.worker.wait(ms):
            return True
        keep_until_exit(self.worker)
        return False

    def attach(self, status_bar: QStatusBar) -> QLabel:
        """Show the download in ``status_bar`` too, so it stays visible with the dialog closed: a window opened
        while it runs shows it at once."""
        label = QLabel(self.shown if self.busy else "")
        label.setContentsMargins(6, 0, 6, 0)
        label.setVisible(bool(label.text()))
        status_bar.addPermanentWidget(label)
        self.labels.append(label)
        label.destroyed.connect(lambda *_: self.labels.remove(label))  # its window closed
        return label

    def _show(self, text: str) -> None:
        self.shown = text
        for label in self.labels:
            label.setText(text)
            label.setVisible(bool(text))

    def _on_progress(self, text: str, share: int) -> None:
        self._show(f"{self.repo_id}: {text}")
        self.progressed.emit(text, share)

    def _on_done(self, repo_id: str, folder: str) -> None:
        self._show(f"{repo_id} downloaded")
        self.finished.emit(repo_id, folder)

    def _on_failed(self, message: str, kind: str) -> None:
        self._show(f"{self.repo_id}: download stopped" if kind == "cancelled" else f"{self.repo_id}: download failed")
        self.failed.emit(message, kind)

    def _on_thread_end(self) -> None:
        thread, self.worker = self.worker, None
        if thread is not None:
            thread.deleteLater()
        self.idle.emit()
