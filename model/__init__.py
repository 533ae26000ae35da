"""Redraft's engine: requests, the one sampler loop, loading. Plain Python, torch and transformers; no Qt.

The request types and errors load at once; what needs torch and transformers (the engine, loading) is
imported on first use, so the editor shows its window before those libraries, several seconds of
imports, are loaded on the model thread.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import model.runtime.library_warnings  # noqa: F401  first: its filters are in place before torch and bitsandbytes load
from model.edit.passes import EditResult, Pass
from model.edit.request import DenoiseOptions, EditRequest, split_document
from model.errors import EditCancelled, ModelLoadError, RedraftError, RequestError

if TYPE_CHECKING:
    from model.checkpoint.loading import BUILTIN, LoadedModel, load
    from model.edit.engine import Engine

# The names that need torch and transformers, and the module each comes from.
_HEAVY = {
    "Engine": "model.edit.engine",
    "BUILTIN": "model.checkpoint.loading",
    "LoadedModel": "model.checkpoint.loading",
    "load": "model.checkpoint.loading",
}


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
