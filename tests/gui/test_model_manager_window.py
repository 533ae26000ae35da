"""The Model Manager dialog against a real hub-compatible server on 127.0.0.1 (tests/hub_stub.py): progress in
the dialog and the status bar, a download that outlives the dialog, Cancel, a resume, a full disk, a gated
model's token, and "Use this model" loading what arrived."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gui_helpers import SIGNAL_TIMEOUT_MS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the hub stub lives there
from hub_stub import TINY_REPO, HubStub, point_hub_at  # noqa: E402

from app.dialogs.model_manager import ModelManagerDialog  # noqa: E402
from app.model_sources.model_downloads import ModelDownloads  # noqa: E402
from app.window.main_window import MainWindow  # noqa: E402

REPO = TINY_REPO
WEIGHTS = "model.safetensors"


@pytest.fixture()
def hub(served: HubStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HubStub:
    return point_hub_at(served, tmp_path, monkeypatch)


def manager(window: MainWindow) -> tuple[ModelManagerDialog, ModelDownloads]:
    dialog = window.show_model_manager()
    return dialog, dialog.downloads


def row_of(dialog: ModelManagerDialog, name: str) -> int:
    return next(i for i, model in enumerate(dialog.models) if model.name == name)


def test_a_download_outlives_the_dialog_then_the_editor_uses_it(
    hub: HubStub, make_window: Callable[..., MainWindow], qtbot: Any
) -> None:
    window = make_window()
    dialog, downloads = manager(window)
    hub.fault, hub.trickle_bytes_per_s = "slow", 150 * 1024
    dialog.repo_field.setText(REPO)
    dialog.download_button.click()
    assert not dialog.download_button.isEnabled() and dialog.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.progress.value() > 0 and "%" in dialog.status.text(), timeout=SIGNAL_TIMEOUT_MS)
    assert "KiB/s" in dialog.status.text() or "B/s" in dialog.status.text()
    dialog.close()  # the download goes on, shown in the status bar
    label = downloads.labels[0]
    qtbot.waitUntil(lambda: "%" in label.text(), timeout=SIGNAL_TIMEOUT_MS)
    hub.fault = None
    with qtbot.waitSignal(downloads.finished, timeout=SIGNAL_TIMEOUT_MS * 4):
        pass
    assert "downloaded" in label.text()

    dialog, _ = manager(window)
    dialog.list.setCurrentRow(row_of(dialog, REPO))
    assert dialog.use_button.isEnabled()
    dialog.use_button.click()
    assert window.prefs.model == REPO and window.settings.load().model == REPO
    qtbot.waitUntil(lambda: window.model_info is not None, timeout=SIGNAL_TIMEOUT_MS * 4)
    assert "(in use)" in dialog.list.item(row_of(dialog, REPO)).text()


def test_cancel_keeps_nothing_selectable_and_download_again_resumes(
    hub: HubStub, make_window: Callable[..., MainWindow], qtbot: Any
) -> None:
    window = make_window()
    dialog, downloads = manager(window)
    hub.fault, hub.trickle_bytes_per_s = "slow", 100 * 1024
    dialog.repo_field.setText(REPO)
    dialog.download_button.click()
    qtbot.waitUntil(lambda: dialog.progress.value() > 100, timeout=SIGNAL_TIMEOUT_MS)
    with qtbot.waitSignal(downloads.failed, timeout=SIGNAL_TIMEOUT_MS) as failed:
        dialog.cancel_button.click()
    assert failed.args[1] == "cancelled" and "resumes" in dialog.status.text()
    qtbot.waitUntil(lambda: not downloads.busy, timeout=SIGNAL_TIMEOUT_MS)
    entry = dialog.models[row_of(dialog, REPO)]
    assert not entry.usable and "not finished" in entry.note
    dialog.list.setCurrentRow(row_of(dialog, REPO))
    assert not dialog.use_button.isEnabled()

    kept = next((Path(hub_cache()) / "models--acme--tiny-diffusion" / "blobs").glob("*.incomplete")).stat().st_size
    hub.reset()
    with qtbot.waitSignal(downloads.finished, timeout=SIGNAL_TIMEOUT_MS * 4):
        dialog.download_button.click()
    assert hub.starts == [(WEIGHTS, kept)]  # picked up where Cancel left it
    assert dialog.models[row_of(dialog, REPO)].usable


def hub_cache() -> str:
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def test_a_gated_model_takes_the_token_from_the_field(
    hub: HubStub, make_window: Callable[..., MainWindow], qtbot: Any
) -> None:
    window = make_window()
    dialog, downloads = manager(window)
    hub.token = "hf_secret"
    dialog.repo_field.setText(REPO)
    with qtbot.waitSignal(downloads.failed, timeout=SIGNAL_TIMEOUT_MS) as failed:
        dialog.download_button.click()
    assert failed.args[1] == "auth" and "token" in dialog.status.text()
    qtbot.waitUntil(lambda: not downloads.busy, timeout=SIGNAL_TIMEOUT_MS)
    dialog.token_field.setText("hf_secret")
    with qtbot.waitSignal(downloads.finished, timeout=SIGNAL_TIMEOUT_MS * 4):
        dialog.download_button.click()


def test_a_full_disk_is_refused_before_the_download_starts(
    hub: HubStub, make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    refused = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                             capture_output=True, text=True)  # fmt: skip
    if refused.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {refused.stderr.strip() or refused.returncode}")
    try:
        from huggingface_hub import constants

        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(mount / "hub"))
        window = make_window()
        dialog, downloads = manager(window)
        dialog.repo_field.setText(REPO)
        with qtbot.waitSignal(downloads.failed, timeout=SIGNAL_TIMEOUT_MS) as failed:
            dialog.download_button.click()
        assert failed.args[1] == "disk" and "Nothing was downloaded" in dialog.status.text()
        assert list(mount.iterdir()) == [] and WEIGHTS not in hub.sent
        qtbot.waitUntil(lambda: not downloads.busy, timeout=SIGNAL_TIMEOUT_MS)
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_settings_opens_the_manager_and_keeps_a_model_chosen_there(
    hub: HubStub, make_window: Callable[..., MainWindow], qtbot: Any
) -> None:
    from app.dialogs.settings import SettingsDialog

    window = make_window()
    assert window.manage_models_action.text() == "&Manage Models…"
    settings = SettingsDialog(window.prefs, window)
    settings.manage_models.click()
    shown = [w for w in window.findChildren(ModelManagerDialog) if w.isVisible()]
    assert shown and shown[0].isModal() and shown[0].parent() is settings
    # "Use this model" in the manager, then it closes: Settings shows that choice, so OK keeps it.
    from dataclasses import replace

    window.apply_preferences(replace(window.prefs, model=REPO, use_server=False))
    shown[0].close()
    qtbot.waitUntil(lambda: settings.model_path.text() == REPO, timeout=SIGNAL_TIMEOUT_MS)
    assert settings.preferences().model == REPO
    settings.close()


def test_a_download_stuck_on_a_silent_hub_outlives_its_window_without_a_crash(hub: HubStub, qtbot: Any) -> None:
    import shiboken6
    from PySide6.QtCore import QObject

    from app.rewrite.outliving import outliving_threads

    owner = QObject()  # the window, which owns the downloads
    downloads = ModelDownloads(owner)
    hub.fault = "stall"
    assert downloads.start(REPO)
    qtbot.waitUntil(lambda: any(r.startswith("GET /api/models/") for r in hub.requests), timeout=SIGNAL_TIMEOUT_MS)
    thread = downloads.worker
    assert not downloads.wait(200)  # cancelled, but inside a request the hub does not answer
    assert outliving_threads() == [thread] and thread.parent() is None
    shiboken6.delete(owner)  # the window goes; before, the running thread went with it and Qt aborted
    hub.fault = None
    qtbot.waitUntil(lambda: not thread.isRunning(), timeout=SIGNAL_TIMEOUT_MS * 4)
    assert outliving_threads() == []


def test_one_download_for_every_window_outlives_the_window_that_started_it(
    hub: HubStub, make_window: Callable[..., MainWindow], qtbot: Any
) -> None:
    import shiboken6
    from PySide6.QtCore import QCoreApplication, QEvent

    first = make_window()
    first_dialog, downloads = manager(first)  # open before the other window starts the download
    second = first.family.new_window()
    second_dialog, theirs = manager(second)
    assert theirs is downloads  # one for the process: a second download of the model could only collide
    hub.fault, hub.trickle_bytes_per_s = "slow", 120 * 1024
    second_dialog.repo_field.setText(REPO)
    second_dialog.download_button.click()
    # The first window's manager shows it and cannot start another; its status bar follows it too.
    assert first_dialog.repo_field.text() == REPO and not first_dialog.download_button.isEnabled()
    assert first_dialog.cancel_button.isEnabled()
    first_label, second_label = downloads.labels
    qtbot.waitUntil(lambda: "%" in first_label.text() and first_label.isVisible(), timeout=SIGNAL_TIMEOUT_MS)
    third = first.family.new_window()  # a window opened meanwhile shows it at once
    assert downloads.labels[-1].text().startswith(REPO) and downloads.labels[-1].isVisibleTo(third)
    third.close()
    second.close()  # the window that started it goes; the download goes on
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert not shiboken6.isValid(second_label) and downloads.labels == [first_label]
    hub.fault = None
    with qtbot.waitSignal(downloads.finished, timeout=SIGNAL_TIMEOUT_MS * 4):
        pass
    assert "downloaded" in first_label.text()
    assert REPO in [model.name for model in first_dialog.models]  # the first window's list has it
