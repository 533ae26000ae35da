"""What the server answers for one canvas (read and checked here), each candidate's running state over the
blocks, and waiting on requests side by side (:class:`model.server.ServerEngine`'s bookkeeping)."""

from __future__ import annotations

import math
import time
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

from model.server.http import ServerError
from model.server.vocabulary import ServerVocabulary

ID_PIECE = "token_id:"  # how vLLM names a token when asked for ids (``return_tokens_as_token_ids``)


@dataclass
class Candidate:
    """One candidate's running state over the blocks."""

    kept: list[int]  # every finished block's slots (its own width)
    context: list[int]  # earlier blocks' full canvases, after the prompt
    score_sum: float = 0.0
    score_count: int = 0


@dataclass(frozen=True)
class Answer:
    """One converged canvas: its ids, the log-probability the server gave each, and each one's text (None
    where the server did not give the text of the id there); when asked for
    (:func:`model.server.refill.ask_for_choices`), the most probable ids at each slot with theirs."""

    canvas: list[int]
    logprobs: list[float]
    pieces: list[str | None]
    top: list[dict[int, float]] = field(default_factory=list)


def held_as_sent(answer: Answer, body: dict[str, Any]) -> Answer:
    """``answer`` with the slots ``body`` pinned holding what it sent there. vLLM answers its argmax at every
    slot, pinned ones too (a pin holds the model's input, not its output): a kept word, the text between
    gaps or a refill's opening word would come back as whatever the model would rather have put there.

    The log-probability there was the argmax's too: it becomes the sent id's where the slot's choices name
    it, else NaN (unknown), which :func:`own_scores` leaves out of a candidate's score."""
    xargs = body.get("vllm_xargs") or {}
    seed, pinned = xargs.get("diffusion_seed_canvas"), xargs.get("diffusion_pinned") or []
    if seed is None:
        return answer
    canvas, pieces, logprobs = list(answer.canvas), list(answer.pieces), list(answer.logprobs)
    for slot in pinned:
        if canvas[slot] != seed[slot]:
            canvas[slot] = seed[slot]
            if slot < len(pieces):
                pieces[slot] = None  # the server's piece is its argmax's
            if slot < len(logprobs):
                choices = answer.top[slot] if slot < len(answer.top) else {}
                logprobs[slot] = choices.get(seed[slot], math.nan)
    return replace(answer, canvas=canvas, pieces=pieces, logprobs=logprobs)


def known_from(answer: Answer, earlier: Answer) -> Answer:
    """``answer`` (a refill, the rest of ``earlier``'s canvas pinned) with the log-probabilities it left
    unknown taken from ``earlier`` where the slot holds the same id: the rest converged there."""
    logprobs = [
        earlier.logprobs[i] if math.isnan(value) and i < len(earlier.logprobs) and earlier.canvas[i] == token
        else value
        for i, (value, token) in enumerate(zip(answer.logprobs, answer.canvas, strict=False))
    ]
    return replace(answer, logprobs=logprobs)


def own_scores(answer: Answer, positions: list[int], held: list[int]) -> list[float]:
    """The known log-probabilities at ``positions`` (the candidate's kept slots) that are not the writer's
    (``held`` ids, -1 where free): what a candidate is ranked by, the mean log-probability of its own words.
    The server answers its argmax's at a held slot, so the writer's words are left out, not mis-scored."""
    return [
        answer.logprobs[i] for i in positions
        if i < len(answer.logprobs) and not math.isnan(answer.logprobs[i]) and (i >= len(held) or held[i] < 0)
    ]


def read_answer(answer: Any, url: str, vocabulary: ServerVocabulary, canvas_length: int) -> Answer:
    """The canvas in a ``/v1/completions`` answer, checked: ids of the served vocabulary, no longer than the
    canvas, numbers for log-probabilities. Pieces named by id (asked for with the choices) are None: their
    text is fetched where it is shown."""
    choices = answer.get("choices") if isinstance(answer, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    ids = choice.get("token_ids") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or not isinstance(ids, list) or not ids:
        raise ServerError(
            f"the server at {url} answered without a canvas of token ids ({str(answer)[:160]}); "
            "its vLLM may be too old (Redraft needs return_token_ids, vLLM 0.32 or newer)"
        )
    bad = [token for token in ids if not vocabulary.is_id(token)]
    if bad or len(ids) > canvas_length:
        what = f"{repr(bad[0])[:40]}, not a token id of its vocabulary" if bad else f"{len(ids):,} ids"
        raise ServerError(
            f"the server at {url} answered a canvas of {canvas_length} tokens with {what} "
            f"(ids run from 0 to {vocabulary.size - 1:,}); is it serving the model it named?"
        )
    logprobs = choice.get("logprobs") or {}
    values = (logprobs.get("token_logprobs") or []) if isinstance(logprobs, dict) else None
    pieces = (logprobs.get("tokens") or []) if isinstance(logprobs, dict) else None
    top = (logprobs.get("top_logprobs") or []) if isinstance(logprobs, dict) else None
    if (
        not isinstance(values, list) or not isinstance(pieces, list) or not isinstance(top, list)
        or not all(_is_logprob(v) or v is None for v in values)
        or not all(isinstance(piece, str) for piece in pieces)
        or not all(entry is None or (isinstance(entry, dict) and all(map(_is_logprob, entry.values())))
                   for entry in top)
    ):
        raise ServerError(
            f"the server at {url} sent log-probabilities that are not numbers, or pieces that are "
            f"not text ({str(logprobs)[:160]}); is it a vLLM server?"
        )
    canvas = list(ids) + [vocabulary.pad_id] * (canvas_length - len(ids))
    return Answer(
        canvas,
        [float(v) if v is not None else 0.0 for v in values],
        [None if piece.startswith(ID_PIECE) else piece for piece in pieces],  # named by id: text fetched if shown
        [_ids_of(entry or {}, vocabulary) for entry in top],
    )


def _is_logprob(value: object) -> bool:
    return type(value) in (int, float) and not math.isnan(value)  # type: ignore[arg-type]


def _ids_of(entry: dict[str, float], vocabulary: ServerVocabulary) -> dict[int, float]:
    """One slot's choices named by id ("token_id:17"); ones named by text or out of range are not ids."""
    ids: dict[int, float] = {}
    for name, value in entry.items():
        number = name[len(ID_PIECE) :] if name.startswith(ID_PIECE) else ""
        if number.isdigit() and vocabulary.is_id(int(number)):
            ids[int(number)] = float(value)
    return ids


def sleep_until_done(futures: list[Future[Answer]], seconds: float) -> None:
    """Wait up to ``seconds``, less once every request has answered."""
    deadline = time.monotonic() + seconds
    for future in futures:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        try:
            future.exception(timeout=left)
        except TimeoutError:
            return
