"""Downloading a DiffusionGemma checkpoint from a Hugging Face hub into the shared hub cache, resumably: the
plan (what to fetch, at which commit, whether it fits the disk) and every failure named; the fetching itself
is :mod:`model.checkpoint.hub_transfer`.

Everything goes through huggingface_hub's configuration (``HF_ENDPOINT``, ``HF_TOKEN``, ``HF_HOME`` /
``HF_HUB_CACHE``, ``HF_HUB_OFFLINE``), its HTTP session and its cache layout (``blobs/``, ``snapshots/``,
``refs/``), so a model fetched here is found by ``snapshot_download(local_files_only=True)`` and by other
tools, and a model other tools fetched is found here.

The bytes are fetched here rather than by ``hf_hub_download`` because huggingface_hub 2.4 writes each file
to a process-unique ``<etag>.<uuid>.incomplete`` and deletes it when the download fails: within one process
it resumes a dropped connection, but a killed or restarted 50 GB download starts over. This module keeps
``blobs/<hash>.incomplete`` under a stable name and continues it with a Range request.

Nothing is offered for use until it is whole: each file is checked against the hub's metadata (size, and
the sha256 of LFS files or the git blob id of the others) before it becomes a blob, the snapshot is
assembled and validated as a DiffusionGemma checkpoint aside, and the ref (``refs/main``) that makes
``--model REPO_ID`` find it is written last.
"""

from __future__ import annotations

import contextlib
import errno
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from model.errors import ModelLoadError

# What a DiffusionGemma checkpoint needs (the patterns model.checkpoint.folders asks snapshot_download
# for), plus the card and licence so the writer can read the terms offline.
CHECKPOINT_PATTERNS = ("*.json", "*.safetensors", "tokenizer*", "*.jinja", "*.model", "README.md", "LICENSE*")
LOCK_NAME = "redraft-download.lock"
COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
# Error kinds, one message each (the GUI and the CLI only show the message; tests check the kind).
KINDS = ("auth", "forbidden", "not_found", "server", "network", "disk", "checksum", "invalid", "offline", "busy",
         "cancelled")  # fmt: skip


