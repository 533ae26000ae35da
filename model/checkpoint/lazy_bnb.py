"""bitsandbytes, imported on first use. Its import pulls in torch's compiler (about 2.5 s on a quiet two-core
machine, a fifth of the editor's wait for the built-in model), and only quantized models need it. The
modules that use it bind ``bnb`` / ``bnbf`` from here at run time and the real modules for type checking."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """A module imported at the first attribute asked of it."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attribute)


bnb = LazyModule("bitsandbytes")
bnbf = LazyModule("bitsandbytes.functional")
