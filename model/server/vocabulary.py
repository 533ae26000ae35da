"""The server's tokenizer, through vLLM's ``/tokenize`` and ``/detokenize``: a writer's machine needs no
weights and no tokenizer files to edit against a team's server."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch

from model.edit.vocabulary import SPACE, Vocabulary
from model.errors import RequestError
from model.server.http import MAX_RESPONSE_BYTES, Deadline, Endpoint, ServerError, request_json

CancelCheck = Callable[[], bool]

# DiffusionGemma keeps Gemma's special tokens; the server is asked for their ids by name.
SPECIAL_NAMES = {"pad": "<pad>", "eos": "<eos>", "bos": "<bos>", "end_of_turn": "<end_of_turn>"}
DETOKENIZE_THREADS = 8
# One token's text is a few bytes; its answer is read up to this much, so eight side by side stay small.
PIECE_MAX_BYTES = 64 * 1024


class ServerVocabulary(Vocabulary):
    """:class:`Vocabulary` over HTTP, for laying out edits (``model.edit.canvas``) and painting passes.

    Per-token pieces are remembered, as locally; vocabulary-wide masks are not available (they would cost
    one request per token), so only what the layout asks of them is answered.
    """

    def __init__(  # no tokenizer object here
        self, endpoint: Endpoint, model: str, vocab_size: int, deadline: Deadline | None = None
    ) -> None:
        self.endpoint = endpoint
        self.model = model
        self.size = vocab_size
        self.device = torch.device("cpu")
        self.cancel: CancelCheck | None = None  # the running edit's, so a cancel also stops tokenizing
        # The running edit's (or the first contact's, while the special tokens are asked for): one bound for all.
        self.deadline: Deadline | None = deadline
        self._pieces: dict[int, str] = {}
        self._masks: dict[str, torch.Tensor] = {}
        self._texts = None
        ids = {key: self._special(name) for key, name in SPECIAL_NAMES.items()}
        if ids["pad"] is None or ids["eos"] is None:
            raise ServerError(
                f"the server's model {model!r} has no <pad> and <eos> tokens: it is not a DiffusionGemma "
                "(Gemma-tokenizer) model"
            )
        self.pad_id = ids["pad"]
        self.eos_id = ids["eos"]
        self.bos_id = ids["bos"]
        self.end_of_turn_id = ids["end_of_turn"]
        self.deadline = None

    @property
    def tokenizer(self) -> Any:  # type: ignore[override]
        raise ServerError("this needs the model's own tokenizer, which stays on the server")

    def _special(self, name: str) -> int | None:
        ids = self.encode(name)
        return ids[0] if len(ids) == 1 else None

    def encode(self, text: str) -> list[int]:
        if not text:
            return []
        answer = request_json(
            self.endpoint,
            "POST",
            "/tokenize",
            {"model": self.model, "prompt": text, "add_special_tokens": False},
            cancel=self.cancel,
            deadline=self.deadline,
        )
        tokens = answer.get("tokens") if isinstance(answer, dict) else None
        if not isinstance(tokens, list):
            raise ServerError(f"the server's /tokenize answer has no token list: {str(answer)[:120]}")
        bad = [token for token in tokens if not self.is_id(token)]
        if bad:
            raise ServerError(
                f"the server's /tokenize answer holds {repr(bad[0])[:40]}, not a token id of its vocabulary "
                f"(0 to {self.size - 1:,}); is it serving the model it named?"
            )
        return list(tokens)

    def chat_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """``messages`` in the served model's own chat template: vLLM's ``/tokenize`` applies it to them. A model
        without a template is refused by the server (an HTTP 400), said here as a RequestError in words."""
        body = {"model": self.model, "messages": messages, "add_generation_prompt": True, "add_special_tokens": False}
        try:
            answer = request_json(self.endpoint, "POST", "/tokenize", body, cancel=self.cancel, deadline=self.deadline)
        except ServerError as error:
            if "HTTP 400" not in str(error):
                raise
            raise RequestError(
                f"the server's model {self.model!r} has no chat template, so it follows no instructions; use Rewrite"
            ) from None
        tokens = answer.get("tokens") if isinstance(answer, dict) else None
        if not isinstance(tokens, list) or not tokens or not all(self.is_id(token) for token in tokens):
            raise ServerError(f"the server's /tokenize answer to a chat has no token ids: {str(answer)[:120]}")
        return list(tokens)

    def is_id(self, token: object) -> bool:
        """Whether ``token`` is an id of this vocabulary (a JSON number, whole, in range: not "5", 5.0 or true)."""
        return type(token) is int and 0 <= token < self.size

    def decode(self, ids: list[int]) -> str:
        if not ids:
            return ""
        answer = request_json(
            self.endpoint, "POST", "/detokenize", {"model": self.model, "tokens": list(ids)}, cancel=self.cancel,
            deadline=self.deadline, max_bytes=PIECE_MAX_BYTES if len(ids) == 1 else MAX_RESPONSE_BYTES,
        )
        text = answer.get("prompt") if isinstance(answer, dict) else None
        if not isinstance(text, str):
            raise ServerError(f"the server's /detokenize answer has no text: {str(answer)[:120]}")
        return text

    def pieces(self, ids: list[int]) -> list[str]:
        """Each id's own text; the ones not seen yet are fetched side by side. The first failure ends the
        rest at once (queued requests are dropped), so failures cannot queue up one timeout after another."""
        missing = sorted({i for i in ids if i not in self._pieces})
        if missing:
            pool = ThreadPoolExecutor(min(DETOKENIZE_THREADS, len(missing)), thread_name_prefix="redraft-pieces")
            try:
                texts = list(pool.map(lambda token: self.decode([token]), missing))
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            self._pieces.update(zip(missing, texts, strict=True))
        return [self._pieces[i] for i in ids]

    def space_led(self) -> torch.Tensor:
        """Only whether *some* token starts with a space (all the layout asks): does " the" start with one?"""
        if "space_led" not in self._masks:
            ids = self.encode(SPACE + "the")
            led = bool(ids) and self.pieces(ids[:1])[0].startswith(SPACE)
            self._masks["space_led"] = torch.tensor([led])
        return self._masks["space_led"]

    def line_breaks(self) -> torch.Tensor:
        raise ServerError("per-token line-break masks are not available from a server")
