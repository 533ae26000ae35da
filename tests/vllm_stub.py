"""A stand-in for a team's vLLM server on 127.0.0.1, for the client's tests and the GUI's: the part of
vLLM's API Redraft uses (``/v1/models``, ``/tokenize``, ``/detokenize``, ``/v1/completions``), with a
character-level tokenizer, checking the diffusion controls as vLLM's admission does
(``vllm/utils/diffusion.py``), and misbehaving on demand (error status, slow answers, a required key).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SPECIALS = {"<pad>": 0, "<eos>": 1, "<bos>": 2, "<end_of_turn>": 3}
OFFSET = 10  # character c is token OFFSET + ord(c)
VOCAB = 300


def encode(text: str) -> list[int]:
    ids, i = [], 0
    while i < len(text):
        for name, token in SPECIALS.items():
            if text.startswith(name, i):
                ids.append(token)
                i += len(name)
                break
        else:
            ids.append(OFFSET + min(ord(text[i]), VOCAB - OFFSET - 1))
            i += 1
    return ids


def decode(ids: list[int]) -> str:
    names = {token: name for name, token in SPECIALS.items()}
    return "".join(names.get(t, chr(t - OFFSET) if t >= OFFSET else "?") for t in ids)


class Stub:
    """What the stub serves and how it misbehaves; ``bodies`` records every completion request."""

    def __init__(self) -> None:
        self.canvas = 16
        self.models = ["stub-model"]
        self.max_model_len = 4096
        self.status: int | None = None  # answer completions with this error status
        self.delay_s = 0.0  # hold completions this long (a slow server)
        self.key: str | None = None  # required bearer token
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []  # every POST, in order
        self.disconnected = threading.Event()
        self.fill = "word "  # what free slots develop into
        self.fills: list[str] = []  # what the next completions' free slots develop into, in turn, before ``fill``
        self.chat_template = False  # whether /tokenize applies a chat template to messages
        # The runners-up at every slot, after the id there, when a completion asks for its top log-probabilities.
        self.runners_up = ["<eos>", " ", "so"]
        self.logprob = -0.5  # the log-probability answered at each free slot
        self.pinned_logprob = -0.5  # and at each pinned one (its argmax's, as vLLM's)


def handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, data: Any) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _error(self, status: int, message: str) -> None:
            self._send(status, {"error": {"message": message, "type": "BadRequestError", "code": status}})

        def _authorised(self) -> bool:
            if stub.key is not None and self.headers.get("Authorization") != f"Bearer {stub.key}":
                self._error(401, "Unauthorized")
                return False
            return True

        def do_GET(self) -> None:
            if not self._authorised():
                return
            if self.path == "/v1/models":
                data = [{"id": name, "max_model_len": stub.max_model_len} for name in stub.models]
                self._send(200, {"object": "list", "data": data})
            else:
                self._error(404, "Not Found")

        def do_POST(self) -> None:
            if not self._authorised():
                return
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            stub.paths.append(self.path)
            if self.path == "/tokenize" and "messages" in body:
                if not stub.chat_template:  # vLLM's words for a tokenizer without one
                    self._error(400, "As of transformers v4.44, default chat template is no longer allowed, so "
                                     "you must provide a chat template if the tokenizer does not define one.")
                    return
                turns = "".join(f"<{m['role']}>{m['content']}<end_of_turn>" for m in body["messages"])
                self._send(200, {"tokens": encode(turns + "<model>"), "count": 0})
            elif self.path == "/tokenize":
                self._send(200, {"tokens": encode(body["prompt"]), "count": 0})
            elif self.path == "/detokenize":
                self._send(200, {"prompt": decode(body["tokens"])})
            elif self.path == "/v1/completions":
                self._complete(body)
            else:
                self._error(404, "Not Found")

        def _complete(self, body: dict[str, Any]) -> None:
            if body.get("model") not in stub.models:
                self._error(404, f"The model `{body.get('model')}` does not exist.")
                return
            xargs = body.get("vllm_xargs") or {}
            seed = xargs.get("diffusion_seed_canvas")
            if seed is not None and not all(0 <= t < VOCAB for t in seed):
                self._error(400, f"diffusion_seed_canvas ids must be in [0, {VOCAB}). (parameter=extra_args)")
                return
            if seed is not None and len(seed) != stub.canvas:
                self._error(400, f"diffusion_seed_canvas must hold exactly {stub.canvas} ids, got {len(seed)}.")
                return
            stub.bodies.append(body)
            if stub.delay_s:
                deadline = time.monotonic() + stub.delay_s
                while time.monotonic() < deadline:
                    time.sleep(0.02)
                    if _peer_gone(self.connection):
                        stub.disconnected.set()
                        return
            if stub.status is not None:
                self._error(stub.status, "engine exploded")
                return
            # As vLLM's: the argmax at every slot, pinned ones too (a pin holds the model's input, not its output).
            canvas = encode((stub.fills.pop(0) if stub.fills else stub.fill) * stub.canvas)[: stub.canvas]
            by_id = bool(body.get("return_tokens_as_token_ids"))
            name = (lambda t: f"token_id:{t}") if by_id else (lambda t: decode([t]))
            pinned = set(xargs.get("diffusion_pinned") or [])
            values = [stub.pinned_logprob if i in pinned else stub.logprob for i in range(len(canvas))]
            logprobs: dict[str, Any] = {"tokens": [name(t) for t in canvas], "token_logprobs": values}
            if body.get("logprobs"):  # vLLM's shape: the id there, then the most probable others
                others = [encode(text)[0] for text in stub.runners_up]
                logprobs["top_logprobs"] = [
                    {name(t): v, **{name(o): -3.0 - k for k, o in enumerate(others) if o != t}}
                    for t, v in zip(canvas, values, strict=True)
                ]
            choice = {"text": decode(canvas), "token_ids": canvas, "logprobs": logprobs}
            self._send(200, {"choices": [choice]})

    return Handler


def _peer_gone(connection: socket.socket) -> bool:
    """Whether the client closed its end (a cancel): a readable socket with nothing to read."""
    connection.setblocking(False)
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        connection.setblocking(True)


@contextmanager
def serving() -> Iterator[tuple[Stub, str]]:
    """A running stub and its base URL; stopped on leaving."""
    state = Stub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    """A port nothing listens on (a server that is down)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
