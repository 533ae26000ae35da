"""Editing against a team's vLLM server: the client (:class:`ServerEngine`), driven like ``model.Engine``.

Plain Python and the standard library's HTTP; no Qt, no weights, no tokenizer files on the writer's machine.
First contact (``connect``) needs nothing more; the engine, which lays edits out with torch tensors as the
local one does, loads on first use (as in ``model``), so Settings can test a server without PyTorch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from model.server.contact import ServerInfo, connect
from model.server.http import Endpoint, HttpFailure, ServerError

if TYPE_CHECKING:
    from model.server.engine import SERVER_PASSES, PassMode, ServerEngine

_ENGINE_NAMES = {"SERVER_PASSES", "PassMode", "ServerEngine"}


def __getattr__(name: str) -> Any:
    if name in _ENGINE_NAMES:
        return getattr(importlib.import_module("model.server.engine"), name)
    raise AttributeError(f"module 'model.server' has no attribute {name!r}")


__all__ = [
    "SERVER_PASSES", "Endpoint", "HttpFailure", "PassMode", "ServerEngine", "ServerError", "ServerInfo", "connect",
]
