"""Redraft's engine: requests, the one sampler loop, loading. Plain Python, torch and transformers; no Qt."""

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
