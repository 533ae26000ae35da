"""What the free slots may not hold, and the slot logits as the sampler sees them.

* The span's first slot: no padding or end marker when a fill or rewrite must write
  (``Layout.must_write``), and only a token starting with a space when the prefix's space was moved
  onto the canvas (``Layout.lead``).
* Every slot: no line break when the new text stays inside a line (``Layout.single_line``).
* The first slot of each free region after held text (kept words, gaps: :mod:`model.edit.holds`) whose
  space was moved into it: only a token starting with a space, and no padding.
* The first slot of every other free region (a paragraph between held line breaks): no padding or end
  marker, so no region the writer had comes back empty.
* Slots a shorter candidate pins (``held``) are made certain of what they hold.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from model.edit.canvas import Layout
from model.edit.vocabulary import Vocabulary

# Finite, so entropies stay finite; the self-conditioning signal keeps the unmasked logits.
RULED_OUT = -1e4


@dataclass(frozen=True)
class Bans:
    """Vocabulary ids (boolean masks over the vocabulary) the free slots may not hold: ``first`` in the
    span's first slot (:func:`first_slot_forbidden`), ``every`` in any slot (``Layout.single_line``)."""

    first: torch.Tensor | None = None
    every: torch.Tensor | None = None
    led: torch.Tensor | None = None  # what a space-led region's first slot may not hold
    led_slots: tuple[int, ...] = ()  # those slots, in the block
    ends: torch.Tensor | None = None  # what another free region's first slot may not hold
    opening_slots: tuple[int, ...] = ()  # those slots, in the block

    def applied(self, slot_logits: torch.Tensor) -> torch.Tensor:
        """``slot_logits`` (batch, slots, vocabulary) with the banned ids ruled out (a copy; no bans: unchanged)."""
        if self.first is None and self.every is None and self.led is None and self.ends is None:
            return slot_logits
        slot_logits = (
            slot_logits.masked_fill(self.every, RULED_OUT) if self.every is not None else slot_logits.clone()
        )
        if self.first is not None:
            slot_logits[:, 0] = slot_logits[:, 0].masked_fill(self.first, RULED_OUT)
        if self.led is not None:
            for slot in self.led_slots:
                slot_logits[:, slot] = slot_logits[:, slot].masked_fill(self.led, RULED_OUT)
        if self.ends is not None:
            for slot in self.opening_slots:
                slot_logits[:, slot] = slot_logits[:, slot].masked_fill(self.ends, RULED_OUT)
        return slot_logits


def bans_for(layout: Layout, block: int, vocabulary: Vocabulary) -> Bans:
    """What the free slots of ``block`` may not hold."""
    offset, width = layout.block_offset(block), layout.block_slots[block]
    led_slots = tuple(slot - offset for slot in layout.space_led_slots if offset <= slot < offset + width)
    opening = tuple(
        slot - offset for slot in layout.opening_slots
        if offset <= slot < offset + width and slot - offset not in led_slots
    )  # fmt: skip
    led = ends = None
    if led_slots:
        led = ~vocabulary.space_led()
        led[[vocabulary.pad_id, vocabulary.eos_id]] = True
    if opening:
        ends = torch.zeros(vocabulary.size, dtype=torch.bool, device=vocabulary.device)
        ends[[vocabulary.pad_id, vocabulary.eos_id]] = True
    return Bans(
        first=first_slot_forbidden(layout, vocabulary) if block == 0 else None,
        every=vocabulary.line_breaks() if layout.single_line else None,
        led=led,
        led_slots=led_slots,
        ends=ends,
        opening_slots=opening,
    )


def first_slot_forbidden(layout: Layout, vocabulary: Vocabulary) -> torch.Tensor | None:
    """Which vocabulary ids the span's first slot may not hold (None: any)."""
    if not layout.must_write and not layout.lead:
        return None
    end_of_turn = [vocabulary.end_of_turn_id] if vocabulary.end_of_turn_id is not None else []
    ends = [vocabulary.pad_id, vocabulary.eos_id] + end_of_turn
    if layout.lead:
        forbidden = ~vocabulary.space_led()
        # A continuation may still end at once; a fill or rewrite must write (``must_write``).
        forbidden[ends] = layout.must_write
    else:
        forbidden = torch.zeros(vocabulary.size, dtype=torch.bool, device=vocabulary.device)
        forbidden[ends] = True
    return forbidden


def slot_logits(logits: torch.Tensor, slots: int, bans: Bans, held: torch.Tensor | None) -> torch.Tensor:
    """The free slots' logits as the sampler sees them: bans and held ids applied."""
    return hold(bans.applied(logits[:, :slots]), held)


def hold(slot_logits: torch.Tensor, held: torch.Tensor | None) -> torch.Tensor:
    """The slot logits made certain of the ``held`` ids where a candidate pins them (-1: free), so
    those slots are sampled, accepted and judged stable as what they hold (a copy; None: unchanged)."""
    if held is None:
        return slot_logits
    certain = torch.full_like(slot_logits, RULED_OUT).scatter(-1, held.clamp(min=0)[..., None], 0.0)
    return torch.where((held >= 0)[..., None], certain, slot_logits)
