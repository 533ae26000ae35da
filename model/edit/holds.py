"""Text held inside the canvas: a rewrite's kept words, and the text between the gaps of a "gaps" edit.

Diffusion sees the whole canvas at once, so any position can be held: the held positions carry their clean
tokens on every pass (as the pinned suffix does) and the free ones develop around them, each side seeing
the other. Both steering edits are one layout, a row of :class:`Region`\\ s:

* **Kept words** (``EditRequest.keep``): the span cut at the kept ranges; each kept piece is held (with the
  space before it, which byte-level BPE glues to the word), and the free text between is offered as many
  slots as a rewrite of it would get (its tokens times the ``length`` factor, plus slack).
* **Gaps** (mode ``"gaps"``): the span cut at its gap marks; the text between them is held and comes back
  byte for byte, and each gap is offered ``max_new_tokens`` slots, as a single fill is.

A free region whose original text started with a space (or whose gap followed one) must start with a word
that carries that space: its first slot takes only space-led tokens (:mod:`model.edit.bans`). The new text
is put together region by region (:func:`assemble`): held regions give their exact text, free ones the
tokens they developed, padding and end markers left out.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from model.edit.passes import without_doubled_mark
from model.edit.request import GAP_MARK, LENGTH_FACTORS, LINE_MARKS, EditRequest, gap_tokens
from model.edit.vocabulary import SPACE, Vocabulary
from model.errors import RequestError

# A rewrite's free text gets this much room beyond its own length (as canvas.REWRITE_SLACK_*).
SLACK_FRACTION = 0.2
SLACK_MIN = 2


@dataclass(frozen=True)
class Region:
    """A run of slots: held (``ids`` on every pass, ``text`` back exactly) or free (``slots`` to develop)."""

    held: bool
    text: str  # held: the writer's exact text; free: the text it replaces ("" for a gap)
    slots: int
    ids: tuple[int, ...] = ()  # held: the tokens held
    space_led: bool = False  # free: its first token must start with a space (the space was moved in)
    original: tuple[int, ...] = ()  # free: the tokens of the text it replaces, for a rewrite's strength


def steered(request: EditRequest) -> bool:
    """Whether ``request`` holds text inside its canvas (kept words or gaps)."""
    return request.mode == "gaps" or bool(request.keep)


def plan_regions(request: EditRequest, vocabulary: Vocabulary, lead: str) -> list[Region]:
    """The span of a steered ``request`` as regions; ``lead`` is the prefix's space moved onto the canvas
    (``Layout.lead``), which the first region's first token carries."""
    span = request.span or ""
    pieces = _gap_pieces(request, span) if request.mode == "gaps" else _keep_pieces(request, span)
    regions: list[Region] = []
    for held, text, space_led in pieces:
        first = not regions
        if held:
            if not text:
                continue
            ids = vocabulary.encode((lead if first else "") + text)
            regions.append(Region(True, text, len(ids), tuple(ids)))
            continue
        if request.mode == "gaps":
            slots = request.max_new_tokens or gap_tokens(text)  # a gap's "text" is its mark
            regions.append(Region(False, "", slots, space_led=space_led or (first and bool(lead))))
            continue
        if not text.strip():
            continue  # no words between two kept pieces (or before the first): nothing to develop there
        original = vocabulary.encode((lead if first else "") + text)
        wanted = math.ceil(len(original) * LENGTH_FACTORS[request.length])
        slots = wanted + max(SLACK_MIN, math.ceil(wanted * SLACK_FRACTION))
        led = text.startswith(SPACE) or (first and bool(lead))
        regions.append(Region(False, text, slots, space_led=led, original=tuple(original)))
    if not any(not region.held for region in regions):
        raise RequestError("nothing is left to rewrite between the kept words: leave some words free")
    return regions


def _keep_pieces(request: EditRequest, span: str) -> list[tuple[bool, str, bool]]:
    """(held, text, space-led) pieces of a rewrite cut at its kept ranges; a kept piece takes the space
    before it, a free piece keeps the space it starts with (its first word carries it)."""
    pieces: list[tuple[bool, str, bool]] = []
    at = 0
    for start, end in sorted(request.keep):
        if start > 0 and span[start - 1] == SPACE and start - 1 >= at:
            start -= 1
        pieces.append((False, span[at:start], False))
        pieces.append((True, span[start:end], False))
        at = end
    pieces.append((False, span[at:], False))
    return pieces


