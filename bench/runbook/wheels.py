"""The libraries the device lacks (transformers, bitsandbytes, regex): downloaded and slimmed here, checked,
and on the device installed into /tmp before the step re-executes itself with them on the path.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runbook.common import BACK_FILE_LIMIT, MIB, ROOT, SHIPPED, SITE_ENV, T0_ENV, say
from runbook.transfer import join_pieces, split_file

DEVICE_PYTHON = "3.12"  # the device image's python3 (KINDS.md)
DEVICE_CUDA_LIBS = ("cuda130", "cuda132")  # torch 2.11+cu130 there; bitsandbytes picks the matching library
# transformers' model folders the engine needs (DiffusionGemma, the Gemma families its configs name, auto);
# the rest of the wheel (about 100 MB unpacked) stays behind so the carry fits.
TRANSFORMERS_MODELS_KEPT = (
    "auto", "encoder_decoder", "diffusion_gemma", "gemma", "gemma2", "gemma3", "gemma3n", "gemma4", "siglip",
)  # fmt: skip


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
    wheels = sorted((carry / "wheels").glob("*.whl"))
    site = Path(tempfile.gettempdir()) / "redraft-site"
    # The transformers our lock pins, carried or installed by an earlier call: the image's own is used only
    # if it is that one. The 2026-11-28 H200's image had 5.17 with DiffusionGemma in it, and the adaptation
    # trained under it, not under the 5.24 everything here is built and tested with.
    pinned = {p.name.split("-")[1] for p in [*wheels, *site.glob("transformers-*.dist-info")]
              if p.name.startswith("transformers-")}  # fmt: skip
    try:
        import transformers

        ready = hasattr(transformers, "DiffusionGemmaForBlockDiffusion") and (
            not pinned or getattr(transformers, "__version__", None) in pinned)
        if needs_bitsandbytes:
            import bitsandbytes  # noqa: F401
    except ImportError:
        ready = False
    if ready:
        return
    # A later call on a machine still warm: the session's first call installed them (the 15-minute plan
    # carries the wheels once, and the transplant's parts in the room they would take).
    wheels_installed = any(site.glob("transformers-*.dist-info"))
    if not wheels and not wheels_installed:
        raise SystemExit(f"transformers with DiffusionGemma is missing and {carry / 'wheels'} holds no wheels: "
                         "run `python bench/gpu_runbook.py prepare` here and carry .gpu-carry/wheels")  # fmt: skip
    # name-version of each wheel; a machine still warm from the last call has them installed already.
    wanted = {"-".join(w.name.split("-")[:2]) + ".dist-info" for w in wheels}
    if wheels and not wanted <= {p.name for p in site.glob("*.dist-info")}:
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
        "import model.checkpoint.streaming, model.checkpoint.quantization, model.training.train, model.training.export;"
        "from transformers import AutoTokenizer; AutoTokenizer.from_pretrained(sys.argv[2]);"
        "sys.path.insert(0, 'bench'); import engine_vs_library as e;"
        "e.main(['--tiny', '--repeats', '1', '--steps', '4', '--device', 'cpu'])"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", code, str(tmp), str(SHIPPED)], env=env, cwd=ROOT, capture_output=True,
                          text=True)  # fmt: skip
    ok = done.returncode == 0 and "same tokens: yes" in done.stdout
    return {"ok": ok, "tail": (done.stdout + done.stderr)[-600:]}
