"""Editing against a team's vLLM server: the client (:class:`ServerEngine`), driven like ``model.Engine``.

Plain Python and the standard library's HTTP; no Qt, no weights, no tokenizer files on the writer's machine.
"""

from model.server.engine import SERVER_PASSES, PassMode, ServerEngine, ServerInfo, connect
from model.server.http import Endpoint, HttpFailure, ServerError

__all__ = [
    "SERVER_PASSES", "Endpoint", "HttpFailure", "PassMode", "ServerEngine", "ServerError", "ServerInfo", "connect",
]
