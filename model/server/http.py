"""HTTP to a team's vLLM server, with the standard library: JSON in and out, one clear error per failure,
and a cancel that closes the connection mid-request.

Every call runs on a helper thread while the caller's thread polls its cancel check; a cancel shuts the
socket down, which ends the blocking read at once and tells vLLM the client has gone (it aborts the
request). Nothing here touches a document: callers get parsed JSON or an exception.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from model.errors import EditCancelled, RedraftError

CancelCheck = Callable[[], bool]
POLL_S = 0.02  # how often a waiting caller looks at its cancel check
# The largest answer read: a canvas of 8,192 tokens with its pieces and log-probabilities is about 0.5 MB, a
# listing of 5,000 models about 1.5 MB; a 400 MB /v1/models once took the client to 1.1 GB.
MAX_RESPONSE_BYTES = 4 * 2**20
READ_CHUNK = 64 * 1024


class ServerError(RedraftError):
    """A request to the server failed; the message says what happened and what to do."""


@dataclass(frozen=True)
class Endpoint:
    """Where the server is and how to talk to it."""

    url: str  # e.g. http://gpu-box:8000 (a trailing /v1 is accepted and dropped)
    api_key: str | None = field(default=None, repr=False)  # sent as a bearer token; never in a repr or message
    timeout_s: float = 120.0  # the longest one request may take (a long span on a busy server)
    connect_timeout_s: float = 10.0

    def __post_init__(self) -> None:
        if self.api_key is not None:
            object.__setattr__(self, "api_key", clean_api_key(self.api_key))

    def parts(self) -> tuple[str, str, int, str]:
        """(scheme, host, port, base path) of ``url``, or a ServerError naming what is wrong with it."""
        text = self.url.strip()
        if "://" not in text:
            text = "http://" + text
        split = urlsplit(text)
        if split.scheme not in ("http", "https") or not split.hostname:
            raise ServerError(f"the server address {self.url!r} is not an http:// or https:// URL")
        try:
            port = split.port or (443 if split.scheme == "https" else 80)
        except ValueError:
            raise ServerError(f"the server address {self.url!r} has an invalid port") from None
        base = split.path.rstrip("/")
        if base.endswith("/v1"):
            base = base[: -len("/v1")]
        return split.scheme, split.hostname, port, base

    def display(self) -> str:
        scheme, host, port, base = self.parts()
        shown = f"[{host}]" if ":" in host else host  # an IPv6 address keeps its brackets, as typed
        return f"{scheme}://{shown}:{port}{base}"


@dataclass(frozen=True)
class Deadline:
    """When a whole operation (an edit, a first contact) must be over: its requests share it, so their
    timeouts cannot add up past what the message says (a silent /detokenize once took 250 s against a
    message of 120 s)."""

    total_s: float
    at: float  # time.monotonic()

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(seconds, time.monotonic() + seconds)

    def left(self) -> float:
        return self.at - time.monotonic()

    @classmethod
    def for_contact(cls, endpoint: Endpoint) -> Deadline:
        """First contact (what is served, the canvas, the vocabulary's special tokens and noise pieces): the
        time to connect, then as long as one request may take."""
        return cls.after(endpoint.connect_timeout_s + endpoint.timeout_s)


def clean_api_key(key: str) -> str | None:
    """``key`` without the whitespace around it (a key read from a file ends in a newline), None if empty.

    Inside a key, a line break, space, control or non-ASCII character would make an invalid header, and
    http.client's error quotes the header, key and all: such a key is refused with a message that says
    where the bad character is, never what the key is.
    """
    key = key.strip()
    for index, character in enumerate(key):
        if character in "\r\n\u2028\u2029\x85":
            what = "a line break"
        elif character.isspace():
            what = "a space"
        elif not character.isprintable():
            what = "a control character"
        elif not character.isascii():
            what = "a character that is not plain ASCII"
        else:
            continue
        raise ServerError(
            f"the API key has {what} inside it (character {index + 1} of {len(key)}); copy the key again, "
            "exactly as the server's owner gave it"
        )
    return key or None


def _connection(endpoint: Endpoint, connect_timeout_s: float) -> tuple[http.client.HTTPConnection, str]:
    scheme, host, port, base = endpoint.parts()
    if scheme == "https":
        context = ssl.create_default_context()
        return http.client.HTTPSConnection(host, port, timeout=connect_timeout_s, context=context), base
    return http.client.HTTPConnection(host, port, timeout=connect_timeout_s), base


def _server_message(body: bytes) -> str:
    """The human part of an error body: vLLM sends {"error": {"message": ...}} (or {"message": ...})."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth ("[[[[…")
        return body.decode("utf-8", "replace").strip()[:300]
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            message = error.get("message") or error.get("detail")
            if message:
                return str(message)[:500]
        if isinstance(error, str):
            return error[:500]
        if "detail" in data:
            return str(data["detail"])[:500]
    return body.decode("utf-8", "replace").strip()[:300]


class HttpFailure(ServerError):
    """The server answered with an error status."""

    def __init__(self, message: str, status: int, server_message: str) -> None:
        super().__init__(message)
        self.status = status
        self.server_message = server_message


def describe_status(status: int, server_message: str, where: str) -> str:
    """One clear sentence per kind of error status."""
    said = f": {server_message}" if server_message else ""
    if status in (401, 403):
        return (
            f"the server at {where} refused the API key (HTTP {status}{said}); check the key in "
            "Settings ▸ Server (or the variable --api-key-env names)"
        )
    if status == 404:
        return (
            f"the server at {where} has no such endpoint or model (HTTP 404{said}); is it a vLLM server, and "
            "does it serve the model named in Settings ▸ Server?"
        )
    if status == 429:
        return f"the server at {where} is too busy (HTTP 429{said}); try again in a moment"
    if 400 <= status < 500:
        return f"the server at {where} refused the request (HTTP {status}{said})"
    return f"the server at {where} failed (HTTP {status}{said}); try again, or ask whoever runs it"


def request_json(
    endpoint: Endpoint,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    cancel: CancelCheck | None = None,
    timeout_s: float | None = None,
    deadline: Deadline | None = None,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> Any:
    """``method`` ``path`` with a JSON ``body``; the parsed JSON answer, or a ServerError / EditCancelled.

    The request ends by ``timeout_s`` (the endpoint's by default) or ``deadline``, whichever is sooner, and
    reads at most ``max_bytes`` of answer; redirects are not followed (they are named).
    """
    where = endpoint.display()
    limit = endpoint.timeout_s if timeout_s is None else timeout_s
    connect_limit = endpoint.connect_timeout_s
    late = _slow(where, limit)
    if deadline is not None:
        left = deadline.left()
        if left <= 0:
            raise ServerError(_late(where, deadline.total_s))
        if left < limit + connect_limit:
            late = _late(where, deadline.total_s)
            limit = min(limit, left)
            connect_limit = min(connect_limit, left)
    connection, base = _connection(endpoint, connect_limit)
    headers = {"Accept": "application/json"}
    payload = None
    if body is not None:
        payload = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"

    outcome: dict[str, Any] = {}

    def call() -> None:
        try:
            connection.request(method, base + path, body=payload, headers=headers)
            if connection.sock is not None:
                connection.sock.settimeout(limit)  # connected: from now on the whole answer may take ``limit``
            response = connection.getresponse()
            outcome["status"] = response.status
            outcome["location"] = response.getheader("Location") or ""
            outcome["body"] = _read_capped(response, max_bytes)
        except BaseException as error:  # handed to the waiting thread, which turns it into words
            outcome["error"] = error

    worker = threading.Thread(target=call, name="redraft-http", daemon=True)
    stop_at = time.monotonic() + limit + connect_limit + 1
    if deadline is not None:
        stop_at = min(stop_at, deadline.at + 0.5)
    worker.start()
    try:
        while not _wait(worker, POLL_S):
            if cancel is not None and cancel():
                raise EditCancelled("the edit was cancelled")
            if time.monotonic() > stop_at:
                raise ServerError(late)
    finally:
        if worker.is_alive():
            _abort(connection)
        connection.close()
    error = outcome.get("error")
    if isinstance(error, _TooBig):
        raise ServerError(
            f"the server at {where} answered {path} with more than {_size(max_bytes)}, far more "
            "than any answer Redraft asks for; is this address a vLLM server?"
        )
    if error is not None:
        if isinstance(error, TimeoutError | socket.timeout):
            raise ServerError(late) from error
        raise ServerError(_describe_error(error, where, limit)) from error
    status, raw = int(outcome["status"]), bytes(outcome["body"])
    if 300 <= status < 400:
        target = str(outcome["location"])
        shown = f" to {target[:200]!r}" if target else ""
        raise ServerError(
            f"the server at {where} redirected {path}{shown} (HTTP {status}); Redraft does not follow redirects: "
            "put the address it should talk to in Settings ▸ Server (or --server)"
        )
    if status >= 400:
        message = _server_message(raw)
        raise HttpFailure(describe_status(status, message, where), status, message)
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise ServerError(
            f"the server at {where} answered {path} with something that is not JSON Redraft can read "
            f"({raw[:80]!r}); is this address a vLLM server?"
        ) from None


class _TooBig(Exception):
    """An answer past MAX_RESPONSE_BYTES (raised on the helper thread, reported in words by the caller)."""


def _size(count: int) -> str:
    return f"{count / 2**20:g} MiB" if count >= 2**20 else f"{count / 2**10:g} KiB"


def _read_capped(response: http.client.HTTPResponse, max_bytes: int) -> bytes:
    """The body, or _TooBig as soon as it (or its declared length) passes ``max_bytes``."""
    declared = response.getheader("Content-Length")
    if declared is not None and declared.strip().isdigit() and int(declared) > max_bytes:
        raise _TooBig
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = response.read(min(READ_CHUNK, max_bytes + 1 - size))
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > max_bytes:
            raise _TooBig
        chunks.append(chunk)


def _wait(worker: threading.Thread, seconds: float) -> bool:
    worker.join(seconds)
    return not worker.is_alive()


def _abort(connection: http.client.HTTPConnection) -> None:
    """Close the socket under a blocked read: the read ends, and the server sees the client leave."""
    sock = connection.sock
    if sock is None:
        return
    with contextlib.suppress(OSError):  # already closed by the other side
        sock.shutdown(socket.SHUT_RDWR)


def _slow(where: str, limit: float) -> str:
    return (
        f"the server at {where} did not answer within {_seconds(limit)}; it may be overloaded, or the span too "
        "long for it: try again, or select less text"
    )


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value >= 10 else f"{value:.2g} s"


def _late(where: str, total: float) -> str:
    return (
        f"the server at {where} did not finish within {_seconds(total)}; it may be overloaded, or the span too "
        "long for it: try again, or select less text"
    )


def _describe_error(error: BaseException, where: str, limit: float) -> str:
    """A transport failure in words: refused, unknown host, TLS, timeout, dropped connection."""
    if isinstance(error, ssl.SSLCertVerificationError):
        return (
            f"the secure connection to {where} failed: its certificate is not trusted ({error.verify_message}); "
            "fix the server's certificate, or use http:// on a trusted network"
        )
    if isinstance(error, ssl.SSLError):
        return (
            f"the secure connection to {where} failed ({error.reason or error}); if the server speaks plain "
            "HTTP, use http:// in its address"
        )
    if isinstance(error, ConnectionRefusedError):
        return f"nothing answers at {where} (connection refused); is the vLLM server running, on that port?"
    if isinstance(error, socket.gaierror):
        return f"the server name in {where} cannot be found ({error.strerror}); check the address"
    if isinstance(error, TimeoutError | socket.timeout):
        return _slow(where, limit)
    if isinstance(error, http.client.BadStatusLine | http.client.RemoteDisconnected | ConnectionResetError):
        return (
            f"the server at {where} closed the connection without an answer; if it uses https, "
            "write https:// in its address, else it may have crashed"
        )
    if isinstance(error, http.client.HTTPException):  # a malformed status line or headers, a cut-off body
        return (
            f"the server at {where} sent a malformed HTTP answer ({type(error).__name__}); is this address a "
            "vLLM server?"
        )
    if isinstance(error, OSError):
        return f"cannot reach the server at {where} ({error.strerror or error})"
    return f"talking to the server at {where} failed ({type(error).__name__}: {error})"
