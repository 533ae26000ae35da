"""``redraft model list | download REPO_ID [--revision R] | remove NAME``: the model manager on the command line.

The work is model/checkpoint/hub.py (the download) and model/checkpoint/manager.py (what is installed);
this module only speaks: the plan before a byte is written, progress on stderr, one line per error.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import TextIO

from app.model_sources import hub_token
from app.userdirs import user_dirs
from model.checkpoint.hub import (
    DownloadCancelled,
    DownloadError,
    DownloadPlan,
    Progress,
    check_space,
    format_bytes,
    free_space,
    hub_endpoint,
    plan_download,
    quiet_hub,
)
from model.checkpoint.hub_transfer import download
from model.checkpoint.manager import list_installed, remove_model
from model.errors import RedraftError

EXIT_OK, EXIT_ERROR = 0, 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="redraft model", description="List, download and remove models.")
    commands = parser.add_subparsers(dest="action", required=True)
    commands.add_parser("list", help="the installed models: size, precision, where each lives")
    fetch = commands.add_parser("download", help="download a DiffusionGemma checkpoint from the hub (resumable)")
    fetch.add_argument("repo_id", metavar="REPO_ID", help="owner/name on the hub (HF_ENDPOINT picks the hub)")
    fetch.add_argument("--revision", default=None, help="branch, tag or commit (default: main)")
    remove = commands.add_parser("remove", help="delete an installed model (and the copies made of it)")
    remove.add_argument("name", metavar="NAME", help="a name `redraft model list` shows")
    return parser


def model_main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    try:
        with quiet_hub():
            if args.action == "list":
                return _list(sys.stdout)
            if args.action == "remove":
                return _remove(args.name, sys.stdout)
            return _download(args.repo_id, args.revision, sys.stdout, sys.stderr)
    except RedraftError as error:
        print(f"redraft: {error}", file=sys.stderr)
        return EXIT_ERROR


def _list(out: TextIO) -> int:
    models, others = list_installed(models_dir=user_dirs().models)
    for model in models:
        out.write(model.row() + "\n")
    if others:
        plural = "s" if others > 1 else ""
        out.write(f"({others} other model{plural} in the hub cache are not DiffusionGemma checkpoints)\n")
    return EXIT_OK


def _remove(name: str, out: TextIO) -> int:
    for folder, size in remove_model(name, models_dir=user_dirs().models):
        out.write(f"removed {folder} ({format_bytes(size)})\n")
    return EXIT_OK


def _plan(repo_id: str, revision: str | None, err: TextIO) -> tuple[DownloadPlan, str | None, bool]:
    """The plan, the token to send, and whether the writer typed that token here (then it is kept)."""
    endpoint = hub_endpoint()
    token = hub_token.token_for(endpoint)
    try:
        return plan_download(repo_id, revision, token), token, False
    except DownloadError as error:
        if error.kind not in ("auth", "forbidden") or not sys.stdin.isatty() or os.environ.get("HF_TOKEN"):
            raise
        import getpass

        err.write(f"redraft: {error}\n")
        typed = getpass.getpass(f"Hugging Face token for {endpoint} (input hidden; empty to stop): ").strip()
        if not typed:
            raise
        return plan_download(repo_id, revision, typed), typed, True


def _download(repo_id: str, revision: str | None, out: TextIO, err: TextIO) -> int:
    try:
        plan, token, typed = _plan(repo_id, revision, err)
    except DownloadError as error:
        if error.kind == "offline":
            for model in list_installed(include_builtin=False)[0]:
                if model.name == repo_id.strip() and model.usable:
                    out.write(f"{model.row()}\nalready installed (HF_HUB_OFFLINE is set, so the hub was not asked)\n")
                    return EXIT_OK
        raise
    out.write(plan.describe() + "\n")
    out.write(f"free on the disk that holds {plan.cache_dir}: {format_bytes(free_space(plan.cache_dir))}\n")
    out.flush()
    check_space(plan)
    shown = ProgressLine(err)
    cancel = threading.Event()
    try:
        folder = download(plan, token, progress=shown, cancel=cancel)
    except KeyboardInterrupt:
        cancel.set()
        shown.end()
        err.write(f"redraft: interrupted; {format_bytes(plan.present())} of {format_bytes(plan.total)} kept, "
                  "and the same command resumes it\n")  # fmt: skip
        return 130
    except DownloadCancelled:
        shown.end()
        raise
    except DownloadError:
        shown.end()
        raise
    shown.end()
    lfs = sum(1 for f in plan.files if f.sha256)
    out.write(
        f"checked: {len(plan.files)} files, their sizes, the sha256 of {lfs} LFS file{'s' if lfs != 1 else ''} "
        "and the git checksum of the others; a DiffusionGemma checkpoint Redraft can load\n"
        f"installed in {folder}\nuse it: redraft fill --model {plan.repo_id} ..., or Model ▸ Manage Models ▸ "
        "Use this model\n"
    )
    if typed and token:
        kept = hub_token.save_token(plan.endpoint, token)
        out.write("the token is kept in the system keyring\n" if kept else "no keyring here: the token was not kept\n")
    return EXIT_OK


class ProgressLine:
    """Progress on stderr: one line redrawn on a terminal, else a line a second (logs, tests)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.last = 0.0
        self.drawn = False

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if not self.live and now - self.last < 1.0 and progress.stage == "downloading":
            return
        self.last = now
        line = f"{progress.describe()}  {progress.file}"
        if self.live:
            self.stream.write("\r\033[K" + line[:200])
            self.drawn = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def end(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
