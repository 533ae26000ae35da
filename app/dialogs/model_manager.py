"""Model ▸ Manage Models…: the installed models, a download from the hub with progress and Cancel, Remove,
and "Use this model". The download itself belongs to the window's :class:`ModelDownloads`, so closing the
dialog does not stop it; reopening shows it again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.model_sources import hub_token
from app.model_sources.model_downloads import ModelDownloads
from app.userdirs import user_dirs
from model.checkpoint.hub import format_bytes, hub_endpoint
from model.checkpoint.manager import InstalledModel, list_installed, remove_model
from model.errors import RedraftError

NAME_ROLE = Qt.ItemDataRole.UserRole


class ModelManagerDialog(QDialog):
    def __init__(self, downloads: ModelDownloads, use_model: Callable[[str], None], current: str = "",
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.setWindowTitle("Manage Models")
        self.downloads = downloads
        self.use_model = use_model
        self.current = current
        self.models: list[InstalledModel] = []
        # Asked before a model's files are deleted; replaceable where no one can click (tests).
        self.confirm_remove: Callable[[str], bool] = self._ask_remove

        self.list = QListWidget()
        self.list.setAccessibleName("Models")
        self.list.currentRowChanged.connect(lambda _row: self._update_buttons())
        self.use_button = QPushButton("&Use this model")
        self.use_button.clicked.connect(self._use)
        self.remove_button = QPushButton("&Remove…")
        self.remove_button.clicked.connect(self._remove)
        chosen = QHBoxLayout()
        chosen.addStretch(1)
        chosen.addWidget(self.remove_button)
        chosen.addWidget(self.use_button)

        self.repo_field = QLineEdit()
        self.repo_field.setPlaceholderText("owner/name, e.g. google/diffusiongemma-26B-A4B-it")
        self.repo_field.textChanged.connect(lambda _text: self._update_buttons())
        self.revision_field = QLineEdit()
        self.revision_field.setPlaceholderText("main")
        self.token_field = QLineEdit()
        self.token_field.setEchoMode(QLineEdit.EchoMode.Password)
        kept = hub_token.library_token() or hub_token.load_token(hub_endpoint())
        self.token_field.setPlaceholderText("a token is already set" if kept else "only for gated or private models")
        form = QFormLayout()
        form.addRow("Hub model id:", self.repo_field)
        form.addRow("Revision:", self.revision_field)
        form.addRow("Hugging Face token:", self.token_field)
        storage = QLabel(hub_token.describe_storage())
        storage.setWordWrap(True)
        form.addRow("", storage)

        self.download_button = QPushButton("&Download")
        self.download_button.clicked.connect(self._download)
        self.cancel_button = QPushButton("&Cancel download")
        self.cancel_button.clicked.connect(self.downloads.cancel)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions = QHBoxLayout()
        actions.addWidget(self.progress, 1)
        actions.addWidget(self.cancel_button)
        actions.addWidget(self.download_button)

        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Installed models (the built-in one, the Hugging Face cache, Redraft's folder):"))
        layout.addWidget(self.list, 1)
        layout.addLayout(chosen)
        layout.addLayout(form)
        layout.addLayout(actions)
        layout.addWidget(self.status)
        self.resize(760, 520)

        downloads.planned.connect(self._on_planned)
        downloads.progressed.connect(self._on_progress)
        downloads.finished.connect(self._on_finished)
        downloads.failed.connect(self._on_failed)
        downloads.idle.connect(self._update_buttons)
        downloads.started.connect(self._on_started)  # from another window's manager too
        if downloads.busy:
            self.repo_field.setText(downloads.repo_id)
            self.status.setText(f"Downloading {downloads.repo_id}…")
        self.refresh()

    # -- the list --------------------------------------------------------------------------------

    def refresh(self, select: str = "") -> None:
        self.models, others = list_installed(models_dir=user_dirs().models)
        self.list.clear()
        for model in self.models:
            text = f"{model.name} — {format_bytes(model.size)}, {model.precision}, {model.where}"
            if model.name == self.current or (model.name == "builtin" and self.current in ("", "builtin")):
                text += "  (in use)"
            if model.note:
                text += f"\n    {model.note}"
            item = QListWidgetItem(text)
            item.setData(NAME_ROLE, model.name)
            item.setToolTip(str(model.path))
            self.list.addItem(item)
            if model.name == select:
                self.list.setCurrentItem(item)
        if others:
            self.list.addItem(QListWidgetItem(f"({others} other models in the hub cache are not DiffusionGemma)"))
        self._update_buttons()

    def selected(self) -> InstalledModel | None:
        row = self.list.currentRow()
        return self.models[row] if 0 <= row < len(self.models) else None

    def _update_buttons(self) -> None:
        chosen = self.selected()
        busy = self.downloads.busy
        self.use_button.setEnabled(chosen is not None and chosen.usable)
        self.remove_button.setEnabled(chosen is not None and chosen.name != "builtin")
        self.download_button.setEnabled(not busy and bool(self.repo_field.text().strip()))
        self.cancel_button.setEnabled(busy)

    def _use(self) -> None:
        chosen = self.selected()
        if chosen is None or not chosen.usable:
            return
        self.current = chosen.name
        self.use_model(chosen.name)
        self.status.setText(f"Redraft now uses {chosen.name}.")
        self.refresh(select=chosen.name)

    def _ask_remove(self, name: str) -> bool:
        answer = QMessageBox.question(self, "Remove model", f"Delete {name} and its files from this computer?")
        return answer == QMessageBox.StandardButton.Yes

    def _remove(self) -> None:
        chosen = self.selected()
        if chosen is None or not self.confirm_remove(chosen.name):
            return
        if self.downloads.busy and self.downloads.repo_id == chosen.name:
            self.status.setText(f"{chosen.name} is downloading; cancel the download first.")
            return
        try:
            removed = remove_model(chosen.name, models_dir=user_dirs().models)
        except RedraftError as error:
            self.status.setText(str(error))
            return
        freed = sum(size for _folder, size in removed)
        self.status.setText(f"Removed {chosen.name} ({format_bytes(freed)} freed).")
        if chosen.name == self.current:
            self.current = "builtin"
            self.use_model("builtin")  # the editor must not keep pointing at deleted files
        self.refresh()

    # -- the download ----------------------------------------------------------------------------

    def _download(self) -> None:
        repo_id = self.repo_field.text().strip()
        token = self.token_field.text().strip()
        if token:
            hub_token.save_token(hub_endpoint(), token)
        else:
            token = hub_token.token_for(hub_endpoint()) or ""
        self.downloads.start(repo_id, self.revision_field.text().strip() or None, token or None)  # _on_started

    def _on_started(self, repo_id: str) -> None:
        self.repo_field.setText(repo_id)
        self.progress.setValue(0)
        self.status.setText(f"Asking the hub about {repo_id}…")
        self._update_buttons()

    def _on_planned(self, description: str) -> None:
        self.status.setText(description)

    def _on_progress(self, text: str, share: int) -> None:
        self.progress.setValue(share)
        self.status.setText(text)

    def _on_finished(self, repo_id: str, _folder: str) -> None:
        self.progress.setValue(1000)
        self.status.setText(f"{repo_id} is downloaded and checked; choose it and press Use this model.")
        self.refresh(select=repo_id)

    def _on_failed(self, message: str, _kind: str) -> None:
        self.status.setText(message)
        self.refresh()


@dataclass(frozen=True)
class ModelManagerWiring:
    """What the window keeps of the model manager: the downloads (one at a time, outliving the dialog),
    Model ▸ Manage Models…, and the way to show the dialog (from Settings too)."""

    downloads: ModelDownloads
    action: QAction
    show: Callable[..., ModelManagerDialog]


def install_model_manager(
    window: QMainWindow, current_model: Callable[[], str], use_model: Callable[[str], None],
    shared: ModelDownloads | None = None,
) -> ModelManagerWiring:
    """Wire the model manager into ``window``: the downloads object (``shared``: its family's) and its
    status-bar label, and Model ▸ Manage Models… before Help. ``current_model`` names the model in use;
    ``use_model`` switches to one. Called once from MainWindow.__init__."""
    downloads = shared if shared is not None else ModelDownloads(window)
    downloads.attach(window.statusBar())
    dialogs: list[ModelManagerDialog] = []

    def show(parent: QWidget | None = None) -> ModelManagerDialog:
        if parent is not None:  # from a modal dialog (Settings): a modal manager of its own, on top of it
            modal = ModelManagerDialog(downloads, use_model, current_model(), parent)
            modal.setModal(True)
            modal.show()
            return modal
        if dialogs:
            dialogs[0].refresh()
        else:
            dialogs.append(ModelManagerDialog(downloads, use_model, current_model(), window))
        dialogs[0].current = current_model()
        dialogs[0].show()
        dialogs[0].raise_()
        return dialogs[0]

    action = QAction("&Manage Models…", window)
    action.triggered.connect(lambda _checked=False: show())
    bar = window.menuBar()
    help_menu = next((a for a in bar.actions() if a.text() == "&Help"), None)
    if help_menu is None:
        menu = bar.addMenu("&Model")
    else:  # before Help, where menus of things end
        menu = QMenu("&Model", window)
        bar.insertMenu(help_menu, menu)
    menu.addAction(action)
    # A QThread destroyed while it runs aborts the process: the download is cancelled and waited for first, as
    # the window that holds it goes (the family's first, which stays, hidden, while another window is open).
    if shared is None:
        window.destroyed.connect(lambda *_: downloads.wait(5000))
    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(lambda: downloads.wait(5000))
    return ModelManagerWiring(downloads, action, show)
