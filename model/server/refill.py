"""Slots that must be written, written again when the server's sampler left them empty.

Locally, :mod:`model.edit.bans` keeps padding and end markers out of the slots where new text must start:
the first slot of a fill or rewrite (``Layout.must_write``) and the first slot of each free region
(``Layout.opening_slots``: a gap of a "gaps" edit, the words between kept ones, a paragraph between held
line breaks). vLLM's sampler takes no per-slot bans, so a served canvas can come back with such a region
all padding (or only whitespace): a gap the writer marked, left empty. Such a region is developed again on
its own: the rest of the converged canvas pinned, fresh noise in the region.

Fresh noise alone is not enough: once a region has converged to padding, the model is sure of it (vLLM
gave padding a log-probability of -3e-5 there, with the text around it as the writer wrote it), and about
one gap edit in thirteen kept a gap empty after three tries. So each try also asks for the most probable
ids at every slot (:data:`TOP_CHOICES`), and a region still empty after it starts the next try with its
opening slot pinned to the most probable of them that is a word: what the local bans do, the end markers
struck out and the best of the rest taken.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from model.edit.canvas import Layout
from model.server.answers import Answer

REFILL_TRIES = 3
TOP_CHOICES = 8  # ids asked for at each slot: padding, end markers and blanks lead, a word is among them


def must_write(layout: Layout, block: int, width: int) -> list[range]:
    """The regions of ``block``'s first ``width`` slots whose first slot may not hold an end marker: from
    that slot to the next held one (or ``width``)."""
    offset = layout.block_offset(block)
    held = layout.held_template[offset : offset + width]
    starts = sorted({slot - offset for slot in layout.opening_slots if offset <= slot < offset + width}
                    | ({0} if block == 0 and layout.must_write else set()))
    regions = []
    for start in starts:
        end = start
        while end < width and (end >= len(held) or held[end] < 0):
            end += 1
        if end > start:
            regions.append(range(start, end))
    return regions


def left_empty(
    slots: list[int], regions: list[range], ends: set[int], text: Callable[[list[int]], str]
) -> list[range]:
    """The ``regions`` that hold no words: only end markers (padding, end-of-text, end of turn), or tokens
    whose ``text`` is whitespace (a lone space, a line break that a gap inside a line turns into one)."""
    empty = []
    for region in regions:
        ids = [slots[slot] for slot in region if slots[slot] not in ends]
        if not ids or not text(ids).strip():
            empty.append(region)
    return empty


def ask_for_choices(body: dict[str, Any], count: int = TOP_CHOICES) -> None:
    """Ask a completion for the ``count`` most probable ids at each slot, named by id."""
    body["logprobs"] = count
    body["return_tokens_as_token_ids"] = True


def opening_words(
    answer: Answer, regions: list[range], ends: set[int], text: Callable[[list[int]], str]
) -> dict[int, int]:
    """For each region, the id to pin in its first slot: the most probable of ``answer``'s choices there that
    is not an end marker and whose text is not blank. A slot with no such choice gets none."""
    words = {}
    for region in regions:
        choices = answer.top[region.start] if region.start < len(answer.top) else {}
        for token in sorted(choices, key=lambda t: -choices[t]):
            if token not in ends and text([token]).strip():
                words[region.start] = token
                break
    return words


def refill_seed(
    canvas: list[int], regions: list[range], rng: random.Random, vocab_size: int, openings: dict[int, int]
) -> tuple[list[int], list[int]]:
    """A seed canvas with fresh noise in ``regions``, their ``openings`` (slot: id) in place, and the positions
    to pin: all but the noise."""
    seed = list(canvas)
    free: set[int] = set()
    for region in regions:
        for slot in region:
            if slot in openings:
                seed[slot] = openings[slot]
            else:
                seed[slot] = rng.randrange(vocab_size)
                free.add(slot)
    return seed, [i for i in range(len(canvas)) if i not in free]
