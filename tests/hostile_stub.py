"""A misbehaving vLLM on 127.0.0.1: the stub of tests/vllm_stub.py, with any endpoint's answer replaced by
raw bytes (wrong types, huge bodies, redirects, silence), for the client's hostile-server tests and fuzzing.

``overrides[path]`` is called with the request's JSON body (``None`` for a GET) and returns an
:class:`Answer`, or ``None`` to let the ordinary stub answer (so a test can spoil only the edit's own
completions and leave the connection's probes alone).
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from vllm_stub import Stub, _peer_gone, handler


@dataclass
class Answer:
    """What to send back: a status, headers, and a body (bytes, or ``stream`` chunks of ``chunk`` bytes)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    stream: int = 0  # send this many chunks of ``chunk`` after ``body`` (a huge answer held in no memory)
    chunk: bytes = b" " * 2**20
    silent: bool = False  # never answer (until the client leaves)

    @classmethod
    def json(cls, data: Any, status: int = 200) -> Answer:
        return cls(status, json.dumps(data).encode())


Override = Callable[[Any], Answer | None]


class Hostile(Stub):
    def __init__(self) -> None:
        super().__init__()
        self.overrides: dict[str, Override] = {}


def hostile_handler(state: Hostile) -> type:
    base = handler(state)

    class Handler(base):  # type: ignore[valid-type, misc]
        def _override(self, body: Any) -> bool:
            make = state.overrides.get(self.path)
            answer = make(body) if make is not None else None
            if answer is None:
                return False
            if answer.silent:
                while not _peer_gone(self.connection):
                    time.sleep(0.02)
                return True
            try:
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                if "Content-Length" not in answer.headers and not answer.stream:
                    self.send_header("Content-Length", str(len(answer.body)))
                if answer.stream:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(answer.body)
                for _ in range(answer.stream):
                    self.wfile.write(answer.chunk)
            except OSError:  # the client hung up on a huge answer, as it should
                pass
            self.close_connection = True
            return True

        def do_GET(self) -> None:
            if not self._override(None):
                super().do_GET()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            body = json.loads(raw) if raw else None
            if self._override(body):
                return
            # Not overridden: hand the body to the ordinary stub as if it had just arrived.
            self.rfile = io.BytesIO(raw)
            super().do_POST()

    return Handler


@contextmanager
def hostile() -> Iterator[tuple[Hostile, str]]:
    state = Hostile()
    server = ThreadingHTTPServer(("127.0.0.1", 0), hostile_handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
