"""How an edit is laid out on canvases: the prompt, the free slots per block, the pinned suffix, and the
whitespace moved across the span's edges. Computed once per request, before the loop (:mod:`model.edit.engine`).

* The prompt is [bos] + the last ``context_budget`` tokens before the span (or, for an instruction, a
  chat prompt holding the instruction and the document around the span).
* Each canvas holds ``canvas_length`` positions: the free slots for the new text, then — in the last
  block only — the suffix *pinned*, followed by end-of-text and padding when the document ends there.
  A span longer than one canvas takes several blocks.
* With several candidates and a suffix, each candidate gets its own number of free slots
  (``LENGTH_SHARES`` for a gap, ``REWRITE_LENGTH_SHARES`` for a rewrite), the suffix pinned right after
  them, so the ranking chooses the length too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

import torch

from model.edit import holds
from model.edit.holds import Region
from model.edit.passes import with_trail, without_lead
from model.edit.request import CONTEXT_CHARS_PER_TOKEN, LENGTH_FACTORS, EditRequest
from model.edit.vocabulary import LINE_BREAKS, SPACE, Vocabulary
from model.errors import RequestError

# Rewrites get a few spare slots beyond the span's length; the model pads the ones it does not need.
REWRITE_SLACK_FRACTION = 0.2
REWRITE_SLACK_MIN = 2
# The suffix's characters a draft's last mark is checked against at the seam (an ellipsis needs two).
SEAM_CHARS = 2
# The last canvas of a span keeps at least this share of its positions for pinned suffix context.
MIN_PINNED_FRACTION = 0.25
# A gap fill with several candidates develops them at these shares of the slots asked for (cycled),
# each with the suffix pinned right after its own last slot, and the ranking picks the length too.
# The small model hardly ever ends a gap early (~22 words in 24 slots where the gaps held ~12). On
# 120 held-out gaps, best of 4 at 24/16/12/8 slots: trigram perplexity 66, seam 229, 13.5 words;
# best of 3 at 24 slots: 68, seam 187, 22.7 words (originals 122, seam 133, 11.5 words). Forcing
# padding after a shorter length instead, the suffix left where it was, ruined the seam (perplexity
# 1500): the model does not plan its text to end where padding is imposed.
LENGTH_SHARES = (1.0, 2 / 3, 1 / 2, 1 / 3)
# A rewrite's candidates the same way, around the span's own length (its slots are the span's tokens
# plus ``REWRITE_SLACK_FRACTION``), since the writer asked for this sentence, redrafted. All at full
# length, the rewrites of 40 held-out sentences came out 1.30 times as long as the originals; with
# these shares 1.03 times, at the same trigram perplexity (33 against 32) and seam (130 against 123).
REWRITE_LENGTH_SHARES = (1.0, 0.85, 0.7, 0.55)


class CanvasModel(Protocol):
    """What laying out an edit reads of the model: a loaded one (``LoadedModel``) or a server's
    (``model.server``), whose canvas is the one vLLM serves."""

    @property
    def name(self) -> str: ...

    @property
    def canvas_length(self) -> int: ...

    @property
    def follows_instructions(self) -> bool: ...


def candidate_widths(slots: int, candidates: int, shares: tuple[float, ...] = LENGTH_SHARES) -> list[int]:
    """Free slots per candidate: ``shares`` of ``slots``, cycled, at least one each."""
    return [max(1, round(slots * shares[c % len(shares)])) for c in range(candidates)]


@dataclass(frozen=True)
class Layout:
    """How an edit is laid out on canvases (computed once per request)."""

    prompt_ids: list[int]
    block_slots: list[int]  # free slots per block
    suffix_tail: list[int]  # suffix ids (then end-of-text) pinned after the last block's slots, ≤ a canvas
    keep_slots: int  # how many result tokens to keep (continuation truncates full canvases)
    stop_at_eos: bool  # continuation and instructions end at the first end-of-text
    original: list[int] = field(default_factory=list)  # rewrite: the span's tokens, slot by slot
    # rewrite: the words the length setting asks for (LENGTH_FACTORS x the original's), which the ranking
    # leans toward; 0: no length asked for (a fill, a steered span).
    wanted_words: float = 0.0
    # Gap fills and rewrites must write at least one token: their training examples always start the
    # free slots with a real token ([span][pad…]), so pad or end-of-text there is a model error.
    must_write: bool = False
    # A space ending the prefix, moved onto the canvas ("" when none). Byte-level BPE (and
    # SentencePiece) glue a space to the word after it, so in training text a prefix never ends
    # in a bare space token; the model would read one as a word break inside a word and start
    # the span with a fragment ("ed it was strong"). The prompt stops before the space, the first
    # slot may only hold a token starting with it, and it is cut from the span's text again.
    lead: str = ""
    trail: str = ""  # whitespace moved from the document onto the suffix's start (:func:`trail_of`)
    # The suffix's first characters, trail included: a draft's final mark that they repeat goes
    # (passes.without_doubled_mark; with regions, holds.assemble checks the last free one).
    suffix_start: str = ""
    # A span inside a line stays inside it: no line breaks in the new text (:func:`single_line`).
    single_line: bool = False
    # Free slots of the last block per candidate (``LENGTH_SHARES``, ``REWRITE_LENGTH_SHARES``); empty: all
    # have the block's.
    candidate_slots: list[int] = field(default_factory=list)
    # Kept words or gaps (:mod:`model.edit.holds`): the span as regions, per slot the id held there (-1
    # free), and the slots whose token must start with a space. Empty: every slot is free.
    regions: list[Region] = field(default_factory=list)
    held_template: list[int] = field(default_factory=list)
    space_led_slots: list[int] = field(default_factory=list)
    opening_slots: list[int] = field(default_factory=list)  # every free region's first (holds.opening_slots)

    def block_offset(self, block: int) -> int:
        """The first slot of ``block`` over the whole span."""
        return sum(self.block_slots[:block])


def plan_layout(request: EditRequest, vocabulary: Vocabulary, loaded: CanvasModel) -> Layout:
    """The whole layout of ``request`` on ``loaded``'s canvases."""
    canvas = loaded.canvas_length
    if request.mode == "instruct":
        if not loaded.follows_instructions:
            raise RequestError(
                f"{loaded.name} is not instruction-tuned (it has no chat template); "
                "use Rewrite, or load an instruction-tuned checkpoint such as diffusiongemma-26B-A4B-it"
            )
        span_tokens = len(vocabulary.encode(request.span or ""))
        slots = request.max_new_tokens or min(2 * span_tokens + 8, 4 * canvas)
        prompt = instruction_prompt(request, request.context_budget, vocabulary)
        return plan_blocks(prompt, slots, "", True, vocabulary, canvas)
    lead = SPACE if request.prefix.endswith(SPACE) and vocabulary.space_led().any() else ""
    prompt = prefix_ids(request.prefix[: len(request.prefix) - len(lead)], request.context_budget, vocabulary)
    span = request.span or ""
    trail = trail_of(request)
    original: list[int] = []
    if holds.steered(request):
        return _steered_layout(request, vocabulary, canvas, prompt, lead, trail)
    if request.mode == "rewrite":
        original = vocabulary.encode(lead + span[: len(span) - len(trail)])
        wanted = math.ceil(len(original) * LENGTH_FACTORS[request.length])
        slots = wanted + max(REWRITE_SLACK_MIN, math.ceil(wanted * REWRITE_SLACK_FRACTION))
        if request.max_new_tokens is not None:
            slots = min(slots, request.max_new_tokens)
    else:
        assert request.max_new_tokens is not None  # validated
        slots = request.max_new_tokens
    layout = plan_blocks(prompt, slots, trail + request.suffix, not request.suffix, vocabulary, canvas)
    # A fill at the very end stays plain continuation (exactly generate()'s loop, end-of-text allowed).
    must_write = request.mode == "rewrite" or bool(request.suffix)
    layout = replace(
        layout, must_write=must_write, lead=lead, trail=trail, single_line=single_line(request, trail),
        wanted_words=len(span.split()) * LENGTH_FACTORS[request.length] if request.mode == "rewrite" else 0.0,
    )  # fmt: skip
    if request.suffix and request.vary_length and request.candidates > 1:
        shares = LENGTH_SHARES if request.mode == "fill" else REWRITE_LENGTH_SHARES
        widths = candidate_widths(layout.block_slots[-1], request.candidates, shares)
        layout = replace(layout, candidate_slots=widths)
    return replace(layout, original=original) if request.strength < 1 else layout


