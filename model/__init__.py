"""Redraft's engine: requests, the one sampler loop, loading. Plain Python, torch and transformers; no Qt."""

import model.library_warnings  # noqa: F401  first: its filters are in place before torch and bitsandbytes load
from model.engine import EditResult, Engine, Pass
from model.errors import EditCancelled, ModelLoadError, RedraftError, RequestError
from model.loading import BUILTIN, LoadedModel, load
from model.request import DenoiseOptions, EditRequest, split_document

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
