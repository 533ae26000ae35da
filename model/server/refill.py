"""Slots that must be written, written again when the server's sampler left them empty.

Locally, :mod:`model.edit.bans` keeps padding and end markers out of the slots where new text must start:
the first slot of a fill or rewrite (``Layout.must_write``) and the first slot of each free region
(``Layout.opening_slots``: a gap of a "gaps" edit, the words between kept ones, a paragraph between held
line breaks). vLLM's sampler takes no per-slot bans, so a served canvas can come back with such a region
all padding (or only whitespace): a gap the writer marked, left empty. Such a region is developed again on
its own: the rest of the converged canvas pinned, fresh noise in the region, up to :data:`REFILL_TRIES`
times.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from model.edit.canvas import Layout

REFILL_TRIES = 3


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


def refill_seed(
    canvas: list[int], regions: list[range], rng: random.Random, vocab_size: int
) -> tuple[list[int], list[int]]:
    """A seed canvas with fresh noise in ``regions`` and the positions to pin: all the others."""
    seed = list(canvas)
    free: set[int] = set()
    for region in regions:
        for slot in region:
            seed[slot] = rng.randrange(vocab_size)
            free.add(slot)
    return seed, [i for i in range(len(canvas)) if i not in free]