def _steered_layout(
    request: EditRequest, vocabulary: Vocabulary, canvas: int, prompt: list[int], lead: str, trail: str
) -> Layout:
    """Kept words or gaps: the regions' slots, held ids where they hold text, the suffix pinned after them.
    Every candidate has the same regions (the held text stands where the writer had it)."""
    regions = holds.plan_regions(request, vocabulary, lead)
    slots = sum(region.slots for region in regions)
    layout = plan_blocks(prompt, slots, trail + request.suffix, not request.suffix, vocabulary, canvas)
    if sum(layout.block_slots) < slots:
        # Slots just past a whole canvas: plan_blocks drops one to leave the suffix room, which would cut
        # held text. One more slot, held padding, moves the boundary instead.
        regions = holds.padded(regions, 1, vocabulary.pad_id)
        slots += 1
        layout = plan_blocks(prompt, slots, trail + request.suffix, not request.suffix, vocabulary, canvas)
    # A span at the document's end develops in whole canvases: the slots past the span hold padding, so
    # nothing is written after its held end.
    regions = holds.padded(regions, sum(layout.block_slots) - slots, vocabulary.pad_id)
    slots = sum(layout.block_slots)
    inline = request.mode == "gaps" or single_line(request, trail)
    # The regions reach the span's end: an end-of-text in a free one may not end the edit early, before the
    # writer's held text in a later block is in place (a paragraph break lost, and the slots it stood in unread).
    return replace(
        layout, must_write=True, lead=lead, trail=trail, single_line=inline, regions=regions, stop_at_eos=False,
        held_template=holds.template(regions), space_led_slots=holds.space_led_slots(regions),
        opening_slots=holds.opening_slots(regions),
        original=holds.original_slots(regions) if request.strength < 1 and request.mode == "rewrite" else [],
        keep_slots=slots,
    )  # fmt: skip


