"""The GPU build of PyTorch for installed copies of Redraft: ``redraft enable-gpu`` / ``disable-gpu``.

The installers carry the CPU build of torch only (the CUDA build adds gigabytes most writers never
use). A writer with an NVIDIA card runs ``redraft enable-gpu``: pip (bundled in the frozen app) puts
the CUDA build of the same torch version into a folder of the user's data dir, and every later start
puts that folder first on ``sys.path`` before anything imports torch, so the CUDA build shadows the
bundled one. The install goes to a ``.partial`` folder that replaces the live one only once pip has
finished and torch is in it; a failed or interrupted install leaves the previous state as it was.
The way back: ``redraft disable-gpu`` deletes the folder, and ``REDRAFT_NO_GPU_TORCH=1`` skips it for
one start (if a CUDA build ever failed to load, the app still starts on the CPU build that way).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from app.userdirs import user_dirs

FOLDER_NAME = "gpu-torch"
MARKER = "redraft-gpu.json"
DISABLE_VARIABLE = "REDRAFT_NO_GPU_TORCH"
DEFAULT_CUDA = "cu128"
TORCH_INDEX = "https://download.pytorch.org/whl/{cuda}"

Installer = Callable[[Path, list[str], str], None]


def gpu_env_dir() -> Path:
    return user_dirs().data / FOLDER_NAME


def python_tag() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The finished install's description, or None if the folder is missing, partial or foreign."""
    try:
        info = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def activate(sys_path: list[str] | None = None, environ: Mapping[str, str] | None = None) -> Path | None:
    """Put the GPU torch first on the import path; returns its folder, or None where it does not apply.

    It does not apply when switched off, not installed, made for another Python, or too late (torch
    already imported: the CPU build would stay in use whatever the path says).
    """
    path = sys.path if sys_path is None else sys_path
    env = os.environ if environ is None else environ
    if env.get(DISABLE_VARIABLE) or "torch" in sys.modules:
        return None
    folder = gpu_env_dir()
    info = read_marker(folder)
    if info is None or info.get("python") != python_tag() or not (folder / "torch").is_dir():
        return None
    if str(folder) not in path:
        path.insert(0, str(folder))
    return folder


def bundled_version(package: str) -> str:
    """The release of ``package`` this copy of Redraft ships (its GPU twin has the same number)."""
    from importlib.metadata import version

    return version(package)


def gpu_requirements(torch_version: str, bitsandbytes_version: str | None) -> list[str]:
    """``2.13.0+cpu`` -> ``torch==2.13.0``: the same releases, in the builds the indexes serve for CUDA.

    bitsandbytes comes along because the installers drop its CUDA libraries (the 4-bit kernels).
    """
    requirements = [f"torch=={torch_version.split('+', 1)[0]}"]
    if bitsandbytes_version:
        requirements.append(f"bitsandbytes=={bitsandbytes_version}")
    return requirements


def is_cuda_build(torch_folder: Path) -> bool:
    """Whether an installed torch folder holds CUDA kernels (libtorch_cuda.so / torch_cuda.dll)."""
    return any((torch_folder / "lib").glob("*torch_cuda*"))


def pip_install(target: Path, requirements: list[str], index_url: str) -> None:
    """pip into ``target``; in a frozen build through the pip bundled with it (there is no python.exe)."""
    args = [
        "install",
        "--target",
        str(target),
        "--only-binary=:all:",
        "--index-url",
        index_url,
        "--extra-index-url",
        "https://pypi.org/simple",
        "--progress-bar",
        "on",
        "--no-warn-conflicts",  # it checks against the bundle's own metadata, which pip cannot see whole
        *requirements,
    ]
    if getattr(sys, "frozen", False):
        from pip._internal.cli.main import main as pip_main

        code = pip_main(args)
    else:
        code = subprocess.call([sys.executable, "-m", "pip", *args])
    if code != 0:
        raise RuntimeError(f"pip stopped with exit status {code}")


def enable(
    cuda: str = DEFAULT_CUDA,
    installer: Installer | None = None,
    versions: tuple[str, str | None] | None = None,
) -> Path:
    """Install the CUDA build of torch for this user; the live folder changes only on success."""
    install = installer or pip_install
    folder = gpu_env_dir()
    partial = folder.with_name(folder.name + ".partial")
    previous = folder.with_name(folder.name + ".previous")
    torch_version, bitsandbytes_version = versions or (bundled_version("torch"), bundled_version("bitsandbytes"))
    requirements = gpu_requirements(torch_version, bitsandbytes_version)
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    try:
        install(partial, requirements, TORCH_INDEX.format(cuda=cuda))
        if not (partial / "torch" / "__init__.py").is_file():
            raise RuntimeError(f"pip finished but left no torch package in {partial}")
        if not is_cuda_build(partial / "torch"):
            # e.g. the PyTorch index was unreachable and pip fell back to a CPU wheel from elsewhere
            raise RuntimeError("pip installed a torch without CUDA; is download.pytorch.org reachable?")
        marker = {"requirements": requirements, "cuda": cuda, "python": python_tag()}
        (partial / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
    except BaseException:  # KeyboardInterrupt included: never leave half an install behind
        shutil.rmtree(partial, ignore_errors=True)
        raise
    shutil.rmtree(previous, ignore_errors=True)
    if folder.exists():
        folder.rename(previous)
    partial.rename(folder)
    shutil.rmtree(previous, ignore_errors=True)
    return folder


def disable() -> bool:
    """Remove the GPU torch (and any leftover partial install); True if there was one."""
    folder = gpu_env_dir()
    existed = folder.exists()
    for path in (folder, folder.with_name(folder.name + ".partial"), folder.with_name(folder.name + ".previous")):
        shutil.rmtree(path, ignore_errors=True)
    return existed


def describe_torch() -> str:
    """Which torch this process runs: version, CPU or CUDA build, and where it was loaded from."""
    import torch

    build = f"CUDA {torch.version.cuda} build" if torch.version.cuda else "CPU build"
    origin = Path(torch.__file__).parent
    where = "the GPU environment" if gpu_env_dir() in origin.parents else "bundled"
    if not getattr(sys, "frozen", False):
        where = "this Python environment"
    return f"PyTorch {torch.__version__} ({build}, {where}: {origin})"


def main(argv: list[str]) -> int:
    """``redraft enable-gpu [--cuda cu126]`` and ``redraft disable-gpu``."""
    import argparse

    command, rest = argv[0], argv[1:]
    parser = argparse.ArgumentParser(prog=f"redraft {command}")
    if command == "enable-gpu":
        parser.add_argument("--cuda", default=DEFAULT_CUDA, help="PyTorch's CUDA build tag (cu126, cu128, ...)")
    args = parser.parse_args(rest)
    if command == "disable-gpu":
        removed = disable()
        print("The GPU build of PyTorch was removed; Redraft uses its CPU build." if removed else "Nothing to remove.")
        return 0
    print(f"Installing the {args.cuda} build of PyTorch into {gpu_env_dir()} (about 3 GB) ...", flush=True)
    try:
        folder = enable(args.cuda)
    except (RuntimeError, OSError) as error:
        print(f"redraft: enable-gpu failed, nothing was changed: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("redraft: enable-gpu interrupted, nothing was changed", file=sys.stderr)
        return 130
    print(f"Done: Redraft uses the GPU build from {folder} from its next start. Undo: redraft disable-gpu")
    return 0
