"""The adapted weights kept in main's history, where the next lent session finds them.

Only main lands: a branch (the first lent session kept its weights on ``gpu-adapt``) and every ignored folder
(``runs/``, ``.gpu-carry/``) are gone from the next session's fresh checkout, and with them 7.7 minutes of H100
training. Main's *tree* cannot hold the weights either: every device call carries the tree within its 64 MiB,
which the transplant's parts need. So :func:`keep_adapted` commits what a session brought back (the pieces of
``adapted.pt``, ``adapt-transplant.json``, the Gemma terms and notice) into ``ADAPTED_FOLDER`` and takes them
out of the tree again in the next commit, which records the first one in ``RECORD``: the blobs stay in main's
history, the tree the device carries does not grow. :func:`restore_adapted` writes them back out of that commit
for ``take-back adapt-transplant`` (merged into the freshly rebuilt transplant, whose frozen weights are
Gemma's own through the bridges, so the pieces are all a session adds).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from runbook.common import ROOT

ADAPTED_FOLDER = "gemma3-270m-adapt"  # in the keeping commit only, never in the tree that travels
RECORD = Path("bench") / "runbook" / "adapted.json"  # which commit holds the latest adapted pieces
TERMS = ("GEMMA_TERMS.html", "NOTICE.md", "NOTICE")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _kept_files(files_at: Path, data: dict[str, Any], terms_from: Path | None) -> list[Path]:
    files = [files_at / "adapt-transplant.json", *(files_at / piece["name"] for piece in data["back"]["pieces"])]
    if terms_from is not None:
        files += [terms_from / name for name in TERMS if (terms_from / name).exists()]
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        raise SystemExit(f"keep-adapted: missing {', '.join(missing)}")
    return files


def _summary(report: dict[str, Any]) -> str:
    """The session in a line: its steps, canvas tokens and held-out loss from first to last evaluation."""
    trained = report.get("trained", {})
    evaluated = [entry for entry in report.get("log", []) if "loss" in entry]
    losses = f", held-out {evaluated[0]['loss']:.2f} -> {evaluated[-1]['loss']:.2f}" if evaluated else ""
    return f"to step {trained.get('steps', '?')}, {trained.get('tokens', '?')} canvas tokens{losses}"


def keep_adapted(files_at: Path, terms_from: Path | None = None, repo: Path = ROOT) -> str:
    """Commit a session's adapted pieces into main's history and out of its tree (two commits of these paths
    only: whatever else is staged or changed stays as it was). Returns the commit that holds them."""
    data = json.loads((files_at / "adapt-transplant.json").read_text())
    files = _kept_files(files_at, data, terms_from)
    folder = repo / ADAPTED_FOLDER
    if folder.exists():
        raise SystemExit(f"keep-adapted: {folder} is in the way (it must never be in the tree)")
    folder.mkdir()
    for path in files:
        shutil.copyfile(path, folder / path.name)
    summary = _summary(data)
    _git(repo, "add", "--force", "--", ADAPTED_FOLDER)  # whatever .gitignore may come to say of weights
    _git(repo, "commit", "-q", "-m", f"#47 adapted pieces of a lent session ({summary}), kept in history only",
         "--", ADAPTED_FOLDER)  # fmt: skip
    keeping = _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "rm", "-q", "-r", "--", ADAPTED_FOLDER)
    record = repo / RECORD
    sessions = json.loads(record.read_text())["sessions"] if record.exists() else []
    sessions.append({"commit": keeping, "summary": summary})
    record.parent.mkdir(parents=True, exist_ok=True)
    kept = {"commit": keeping, "folder": ADAPTED_FOLDER, "files": [path.name for path in files], "sessions": sessions}
    record.write_text(json.dumps(kept, indent=1) + "\n")
    _git(repo, "add", "--", str(RECORD))
    _git(repo, "commit", "-q", "-m", f"#47 adapted pieces out of the tree again; {RECORD} names {keeping[:12]}",
         "--", ADAPTED_FOLDER, str(RECORD))  # fmt: skip
    return keeping


def recorded(repo: Path = ROOT) -> dict[str, Any] | None:
    """What :data:`RECORD` says (None before the first kept session)."""
    record = repo / RECORD
    return json.loads(record.read_text()) if record.exists() else None


def restore_adapted(into: Path, repo: Path = ROOT) -> Path:
    """The latest kept pieces written out of main's history into ``into`` (a FILES_AT for take-back)."""
    record = recorded(repo)
    if record is None:
        raise SystemExit(f"restore-adapted: no {RECORD}: no lent session has kept adapted weights yet")
    into.mkdir(parents=True, exist_ok=True)
    for name in record["files"]:
        blob = subprocess.run(["git", "-C", str(repo), "show", f"{record['commit']}:{record['folder']}/{name}"],
                              check=True, capture_output=True).stdout  # fmt: skip
        (into / name).write_bytes(blob)
    return into
