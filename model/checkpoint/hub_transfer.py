"""The download itself: what :func:`model.checkpoint.hub.plan_download` listed is fetched into the hub cache's
``blobs/<hash>.incomplete`` under a stable name, continued with a Range request after a drop or a kill,
checked (size, sha256 or git blob id), and published as a snapshot only once the whole checkpoint validates
(:func:`model.checkpoint.manager.validate_checkpoint`), the ref written last.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.checkpoint.hub import (
    LOCK_NAME,
    DownloadCancelled,
    DownloadError,
    DownloadPlan,
    Progress,
    RemoteFile,
    check_space,
    describe_error,
    file_size,
)
from model.checkpoint.manager import validate_checkpoint
from model.errors import ModelLoadError

CHUNK_BYTES = 1 << 20
# A dropped connection is retried this many times in a row (each retry that brings bytes resets the count),
# waiting RETRY_WAIT_S more each time: a network that is gone is said within about half a minute.
MAX_RETRIES = 4
RETRY_WAIT_S = 1.0
PROGRESS_EVERY_S = 0.2
SPEED_WINDOW_S = 5.0
STAGING = ".redraft-staging"


@dataclass
class _Meter:
    """Turns byte counts into throttled Progress reports with a speed over a sliding window."""

    total: int
    done: int
    report: Callable[[Progress], None] | None
    file: str = ""
    samples: list[tuple[float, int]] = field(default_factory=list)
    last: float = 0.0

    def add(self, count: int, stage: str = "downloading", force: bool = False) -> None:
        self.done += count
        now = time.monotonic()
        if stage == "downloading":
            self.samples.append((now, self.done))
            while len(self.samples) > 2 and now - self.samples[0][0] > SPEED_WINDOW_S:
                self.samples.pop(0)
        if self.report is None or (not force and now - self.last < PROGRESS_EVERY_S):
            return
        self.last = now
        speed = 0.0
        if len(self.samples) >= 2 and self.samples[-1][0] > self.samples[0][0]:
            speed = (self.samples[-1][1] - self.samples[0][1]) / (self.samples[-1][0] - self.samples[0][0])
        left = (self.total - self.done) / speed if speed > 0 else None
        self.report(Progress(self.done, self.total, speed, left, self.file, stage))


def download(plan: DownloadPlan, token: str | None = None, progress: Callable[[Progress], None] | None = None,
             cancel: threading.Event | None = None) -> Path:  # fmt: skip
    """Fetch what ``plan`` lists that is not here yet, check it, and publish the snapshot; its folder.

    Resumes what an earlier, interrupted download left. Raises :class:`DownloadError` (its ``kind`` says
    which failure), :class:`DownloadCancelled` when ``cancel`` is set; what arrived is kept either way.
    """
    from huggingface_hub.utils import WeakFileLock

    cancel = cancel or threading.Event()
    check_space(plan)
    lock_folder = plan.cache_dir / ".locks" / plan.storage.name
    try:
        lock_folder.mkdir(parents=True, exist_ok=True)
        (plan.storage / "blobs").mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise describe_error(error, plan.repo_id, plan.revision) from error
    try:
        with WeakFileLock(lock_folder / LOCK_NAME, timeout=1):
            return _download_locked(plan, token, progress, cancel)
    except TimeoutError:
        raise DownloadError(
            f"{plan.repo_id} is being downloaded by another Redraft already; wait for it, or cancel it", "busy"
        ) from None


def _download_locked(plan: DownloadPlan, token: str | None, progress: Callable[[Progress], None] | None,
                     cancel: threading.Event) -> Path:  # fmt: skip
    from urllib.parse import quote

    from huggingface_hub.utils import build_hf_headers, get_session

    meter = _Meter(plan.total, 0, progress)
    headers = build_hf_headers(token=token or None)
    session = get_session()
    try:
        for remote in plan.files:
            meter.file = remote.name
            blob = plan.blob_path(remote)
            if file_size(blob) == remote.size:  # whole: checked when it arrived (here or by huggingface_hub)
                meter.add(remote.size)
                continue
            # The hub's resolve URL at the planned commit (hf_hub_url's template is fixed when it is imported).
            url = f"{plan.endpoint}/{plan.repo_id}/resolve/{plan.commit}/{quote(remote.name)}"
            _fetch(session, url, headers, remote, blob, meter, cancel)
            if remote.name == "config.json":
                _check_config_type(blob, plan.repo_id)
        meter.file = plan.repo_id
        meter.add(0, stage="validating", force=True)
        return _publish(plan)
    except DownloadError:
        raise
    except Exception as error:
        raise describe_error(error, plan.repo_id, plan.revision) from error


def _fetch(session: Any, url: str, headers: dict[str, str], remote: RemoteFile, blob: Path, meter: _Meter,
           cancel: threading.Event) -> None:  # fmt: skip
    """Continue ``blob``.incomplete to ``remote.size`` bytes, check its hash, and move it into place."""
    import httpx2
    from huggingface_hub import constants
    from huggingface_hub.utils import hf_raise_for_status

    partial = blob.with_name(blob.name + ".incomplete")
    digest = _hasher(remote)
    have = max(file_size(partial), 0)
    if have > remote.size:
        partial.unlink()
        have = 0
    if have:  # what an earlier try left: hashed again, so the final check covers every byte
        with partial.open("rb") as existing:
            while chunk := existing.read(CHUNK_BYTES):
                if cancel.is_set():
                    raise DownloadCancelled()
                digest.update(chunk)
                meter.add(len(chunk), stage="checking")
    failures = 0
    timeout = httpx2.Timeout(constants.HF_HUB_DOWNLOAD_TIMEOUT, connect=constants.HF_HUB_ETAG_TIMEOUT)
    while have < remote.size:
        asked = dict(headers)
        if have:
            asked["Range"] = f"bytes={have}-"
        try:
            with session.stream("GET", url, headers=asked, timeout=timeout) as response:
                hf_raise_for_status(response)
                if have and response.status_code != 206:  # the server ignored the Range: start the file again
                    meter.add(-have)
                    have, digest = 0, _hasher(remote)
                    partial.unlink(missing_ok=True)
                elif have and not _range_starts_at(response.headers.get("Content-Range"), have):
                    raise DownloadError(f"the hub resumed {remote.name} at the wrong place; try again", "server")
                with partial.open("ab", buffering=0) as sink:  # unbuffered, straight to the OS
                    for chunk in response.iter_bytes():  # as they arrive: a kill loses nothing received
                        if cancel.is_set():
                            raise DownloadCancelled()
                        if have + len(chunk) > remote.size:
                            raise DownloadError(
                                f"the hub sent more of {remote.name} than its metadata says ({remote.size:,} bytes); "
                                "the file was discarded, try again later",
                                "checksum",
                            )
                        sink.write(chunk)
                        digest.update(chunk)
                        have += len(chunk)
                        meter.add(len(chunk))
                        failures = 0
        except httpx2.TransportError as error:
            failures += 1
            if failures > MAX_RETRIES:
                raise describe_error(error, "", "") from error
            if cancel.wait(RETRY_WAIT_S * failures):  # a cancel during the wait is answered at once
                raise DownloadCancelled() from None
        except DownloadError as error:
            if error.kind == "checksum":
                partial.unlink(missing_ok=True)
            raise
    if digest.hexdigest() != (remote.sha256 or remote.blob):
        partial.unlink(missing_ok=True)  # a wrong byte could be anywhere: this file starts over next time
        raise DownloadError(
            f"{remote.name} arrived damaged: its {'sha256' if remote.sha256 else 'checksum'} is not the one the "
            "hub's metadata gives, so it was discarded and nothing was installed; download again",
            "checksum",
        )
    os.replace(partial, blob)


def _hasher(remote: RemoteFile) -> Any:
    if remote.sha256:
        return hashlib.sha256()
    # A git blob id: sha1 over "blob <size>\0" and the content (the hub's ETag of a non-LFS file).
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(f"blob {remote.size}\0".encode())
    return digest


def _range_starts_at(content_range: str | None, start: int) -> bool:
    match = re.match(r"bytes (\d+)-", content_range or "")
    return match is not None and int(match.group(1)) == start


def _check_config_type(blob: Path, repo_id: str) -> None:
    from model.checkpoint.folders import read_json_object

    model_type = read_json_object(blob).get("model_type")
    if model_type != "diffusion_gemma":
        shown = model_type if isinstance(model_type, str) else "unknown"
        raise DownloadError(
            f"{repo_id}'s config.json describes a{'n' if shown[:1] in 'aeiou' else ''} {shown[:80]} model; Redraft "
            "runs DiffusionGemma checkpoints, so its weights were not downloaded",
            "invalid",
        )


def _publish(plan: DownloadPlan) -> Path:
    """Assemble the snapshot aside, validate it, move it into snapshots/ and write the ref last."""
    from huggingface_hub.file_download import are_symlinks_supported


    snapshot = plan.storage / "snapshots" / plan.commit
    staging = plan.storage / STAGING / plan.commit  # the same depth as snapshots/<commit>: links stay right
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    links = are_symlinks_supported(plan.cache_dir)
    try:
        for remote in plan.files:
            target = staging / remote.name
            existing = snapshot / remote.name
            if existing.exists() and file_size(existing) == remote.size:
                source = existing.resolve()
            else:
                source = plan.blob_path(remote)
            if links:
                target.symlink_to(os.path.relpath(source, target.parent))
            else:  # as huggingface_hub does without symlinks (Windows without developer mode)
                os.replace(source, target)
        try:
            validate_checkpoint(staging)
        except ModelLoadError as error:
            raise DownloadError(
                f"{plan.repo_id} downloaded, but it is not a checkpoint Redraft can run, so it is not offered "
                f"for use: {error}",
                "invalid",
            ) from error
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        if snapshot.exists():  # some of it came with another tool: add our files beside theirs
            for item in staging.iterdir():
                destination = snapshot / item.name
                if not destination.exists():
                    os.replace(item, destination)
        else:
            os.replace(staging, snapshot)
    finally:
        shutil.rmtree(plan.storage / STAGING, ignore_errors=True)
    if plan.revision != plan.commit:
        ref = plan.storage / "refs" / plan.revision
        ref.parent.mkdir(parents=True, exist_ok=True)
        temporary = ref.with_name(ref.name + ".tmp")
        temporary.write_text(plan.commit)
        os.replace(temporary, ref)
    return snapshot


