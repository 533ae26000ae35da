"""One command per call of a lent GPU: the 26B figures, engine vs library, and the next built-in model.

A lent machine (an H100; see "On a lent GPU" in README.md) gives 30 minutes in commands of at most
10, takes at most 64 MiB of files in (the working tree plus carried folders) and gives back at most 8
files of 16 MiB (64 MiB together), and can download nothing. Its image has torch and Triton but an old
transformers and no bitsandbytes. So everything is prepared here and each step is one command there::

    python bench/gpu_runbook.py prepare        # here: wheels and corpus shards into .gpu-carry/, sizes checked
    python bench/gpu_runbook.py plan           # the session plan: each run call's command and carry list
    python3 bench/gpu_runbook.py bench26b      # there: 26B-A4B at 4 bit and bf16, the NF4 kernel checked
    python3 bench/gpu_runbook.py engine-vs-library
    python3 bench/gpu_runbook.py train-a       # there: pick a size from measured speed, train, checkpoint
    python bench/gpu_runbook.py take-back train-a FILES_AT   # here: keep the checkpoint pieces for train-b
    python3 bench/gpu_runbook.py train-b       # there: resume, finish, export, evaluate
    python bench/gpu_runbook.py take-back train-b FILES_AT   # here: reassemble the model into runs/gpu/
    python bench/gpu_runbook.py readme-table FILES_AT/bench26b.json --write   # the README's 26B table
    python bench/gpu_runbook.py --dry-run      # every step at toy scale on CPU (what the tests run)

Each device step installs the carried wheels into /tmp (then re-executes itself with them on the path),
keeps to its time budget, writes everything it measured to ``$OUT`` as it goes (a timeout still returns
what was done), and checks ``$OUT`` against the limits of what comes back before it exits.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

MIB = 2**20
# The device tool's limits (/work/.library/device/README.md).
CARRY_LIMIT = 64 * MIB  # the working tree plus carried paths, per call
BACK_FILE_LIMIT = 16 * MIB
BACK_FILES = 8
BACK_TOTAL = 64 * MIB
CALL_LIMIT_S = 600
BACK_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
PIECE_BYTES = 15 * MIB  # pieces a little under the 16 MiB limit
DEVICE_PYTHON = "3.12"  # the device image's python3 (KINDS.md)
DEVICE_CUDA_LIBS = ("cuda130", "cuda132")  # torch 2.11+cu130 there; bitsandbytes picks the matching library

CARRY = ROOT / ".gpu-carry"
WORK = ROOT / ".gpu-work"  # on the device: kept between calls while the machine stays warm
SHARED = ROOT.parent / "shared"
SHIPPED = ROOT / "resources" / "models" / "redraft-tiny"
SHIP_LIMIT = 60_000_000  # the shipped model folder, bytes
T0_ENV = "REDRAFT_RUNBOOK_T0"
SITE_ENV = "REDRAFT_RUNBOOK_SITE"

# transformers' model folders the engine needs (DiffusionGemma, the Gemma families its configs name, auto);
# the rest of the wheel (about 100 MB unpacked) stays behind so the carry fits.
TRANSFORMERS_MODELS_KEPT = (
    "auto", "encoder_decoder", "diffusion_gemma", "gemma", "gemma2", "gemma3", "gemma3n", "gemma4", "siglip",
)  # fmt: skip

# Corpus carried per training call: TinyStories (the story share of every batch) and corpus-xl shards,
# different books in each call so step B adds unseen ones. train-b carries half a shard (re-compressed
# here), which leaves its carry room for the checkpoint pieces.
CORPUS_A_SHARDS = ("books_00", "books_01")
CORPUS_B_SHARDS = ("books_02",)
CORPUS_B_BYTES = 6_500_000  # compressed books of the shard that train-b carries
STORY_FILES = ("tinystories_subset_maxme1.txt", "tinystories_train_head.txt")


# ---- small utilities ------------------------------------------------------------------------------


def elapsed_s() -> float:
    """Seconds since the step started (before any re-execution with the carried wheels)."""
    return time.time() - float(os.environ.get(T0_ENV, time.time()))


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


class Report:
    """The step's JSON in ``$OUT``, rewritten after every figure so a killed step still returns its results,
    and its log (everything printed) beside it."""

    def __init__(self, out: Path, name: str) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.path = out / f"{name}.json"
        self.data: dict[str, Any] = {"step": name, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self.save()

    def __setitem__(self, key: str, value: Any) -> None:
        self.data[key] = value
        self.save()

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def append(self, key: str, value: Any) -> None:
        self.data.setdefault(key, []).append(value)
        self.save()

    def save(self) -> None:
        self.data["elapsed_s"] = round(elapsed_s(), 1)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, default=str) + "\n")
        tmp.replace(self.path)


class _Tee(io.TextIOBase):
    def __init__(self, *streams: TextIO) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
            stream.flush()
        return len(text)


@contextlib.contextmanager
def logged(out: Path, name: str) -> Iterator[None]:
    """Everything the step prints also goes to ``$OUT/<name>.log``."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / f"{name}.log").open("a", encoding="utf-8") as log:
        tee = _Tee(sys.__stdout__ or sys.stdout, log)
        with contextlib.redirect_stdout(tee), contextlib.redirect_stderr(tee):  # type: ignore[type-var]
            yield


def say(text: str) -> None:
    print(f"[{elapsed_s():6.1f}s] {text}", flush=True)


# ---- the wheels the device lacks ---------------------------------------------------------------------


def _rewrite_wheel(source: Path, target: Path, keep: Callable[[str], bool]) -> tuple[int, int]:
    """Copy a wheel without the members ``keep`` rejects, its RECORD listing only what remains.

    Returns (members dropped, bytes dropped uncompressed)."""
    dropped = dropped_bytes = 0
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        names = src.namelist()
        record = next(n for n in names if n.endswith(".dist-info/RECORD"))
        kept = []
        for info in src.infolist():
            if info.filename == record:
                continue
            if keep(info.filename):
                dst.writestr(info, src.read(info.filename))
                kept.append(info.filename)
            else:
                dropped += 1
                dropped_bytes += info.file_size
        lines = [line for line in src.read(record).decode().splitlines() if line.split(",")[0] in kept]
        dst.writestr(record, "\n".join([*lines, f"{record},,"]) + "\n")
    return dropped, dropped_bytes


def slim_transformers(member: str) -> bool:
    match = re.match(r"transformers/models/([^/]+)/", member)
    return match is None or match.group(1) in TRANSFORMERS_MODELS_KEPT


def slim_bitsandbytes(member: str) -> bool:
    match = re.match(r"bitsandbytes/libbitsandbytes_(\w+)\.(so|dll|dylib)$", member)
    return match is None or match.group(1) in ("cpu", *DEVICE_CUDA_LIBS)


SLIMMERS: dict[str, Callable[[str], bool]] = {"transformers": slim_transformers, "bitsandbytes": slim_bitsandbytes}


def device_wheels() -> list[str]:
    """name==version of what the device lacks, at the versions installed here (tested with)."""
    from importlib.metadata import version

    # The image has tokenizers, safetensors and huggingface-hub at versions transformers accepts (KINDS.md);
    # regex is brought because transformers checks its version at import.
    return [f"{name}=={version(name)}" for name in ("transformers", "bitsandbytes", "regex")]


