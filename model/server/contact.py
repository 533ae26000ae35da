"""First contact with a team's vLLM server: what it serves, its canvas and vocabulary (:func:`connect`).

The standard library only (no torch), so Settings can test a connection without loading PyTorch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from model.server.http import Endpoint, HttpFailure, ServerError, request_json

CancelCheck = Callable[[], bool]
MIN_SERVER_CANVAS = 8  # below this a canvas cannot hold a span and the suffix after it
# vLLM's admission check names the vocabulary and the canvas when a request breaks them.
_VOCAB = re.compile(r"ids must be in \[0, (\d+)\)")
_CANVAS = re.compile(r"must hold exactly (\d+) ids")


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


def connect(endpoint: Endpoint, model: str | None = None, cancel: CancelCheck | None = None) -> ServerInfo:
    """Ask the server what it serves and measure its canvas; a ServerError says what is wrong.

    vLLM has no endpoint for a diffusion model's canvas or vocabulary, but its admission check names both
    when a request breaks them (``vllm/utils/diffusion.py``): two rejected requests, no model pass, tell.
    """
    where = endpoint.display()
    listing = request_json(endpoint, "GET", "/v1/models", cancel=cancel, timeout_s=endpoint.connect_timeout_s + 5)
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ServerError(f"the server at {where} lists no models at /v1/models; is it a vLLM server?")
    served = tuple(str(entry.get("id")) for entry in entries if isinstance(entry, dict))
    name = model or served[0]
    if name not in served:
        raise ServerError(
            f"the server at {where} serves {', '.join(served)}, not {name!r}; choose one of those in "
            "Settings ▸ Server (or --server-model)"
        )
    entry = next(e for e in entries if isinstance(e, dict) and e.get("id") == name)
    max_model_len = int(entry.get("max_model_len") or 0)
    vocab_size = _probe(endpoint, name, [2**31 - 1], _VOCAB, cancel)
    canvas_length = _probe(endpoint, name, [0], _CANVAS, cancel)
    if canvas_length < MIN_SERVER_CANVAS:
        raise ServerError(
            f"the server's canvas is {canvas_length} tokens, too small to hold new text and the text after it "
            f"(Redraft needs at least {MIN_SERVER_CANVAS}); serve the model with its own canvas"
        )
    return ServerInfo(where, name, canvas_length, vocab_size, max_model_len or 2**31, served)


def _probe(
    endpoint: Endpoint, model: str, seed: list[int], pattern: re.Pattern[str], cancel: CancelCheck | None
) -> int:
    body = {"model": model, "prompt": [0], "max_tokens": 1, "vllm_xargs": {"diffusion_seed_canvas": seed}}
    try:
        request_json(endpoint, "POST", "/v1/completions", body, cancel=cancel)
    except HttpFailure as failure:
        found = pattern.search(failure.server_message)
        if failure.status == 400 and found:
            return int(found.group(1))
        if failure.status != 400:
            raise
    raise ServerError(
        f"{model!r} on {endpoint.display()} does not take DiffusionGemma's diffusion controls: it is not a "
        "diffusion model, or the server's vLLM is older than 0.32; serve a DiffusionGemma checkpoint"
    )