class DownloadError(ModelLoadError):
    """A download that cannot go on, in words; ``kind`` is one of :data:`KINDS`."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class DownloadCancelled(DownloadError):
    def __init__(self, message: str = "the download was cancelled; what arrived is kept, and downloading the "
                 "same model again resumes it") -> None:  # fmt: skip
        super().__init__(message, "cancelled")


@dataclass(frozen=True)
class RemoteFile:
    name: str
    size: int
    blob: str  # its name in the cache's blobs/: the LFS sha256, else the git blob id (what the hub's ETag is)
    sha256: str | None  # LFS files; the others are checked against their git blob id

    @property
    def is_weights(self) -> bool:
        return self.name.endswith(".safetensors")


@dataclass(frozen=True)
class DownloadPlan:
    """What a download will fetch, from the hub's metadata, before any byte is written."""

    repo_id: str
    revision: str
    commit: str
    files: tuple[RemoteFile, ...]
    licence: str | None
    gated: bool
    private: bool
    model_type: str | None
    endpoint: str
    cache_dir: Path

    @property
    def total(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def storage(self) -> Path:
        return self.cache_dir / ("models--" + self.repo_id.replace("/", "--"))

    def blob_path(self, remote: RemoteFile) -> Path:
        return self.storage / "blobs" / remote.blob

    def present(self) -> int:
        """Bytes already here: finished blobs and the parts of unfinished ones."""
        done = 0
        for remote in self.files:
            blob = self.blob_path(remote)
            if file_size(blob) == remote.size:
                done += remote.size
            else:
                done += min(max(file_size(blob.with_name(blob.name + ".incomplete")), 0), remote.size)
        return done

    def describe(self) -> str:
        lines = [
            f"{self.repo_id} at {self.revision} (commit {self.commit[:12]}) from {self.endpoint}",
            f"{len(self.files)} files, {format_bytes(self.total)} in all"
            + (f", {format_bytes(self.present())} already here" if self.present() else ""),
            "licence: " + licence_words(self),
        ]
        return "\n".join(lines)


@dataclass
class Progress:
    done: int
    total: int
    speed: float  # bytes a second over the last few seconds
    seconds_left: float | None
    file: str
    stage: str = "downloading"  # or "checking" (hashing what an earlier try left), "validating"

    def describe(self) -> str:
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        text = f"{format_bytes(self.done)} of {format_bytes(self.total)}{share}"
        if self.stage != "downloading":
            return f"{text}, {self.stage} {self.file}"
        if self.speed > 0:
            text += f", {format_bytes(self.speed)}/s"
        if self.seconds_left is not None:
            text += f", {format_duration(self.seconds_left)} left"
        return text


def format_bytes(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(count) < 1024 or unit == "GiB":
            return f"{count:,.0f} {unit}" if unit == "B" else f"{count:,.1f} {unit}"
        count /= 1024
    return f"{count:,.1f} GiB"


def format_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds // 3600} h {round(seconds % 3600 / 60)} min"


def hub_cache_dir() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hub_endpoint() -> str:
    from huggingface_hub import constants

    return str(constants.ENDPOINT).rstrip("/")


def check_repo_id(repo_id: str) -> str:
    repo_id = repo_id.strip()
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}", repo_id) or "--" in repo_id:
        raise DownloadError(
            f"{repo_id[:100]!r} is not a hub model id; one looks like 'owner/name', e.g. "
            "google/diffusiongemma-26B-A4B-it",
            "invalid",
        )
    return repo_id


def licence_words(plan: DownloadPlan) -> str:
    words = plan.licence or "not stated in the model card; read it on the model's page before use"
    if plan.gated:
        words += f" (gated: accept its terms on {plan.endpoint}/{plan.repo_id} first)"
    return words


# -- the plan ------------------------------------------------------------------------------------


def plan_download(repo_id: str, revision: str | None = None, token: str | None = None,
                  cache_dir: Path | None = None) -> DownloadPlan:  # fmt: skip
    """The files, sizes, checksums and licence of ``repo_id`` at ``revision``, from the hub's metadata."""
    from huggingface_hub import HfApi, constants

    repo_id = check_repo_id(repo_id)
    revision = (revision or "main").strip()
    if constants.is_offline_mode():
        raise DownloadError(
            "HF_HUB_OFFLINE is set, so Redraft downloads nothing; unset it to download "
            "(models already here: redraft model list)",
            "offline",
        )
    try:
        info = HfApi(token=token or None).model_info(repo_id, revision=revision, files_metadata=True)
    except Exception as error:
        raise describe_error(error, repo_id, revision) from error
    if not info.sha or not COMMIT_RE.match(info.sha):
        raise DownloadError(f"the hub's answer for {repo_id} names no commit; try again later", "server")
    files = []
    for sibling in info.siblings or []:
        name = sibling.rfilename
        if not any(fnmatch(Path(name).name, pattern) for pattern in CHECKPOINT_PATTERNS) or "/" in name:
            continue  # sub-folders hold other formats (onnx/, original/): not what Redraft loads
        lfs = sibling.lfs
        size = lfs.size if lfs is not None else sibling.size
        blob = lfs.sha256 if lfs is not None else sibling.blob_id
        if size is None or blob is None or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", blob):
            raise DownloadError(
                f"the hub's metadata for {repo_id} gives no size or checksum for {name}; Redraft does not "
                "download what it cannot check",
                "server",
            )
        files.append(RemoteFile(name, int(size), blob, lfs.sha256 if lfs is not None else None))
    names = {f.name for f in files}
    config = info.config if isinstance(info.config, dict) else {}
    model_type = config.get("model_type") if isinstance(config.get("model_type"), str) else None
    missing = [what for what, ok in (
        ("config.json", "config.json" in names),
        ("safetensors weights", any(f.is_weights for f in files)),
        ("a tokenizer (tokenizer.json or tokenizer.model)", bool({"tokenizer.json", "tokenizer.model"} & names)),
    ) if not ok]  # fmt: skip
    if missing:
        raise DownloadError(
            f"{repo_id} is not a checkpoint Redraft can load: it has no {' and no '.join(missing)}", "invalid"
        )
    if model_type is not None and model_type != "diffusion_gemma":
        raise DownloadError(
            f"{repo_id} is a {model_type} model; Redraft runs DiffusionGemma checkpoints (model_type "
            "'diffusion_gemma'), so nothing was downloaded",
            "invalid",
        )
    # Small files first: the config is checked before the weights arrive.
    files.sort(key=lambda f: (f.is_weights, f.size, f.name))
    return DownloadPlan(
        repo_id=repo_id,
        revision=revision,
        commit=info.sha,
        files=tuple(files),
        licence=_licence(info),
        gated=bool(info.gated),
        private=bool(info.private),
        model_type=model_type,
        endpoint=hub_endpoint(),
        cache_dir=cache_dir or hub_cache_dir(),
    )


def _licence(info: Any) -> str | None:
    card = info.card_data
    if card is not None:
        licence = getattr(card, "license", None)
        name = getattr(card, "license_name", None)
        link = getattr(card, "license_link", None)
        if licence:
            words = str(licence)
            if name and licence == "other":
                words = str(name)
            return words + (f" ({link})" if link else "")
    for tag in info.tags or []:
        if isinstance(tag, str) and tag.startswith("license:"):
            return tag.removeprefix("license:")
    return None


def describe_error(error: BaseException, repo_id: str, revision: str) -> DownloadError:
    """One message per failure a writer can meet, instead of a library's traceback."""
    import httpx2
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    endpoint = hub_endpoint()
    if isinstance(error, DownloadError):
        return error
    if isinstance(error, OfflineModeIsEnabled):
        return DownloadError("HF_HUB_OFFLINE is set, so Redraft downloads nothing; unset it to download", "offline")
    if isinstance(error, HfHubHTTPError):
        status = error.response.status_code if error.response is not None else 0
        if isinstance(error, GatedRepoError) or (status == 403):
            return DownloadError(
                f"{repo_id} is gated and your token has no access to it yet: accept its terms on "
                f"{endpoint}/{repo_id} while signed in, then try again",
                "forbidden",
            )
        if isinstance(error, RevisionNotFoundError):
            return DownloadError(f"{repo_id} has no revision {revision!r} on {endpoint}", "not_found")
        if status == 401:
            return DownloadError(
                f"{endpoint} did not let this request see {repo_id}: it does not exist, or it is private or gated "
                "and needs a Hugging Face token (set HF_TOKEN, or enter the token when asked); a token that was "
                "given was not accepted",
                "auth",
            )
        if isinstance(error, RepositoryNotFoundError) or status == 404:
            return DownloadError(f"there is no model {repo_id} on {endpoint} (check the spelling)", "not_found")
        if status >= 500:
            return DownloadError(
                f"{endpoint} answered with an error of its own ({status}); try again later: what has arrived is "
                "kept and the download resumes",
                "server",
            )
        return DownloadError(f"{endpoint} refused the request for {repo_id} ({status})", "server")
    if isinstance(error, httpx2.TransportError):
        return DownloadError(
            f"could not reach {endpoint} ({type(error).__name__}: {str(error)[:120] or 'no answer'}); check the "
            "network and try again: what has arrived is kept and the download resumes",
            "network",
        )
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        return DownloadError(
            "the disk filled up during the download; free some space and download again: what has arrived is "
            "kept and the download resumes",
            "disk",
        )
    if isinstance(error, OSError):
        return DownloadError(f"could not write the model: {error.strerror or error}", "disk")
    return DownloadError(f"the download failed ({type(error).__name__}: {str(error)[:200]})", "server")


def free_space(folder: Path) -> int:
    """Free bytes on the disk that holds ``folder`` (or its nearest existing parent)."""
    probe = folder.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free


def space_needed(plan: DownloadPlan) -> int:
    return plan.total - plan.present()


def check_space(plan: DownloadPlan) -> None:
    """Refuse, before any byte is written, a download the disk cannot hold (with 1% to spare)."""
    needed = space_needed(plan)
    spare = min(needed // 100, 2**30)
    free = free_space(plan.cache_dir)
    if needed + spare > free:
        raise DownloadError(
            f"{plan.repo_id} needs {format_bytes(needed)} more on the disk that holds {plan.cache_dir}, which "
            f"has {format_bytes(free)} free; free {format_bytes(needed + spare - free)} or move the hub cache "
            "(HF_HUB_CACHE or HF_HOME) to a bigger disk. Nothing was downloaded.",
            "disk",
        )


def file_size(path: Path) -> int:
    """The file's size, -1 when there is none (so an empty file is told from a missing one)."""
    try:
        return path.stat().st_size
    except OSError:
        return -1


@contextlib.contextmanager
def quiet_hub() -> Iterator[None]:
    """huggingface_hub's own progress bars and retry warnings off: Redraft reports progress itself."""
    from huggingface_hub.utils import disable_progress_bars, enable_progress_bars

    disable_progress_bars()
    try:
        yield
    finally:
        enable_progress_bars()
