"""The model manager (``redraft model``, model/checkpoint/hub.py and manager.py) against a real hub-compatible
HTTP server on 127.0.0.1 (tests/hub_stub.py) serving a tiny random DiffusionGemma, with faults on demand."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hub_stub import TINY_REPO, HubStub, point_hub_at

from model.checkpoint import hub_transfer
from model.checkpoint.folders import resolve_folder
from model.checkpoint.hub import DownloadCancelled, DownloadError, Progress, plan_download
from model.checkpoint.hub_transfer import download
from model.checkpoint.manager import COPY_MARKER, list_installed, remove_model
from model.errors import ModelLoadError

ROOT = Path(__file__).resolve().parents[1]
REPO = TINY_REPO
WEIGHTS = "model.safetensors"


@pytest.fixture()
def hub(served: HubStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HubStub:
    """The stub, reset, with this process's huggingface_hub pointed at it and at a fresh cache."""
    point_hub_at(served, tmp_path, monkeypatch)
    monkeypatch.setattr(hub_transfer, "RETRY_WAIT_S", 0.01)
    return served


def weights_size(hub: HubStub) -> int:
    return len(hub.repos[REPO].files[WEIGHTS].data)


def cli_env(hub: HubStub, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(
        OMP_NUM_THREADS="1", HF_ENDPOINT=hub.url, HF_HOME=str(home / "hf"), REDRAFT_HOME=str(home / "redraft"),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring", **extra,
    )  # fmt: skip
    return env


def redraft(*args: str, env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT
    )


def test_download_on_the_command_line_then_found_offline_listed_and_removed(hub: HubStub, tmp_path: Path) -> None:
    env = cli_env(hub, tmp_path)
    done = redraft("model", "download", REPO, env=env)
    assert done.returncode == 0, done.stderr
    assert "6 files" in done.stdout and "licence: apache-2.0" in done.stdout  # the plan, before the bytes
    assert "free on the disk" in done.stdout
    assert "sha256 of 1 LFS file" in done.stdout
    assert "(100%)" in done.stderr  # progress, on stderr
    assert hub.sent[WEIGHTS] == weights_size(hub)

    offline = {**env, "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}  # no hub at all
    document = tmp_path / "draft.txt"
    document.write_text("The keeper climbed the stairs. She wrote the letter twice.", encoding="utf-8")
    fill = redraft("fill", str(document), "--at", "31", "--model", REPO, "--quiet", "--steps", "2",
                   "--max-new-tokens", "4", "--seed", "1", env=offline)  # fmt: skip
    assert fill.returncode == 0, fill.stderr
    assert fill.stdout.startswith("The keeper climbed the stairs.")

    again = redraft("model", "download", REPO, env=offline)
    assert again.returncode == 0 and "already installed" in again.stdout, again.stderr

    copy = tmp_path / "redraft" / "models" / "acme--tiny-diffusion-4bit"
    copy.mkdir(parents=True)
    (copy / COPY_MARKER).write_text(f'{{"copy_of": "{REPO}", "precision": "4bit"}}')
    (copy / "config.json").write_text("{}")
    listed = redraft("model", "list", env=offline)
    assert listed.returncode == 0, listed.stderr
    line = next(row for row in listed.stdout.splitlines() if row.startswith(REPO))
    assert "699.6 KiB" in line and "fp32" in line and "hub cache" in line and "snapshots" in line
    assert "builtin" in listed.stdout

    removed = redraft("model", "remove", REPO, env=offline)
    assert removed.returncode == 0, removed.stderr
    assert "models--acme--tiny-diffusion" in removed.stdout and "tiny-diffusion-4bit" in removed.stdout
    assert not copy.exists() and not (tmp_path / "hf" / "hub" / "models--acme--tiny-diffusion").exists()
    gone = redraft("model", "remove", REPO, env=offline)
    assert gone.returncode == 1 and "no installed model is called" in gone.stderr and "Traceback" not in gone.stderr


def test_a_killed_download_resumes_and_fetches_only_the_rest(hub: HubStub, tmp_path: Path) -> None:
    env = cli_env(hub, tmp_path)
    hub.fault, hub.trickle_bytes_per_s = "slow", 40 * 1024
    blobs = tmp_path / "hf" / "hub" / "models--acme--tiny-diffusion" / "blobs"
    process = subprocess.Popen([sys.executable, "-m", "app.cli", "model", "download", REPO], env=env, cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            parts = list(blobs.glob("*.incomplete")) if blobs.is_dir() else []
            if parts and parts[0].stat().st_size > 150_000:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the download never got going")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    (part,) = blobs.glob("*.incomplete")
    kept = part.stat().st_size
    assert 150_000 < kept < weights_size(hub)
    first_try = hub.sent[WEIGHTS]
    hub.reset()
    done = redraft("model", "download", REPO, env=env)
    assert done.returncode == 0, done.stderr
    assert "already here" in done.stdout  # the plan says what the resume will not fetch again
    assert hub.starts == [(WEIGHTS, kept)]  # one Range request from where the killed one stopped
    assert hub.sent == {WEIGHTS: weights_size(hub) - kept}  # only the rest, and nothing else again
    assert first_try + hub.sent[WEIGHTS] >= weights_size(hub)
    assert not list(blobs.glob("*.incomplete"))


def test_a_dropped_connection_resumes_within_the_download(hub: HubStub) -> None:
    hub.fault, hub.drops = "drop", 1
    folder = download(plan_download(REPO))
    assert hub.sent[WEIGHTS] == weights_size(hub)  # half, then the other half: no byte twice
    assert (folder / WEIGHTS).read_bytes() == hub.repos[REPO].files[WEIGHTS].data


def test_a_lost_network_is_one_message_keeps_the_part_and_offers_nothing(hub: HubStub) -> None:
    plan = plan_download(REPO)
    hub.fault, hub.drops, hub.after_drops = "drop", 1, "reset"  # half the weights, then no network at all
    with pytest.raises(DownloadError) as caught:
        download(plan)
    assert caught.value.kind == "network" and "could not reach" in str(caught.value) and "resumes" in str(caught.value)
    kept = plan.present()
    assert 0 < kept < plan.total
    with pytest.raises(ModelLoadError):
        resolve_folder(REPO)  # nothing half-downloaded is offered
    (entry,) = [m for m in list_installed(include_builtin=False)[0] if m.name == REPO]
    assert not entry.usable and "download not finished" in entry.note

    hub.fault = None
    hub.sent.clear()
    download(plan_download(REPO))
    assert sum(hub.sent.values()) == plan.total - kept
    assert resolve_folder(REPO) == plan.storage / "snapshots" / plan.commit


@pytest.mark.parametrize(
    ("fault", "kind", "words"),
    [
        ("401", "auth", "needs a Hugging Face token"),
        ("403", "forbidden", "accept its terms"),
        ("404", "not_found", "there is no model"),
        ("500", "server", "answered with an error of its own (500)"),
    ],
)
def test_each_hub_refusal_is_one_message(hub: HubStub, fault: str, kind: str, words: str) -> None:
    hub.fault = fault
    with pytest.raises(DownloadError) as caught:
        plan_download(REPO)
    assert caught.value.kind == kind and words in str(caught.value)
    assert "Traceback" not in str(caught.value) and len(str(caught.value)) < 400


def test_a_gated_repository_needs_the_right_token(hub: HubStub) -> None:
    hub.token = "hf_right"
    with pytest.raises(DownloadError) as no_token:
        plan_download(REPO)
    assert no_token.value.kind == "auth"
    with pytest.raises(DownloadError) as wrong:
        plan_download(REPO, token="hf_wrong")
    assert wrong.value.kind == "forbidden"
    folder = download(plan_download(REPO, token="hf_right"), token="hf_right")
    assert (folder / WEIGHTS).is_file()


def test_a_server_error_midway_keeps_the_part_and_installs_nothing(hub: HubStub) -> None:
    plan = plan_download(REPO)
    hub.fault = "500"
    with pytest.raises(DownloadError) as caught:
        download(plan)
    assert caught.value.kind == "server"
    assert not (plan.storage / "refs").exists() and not (plan.storage / "snapshots").exists()


def test_a_checksum_mismatch_is_refused(hub: HubStub) -> None:
    plan = plan_download(REPO)
    hub.fault = "corrupt"
    with pytest.raises(DownloadError) as caught:
        download(plan)
    assert caught.value.kind == "checksum" and "sha256" in str(caught.value)
    assert not list((plan.storage / "blobs").glob("*.incomplete"))  # damaged bytes are not resumed
    assert not (plan.storage / "snapshots").exists()
    with pytest.raises(ModelLoadError):
        resolve_folder(REPO)


def test_cancel_keeps_the_part_and_leaves_nothing_selectable(hub: HubStub) -> None:
    hub.fault, hub.trickle_bytes_per_s = "slow", 200 * 1024
    plan = plan_download(REPO)
    cancel = threading.Event()

    def cancel_midway(progress: Progress) -> None:
        if progress.file == WEIGHTS and progress.done > 100_000:
            cancel.set()

    with pytest.raises(DownloadCancelled):
        download(plan, progress=cancel_midway, cancel=cancel)
    assert 0 < plan.present() < plan.total
    assert not any(m.usable for m in list_installed(include_builtin=False)[0])
    with pytest.raises(ModelLoadError):
        resolve_folder(REPO)


def test_not_a_diffusion_gemma_is_refused_before_its_weights(hub: HubStub) -> None:
    hub.repos["acme/llama"] = hub.repos[REPO].__class__(dict(hub.repos[REPO].files), "a" * 40, model_type="llama")
    try:
        with pytest.raises(DownloadError) as caught:
            plan_download("acme/llama")  # the hub's metadata says so: nothing is fetched
        assert caught.value.kind == "invalid" and "llama" in str(caught.value)
        assert not hub.sent
    finally:
        del hub.repos["acme/llama"]


def test_a_full_disk_is_refused_before_any_byte(hub: HubStub, tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    refused = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                             capture_output=True, text=True)  # fmt: skip
    if refused.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {refused.stderr.strip() or refused.returncode}")
    try:
        env = cli_env(hub, tmp_path, HF_HUB_CACHE=str(mount / "hub"))
        done = redraft("model", "download", REPO, env=env)
        assert done.returncode == 1
        assert "needs 699.6 KiB more" in done.stderr and "Nothing was downloaded" in done.stderr
        assert "Traceback" not in done.stderr
        assert list(mount.iterdir()) == [] and WEIGHTS not in hub.sent
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_disk_that_fills_up_midway_is_one_message(hub: HubStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    ) -> None:  # fmt: skip
    mount = tmp_path / "small"
    mount.mkdir()
    refused = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                             capture_output=True, text=True)  # fmt: skip
    if refused.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {refused.stderr.strip() or refused.returncode}")
    try:
        from huggingface_hub import constants

        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(mount / "hub"))
        plan = plan_download(REPO)
        filler = mount / "someone-else.bin"

        def another_program_writes(progress: Progress) -> None:
            if not filler.exists():  # after the first file: the rest no longer fits
                with filler.open("wb") as sink, pytest.raises(OSError):
                    sink.write(b"\0" * (2 << 20))  # takes what is left of the disk

        with pytest.raises(DownloadError) as caught:
            download(plan, progress=another_program_writes)
        assert caught.value.kind == "disk" and "filled up" in str(caught.value)
        assert not (plan.storage / "refs").exists()
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_model_another_tool_downloaded_is_found_and_not_fetched_again(hub: HubStub) -> None:
    from huggingface_hub import constants

    # Another program on the same cache (huggingface_hub reads HF_ENDPOINT when it is imported: a process of its own).
    other = subprocess.run(
        [sys.executable, "-c", f"from huggingface_hub import snapshot_download; snapshot_download({REPO!r})"],
        env={**cli_env(hub, Path(constants.HF_HUB_CACHE)), "HF_HUB_CACHE": constants.HF_HUB_CACHE},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert other.returncode == 0, other.stderr
    (entry,) = [m for m in list_installed(include_builtin=False)[0] if m.name == REPO]
    assert entry.usable and entry.precision == "fp32"
    hub.sent.clear()
    download(plan_download(REPO))
    assert hub.sent == {}


def test_remove_refuses_the_builtin_model_and_folders_it_does_not_own(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="built-in"):
        remove_model("builtin", cache_dir=tmp_path, models_dir=tmp_path / "models")
    mine = tmp_path / "elsewhere"
    mine.mkdir()
    with pytest.raises(ModelLoadError, match="never a folder of yours"):
        remove_model(str(mine), cache_dir=tmp_path, models_dir=tmp_path / "models")
    assert mine.is_dir()
    shutil.rmtree(mine)