def prepare_wheels(carry: Path, downloads: Path) -> list[dict[str, Any]]:
    """Download the device's wheels (CPython 3.12, manylinux x86_64) and slim them into ``carry/wheels``."""
    wheels = carry / "wheels"
    downloads.mkdir(parents=True, exist_ok=True)
    platforms = [f"--platform=manylinux_2_{n}_x86_64" for n in (17, 24, 27, 28)] + ["--platform=manylinux2014_x86_64"]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
         f"--python-version={DEVICE_PYTHON}", "--implementation=cp", *platforms, "-d", str(downloads),
         *device_wheels()],
        check=True,
    )  # fmt: skip
    if wheels.exists():
        shutil.rmtree(wheels)
    wheels.mkdir(parents=True)
    rows = []
    for spec in device_wheels():
        name, version = spec.split("==")
        source = next(downloads.glob(f"{name}-{version}-*.whl"))
        target = wheels / source.name
        if name in SLIMMERS:
            dropped, dropped_bytes = _rewrite_wheel(source, target, SLIMMERS[name])
        else:
            shutil.copyfile(source, target)
            dropped = dropped_bytes = 0
        rows.append({"wheel": target.name, "downloaded": source.stat().st_size, "carried": target.stat().st_size,
                     "members_dropped": dropped, "unpacked_bytes_dropped": dropped_bytes})  # fmt: skip
    return rows


def check_wheels(wheels: Path, install_to: Path | None = None) -> dict[str, Any]:
    """Every carried wheel is a readable zip for the device (CPython 3.12, x86-64 Linux), under 16 MiB, and
    (with ``install_to``) installs with the exact pip command the device runs, for the device's Python."""
    found = sorted(wheels.glob("*.whl"))
    names = [w.name.split("-")[0].lower() for w in found]
    problems = []
    if len(set(names)) != len(names):
        problems.append("two versions of one package (pip refuses the whole install)")
    for wheel in found:
        if wheel.stat().st_size > BACK_FILE_LIMIT:
            problems.append(f"{wheel.name} is over 16 MiB: split it, or slim it (prepare does)")
        tags = wheel.name[:-4].split("-")[-3:]
        if tags[0] not in ("py3", "cp312", "cp310", "cp38", "cp39") or not (tags[2] == "any" or "x86_64" in tags[2]):
            problems.append(f"{wheel.name}: not for CPython 3.12 on x86-64 Linux")
        with zipfile.ZipFile(wheel) as z:
            bad = z.testzip()
            if bad:
                problems.append(f"{wheel.name}: {bad} is damaged")
    result: dict[str, Any] = {"wheels": [w.name for w in found], "bytes": sum(w.stat().st_size for w in found),
                              "problems": problems}  # fmt: skip
    if install_to is not None and found and not problems:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile", "--no-cache-dir",
             "--upgrade", "--target", str(install_to), f"--python-version={DEVICE_PYTHON}", "--only-binary=:all:",
             "--platform=manylinux_2_28_x86_64", "--platform=manylinux_2_24_x86_64",
             "--platform=manylinux_2_17_x86_64", "--platform=manylinux2014_x86_64", *map(str, found)],
            check=True,
        )  # fmt: skip
        result["installed"] = sorted(p.name for p in install_to.iterdir() if p.name.endswith(".dist-info"))
    return result