def prefix_ids(prefix: str, budget: int, vocabulary: Vocabulary) -> list[int]:
    """[bos] + the last ``budget`` tokens of ``prefix`` (bos counted in the budget)."""
    # Tokenize only the tail that can matter: a token covers at least one character, except
    # multi-byte characters split into bytes, hence the generous factor.
    reach = budget * CONTEXT_CHARS_PER_TOKEN
    tail = prefix[-reach:] if reach < len(prefix) else prefix
    ids = vocabulary.encode(tail) if tail else []
    bos_id = vocabulary.bos_id
    room = budget - (1 if bos_id is not None else 0)
    ids = ids[-room:] if room > 0 else []
    return ([bos_id] if bos_id is not None else []) + ids


def suffix_ids(suffix: str, limit: int, vocabulary: Vocabulary) -> tuple[list[int], bool]:
    """The first ``limit`` suffix tokens, and whether they reach the end of the document."""
    head = suffix[: limit * CONTEXT_CHARS_PER_TOKEN]
    ids = vocabulary.encode(head) if head else []
    reaches_end = len(head) == len(suffix) and len(ids) <= limit
    return ids[:limit], reaches_end


def instruction_prompt(request: EditRequest, budget: int, vocabulary: Vocabulary) -> list[int]:
    """The chat prompt of an instruction: the instruction, the span and the text around it."""
    context_chars = budget * 2
    content = (
        f"{request.instruction}\n\n"
        f"Text before:\n{request.prefix[-context_chars:]}\n\n"
        f"Text to rewrite:\n{request.span}\n\n"
        f"Text after:\n{request.suffix[:context_chars]}\n\n"
        "Reply with the rewritten text only."
    )
    return vocabulary.chat_ids([{"role": "user", "content": content}])[-budget:]


def single_line(request: EditRequest, trail: str) -> bool:
    """Whether the new text must not break a line: a rewrite of a span that holds no line break (less
    the ``trail`` put back after it), or a gap with text before and after it on the same line.

    The model learnt line breaks from stories and books, where they end paragraphs and lines of
    dialogue, and writes them freely; a writer redrafting a sentence or filling a gap inside a
    paragraph does not want it split. A span or gap at a line's edge may still break lines.
    """
    if request.mode == "rewrite":
        span = request.span or ""
        free = span[: len(span) - len(trail)]
        for start, end in sorted(request.keep, reverse=True):  # held line breaks are the writer's, not new
            free = free[:start] + " " + free[end:]
        return not any(mark in free for mark in LINE_BREAKS)
    if request.mode == "fill":
        prefix, suffix = request.prefix, request.suffix
        return bool(prefix and suffix) and prefix[-1] not in LINE_BREAKS and suffix[0] not in LINE_BREAKS
    return False


def trail_of(request: EditRequest) -> str:
    """Whitespace between the span and a suffix that starts a word, as the model should see it.

    The mirror of ``Layout.lead``: a suffix starting with a bare word ("Then") never follows a
    span in training text, where the space before it belongs to the word (" Then"). A rewrite
    whose selection ends in whitespace, or a fill at the start of a word after a space (the
    cursor before "Then"), hands that whitespace to the suffix and puts it back after the new
    text. Otherwise the model writes up to a glued "Then" and the sentence runs into it.
    """
    suffix, span = request.suffix, request.span or ""
    if not suffix or suffix[0].isspace():
        return ""
    if request.mode == "rewrite":
        return span[len(span.rstrip()) :] if span.strip() else ""
    if request.mode == "fill" and suffix[0].isalnum() and (not request.prefix or request.prefix[-1].isspace()):
        return SPACE
    return ""


