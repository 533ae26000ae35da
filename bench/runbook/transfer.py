"""Files across the device's limits: cut into pieces that come back and joined again (checked), what would
not come back from ``$OUT``, the bytes a call carries, and taking back what a call returned.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

from runbook.common import (
    BACK_FILE_LIMIT,
    BACK_FILES,
    BACK_NAME,
    BACK_TOTAL,
    CARRY,
    CARRY_LIMIT,
    MIB,
    PIECE_BYTES,
    ROOT,
)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()


def split_file(path: Path, out: Path, stem: str, piece_bytes: int = PIECE_BYTES) -> dict[str, Any]:
    """Cut ``path`` into ``stem.partNN`` files of at most ``piece_bytes`` in ``out``; the manifest to join them."""
    pieces = []
    with path.open("rb") as f:
        for index in range(1000):
            chunk = f.read(piece_bytes)
            if not chunk:
                break
            name = f"{stem}.part{index:02d}"
            (out / name).write_bytes(chunk)
            pieces.append({"name": name, "bytes": len(chunk), "sha256": hashlib.sha256(chunk).hexdigest()})
    return {"file": path.name, "bytes": path.stat().st_size, "sha256": sha256_of(path), "pieces": pieces}


def join_pieces(manifest: dict[str, Any], folder: Path, target: Path) -> Path:
    """Reassemble what :func:`split_file` cut, checking every piece and the whole against the manifest."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".joining")
    with tmp.open("wb") as f:
        for piece in manifest["pieces"]:
            data = (folder / piece["name"]).read_bytes()
            if hashlib.sha256(data).hexdigest() != piece["sha256"]:
                raise SystemExit(f"{folder / piece['name']} is damaged (sha256 differs from the manifest)")
            f.write(data)
    if sha256_of(tmp) != manifest["sha256"]:
        raise SystemExit(f"the pieces in {folder} do not make {manifest['file']} (sha256 differs)")
    tmp.replace(target)
    return target