def use_carried_wheels(carry: Path, needs_bitsandbytes: bool) -> None:
    """On the device: install the carried wheels into /tmp and re-execute this step with them first on
    the path (torch, Triton and the rest come from the image). A no-op where the libraries are in place."""
    os.environ.setdefault(T0_ENV, str(time.time()))
    if os.environ.get(SITE_ENV):
        return
    try:
        import transformers

        ready = hasattr(transformers, "DiffusionGemmaForBlockDiffusion")
        if needs_bitsandbytes:
            import bitsandbytes  # noqa: F401
    except ImportError:
        ready = False
    if ready:
        return
    wheels = sorted((carry / "wheels").glob("*.whl"))
    if not wheels:
        raise SystemExit(f"transformers with DiffusionGemma is missing and {carry / 'wheels'} holds no wheels: "
                         "run `python bench/gpu_runbook.py prepare` here and carry .gpu-carry/wheels")  # fmt: skip
    site = Path(tempfile.gettempdir()) / "redraft-site"
    # name-version of each wheel; a machine still warm from the last call has them installed already.
    wanted = {"-".join(w.name.split("-")[:2]) + ".dist-info" for w in wheels}
    if not wanted <= {p.name for p in site.glob("*.dist-info")}:
        say(f"installing {len(wheels)} carried wheels into {site}")
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile", "--no-cache-dir",
             "--upgrade", "--target", str(site), *map(str, wheels)],
            check=True,
        )  # fmt: skip
    env = {**os.environ, SITE_ENV: str(site), "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    versions = {"python": sys.version.split()[0]}
    for name in ("torch", "transformers", "bitsandbytes", "triton", "tokenizers", "safetensors", "huggingface-hub"):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "absent"
    return versions


# ---- corpus ----------------------------------------------------------------------------------------


def compress_to(source: Path, target: Path) -> None:
    with source.open("rb") as f, lzma.open(target, "wb", preset=6) as out:
        shutil.copyfileobj(f, out)


def prepare_corpus(carry: Path, shared: Path) -> dict[str, Any]:
    """``corpus-a`` and ``corpus-b``: TinyStories (xz) and the corpus-xl shards of each training call."""
    rows: dict[str, Any] = {}
    stories = carry / "stories-cache"
    stories.mkdir(parents=True, exist_ok=True)
    for name in STORY_FILES:
        if not (stories / f"{name}.xz").exists():
            compress_to(shared / "corpus" / name, stories / f"{name}.xz")
    for folder, shards in (("corpus-a", CORPUS_A_SHARDS), ("corpus-b", CORPUS_B_SHARDS)):
        target = carry / folder
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for name in STORY_FILES:
            shutil.copyfile(stories / f"{name}.xz", target / f"{name}.xz")
        for shard in shards:
            source = shared / "corpus-xl" / f"{shard}.txt.xz"
            if folder == "corpus-a":
                shutil.copyfile(source, target / source.name)
            else:
                rows[f"{folder}-books"] = head_of_shard(source, target / source.name, CORPUS_B_BYTES)
        for text in ("SOURCE.md", "manifest.tsv"):  # the licence record travels with the books
            shutil.copyfile(shared / "corpus-xl" / text, target / f"corpus-xl-{text}")
        rows[folder] = {"files": sorted(p.name for p in target.iterdir()), "bytes": folder_bytes(target)}
    return rows


def head_of_shard(source: Path, target: Path, compressed_bytes: int) -> int:
    """The first books of a shard, as many as about ``compressed_bytes`` of xz hold (same format)."""
    with lzma.open(source, "rt", encoding="utf-8") as f:
        books = f.read().split("\n<|endoftext|>\n")
    ratio = source.stat().st_size / sum(len(b.encode()) for b in books)  # xz bytes per text byte
    kept: list[str] = []
    size = 0
    for book in books:
        size += len(book.encode())
        if size * ratio > compressed_bytes and kept:
            break
        kept.append(book)
    with lzma.open(target, "wt", encoding="utf-8", preset=6) as out:
        out.write("\n<|endoftext|>\n".join(kept))
    return len(kept)


def unpack_corpus(source: Path, target: Path) -> list[str]:
    """TinyStories as they are, each corpus-xl book as a file of its own (``xl_<shard>_<book>.txt``), so the
    training code reads them like the shared corpus and the held-out split (by file and section) stays the
    same whichever call unpacks them."""
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.txt.xz")):
        with lzma.open(path, "rt", encoding="utf-8") as f:
            text = f.read()
        stem = path.name[: -len(".txt.xz")]
        if stem.startswith("tinystories"):
            (target / f"{stem}.txt").write_text(text, encoding="utf-8")
            continue
        for index, book in enumerate(part for part in text.split("\n<|endoftext|>\n") if part.strip()):
            (target / f"xl_{stem}_{index:04d}.txt").write_text(book, encoding="utf-8")
    for path in source.glob("corpus-xl-*"):  # the books' sources and licence, kept beside the corpus
        shutil.copyfile(path, target.parent / path.name)
    return sorted(p.name for p in target.glob("*.txt"))


# ---- the plan ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceCall:
    step: str
    carry: tuple[str, ...]
    budget_s: int  # the step keeps to this (the tool's own limit is 600 s); the machine's start not included
    then: str  # what to do here with what came back

    @property
    def minutes(self) -> float:
        return round(self.budget_s / 60 * 2) / 2

    @property
    def command(self) -> str:
        return f"PYTHONUNBUFFERED=1 python3 bench/gpu_runbook.py {self.step}"

    def invocation(self) -> dict[str, Any]:
        return {"command": self.command, "carry": list(self.carry), "timeout_s": CALL_LIMIT_S}


CALLS = (
    DeviceCall("bench26b", (".gpu-carry/wheels",), 420,
               "`python bench/gpu_runbook.py readme-table FILES_AT/bench26b.json --write`, then commit the README "
               "table with bench26b.json under runs/gpu/ (not committed) quoted in the message"),
    DeviceCall("engine-vs-library", (".gpu-carry/wheels",), 150,
               "note `ratio_ms_per_pass` from engine-vs-library.json in the README's Benchmarks section"),
    DeviceCall("train-a", (".gpu-carry/wheels", ".gpu-carry/corpus-a"), 480,
               "`python bench/gpu_runbook.py take-back train-a FILES_AT` (seconds), then train-b at once: a machine "
               "still warm keeps the full checkpoint, a fresh one resumes from the pieces"),
    DeviceCall("train-b", (".gpu-carry/wheels", ".gpu-carry/corpus-b", ".gpu-carry/resume"), 480,
               "`python bench/gpu_runbook.py take-back train-b FILES_AT` (the model into runs/gpu/model), then the "
               "CPU checks below"),
)  # fmt: skip


STEP_BUDGET = {call.step: call.budget_s for call in CALLS}


def plan_markdown() -> str:
    lines = [
        "1. Here, before asking for the machine: `python bench/gpu_runbook.py prepare` (wheels and corpus into "
        "`.gpu-carry/`, every call's carry checked against 64 MiB) and `python bench/gpu_runbook.py --dry-run` "
        "(every step at toy scale, a few minutes). Then `status`: `can_start_another` must be true.",
        "2. Four `run` calls, in this order, back to back (the machine stays warm 30 s after a call; each call "
        "below is one command of at most 10 minutes, about "
        f"{sum(c.minutes for c in CALLS):.0f} minutes of the 30 in all, plus a minute or two to start). If less "
        "than 24 minutes are left, skip engine-vs-library; if less than 19, run bench26b only.",
        "",
    ]
    for number, call in enumerate(CALLS, 1):
        lines += [
            f"   {number}. **{call.step}** (about {call.minutes:g} min): `run` with",
            "      ```json",
            f"      {json.dumps(call.invocation())}",
            "      ```",
            f"      then, here: {call.then}.",
        ]
    lines += [
        "3. `give_back` as soon as train-b has returned.",
        "4. Here, on CPU: `python bench/builtin_model_eval.py --model runs/gpu/model --json runs/gpu/eval.json` "
        "(the figures comparable with the shipped model's) and `python bench/engine_speed.py --model runs/gpu/model "
        "--candidates 4` (CPU passes). Ship it (`resources/models/redraft-tiny`, then "
        "`python -m model.training.card --model resources/models/redraft-tiny --report runs/gpu/eval.json`) only "
        "if its fills judge better than the shipped model's and its folder is at most 60 MB.",
    ]
    return "\n".join(lines)


def carry_budget(carry: Path = CARRY, root: Path = ROOT) -> dict[str, Any]:
    """Bytes each call sends (tree + its carried folders) and the room left for train-b's checkpoint."""
    tree = tree_bytes(root)
    calls: dict[str, dict[str, Any]] = {}
    carried_b: dict[str, int] = {}
    for call in CALLS:
        carried = {path: folder_bytes(root / path) for path in call.carry}
        calls[call.step] = {"tree": tree, "carried": carried, "total": tree + sum(carried.values())}
        if call.step == "train-b":
            carried_b = carried
    # train-b's checkpoint pieces are not there yet when this is computed: the room is what the rest leaves.
    room = CARRY_LIMIT - tree - sum(v for k, v in carried_b.items() if not k.endswith("resume")) - 1 * MIB
    return {"tree_bytes": tree, "calls": calls, "checkpoint_room_bytes": room,
            "over": [step for step, c in calls.items() if c["total"] > CARRY_LIMIT]}  # fmt: skip


# ---- step 1: the 26B-A4B at 4 bit ------------------------------------------------------------------


def nf4_check(device: Any, hidden: int, inner: int, experts: int = 8) -> list[dict[str, Any]]:
    """The fused kernel on the device against bitsandbytes' decoding: the same experts multiplied through
    both expert kernels, and one expert's rows against ``bitsandbytes.functional.dequantize_4bit``."""
    import copy

    import torch

    from model import nf4_kernel
    from model.quantization import QuantizedExperts

    rows: list[dict[str, Any]] = []
    for double_quant in (False, True):
        for dtype in (torch.float32, torch.bfloat16):
            torch.manual_seed(0)
            module = QuantizedExperts(experts, hidden, inner, "gelu_pytorch_tanh", double_quant=double_quant,
                                      compute_dtype=dtype, device=device)  # fmt: skip
            module.load_projection("gate_up", torch.randn(experts, 2 * inner, hidden) * 0.05)
            module.load_projection("down", torch.randn(experts, hidden, inner) * 0.05)
            fused, unfused = module, copy.deepcopy(module)
            fused.kernel, unfused.kernel = "fused", "dequantize"
            if not fused.uses_fused_kernel():
                rows.append({"double_quant": double_quant, "dtype": str(dtype), "skipped": "no fused kernel here"})
                continue
            generator = torch.Generator().manual_seed(1)
            tokens = 300
            x = torch.randn(tokens, hidden, generator=generator).to(device)
            index = torch.randint(0, experts, (tokens, 2), generator=generator).to(device)
            weights = torch.rand(tokens, 2, generator=generator).to(device)
            with torch.no_grad():
                got, want = fused(x, index, weights).float(), unfused(x, index, weights).float()
                counts = [37, 0, 5, 64, 1, 0, 16, 3][:experts] + [0] * max(0, experts - 8)
                rows_in = torch.randn(sum(counts), hidden, generator=generator).to(device, dtype)
                direct = nf4_kernel.nf4_grouped_matmul(rows_in, counts, module.nf4_matrices("gate_up")).float()
                reference, start = [], 0
                for expert, count in enumerate(counts):
                    weight = module.dequantize("gate_up", expert, expert + 1, torch.float32)[0]
                    reference.append(rows_in[start : start + count].float() @ weight.T)
                    start += count
                reference_t = torch.cat(reference)
            scale = float(want.abs().max())
            error = float((got - want).abs().max()) / scale
            direct_error = float((direct - reference_t).abs().max()) / float(reference_t.abs().max())
            # Triton's float32 tl.dot runs in TF32 on CUDA (10-bit mantissas), the interpreter in full float32.
            tolerance = (1e-4 if torch.device(device).type == "cpu" else 1e-2) if dtype == torch.float32 else 3e-2
            rows.append({
                "double_quant": double_quant, "dtype": str(dtype).replace("torch.", ""),
                "max_error_vs_dequantize": error, "max_error_vs_bitsandbytes_decoding": direct_error,
                "tolerance": tolerance, "ok": error <= tolerance and direct_error <= tolerance,
            })  # fmt: skip
            say(f"NF4 check {rows[-1]}")
    return rows


def step_bench26b(out: Path, dry_run: bool, budget_s: float) -> dict[str, Any]:
    import gc
    import logging

    import torch

    from model.architecture import TextModelShape, build_config, canvas_length_of, text_config_of
    from model.doctor import GIB, cuda_device_info, diffusiongemma_26b_a4b_config, preflight
    from model.quantization import QuantizedExperts, module_bytes

    # bitsandbytes logs on every int8 call that bf16 inputs are cast to fp16 (its own kernels' choice).
    logging.getLogger("bitsandbytes.autograd._functions").setLevel(logging.ERROR)
    report = Report(out, "bench26b")
    report["versions"] = library_versions()
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    if dry_run or not cuda:
        # Toy scale with the real structure (MoE beside dense MLP, k=v full layers); prefixes scaled down.
        config = build_config(TextModelShape(
            vocab_size=512, hidden_size=128, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
            num_key_value_heads=1, head_dim=64, global_head_dim=128, num_global_key_value_heads=1, num_experts=8,
            top_k_experts=2, moe_intermediate_size=64, sliding_window=32, canvas_length=32, full_attention_every=2,
        ))  # fmt: skip
        prefixes, passes, real = (0, 16, 64), 2, False
    else:
        config, prefixes, passes, real = diffusiongemma_26b_a4b_config(), (0, 2048, 8192), 5, True
    text = text_config_of(config)
    report["device"] = cuda_device_info().describe() if cuda else "CPU"
    report["config"] = "DiffusionGemma-26B-A4B (real text config, random weights)" if real else "toy (dry run)"
    report["canvas"] = canvas_length_of(config)
    say(f"{report['device']}; {report['config']}")
    try:
        report["nf4_check"] = nf4_check(device, int(text.hidden_size), int(text.moe_intermediate_size or 0),
                                        8 if real else 4)  # fmt: skip
    except Exception as error:  # a kernel that does not build here is a finding; the timings still run
        report["nf4_check"] = [{"ok": False, "error": f"{type(error).__name__}: {error}"}]
        say(f"NF4 check failed: {report['nf4_check']}")

    from quant_memory import measure, random_quantized_model

    kernels = ["fused", "dequantize"] if cuda or dry_run else ["dequantize"]
    for precision in ("4bit", "bf16"):
        if elapsed_s() > budget_s * 0.75:
            report.append("skipped", f"{precision}: out of time")
            break
        if cuda and precision == "bf16" and not preflight(config, "bf16", cuda_device_info()).fits:
            report.append("skipped", "bf16: does not fit this GPU (preflight)")
            continue
        if not cuda and precision == "4bit" and not dry_run:
            continue
        start = time.perf_counter()
        try:
            model = random_quantized_model(config, precision, device)
        except Exception as error:  # bitsandbytes missing or broken: say so in the report, go on with bf16
            report.append("skipped", f"{precision}: could not build ({type(error).__name__}: {error})")
            continue
        weights = module_bytes(model)
        say(f"{precision}: weights {weights / GIB:.2f} GiB, built in {time.perf_counter() - start:.0f} s")
        experts = [m for m in model.modules() if isinstance(m, QuantizedExperts)]
        for kernel in kernels if experts else ["none"]:
            for module in experts:
                module.kernel = kernel
            for prefix in prefixes:
                if elapsed_s() > budget_s * 0.9:
                    report.append("skipped", f"{precision} {kernel} prefix {prefix}: out of time")
                    continue
                row: dict[str, Any]
                try:
                    row = dict(measure(model, config, prefix, passes, device))
                except torch.cuda.OutOfMemoryError:
                    row = {"prefix": prefix, "ms_per_pass": None, "peak_bytes": None, "error": "out of memory"}
                    torch.cuda.empty_cache()
                row = {"precision": precision, "expert_kernel": kernel, "weights_bytes": weights, **row}
                if row["ms_per_pass"]:
                    # Tokens a pass must settle for 1,500 tokens per second (the target).
                    row["tokens_per_pass_for_1500_tok_s"] = round(1500 * row["ms_per_pass"] / 1000, 1)
                say(f"  {json.dumps(row)}")
                report.append("rows", row)
        del model, experts
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
    report["readme_rows"] = readme_rows(report.data)
    report["targets"] = targets_26b(report.data.get("rows", []), prefixes[1])
    return report.data


def targets_26b(rows: list[dict[str, Any]], context: int) -> dict[str, Any]:
    """The issue's targets at 4 bit: at most 16 GiB peak at 2k context, and the tokens each pass must settle
    for 1,500 tokens per second with the faster kernel (the sampler's tokens per pass need a real checkpoint)."""
    from model.doctor import GIB

    at = [r for r in rows if r["precision"] == "4bit" and r["prefix"] == context and r.get("ms_per_pass")]
    if not at:
        return {"measured": False}
    best = min(at, key=lambda r: r["ms_per_pass"])
    return {
        "measured": True, "context": context, "kernel": best["expert_kernel"],
        "peak_gib": round(best["peak_bytes"] / GIB, 2), "peak_at_most_16_gib": best["peak_bytes"] <= 16 * GIB,
        "ms_per_pass": round(best["ms_per_pass"], 1), "tokens_per_pass_for_1500_tok_s": round(
            1500 * best["ms_per_pass"] / 1000, 1),
    }  # fmt: skip


def readme_rows(data: dict[str, Any]) -> list[str]:
    """The README's 26B table rows (4bit, bf16) from bench26b.json."""
    from model.doctor import GIB

    rows = data.get("rows", [])
    lines = []
    for precision, label in (("4bit", "4bit (NF4 experts, int8 linears)"), ("bf16", "bf16")):
        mine = [r for r in rows if r["precision"] == precision and r.get("ms_per_pass")]
        if not mine:
            continue
        prefixes = sorted({r["prefix"] for r in mine})
        weights = mine[0]["weights_bytes"] / GIB
        kernels = sorted({r["expert_kernel"] for r in mine}, key=lambda k: k != "fused")

        def cell(kernel: str, key: str, prefixes: list[int] = prefixes, mine: list[dict] = mine) -> str:
            values = [next((r[key] for r in mine if r["prefix"] == p and r["expert_kernel"] == kernel), None)
                      for p in prefixes]  # fmt: skip
            if key == "peak_bytes":
                return " / ".join(f"{v / GIB:.1f}" if v else "—" for v in values) + " GiB"
            return " / ".join(f"{v:.0f}" if v else "—" for v in values) + " ms"

        peak = cell(kernels[0], "peak_bytes")
        speed = "; ".join(f"{cell(k, 'ms_per_pass')} ({k})" for k in kernels if k != "none") or cell(
            kernels[0], "ms_per_pass"
        )
        lines.append(f"| {label} | {weights:.1f} GiB | measured | {peak} | {speed} |")
    return lines


README_TABLE_HEAD = (
    "| precision | weights | estimated total at 2k context | peak VRAM at 0 / 2k / 8k | ms per pass at 0 / 2k / 8k |"
)


def write_readme_table(data: dict[str, Any], readme: Path) -> str:
    """Replace the measured cells of the README's 26B table: each precision's row keeps its estimate."""
    text = readme.read_text(encoding="utf-8")
    if README_TABLE_HEAD not in text:
        raise SystemExit(f"{readme} has no 26B table (its header changed?)")
    for line in readme_rows(data):
        label = line.split("|")[1].strip()
        pattern = re.compile(rf"^\| {re.escape(label)} \|([^|\n]*)\|([^|\n]*)\|[^\n]*$", re.M)
        match = pattern.search(text)
        if match is None:
            continue
        cells = line.split("|")
        new = f"| {label} |{match.group(1)}|{match.group(2)}|{cells[4]}|{cells[5]}|"
        text = text[: match.start()] + new + text[match.end() :]
    device = data.get("device", "?")
    note = f"Measured with `bench/gpu_runbook.py bench26b` on {device} (random weights, canvas {data.get('canvas')})."
    text = re.sub(r"^Measured with `bench/gpu_runbook.py bench26b`[^\n]*\n\n", "", text, flags=re.M)
    at = text.index(README_TABLE_HEAD)
    end = text.index("\n\n", at) + 2  # the paragraph after the table
    text = text[:end] + note + "\n\n" + text[end:]
    readme.write_text(text, encoding="utf-8")
    return text


# ---- step 2: engine vs library -----------------------------------------------------------------------


def step_engine_vs_library(out: Path, dry_run: bool, budget_s: float) -> dict[str, Any]:
    import torch
    from engine_vs_library import build_mid_checkpoint, compare, describe

    from model import load
    from model.tiny import build_tiny_checkpoint

    report = Report(out, "engine-vs-library")
    report["versions"] = library_versions()
    cuda = torch.cuda.is_available() and not dry_run
    with tempfile.TemporaryDirectory() as tmp:
        if dry_run:
            folder, name = build_tiny_checkpoint(Path(tmp) / "tiny"), "tiny (random)"
        else:
            folder, name = build_mid_checkpoint(Path(tmp) / "mid"), "mid (random, ~0.27B)"
        runs = [("cuda", "bf16")] if cuda else [("cpu", "fp32")]
        if cuda:
            runs.append(("cuda", "fp32"))
        for device, precision in runs:
            if elapsed_s() > budget_s * 0.6:
                report.append("skipped", f"{device} {precision}: out of time")
                continue
            loaded = load(folder, device=device, precision=precision)
            result = compare(loaded, _evl_prompt(), loaded.canvas_length, 32 if not dry_run else 8,
                             3 if not dry_run else 1, f"{name} {precision}")  # fmt: skip
            say(describe(result))
            report.append("comparisons", result.as_dict())
            del loaded
    return report.data


def _evl_prompt() -> str:
    from engine_vs_library import PROMPT

    return PROMPT


# ---- step 3: the next built-in model ---------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """One size the runbook may train: train.py's shape flags."""

    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    experts: int
    top_k: int
    moe_intermediate: int

    def flags(self) -> list[str]:
        return ["--hidden-size", str(self.hidden), "--layers", str(self.layers), "--heads", str(self.heads),
                "--kv-heads", str(self.kv_heads), "--head-dim", str(self.head_dim), "--intermediate-size",
                str(self.intermediate), "--experts", str(self.experts), "--top-k", str(self.top_k),
                "--moe-intermediate-size", str(self.moe_intermediate)]  # fmt: skip


# Smallest first. The shipped model is 4.8M (192 wide, 4 layers, 4 experts; encoder and decoder each have
# the layers). The cap in step_train_a (the compact checkpoint in train-b's carry room, ~13M) stops the
# ladder well before a float32 export reaches the shipped folder's 60 MB.
LADDER = (
    Candidate("xs", 192, 4, 3, 1, 64, 384, 8, 2, 192),  # 6.7M: the shipped shape with 8 experts
    Candidate("s", 192, 6, 3, 1, 64, 384, 8, 2, 192),  # 9.0M
    Candidate("m", 224, 6, 4, 1, 56, 448, 8, 2, 224),  # 11.9M
)
TOY_LADDER = (Candidate("toy-s", 32, 2, 2, 1, 16, 64, 4, 2, 32), Candidate("toy-m", 48, 2, 2, 1, 16, 96, 4, 2, 48))
# Recipe flags common to both calls. Batch 256 keeps an H100 busy at this size; the router loss keeps
# experts in use (the shipped run without it left two of four nearly idle).
GPU_RECIPE = ["--batch-size", "256", "--lr", "2e-3", "--warmup-steps", "200", "--router-aux-weight", "0.01",
              "--word-aligned", "--device", "cuda", "--bf16", "--threads", "4", "--log-every", "100",
              "--checkpoint-minutes", "2"]  # fmt: skip
TOY_RECIPE = ["--batch-size", "4", "--lr", "3e-3", "--warmup-steps", "2", "--router-aux-weight", "0.01",
              "--word-aligned", "--threads", "1", "--log-every", "5", "--checkpoint-minutes", "100"]  # fmt: skip
TOKENS_PER_PARAMETER = 20  # compute-optimal training tokens per parameter (Chinchilla), the sizing rule


def candidate_parameters(candidate: Candidate, vocab: int, canvas: int) -> int:
    import torch
    from transformers import DiffusionGemmaForBlockDiffusion

    from model.architecture import build_config
    from model.training.train import parse_args, shape_from_args

    args = parse_args(["--run-dir", "unused", "--vocab-size", str(vocab), "--canvas", str(canvas), *candidate.flags()])
    with torch.device("meta"):
        model = DiffusionGemmaForBlockDiffusion(build_config(shape_from_args(args)))
    return sum(p.numel() for p in model.parameters())


def choose_size(probes: list[dict[str, Any]], train_seconds: float, cap: int) -> dict[str, Any]:
    """The largest candidate under the size cap that the time left trains on at least TOKENS_PER_PARAMETER
    tokens per parameter at its measured speed; the smallest measured one if none does."""
    fitting = [p for p in probes if p["parameters"] <= cap]
    if not fitting:
        raise SystemExit(f"no candidate under the cap of {cap} parameters")
    for probe in fitting:
        probe["planned_tokens"] = int(train_seconds / probe["s_per_step"] * probe["tokens_per_step"])
        probe["tokens_per_parameter"] = round(probe["planned_tokens"] / probe["parameters"], 1)
    enough = [p for p in fitting if p["tokens_per_parameter"] >= TOKENS_PER_PARAMETER]
    return max(enough, key=lambda p: p["parameters"]) if enough else min(fitting, key=lambda p: p["s_per_step"])


def compact_checkpoint(run_dir: Path, target: Path) -> float:
    """The resumable part of a checkpoint small enough to carry: bf16 weights, the sampler and noise states,
    counters and history; no optimizer state (train.py then warms the rate up again over fresh moments)."""
    import torch

    state = torch.load(run_dir / "checkpoint.pt", weights_only=False, map_location="cpu")
    compact = {key: value for key, value in state.items() if key != "optimizer"}
    compact["model"] = {k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in state["model"].items()}
    compact["generator"] = state["generator"].cpu()
    torch.save(compact, target)
    return float(state["elapsed"])  # seconds of training so far (train.py's --max-minutes counts them too)


def corpus_listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.txt"))


def _train(argv: list[str]) -> dict[str, Any]:
    from model.training.train import parse_args, train

    result: dict[str, Any] = train(parse_args(argv))
    return result


def _train_keeping_checkpoint(argv: list[str], run_dir: Path, report: Report) -> dict[str, Any]:
    """Train; if training breaks off (out of memory, a kernel), go on from the last checkpoint written, so
    the call still returns a model, and say so in the report."""
    try:
        return _train(argv)
    except Exception as error:
        report["training_error"] = f"{type(error).__name__}: {error}"
        say(f"training stopped: {report['training_error']}; going on from the last checkpoint")
        import torch

        if not (run_dir / "checkpoint.pt").exists():
            raise
        state = torch.load(run_dir / "checkpoint.pt", weights_only=False, map_location="cpu")
        return {"step": state["step"], "history": state["history"]}


def _heldout(history: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((h for h in reversed(history) if "heldout_loss" in h), None)


def step_train_a(out: Path, dry_run: bool, budget_s: float, carry: Path, work: Path) -> dict[str, Any]:
    report = Report(out, "train-a")
    report["versions"] = library_versions()
    import torch

    cuda = torch.cuda.is_available() and not dry_run
    train_dir = work / "train"
    if train_dir.exists():
        shutil.rmtree(train_dir)  # a fresh start: step A always begins a new run
    run_dir, corpus = train_dir / "run", train_dir / "corpus"
    books = unpack_corpus(carry / "corpus-a", corpus)
    report["corpus"] = {"files": len(books), "bytes": folder_bytes(corpus)}
    say(f"corpus: {len(books)} files, {folder_bytes(corpus) / MIB:.0f} MiB of text")
    # The shipped tokenizer: the held-out split's text is tokenized as before, and no BPE training here.
    (run_dir / "tokenizer").mkdir(parents=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(SHIPPED / name, run_dir / "tokenizer" / name)
    from transformers import AutoTokenizer

    vocab = len(AutoTokenizer.from_pretrained(str(run_dir / "tokenizer")))
    canvas = 64  # the built-in model's; the dry run too (a 2-block rewrite with several candidates fails in the engine)
    recipe = [*(GPU_RECIPE if cuda else TOY_RECIPE), "--vocab-size", str(vocab), "--canvas", str(canvas)]
    ladder = LADDER if not dry_run else TOY_LADDER
    base = ["--run-dir", str(run_dir), "--corpus", str(corpus), *recipe]
    # prepare's arithmetic travels with the corpus (the folders named in carry are all that goes).
    budget_file = carry / "corpus-a" / "budget.json"
    budget = json.loads(budget_file.read_text()) if budget_file.exists() else {}
    room = budget.get("checkpoint_room_bytes", 24 * MIB)
    # Two caps: the compact checkpoint (2 bytes a parameter, plus ~2% of states and history) must fit the
    # room train-b's carry leaves; the float32 export must keep the shipped folder under 60 MB.
    cap = int(min(room / 2.04, (SHIP_LIMIT - 2_000_000) / 4))
    report["parameter_cap"] = {"cap": cap, "checkpoint_room_bytes": room, "ship_limit_bytes": SHIP_LIMIT}

    probe_steps = 20 if not dry_run else 2
    batch = int(recipe[recipe.index("--batch-size") + 1])

    def probe_ladder(base: list[str]) -> list[dict[str, Any]]:
        probes = []
        for candidate in ladder:
            parameters = candidate_parameters(candidate, vocab, canvas)
            if parameters > cap:
                report.append("probes", {"name": candidate.name, "parameters": parameters, "skipped": "over the cap"})
                continue
            try:
                probe = _train([*base, *candidate.flags(), "--probe", str(probe_steps)])
            except Exception as error:  # a kernel missing on this device for this shape: try the others
                report.append("probes", {"name": candidate.name, "error": f"{type(error).__name__}: {error}"})
                continue
            # Mean prefix of ExampleMix's lengths (58) and the bos token: the encoder's share of a step.
            row = {"name": candidate.name, "parameters": parameters, "s_per_step": probe["s_per_step"],
                   "tokens_per_step": batch * (canvas + 59), "flags": candidate.flags()}  # fmt: skip
            row["tokens_per_s"] = round(row["tokens_per_step"] / row["s_per_step"])
            say(f"probe {json.dumps(row)}")
            probes.append(row)
            report.append("probes", row)
        return probes

    probes = probe_ladder(base)
    if not probes and "--bf16" in base:  # bf16 autocast failed on every size: train in float32 (TF32)
        base = [a for a in base if a != "--bf16"]
        probes = probe_ladder(base)
    if not probes:
        raise SystemExit("every candidate failed its probe (see train-a.json)")
    # The time both calls leave for training: this call's remainder (less ~75 s for the held-out loss and
    # the checkpoint), and train-b's.
    a_seconds = max(30.0, budget_s - elapsed_s() - (75 if not dry_run else 10))
    # train-b spends ~60 s on wheels, corpus and pools, ~150 s evaluating, ~30 s exporting and in reserve.
    b_seconds = float(STEP_BUDGET["train-b"] - 240) if not dry_run else 5.0
    chosen = choose_size(probes, a_seconds + b_seconds, cap)
    max_steps = max(10, int((a_seconds + b_seconds) / chosen["s_per_step"]))
    if dry_run:
        max_steps = 12
    argv = [*base, *chosen["flags"], "--max-steps", str(max_steps)]
    report["chosen"] = {**chosen, "max_steps": max_steps, "a_seconds": round(a_seconds), "b_seconds": b_seconds}
    report["train_args"] = [a for a in argv if a not in ("--run-dir", str(run_dir), "--corpus", str(corpus))]
    say(f"chosen {chosen['name']} ({chosen['parameters'] / 1e6:.1f}M parameters), {max_steps} steps in all")
    stop = ["--max-minutes", f"{a_seconds / 60:.3f}"] if not dry_run else ["--stop-at-step", str(max_steps // 2)]
    result = _train_keeping_checkpoint([*argv, *stop], run_dir, report)
    report["step_reached"] = result["step"]
    report["heldout"] = _heldout(result["history"])
    (train_dir / "corpus.json").write_text(json.dumps(corpus_listing(corpus)))
    report["train_elapsed_s"] = compact_checkpoint(run_dir, train_dir / "compact.pt")
    manifest = split_file(train_dir / "compact.pt", out, "checkpoint", PIECE_BYTES if not dry_run else MIB)
    report["checkpoint"] = manifest
    (train_dir / "train-a.json").write_text(json.dumps(report.data, default=str))
    say(f"checkpoint: step {result['step']}, {manifest['bytes'] / MIB:.1f} MiB in {len(manifest['pieces'])} pieces")
    return report.data


def step_train_b(out: Path, dry_run: bool, budget_s: float, carry: Path, work: Path) -> dict[str, Any]:
    report = Report(out, "train-b")
    report["versions"] = library_versions()
    train_dir = work / "train"
    run_dir, corpus = train_dir / "run", train_dir / "corpus"
    warm = (run_dir / "checkpoint.pt").exists() and (train_dir / "train-a.json").exists()
    resume = carry / "resume"
    if warm:
        a = json.loads((train_dir / "train-a.json").read_text())
        say("warm machine: resuming train-a's full checkpoint (optimizer state included)")
    elif (resume / "train-a.json").exists():
        a = json.loads((resume / "train-a.json").read_text())
        if train_dir.exists():
            shutil.rmtree(train_dir)
        (run_dir / "tokenizer").mkdir(parents=True)
        for name in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copyfile(SHIPPED / name, run_dir / "tokenizer" / name)
        join_pieces(a["checkpoint"], resume, run_dir / "checkpoint.pt")
        say("fresh machine: resuming from the carried compact checkpoint (fresh optimizer moments)")
    else:
        raise SystemExit("no checkpoint: neither train-a's run on this machine nor carried pieces in "
                         f"{resume} (run `python bench/gpu_runbook.py take-back train-a FILES_AT` first)")  # fmt: skip
    report["resumed_from"] = "full checkpoint (warm machine)" if warm else "compact checkpoint (carried)"
    before = corpus_listing(corpus)
    unpack_corpus(carry / "corpus-b", corpus)
    after = corpus_listing(corpus)
    if after != before and (run_dir / "pools").exists():
        shutil.rmtree(run_dir / "pools")  # new books: the pools are tokenized again (same held-out rule)
    report["corpus"] = {"files": len(after), "added": len(set(after) - set(before)), "bytes": folder_bytes(corpus)}
    argv = ["--run-dir", str(run_dir), "--corpus", str(corpus), *a["train_args"]]
    # train.py's --max-minutes counts the run's whole training time, train-a's included.
    allowance = max(30.0, budget_s - elapsed_s() - 180) if not dry_run else 600.0
    minutes = (a["train_elapsed_s"] + allowance) / 60
    result = _train_keeping_checkpoint([*argv, "--max-minutes", f"{minutes:.3f}"], run_dir, report)
    report["step_reached"] = result["step"]
    report["max_steps"] = int(a["train_args"][a["train_args"].index("--max-steps") + 1])
    report["heldout"] = _heldout(result["history"])
    report["history"] = [h for h in result["history"] if "heldout_loss" in h]

    from model.training.export import export

    model_dir = train_dir / "model"
    if model_dir.exists():
        shutil.rmtree(model_dir)
    export(run_dir, model_dir)
    for name in ("SOURCE.md", "manifest.tsv"):  # which books it learned from, and their licence
        source = corpus.parent / f"corpus-xl-{name}"
        if source.exists():
            shutil.copyfile(source, model_dir / f"corpus-xl-{name}")
    size = folder_bytes(model_dir)
    report["model_bytes"] = size
    report["model_under_ship_limit"] = size <= SHIP_LIMIT
    say(f"exported {size / 1e6:.1f} MB")
    tar_path = train_dir / "model.tar"
    with tarfile.open(tar_path, "w") as tar:
        tar.add(model_dir, arcname="model")
    report["model"] = split_file(tar_path, out, "model.tar", PIECE_BYTES if not dry_run else 2 * MIB)
    # The evaluation we have (bench/builtin_model_eval.py), on the held-out part of this run's corpus; the
    # figures comparable with the shipped model's are computed here on CPU afterwards (README).
    if elapsed_s() < budget_s - (60 if not dry_run else 0):
        import builtin_model_eval

        counts = ["--fills", "24", "--rewrites", "12", "--show-fills", "6", "--show-rewrites", "3", "--threads", "12"]
        if dry_run:
            counts = ["--fills", "2", "--rewrites", "2", "--show-fills", "1", "--show-rewrites", "1", "--batches",
                      "1", "--candidates", "2", "--threads", "1"]  # fmt: skip
        builtin_model_eval.main(["--model", str(model_dir), "--corpus", str(corpus), "--json", str(out / "eval.json"),
                                 *counts])  # fmt: skip
        figures = json.loads((out / "eval.json").read_text())
        best = figures.get("fills_best_of", figures["fills"])
        # The target is the editor's fills at most 1.2x the original's perplexity (there, a hidden
        # judge's; here the trigram judge's, on this run's held-out text).
        report["eval"] = {"file": "eval.json", "fill_over_original_perplexity": round(
            best["ppl_fill"] / figures["fills"]["ppl_original"], 3)}  # fmt: skip
    else:
        report.append("skipped", "evaluation: out of time (run it here on CPU)")
    return report.data


# ---- here: taking back what a call returned ------------------------------------------------------------


def take_back(step: str, files_at: Path, carry: Path = CARRY, runs: Path = ROOT / "runs" / "gpu") -> Path:
    """After train-a: the checkpoint pieces into ``carry/resume`` (train-b carries them). After train-b: the
    model reassembled and unpacked into ``runs/model``. Every piece is checked against its manifest."""
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
        return resume
    if step == "train-b":
        tar_path = join_pieces(data["model"], files_at, runs / "model.tar")
        target = runs / "model"
        if target.exists():
            shutil.rmtree(target)
        with tarfile.open(tar_path) as tar:
            tar.extractall(runs, filter="data")
        return target
    raise SystemExit(f"take-back knows train-a and train-b, not {step}")


# ---- dry run -----------------------------------------------------------------------------------------------


def toy_corpus(folder: Path, shard: str = "books_00", stories_too: bool = True) -> None:
    """TinyStories-like and book-like text in the carried formats (xz; books joined by end-of-text lines)."""
    folder.mkdir(parents=True, exist_ok=True)
    names, things = ["Lily", "Tom", "Mia", "Ben", "Sam", "Anna"], ["ball", "kite", "cat", "boat", "cake", "dog"]
    # Enough stories over 400 characters and book sections over 1,500 that the evaluation's 2% held out
    # holds both kinds.
    stories = "\n<|endoftext|>\n".join(
        f"One day, {names[i % 6]} went to the park with a {things[i % 6]}. {names[i % 6]} played for {i} hours. "
        f"The sun was warm and the birds sang in the tall trees by the pond. A dog ran after the {things[i % 5]}, "
        f"and everyone laughed. Then it began to rain, so they sat under a tree and shared a cake. Mom came with "
        f"a big red umbrella, and they all walked back along the river, singing a happy song about the rain. "
        f"When the sun went down {names[(i + 1) % 6]} said it was time to go home." for i in range(300)
    )  # fmt: skip
    if stories_too:
        with lzma.open(folder / "tinystories_toy.txt.xz", "wt", encoding="utf-8") as f:
            f.write(stories)
    books = []
    first = 0 if shard == "books_00" else 100
    for b in range(first, first + 100):
        paragraphs = [
            f"Paragraph {i} of book {b}. The old man walked slowly along the road to the {things[i % 6]} market,\n"
            f"thinking of the house where he had been young and of {names[(i + b) % 6]}." for i in range(80)
        ]  # fmt: skip
        books.append("\n\n".join(paragraphs))
    with lzma.open(folder / f"{shard}.txt.xz", "wt", encoding="utf-8") as f:
        f.write("\n<|endoftext|>\n".join(books))


def dry_run(out: Path) -> dict[str, Any]:
    """Every step at toy scale on CPU, each in its own process as on the device, each output checked
    against the limits of what comes back; then the take-backs and the reassembled model loaded."""
    out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"steps": {}}
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="redraft-dry-") as tmp_name:
        tmp = Path(tmp_name)
        carry, work = tmp / "carry", tmp / "work"
        toy_corpus(carry / "corpus-a")
        (carry / "corpus-a" / "budget.json").write_text(json.dumps({"checkpoint_room_bytes": 3 * MIB}))
        toy_corpus(carry / "corpus-b", "books_01", stories_too=False)
        shutil.copyfile(carry / "corpus-a" / "tinystories_toy.txt.xz", carry / "corpus-b" / "tinystories_toy.txt.xz")
        real = CARRY / "wheels"
        if any(real.glob("*.whl")):
            summary["wheels"] = check_wheels(real, tmp / "site")
            summary["wheels"]["import_check"] = slim_import_check(real, tmp / "slim")
        else:
            summary["wheels"] = synthetic_wheel_check(tmp / "synthetic")
        say(f"wheels: {json.dumps(summary['wheels'])[:400]}")
        for step in ("bench26b", "engine-vs-library", "train-a", "train-b"):
            step_out = out / f"dry-{step}"
            if step_out.exists():
                shutil.rmtree(step_out)
            if step == "train-b":
                # First as on a machine still warm (train-a's folder there), then as on a fresh one: only
                # the pieces that came back, taken back as README says.
                warm_out = out / "dry-train-b-warm"
                if warm_out.exists():
                    shutil.rmtree(warm_out)
                shutil.copytree(work, tmp / "work-warm")
                subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), step, "--dry-run", "--carry", str(carry),
                     "--work", str(tmp / "work-warm")],
                    env={**os.environ, "OUT": str(warm_out), T0_ENV: str(time.time())}, check=True,
                )  # fmt: skip
                summary["steps"]["train-b-warm"] = {"files": sorted(p.name for p in warm_out.iterdir()),
                                                    "back_problems": check_back(warm_out)}  # fmt: skip
                take_back("train-a", out / "dry-train-a", carry, tmp / "runs")
                shutil.rmtree(work)
            env = {**os.environ, "OUT": str(step_out), "TRITON_INTERPRET": "1", T0_ENV: str(time.time())}
            t = time.time()
            subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), step, "--dry-run", "--carry", str(carry),
                 "--work", str(work)],
                env=env, check=True,
            )  # fmt: skip
            summary["steps"][step] = {"seconds": round(time.time() - t, 1), "files": sorted(
                p.name for p in step_out.iterdir()), "back_problems": check_back(step_out)}  # fmt: skip
        model = take_back("train-b", out / "dry-train-b", carry, tmp / "runs")
        from model import EditRequest, Engine, load

        loaded = load(model, device="cpu")
        result = Engine(loaded).run(EditRequest(prefix="One day, Lily went to the", suffix=" with a kite.",
                                                mode="fill", max_new_tokens=4, seed=0))  # fmt: skip
        summary["reassembled_model"] = {"parameters": sum(p.numel() for p in loaded.model.parameters()),
                                        "fill": result.texts[0]}  # fmt: skip
    summary["plan"] = [call.invocation() for call in CALLS]
    summary["seconds"] = round(time.time() - started, 1)
    (out / "dry-run.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    return summary


def synthetic_wheel_check(tmp: Path) -> dict[str, Any]:
    """Without downloaded wheels (CI): slimming, the size check and split/join on a made-up wheel."""
    tmp.mkdir(parents=True)
    source = tmp / "source" / "bitsandbytes-0.0.1-py3-none-manylinux_2_24_x86_64.whl"
    source.parent.mkdir()
    members = {"bitsandbytes/__init__.py": b"", "bitsandbytes/libbitsandbytes_cuda130.so": b"k" * 1000,
               "bitsandbytes/libbitsandbytes_cuda118.so": os.urandom(17 * MIB),
               "bitsandbytes-0.0.1.dist-info/METADATA": b"Name: bitsandbytes\n"}  # fmt: skip
    with zipfile.ZipFile(source, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
        record = "".join(f"{name},sha256=x,{len(data)}\n" for name, data in members.items())
        z.writestr("bitsandbytes-0.0.1.dist-info/RECORD", record)
    over = check_wheels(source.parent)["problems"]
    slim = tmp / "wheels"
    slim.mkdir()
    _rewrite_wheel(source, slim / source.name, slim_bitsandbytes)
    with zipfile.ZipFile(slim / source.name) as z:
        kept = sorted(z.namelist())
        record_lines = z.read("bitsandbytes-0.0.1.dist-info/RECORD").decode().splitlines()
    manifest = split_file(source, tmp, "big", 8 * MIB)
    joined = join_pieces(manifest, tmp, tmp / "joined.whl")
    return {"synthetic": True, "unslimmed_problems": over, "slim_problems": check_wheels(slim)["problems"],
            "kept": kept, "record_lines": len(record_lines), "pieces": len(manifest["pieces"]),
            "joined_identical": joined.read_bytes() == source.read_bytes()}  # fmt: skip


def slim_import_check(wheels: Path, tmp: Path) -> dict[str, Any]:
    """The slimmed transformers (pure Python) imported by this Python, building and running DiffusionGemma
    and the tokenizer as the engine does, so a folder the engine needs is never left out."""
    wheel = next(wheels.glob("transformers-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                    "--target", str(tmp), str(wheel)], check=True)  # fmt: skip
    # What the steps use: the engine, generate() (engine_vs_library), the shipped tokenizer, the loaders,
    # the training objective and the export.
    code = (
        "import sys, transformers; assert transformers.__file__.startswith(sys.argv[1]);"
        "import model.streaming, model.quantization, model.training.train, model.training.export;"
        "from transformers import AutoTokenizer; AutoTokenizer.from_pretrained(sys.argv[2]);"
        "sys.path.insert(0, 'bench'); import engine_vs_library as e;"
        "e.main(['--tiny', '--repeats', '1', '--steps', '4', '--device', 'cpu'])"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", code, str(tmp), str(SHIPPED)], env=env, cwd=ROOT, capture_output=True,
                          text=True)  # fmt: skip
    ok = done.returncode == 0 and "same tokens: yes" in done.stdout
    return {"ok": ok, "tail": (done.stdout + done.stderr)[-600:]}


# ---- command line ----------------------------------------------------------------------------------------------


def out_folder(dry_run: bool) -> Path:
    if os.environ.get("OUT"):
        return Path(os.environ["OUT"])
    return Path(tempfile.mkdtemp(prefix="redraft-gpu-out-" if not dry_run else "redraft-dry-out-"))


def run_step(step: str, args: argparse.Namespace) -> int:
    needs_bnb = step == "bench26b"
    if not args.dry_run:
        use_carried_wheels(args.carry, needs_bnb)
    os.environ.setdefault(T0_ENV, str(time.time()))
    out = out_folder(args.dry_run)
    budget_s = args.budget_s or STEP_BUDGET[step]
    with logged(out, step):
        say(f"{step}{' (dry run)' if args.dry_run else ''}: writing to {out}, budget {budget_s:.0f} s")
        if step == "bench26b":
            step_bench26b(out, args.dry_run, budget_s)
        elif step == "engine-vs-library":
            step_engine_vs_library(out, args.dry_run, budget_s)
        elif step == "train-a":
            step_train_a(out, args.dry_run, budget_s, args.carry, args.work)
        else:
            step_train_b(out, args.dry_run, budget_s, args.carry, args.work)
        problems = check_back(out)
        say(f"done in {elapsed_s():.0f} s; " + ("everything in $OUT comes back" if not problems else
                                                 f"NOT all of $OUT comes back: {problems}"))  # fmt: skip
    return 1 if problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", nargs="?", default=None,
                        choices=["prepare", "plan", "bench26b", "engine-vs-library", "train-a", "train-b",
                                 "take-back", "readme-table"])  # fmt: skip
    parser.add_argument("rest", nargs="*", help="take-back: STEP FILES_AT; readme-table: JSON")
    parser.add_argument("--dry-run", action="store_true", help="toy scale on CPU (with no step: every step)")
    parser.add_argument("--carry", type=Path, default=CARRY)
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--budget-s", type=float, default=None, help="a step's own time limit (default: the plan's)")
    parser.add_argument("--write", action="store_true", help="readme-table: write README.md")
    args = parser.parse_args(argv)
    if args.step is None:
        if not args.dry_run:
            parser.error("name a step, or --dry-run for all of them")
        summary = dry_run(out_folder(True))
        bad: dict[str, Any] = {step: s["back_problems"] for step, s in summary["steps"].items() if s["back_problems"]}
        wheels = summary["wheels"]
        if wheels.get("problems") or not wheels.get("import_check", {"ok": True})["ok"]:
            bad["wheels"] = wheels
        print(json.dumps({"seconds": summary["seconds"], "steps": summary["steps"], "wheels": summary["wheels"]},
                         indent=1, default=str))  # fmt: skip
        return 1 if bad else 0
    if args.step == "prepare":
        args.carry.mkdir(parents=True, exist_ok=True)
        wheels = prepare_wheels(args.carry, args.carry / "downloads")
        corpus = prepare_corpus(args.carry, SHARED)
        budget = carry_budget(args.carry)
        text = json.dumps({"wheels": wheels, "corpus": corpus, **budget}, indent=1)
        (args.carry / "budget.json").write_text(text)
        (args.carry / "corpus-a" / "budget.json").write_text(text)  # train-a reads the checkpoint room there
        (args.carry / "PLAN.md").write_text(plan_markdown() + "\n")
        print(json.dumps({"wheels": wheels, **budget}, indent=1))
        return 1 if budget["over"] or check_wheels(args.carry / "wheels")["problems"] else 0
    if args.step == "plan":
        print(plan_markdown())
        return 0
    if args.step == "take-back":
        if len(args.rest) != 2:
            parser.error("take-back STEP FILES_AT")
        print(take_back(args.rest[0], Path(args.rest[1]), args.carry))
        return 0
    if args.step == "readme-table":
        if len(args.rest) != 1:
            parser.error("readme-table JSON")
        data = json.loads(Path(args.rest[0]).read_text())
        print("\n".join(readme_rows(data)))
        if args.write:
            write_readme_table(data, ROOT / "README.md")
        return 0
    return run_step(args.step, args)


if __name__ == "__main__":
    raise SystemExit(main())
