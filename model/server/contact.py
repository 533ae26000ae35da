"""First contact with a team's vLLM server: what it serves, its canvas and vocabulary (:func:`connect`).

The standard library only (no torch), so Settings can test a connection without loading PyTorch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from model.edit.request import MAX_CANVAS_TOKENS
from model.server.http import Deadline, Endpoint, HttpFailure, ServerError, request_json

CancelCheck = Callable[[], bool]
MIN_SERVER_CANVAS = 8  # below this a canvas cannot hold a span and the suffix after it
# The widest canvas taken from a server is the widest the local engine lays out: a server claiming 3M
# positions once took 380 MB for one 8-token fill.
MAX_SERVER_CANVAS = MAX_CANVAS_TOKENS
MIN_SERVER_VOCAB = 16  # pad, eos, bos and end-of-turn, and room for text; any real tokenizer has thousands
PROBE_ID = 2**31 - 1  # the id the vocabulary probe sends: a vocabulary is smaller than this, or unknowable
NO_CONTEXT_LIMIT = 2**31  # a server that states no max_model_len: the canvas and context budget still bound
MODELS_SHOWN = 5  # a wrong model name lists this many of the served ones, and the count
# vLLM's admission check names the vocabulary and the canvas when a request breaks them.
_VOCAB = re.compile(r"ids must be in \[0, (\d+)\)")
_CANVAS = re.compile(r"must hold exactly (\d+) ids")
_MOST_DIGITS = 12  # more is out of every range checked, and int() of 5,000 digits is itself an error


@dataclass(frozen=True)
class ServerInfo:
    """What a server serves, learnt at connection (``connect``)."""

    url: str
    name: str  # the served model's id
    canvas_length: int
    vocab_size: int
    max_model_len: int
    served: tuple[str, ...]  # every model id the server lists

    def describe(self) -> str:
        return (
            f"{self.name} on {self.url}: canvas {self.canvas_length} tokens, context {self.max_model_len} tokens, "
            f"vocabulary {self.vocab_size}"
        )


def connect(
    endpoint: Endpoint, model: str | None = None, cancel: CancelCheck | None = None, deadline: Deadline | None = None
) -> ServerInfo:
    """Ask the server what it serves and measure its canvas; a ServerError says what is wrong.

    vLLM has no endpoint for a diffusion model's canvas or vocabulary, but its admission check names both
    when a request breaks them (``vllm/utils/diffusion.py``): two rejected requests, no model pass, tell.
    Every field read is checked for its type and range; the three requests share one ``deadline`` (by
    default :meth:`Deadline.for_contact`).
    """
    where = endpoint.display()
    deadline = deadline or Deadline.for_contact(endpoint)
    listing = request_json(
        endpoint, "GET", "/v1/models", cancel=cancel, timeout_s=endpoint.connect_timeout_s + 5, deadline=deadline
    )
    entries = listing.get("data") if isinstance(listing, dict) else None
    listed = (
        {entry["id"]: entry for entry in entries if isinstance(entry, dict) and isinstance(entry.get("id"), str)}
        if isinstance(entries, list) else {}
    )  # fmt: skip
    if not listed:
        raise ServerError(f"the server at {where} lists no models at /v1/models; is it a vLLM server?")
    served = tuple(listed)
    name = model or served[0]
    if name not in listed:
        shown = ", ".join(_short(n) for n in served[:MODELS_SHOWN])
        more = f" and {len(served) - MODELS_SHOWN:,} more" if len(served) > MODELS_SHOWN else ""
        count = f"{len(served):,} models: " if len(served) > 1 else ""
        raise ServerError(
            f"the server at {where} serves {count}{shown}{more}, not {_short(name)!r}; choose one of those in "
            "Settings ▸ Server (or --server-model)"
        )
    max_model_len = _max_model_len(listed[name], name, where)
    vocab_size = _probe(endpoint, name, [PROBE_ID], _VOCAB, cancel, deadline)
    if not MIN_SERVER_VOCAB <= vocab_size < PROBE_ID:
        raise ServerError(
            f"the server says {_short(name)!r} has a vocabulary of {vocab_size:,} tokens; no DiffusionGemma "
            f"has that (Redraft needs {MIN_SERVER_VOCAB} to {PROBE_ID - 1:,}): is it the right model?"
        )
    canvas_length = _probe(endpoint, name, [0], _CANVAS, cancel, deadline)
    if canvas_length < MIN_SERVER_CANVAS:
        raise ServerError(
            f"the server's canvas is {canvas_length} tokens, too small to hold new text and the text after it "
            f"(Redraft needs at least {MIN_SERVER_CANVAS}); serve the model with its own canvas"
        )
    if canvas_length > MAX_SERVER_CANVAS:
        raise ServerError(
            f"the server's canvas is {canvas_length:,} tokens, more than Redraft lays out (at most "
            f"{MAX_SERVER_CANVAS:,}); serve the model with its own canvas"
        )
    return ServerInfo(where, name, canvas_length, vocab_size, max_model_len, served)


def _max_model_len(entry: dict[str, object], name: str, where: str) -> int:
    value = entry.get("max_model_len")
    if value is None:
        return NO_CONTEXT_LIMIT
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        shown = repr(value)[:40] if isinstance(value, str | int | float) else type(value).__name__
        raise ServerError(
            f"the server at {where} lists {_short(name)!r} with max_model_len {shown}, not a number of tokens; "
            "is it a vLLM server?"
        )
    return min(value, NO_CONTEXT_LIMIT)


def _short(name: str) -> str:
    return name if len(name) <= 80 else name[:80] + "…"


def _probe(
    endpoint: Endpoint, model: str, seed: list[int], pattern: re.Pattern[str], cancel: CancelCheck | None,
    deadline: Deadline | None = None,
) -> int:
    body = {"model": model, "prompt": [0], "max_tokens": 1, "vllm_xargs": {"diffusion_seed_canvas": seed}}
    try:
        request_json(endpoint, "POST", "/v1/completions", body, cancel=cancel, deadline=deadline)
    except HttpFailure as failure:
        found = pattern.search(failure.server_message)
        if failure.status == 400 and found:
            digits = found.group(1)
            return int(digits) if len(digits) <= _MOST_DIGITS else 10**_MOST_DIGITS
        if failure.status != 400:
            raise
    raise ServerError(
        f"{_short(model)!r} on {endpoint.display()} does not take DiffusionGemma's diffusion controls: it is not a "
        "diffusion model, or the server's vLLM is older than 0.32; serve a DiffusionGemma checkpoint"
    )