def cold_resume(carry: Path, compact: Path, root: Path = ROOT, limit: int = CARRY_LIMIT) -> dict[str, Any]:
    """What train-b carries if the machine went back after train-a (its folders are gone): the checkpoint
    and as many new books as the 64 MiB leave beside the tree and the wheels. The int8 checkpoint of a large
    model leaves no room for books, so it is re-packed as NF4 here where int8 would leave under 8 MiB."""
    import torch

    from runbook.corpus import head_of_shard
    from runbook.packing import pack_tensors, unpack_tensors

    resume, cold = carry / "resume", carry / "corpus-b-cold"
    fixed = tree_bytes(root) + folder_bytes(carry / "wheels") + MIB  # 1 MiB of slack: files others add
    stories = sorted((carry / "corpus-b").glob("tinystories*.txt.xz"))
    stories_bytes = sum(p.stat().st_size for p in stories)
    left = limit - fixed - folder_bytes(resume) - stories_bytes
    scheme = "as returned"
    if left < 8 * MIB:
        state = torch.load(compact, weights_only=False, map_location="cpu")
        if state["model"]["scheme"] != "nf4":
            state["model"] = pack_tensors(unpack_tensors(state["model"]), "nf4")
            torch.save(state, compact.with_name("checkpoint-a-nf4.pt"))
            manifest = json.loads((resume / "train-a.json").read_text())
            for old in manifest["checkpoint"]["pieces"]:
                (resume / old["name"]).unlink()
            piece = max(p["bytes"] for p in manifest["checkpoint"]["pieces"])
            manifest["checkpoint"] = split_file(compact.with_name("checkpoint-a-nf4.pt"), resume, "checkpoint", piece)
            (resume / "train-a.json").write_text(json.dumps(manifest, default=str))
            scheme = "nf4 (re-packed here)"
            left = limit - fixed - folder_bytes(resume) - stories_bytes
    if cold.exists():
        shutil.rmtree(cold)
    cold.mkdir(parents=True)
    for path in stories:
        shutil.copyfile(path, cold / path.name)
    books = 0
    for shard in sorted((carry / "corpus-b").glob("books_*.txt.xz")):
        if left < MIB:
            break
        books += head_of_shard(shard, cold / shard.name, left - MIB // 2)
        left -= (cold / shard.name).stat().st_size
    for path in (carry / "corpus-b").glob("corpus-xl-*"):
        shutil.copyfile(path, cold / path.name)
    total = fixed + folder_bytes(resume) + folder_bytes(cold)
    return {"checkpoint": scheme, "checkpoint_bytes": folder_bytes(resume), "books": books,
            "carry_bytes": total, "fits": total <= limit}  # fmt: skip


def check_back(out: Path) -> list[str]:
    """What would not come back from ``out`` under the device tool's limits (empty: all of it will)."""
    problems = []
    files = [p for p in out.rglob("*") if p.is_file()]
    if len(files) > BACK_FILES:
        problems.append(f"{len(files)} files, at most {BACK_FILES} come back")
    total = sum(p.stat().st_size for p in files)
    if total > BACK_TOTAL:
        problems.append(f"{total / MIB:.1f} MiB in all, at most {BACK_TOTAL // MIB} MiB come back")
    for p in files:
        rel = p.relative_to(out)
        if p.stat().st_size > BACK_FILE_LIMIT:
            problems.append(f"{rel}: {p.stat().st_size / MIB:.1f} MiB, over {BACK_FILE_LIMIT // MIB} MiB")
        if len(rel.parts) > 3:
            problems.append(f"{rel}: more than 2 folders down")
        if not all(BACK_NAME.match(part) for part in rel.parts):
            problems.append(f"{rel}: a name with characters other than letters, digits, '.', '_', '-'")
    return problems


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def tree_bytes(root: Path = ROOT) -> int:
    """What travels besides the carried paths: tracked files and untracked files git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root, capture_output=True, check=True,
    ).stdout.split(b"\0")  # fmt: skip
    return sum((root / name.decode()).stat().st_size for name in listed if name and (root / name.decode()).is_file())


def take_back(
    step: str, files_at: Path, carry: Path = CARRY, runs: Path = ROOT / "runs" / "gpu", root: Path = ROOT
) -> Path:
    """After train-a: the checkpoint pieces into ``carry/resume`` and what a fresh machine's train-b would
    carry (:func:`cold_resume`). After train-b: the model reassembled into ``runs/model``, its packed weights
    written as bf16 ``model.safetensors`` (what ``model.load`` reads). Every piece is checked against its
    manifest."""
    runs.mkdir(parents=True, exist_ok=True)
    data = json.loads((files_at / f"{step}.json").read_text())
    for name in (f"{step}.json", f"{step}.log", "eval.json"):
        if (files_at / name).exists():
            shutil.copyfile(files_at / name, runs / name)
    if step == "train-a":
        resume = carry / "resume"
        if resume.exists():
            shutil.rmtree(resume)
        resume.mkdir(parents=True)
        join_pieces(data["checkpoint"], files_at, runs / "checkpoint-a.pt")  # verifies before copying
        for piece in data["checkpoint"]["pieces"]:
            shutil.copyfile(files_at / piece["name"], resume / piece["name"])
        shutil.copyfile(files_at / "train-a.json", resume / "train-a.json")
        cold = cold_resume(carry, runs / "checkpoint-a.pt", root)
        (runs / "cold-resume.json").write_text(json.dumps(cold, indent=1) + "\n")
        print(json.dumps(cold, indent=1))
        return resume
    if step == "train-b":
        tar_path = join_pieces(data["model"], files_at, runs / "model.tar")
        target = runs / "model"
        if target.exists():
            shutil.rmtree(target)
        with tarfile.open(tar_path) as tar:
            tar.extractall(runs, filter="data")
        import torch

        from runbook.packing import unpack_tensors, write_model_folder

        packed = torch.load(target / "weights.packed.pt", weights_only=False, map_location="cpu")
        write_model_folder(unpack_tensors(packed), target)
        (target / "weights.packed.pt").unlink()
        return target
    raise SystemExit(f"take-back knows train-a and train-b, not {step}")
