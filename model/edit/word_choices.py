"""Words That Fit: other words the model reads as fitting where one word of the writer's text stands.

One reading, not a sampler loop (:mod:`model.edit.engine` is that): the word's place becomes a canvas of one
noise slot between the text before it (encoded into the KV cache, as every edit's prompt) and the text after it
(pinned on the canvas, as a fill's suffix), and the model's first prediction for that slot is its reading of
every token there given both sides. The slot's noise token is the one thing the reading does not choose, so
the prediction is averaged over a few noise tokens (deterministic: their seed is fixed). Its likeliest tokens
that are whole words, led by the space the word had, are the choices, in the word's case.

One slot holds one token, so a choice is a word the tokenizer holds whole (most of English's common words in
Gemma's vocabulary; the built-in model's 8k tokens hold fewer), and a word the tokenizer splits is replaced by
one token. The slot's bans are a one-token fill's (:mod:`model.edit.bans`): no padding or end marker, no line
break inside a line, a space-led token after a space.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import torch
from transformers import DiffusionGemmaForBlockDiffusion, DynamicCache

from model.edit import canvas
from model.edit.bans import Bans
from model.edit.canvas import Layout
from model.edit.request import WHOLE_WORD, EditRequest
from model.edit.vocabulary import SPACE
from model.runtime.forward import decode

# Choices offered, and the likeliest tokens looked through for them (most of the top are whole words).
CHOICES = 8
TOKENS_READ = 512
# Noise tokens the slot's prediction is averaged over: one forward pass, a batch of this many.
NOISE_DRAWS = 4
NOISE_SEED = 0
# A choice the model gives less than this share of its reading is no choice (the tail of 262k tokens).
LEAST_SHARE = 1e-4


class Reader(Protocol):
    """What a reading needs of the engine (:class:`model.edit.engine.Engine`)."""

    model: DiffusionGemmaForBlockDiffusion
    device: torch.device
    canvas_length: int
    vocab_size: int
    pad_id: int


class WordChoiceError(ValueError):
    """What was asked for is not one word with text around it."""


@dataclass(frozen=True)
class WordChoice:
    """A word that fits, and the model's probability for it in the word's place (its share of the reading)."""

    word: str
    share: float


def gap_request(prefix: str, word: str, suffix: str) -> EditRequest:
    """The one-token fill ``word``'s place is read as; refused with a reason if ``word`` is no single word."""
    if not WHOLE_WORD.fullmatch(word):
        raise WordChoiceError(f"{word!r} is not a single word: select one word, or put the cursor in one")
    if not (prefix.strip() or suffix.strip()):
        raise WordChoiceError("the word stands alone: there is no text around it to say what fits")
    return EditRequest(prefix=prefix, suffix=suffix, mode="fill", max_new_tokens=1, vary_length=False)


def slot_shares(engine: Reader, layout: Layout, cache: DynamicCache, bans: Bans) -> torch.Tensor:
    """Per vocabulary id, the model's probability for it in ``layout``'s one slot (``cache`` holds its prompt,
    encoded): the first pass's prediction, the bans applied, averaged over ``NOISE_DRAWS`` noise tokens."""
    device, length = engine.device, engine.canvas_length
    noise = torch.randint(0, engine.vocab_size, (NOISE_DRAWS, 1), generator=torch.Generator().manual_seed(NOISE_SEED))
    cache.batch_repeat_interleave(NOISE_DRAWS)
    pinned, _ = canvas.pinned_columns(layout.suffix_tail, 1, [1] * NOISE_DRAWS, length, engine.pad_id, device)
    # The suffix gets no self-conditioning signal, as in every edit's passes (there is none on a first pass).
    keep_signal = (torch.arange(length, device=device) < 1).float().expand(NOISE_DRAWS, -1)
    start = len(layout.prompt_ids)
    positions = torch.arange(start, start + length, dtype=torch.int32, device=device)[None]
    logits = decode(engine.model, torch.cat([noise.to(device), pinned], 1), positions, cache, None, keep_signal, 1)
    shares = torch.softmax(bans.applied(logits.float())[:, 0], dim=-1)
    # The model takes a slot's token for already written some of the time (the weight it gave a noise token it
    # was shown was up to 0.24, for "dropped" in place of "watched"): each draw's reading leaves its own noise
    # token out, and what is left is shared out again.
    shares[torch.arange(NOISE_DRAWS), noise[:, 0].to(device)] = 0.0
    return (shares / shares.sum(dim=-1, keepdim=True).clamp_min(1e-30)).mean(dim=0)


def in_case_of(choice: str, word: str) -> str:
    """``choice`` capitalised as ``word`` is: all capitals (a shout, an acronym) or a first capital (a sentence's
    first word). A lower-case word's choices stay as the model wrote them (a name keeps its capital)."""
    if len(word) > 1 and word.isupper():
        return choice.upper()
    if word[:1].isupper():
        return choice[:1].upper() + choice[1:]
    return choice


def ranked(shares: torch.Tensor) -> list[tuple[int, float]]:
    """The ``TOKENS_READ`` likeliest ids of a reading and their shares, likeliest first."""
    top = torch.topk(shares.cpu(), min(TOKENS_READ, shares.numel()))
    return list(zip(top.indices.tolist(), top.values.tolist(), strict=True))


def pooled(readings: list[dict[int, float]], noise: list[int]) -> list[tuple[int, float]]:
    """Readings that name only their likeliest ids (a server's top log-probabilities, as probabilities) pooled as
    :func:`slot_shares` pools full ones: each draw's own ``noise`` token left out and the rest shared out again
    (over what the draw named), then the mean over draws (an id a draw did not name counts 0 there)."""
    pool: dict[int, float] = {}
    for reading, shown in zip(readings, noise, strict=True):
        kept = {token: share for token, share in reading.items() if token != shown}
        total = sum(kept.values())
        if total <= 0:  # the draw named its noise alone: it says nothing of the place
            continue
        for token, share in kept.items():
            pool[token] = pool.get(token, 0.0) + share / total / len(readings)
    return sorted(pool.items(), key=lambda item: -item[1])


def whole_words(
    likeliest: list[tuple[int, float]], pieces: Callable[[list[int]], list[str]], word: str, lead: str,
    count: int = CHOICES,
) -> list[WordChoice]:
    """The likeliest whole words of ``likeliest`` (ids and shares, likeliest first; ``pieces`` gives their texts)
    other than ``word``, each once (its likeliest spelling), led by ``lead`` (the space the slot's token carries, or
    none), in ``word``'s case; a single letter only for a word of one or two (I for He)."""
    seen = {word.casefold()}
    choices: list[WordChoice] = []
    for piece, (_, share) in zip(pieces([token for token, _ in likeliest]), likeliest, strict=True):
        if share < LEAST_SHARE or len(choices) == count:
            break
        if lead and not piece.startswith(SPACE):
            continue
        text = piece[len(lead) :]
        if not WHOLE_WORD.fullmatch(text) or text.casefold() in seen:
            continue
        if len(text) == 1 and len(word) > 2:  # "S" for "Don": a word's first letter, not a word in its place
            continue
        seen.add(text.casefold())
        choices.append(WordChoice(in_case_of(text, word), share))
    return choices