def plan_blocks(
    prompt: list[int], slots: int, suffix: str, stop_at_eos: bool, vocabulary: Vocabulary, canvas: int
) -> Layout:
    """``slots`` free slots in blocks of ``canvas``, the last one leaving room for the pinned ``suffix``."""
    if not suffix:
        # Continuation: whole canvases of free slots, truncated to the slots asked for.
        return Layout(prompt, [canvas] * math.ceil(slots / canvas), [], slots, stop_at_eos)
    pinned_ids, reaches_end = suffix_ids(suffix, canvas, vocabulary)
    end_ids = [vocabulary.eos_id] if reaches_end else []
    wanted_pinned = min(len(pinned_ids) + len(end_ids), max(1, int(canvas * MIN_PINNED_FRACTION)))
    last_capacity = canvas - wanted_pinned
    full_blocks = max(0, math.ceil((slots - last_capacity) / canvas))
    last_slots = slots - full_blocks * canvas
    if last_slots < 1:
        # No whole number of full canvases leaves the last block between 1 slot and its capacity
        # (slots just past a multiple of the canvas): one full block fewer, and the last block pins
        # fewer suffix tokens than it would like, but at least one.
        full_blocks -= 1
        last_slots = min(slots - full_blocks * canvas, canvas - 1)
    tail = (pinned_ids + end_ids)[:canvas]
    return Layout(
        prompt, [canvas] * full_blocks + [last_slots], tail, slots, stop_at_eos, suffix_start=suffix[:SEAM_CHARS]
    )


def pinned_columns(
    tail: list[int], slots: int, widths: list[int], canvas: int, pad_id: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Each candidate's canvas past its ``widths`` free slots: ``tail`` then padding.

    Returns the ids after the block's ``slots`` columns, (B, canvas - slots), and for candidates
    with fewer free slots the ids pinned inside the slot columns, (B, slots) with -1 where free,
    or None when every candidate has them all.
    """
    rows = []
    for width in widths:
        room = canvas - width
        rows.append([-1] * width + tail[:room] + [pad_id] * max(0, room - len(tail)))
    ids = torch.tensor(rows, dtype=torch.long, device=device)
    held = ids[:, :slots] if min(widths) < slots else None
    return ids[:, slots:], held


def keep_original(noise: torch.Tensor, original: list[int], block: int, strength: float, canvas: int) -> torch.Tensor:
    """Start a rewrite canvas from the span itself, each token re-noised with probability ``strength``.

    This is the training distribution at noise level ``strength`` (the model is trained to predict
    every free slot, noised or not), so clean tokens of the original tend to be kept and the
    re-noised ones re-imagined. Spare slots past the span stay noise.
    """
    start = block * canvas
    span = torch.tensor(original[start : start + noise.shape[1]], dtype=noise.dtype, device=noise.device)
    if not span.numel():
        return noise
    # -1: no original token there (a kept-words layout's slack), so noise.
    keep = (torch.rand(noise.shape[0], span.numel(), device=noise.device) >= strength) & (span >= 0)
    seeded = noise.clone()
    seeded[:, : span.numel()] = torch.where(keep, span[None], noise[:, : span.numel()])
    return seeded


def kept_positions(ids: list[int], layout: Layout, vocabulary: Vocabulary) -> list[int]:
    """Which slots make the new span: before the first stop marker, not padding or end-of-text."""
    stops = {vocabulary.eos_id} if layout.stop_at_eos else set()
    if vocabulary.end_of_turn_id is not None:
        stops.add(vocabulary.end_of_turn_id)
    dropped = {vocabulary.pad_id, vocabulary.eos_id}
    positions = []
    for index, token in enumerate(ids[: layout.keep_slots]):
        if token in stops:
            break
        if token not in dropped:
            positions.append(index)
    return positions


def span_texts(
    kept: list[list[int]], layout: Layout, vocabulary: Vocabulary, decode: Callable[[list[int]], str] | None = None
) -> tuple[list[str], list[list[int]]]:
    """Each candidate's new text and the slots it kept, from its slots over all blocks (both engines'): held
    text is the writer's exactly (:func:`model.edit.holds.assemble`), new tokens go through ``decode`` (by
    default the vocabulary's text) without padding and end markers, and the span's edges are the writer's."""
    decode = decode or vocabulary.span_text
    if layout.regions:
        assembled = [
            holds.assemble(ids, layout.regions, vocabulary, layout.lead, decode, suffix_start=layout.suffix_start)
            for ids in kept
        ]
        return [with_trail(text, layout.trail) for text, _ in assembled], [where for _, where in assembled]
    positions = [kept_positions(ids, layout, vocabulary) for ids in kept]
    texts = [
        with_trail(without_lead(decode([ids[i] for i in where]), layout.lead), layout.trail, layout.suffix_start)
        for ids, where in zip(kept, positions, strict=True)
    ]
    return texts, positions