def _gap_pieces(request: EditRequest, span: str) -> list[tuple[bool, str, bool]]:
    """(held, text, space-led) pieces of a span cut at its gap marks: the text between is held exactly;
    a single space before a gap moves into it (its first word carries it)."""
    pieces: list[tuple[bool, str, bool]] = []
    at = 0
    for mark in GAP_MARK.finditer(span):
        held = span[at : mark.start()]
        space_led = held.endswith(SPACE)
        pieces.append((True, held[:-1] if space_led else held, False))
        pieces.append((False, mark.group(), space_led))  # the mark, for the length it asks for
        at = mark.end()
    pieces.append((True, span[at:], False))
    return pieces


def padded(regions: list[Region], slots: int, pad_id: int) -> list[Region]:
    """``regions`` with ``slots`` of padding held at the end (text "", as the model pads a span that ends
    early): blocks come in whole canvases or need a boundary moved, and no gap or free text may be offered
    more slots than it asked for."""
    return [*regions, Region(True, "", slots, (pad_id,) * slots)] if slots > 0 else regions


def template(regions: list[Region]) -> list[int]:
    """Per slot, the id held there, or -1 where the slot is free."""
    ids: list[int] = []
    for region in regions:
        ids.extend(region.ids if region.held else [-1] * region.slots)
    return ids


def original_slots(regions: list[Region]) -> list[int]:
    """Per slot, the original token a rewrite's canvas may start from (``strength``), -1 where none."""
    ids: list[int] = []
    for region in regions:
        if region.held:
            ids.extend(region.ids)
        else:
            seeded = list(region.original[: region.slots])
            ids.extend(seeded + [-1] * (region.slots - len(seeded)))
    return ids


def opening_slots(regions: list[Region]) -> list[int]:
    """The first slot of every free region: a region must be written (a gap the writer marked, a paragraph
    between held line breaks), so no padding or end marker opens it."""
    slots, at = [], 0
    for region in regions:
        if not region.held:
            slots.append(at)
        at += region.slots
    return slots


def space_led_slots(regions: list[Region]) -> list[int]:
    """The slots (over the whole span) whose token must start with a space: each free region's first."""
    slots, at = [], 0
    for region in regions:
        if not region.held and region.space_led:
            slots.append(at)
        at += region.slots
    return slots


def assemble(
    raw: list[int], regions: list[Region], vocabulary: Vocabulary, lead: str,
    decode: Callable[[list[int]], str] | None = None, suffix_start: str = "",
) -> tuple[str, list[int]]:
    """A candidate's new text from its slots, region by region, and the slots it kept: held regions give the
    writer's exact text, free ones their tokens' text (``decode``, by default the vocabulary's; padding and
    end markers left out). A space-led region keeps its space even where no ban applied (a server's
    sampler has none): "The" + "big" would glue. A free region loses a final mark that the held text after it,
    or ``suffix_start`` where none follows, repeats (:func:`model.edit.passes.without_doubled_mark`)."""
    decode = decode or vocabulary.span_text
    dropped = {vocabulary.pad_id, vocabulary.eos_id, vocabulary.end_of_turn_id}
    parts: list[str] = []
    positions: list[int] = []
    at = 0
    for index, region in enumerate(regions):
        where = list(range(at, at + region.slots))
        at += region.slots
        if region.held:
            parts.append(region.text)
            if region.text:  # held padding (``widened``) is not part of the new text
                positions.extend(where)
            continue
        kept = [slot for slot in where if slot < len(raw) and raw[slot] not in dropped]
        positions.extend(kept)
        text = decode([raw[slot] for slot in kept])
        if index == 0 and lead:
            text = text[len(lead) :] if text.startswith(lead) else text  # the document has the prefix's space
        elif region.space_led and text and not text[0].isspace():
            text = SPACE + text
        # After held text that ends in a line break or a space (a paragraph's layout, model.edit.shape, or a
        # heading's "# "), and before held text with a line break (a paragraph's end), the edges are the
        # writer's.
        if index > 0 and regions[index - 1].held and regions[index - 1].text[-1:] in (*LINE_MARKS, SPACE, "\t"):
            text = text.lstrip(" \t")
        following = regions[index + 1] if index + 1 < len(regions) else None
        if following is not None and following.held and any(mark in following.text for mark in LINE_MARKS):
            text = text.rstrip(" \t")
        # "day," before the writer's ", then" (or the suffix's): one comma. Held padding is no text.
        after = next((later for later in regions[index + 1 :] if not later.held or later.text), None)
        text = without_doubled_mark(text, suffix_start if after is None else after.text if after.held else "")
        parts.append(text)
    return "".join(parts), positions
