"""Redraft's engine: requests, the one sampler loop, loading. Plain Python, torch and transformers; no Qt.

The request types and errors load at once; what needs torch and transformers (the engine, loading) is
imported on first use, so the editor shows its window before those libraries, several seconds of
imports, are loaded on the model thread.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import model.library_warnings  # noqa: F401  first: its filters are in place before torch and bitsandbytes load
from model.errors import EditCancelled, ModelLoadError, RedraftError, RequestError
from model.passes import EditResult, Pass
from model.request import DenoiseOptions, EditRequest, split_document

if TYPE_CHECKING:
    from model.engine import Engine
    from model.loading import BUILTIN, LoadedModel, load

# The names that need torch and transformers, and the module each comes from.
_HEAVY = {"Engine": "model.engine", "BUILTIN": "model.loading", "LoadedModel": "model.loading", "load": "model.loading"}


def __getattr__(name: str) -> Any:
    if name in _HEAVY:
        return getattr(importlib.import_module(_HEAVY[name]), name)
    raise AttributeError(f"module 'model' has no attribute {name!r}")


__all__ = [
    "BUILTIN",
    "DenoiseOptions",
    "EditCancelled",
    "EditRequest",
    "EditResult",
    "Engine",
    "LoadedModel",
    "ModelLoadError",
    "Pass",
    "RedraftError",
    "RequestError",
    "load",
    "split_document",
]
