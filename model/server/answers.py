"""What the server answers for one canvas, each candidate's running state over the blocks, and waiting on
requests side by side (:class:`model.server.ServerEngine`'s bookkeeping)."""

from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass


@dataclass
class Candidate:
    """One candidate's running state over the blocks."""

    kept: list[int]  # every finished block's slots (its own width)
    context: list[int]  # earlier blocks' full canvases, after the prompt
    score_sum: float = 0.0
    score_count: int = 0


@dataclass(frozen=True)
class Answer:
    """One converged canvas: its ids, the log-probability the server gave each, and each one's text."""

    canvas: list[int]
    logprobs: list[float]
    pieces: list[str]


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
