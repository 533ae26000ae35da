"""What the loop hands its callers: a :class:`Pass` per denoising step, ready to paint, and the
:class:`EditResult` at the end."""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only read through .tolist(): the editor imports this module before torch loads
    import torch


@dataclass(frozen=True)
class Pass:
    """One denoising step, ready to paint: everything is per candidate, over its own slots of the current
    block (a gap's shorter candidates have fewer, ``LENGTH_SHARES``). A polish round (``polish_rounds``)
    is a pass too, with every slot accepted: the whole canvas is text again after it."""

    step: int  # 0-based over the whole edit (all blocks)
    block: int
    blocks: int
    tokens: list[list[int]]  # slot tokens now on the canvas (accepted ones, and fresh noise elsewhere)
    accepted: list[list[bool]]  # which slots the sampler accepted on this pass
    entropy: list[list[float]]  # per-slot entropy of the (temperature-scaled) prediction, nats
    pieces: list[list[str]]  # decoded text of each slot token, accepted or not
    committed: list[str]  # text of the blocks already finished, before this block's slots
    finished: list[bool]  # candidates whose current block has stopped early
    ms: float  # wall time of this pass
    # Text the span's first token carries that the document already has (see ``Layout.lead``): it is
    # left out of ``pieces``; a painter decoding tokens itself drops it from the span's start.
    lead: str = ""
    # A server edit's stand-in while its request runs (``model.server``): fresh noise, no sampler step;
    # painters show it as a veil and never replay it.
    waiting: bool = False
    # A polish round: every slot shows as accepted, yet words still change (a painter says "polishing"
    # rather than "100% settled").
    polishing: bool = False

    def text(self, candidate: int = 0, accepted_only: bool = False) -> str:
        pieces = self.pieces[candidate]
        accepted = self.accepted[candidate]
        body = "".join(p for p, ok in zip(pieces, accepted, strict=True) if ok or not accepted_only)
        return self.committed[candidate] + body


@dataclass(frozen=True)
class EditResult:
    texts: list[str]  # the new span, per candidate
    token_ids: list[list[int]]
    raw_tokens: list[list[int]]  # every block's final slots (the candidate's own), with padding and end markers
    passes: int  # denoising passes run (all blocks, polish rounds included)
    blocks: int
    tokens_per_forward: float  # new (non-pad) tokens per decoder forward, averaged over candidates
    ms_per_pass: float
    pass_ms: list[float] = field(repr=False)
    seed: int = 0
    prompt_tokens: int = 0
    # Per candidate, the mean log-probability the model gives its own finished tokens (only scored
    # when there are several candidates, to rank them; a single candidate gets 0.0).
    scores: list[float] = field(default_factory=lambda: [0.0])

    @property
    def ranking(self) -> list[int]:
        """Candidate indices, the model's favourite first (ties keep their order)."""
        return sorted(range(len(self.texts)), key=lambda c: -self.scores[c])

    @property
    def text(self) -> str:
        """The model's favourite candidate."""
        return self.texts[self.ranking[0]]


def painted_pass(
    pieces_of: Callable[[list[int]], list[str]],
    step: int,
    block: int,
    blocks: int,
    slot_canvas: torch.Tensor,
    accepted: torch.Tensor,
    entropy: torch.Tensor,
    committed: list[str],
    finished: torch.Tensor,
    ms: float,
    lead: str,
    widths: list[int],
    polishing: bool = False,
) -> Pass:
    """One step's canvas as a :class:`Pass`: each candidate's own slots only, each token decoded by ``pieces_of``."""
    # A shorter candidate holds suffix tokens in the rest of the slot columns.
    tokens = [row[:width] for row, width in zip(slot_canvas.tolist(), widths, strict=True)]
    pieces = [pieces_of(row) for row in tokens]
    if lead:
        for row in pieces:
            row[0] = without_lead(row[0], lead)
    return Pass(
        step=step,
        block=block,
        blocks=blocks,
        tokens=tokens,
        accepted=[row[:width] for row, width in zip(accepted.tolist(), widths, strict=True)],
        entropy=[row[:width] for row, width in zip(entropy.tolist(), widths, strict=True)],
        pieces=pieces,
        committed=list(committed),
        finished=finished.tolist(),
        ms=ms,
        lead=lead,
        polishing=polishing,
    )


REPLACEMENT_CHARACTER = "\ufffd"  # what a byte of a multi-byte character decodes to alone


def without_broken_bytes(text: str) -> str:
    """``text`` less the replacement marks that bytes of a character decoded without the rest of it leave.

    Byte-level vocabularies can write a byte of a multi-byte character alone: no word of the writer's, and
    not one a writer would keep ("Próvsk\ufffd Miss" in a rewrite of War and Peace). The editor paints
    its frames from raw decodes, so this lives here, free of torch, for it and the vocabulary both.
    """
    return text.replace(REPLACEMENT_CHARACTER, "")


def without_lead(text: str, lead: str) -> str:
    """``text`` less a leading ``lead`` (``Pass.lead``) that the document already holds."""
    return text[len(lead) :] if lead and text.startswith(lead) else text


# Marks that never stand twice at a seam: a draft ending in one of them before a suffix that starts with
# one of them lost its own ("The end of the day," before ", then walked" had read "day,, then").
_CLAUSE_MARKS = ",;:"


def with_trail(text: str, trail: str, suffix_start: str = "") -> str:
    """``text`` followed by the whitespace moved onto the suffix (``Layout.trail``), unless it ends in some,
    and without a final mark that the suffix's own first character repeats (:func:`without_doubled_mark`)."""
    text = without_doubled_mark(text, suffix_start)
    return text + trail if trail and text and not text[-1].isspace() else text


def without_doubled_mark(text: str, suffix_start: str) -> str:
    """``text`` less a final , ; or : (or a single full stop) when the suffix starts with a mark that makes it
    double: "day," before ", then" or ". Then", "day." before ". Then". An ellipsis on either side stays, as does
    a full stop before a comma ("etc., then"), and a text that would be left empty."""
    body = text.rstrip()
    if not suffix_start or not body or suffix_start.startswith(".."):
        return text
    mark, first = body[-1], suffix_start[0]
    doubled = (mark in _CLAUSE_MARKS and first in _CLAUSE_MARKS + ".") or (
        mark == "." and first == "." and not body.endswith("..")
    )
    kept = body[:-1].rstrip()
    return kept if doubled and kept else text


def run_to_end(passes: Generator[Pass, None, EditResult], on_pass: Callable[[Pass], None] | None) -> EditResult:
    """Drive an edit's generator to its :class:`EditResult`, handing every pass to ``on_pass``
    (``Engine.run`` and ``ServerEngine.run``)."""
    while True:
        try:
            step = next(passes)
        except StopIteration as stop:
            return stop.value
        if on_pass is not None:
            on_pass(step)
