"""The one sampler loop: develops new text in a span, pass by pass, with a DiffusionGemma model.

The editor, the CLI, the benchmarks and the tests all drive :meth:`Engine.edit`, a generator that yields
one :class:`Pass` per denoising step and returns an :class:`EditResult`.

How an edit maps onto DiffusionGemma's block diffusion:

* The prefix ([bos] + the last ``context_budget`` tokens before the span) goes through the causal
  encoder once, into the KV cache.
* Each canvas holds ``canvas_length`` positions: the free slots for the new text, then — in the last
  block only — the suffix *pinned*: clean tokens in every pass, with a zeroed self-conditioning signal
  (:mod:`model.conditioning`), followed by end-of-text and padding when the document ends there.
* Each pass is DiffusionGemma's own step, built from the samplers transformers ships: the linear
  temperature schedule, sampling, entropy-bound acceptance, uniform re-noising of the rest, and the
  stable-and-confident early stop. Only the free slots take part in acceptance and stopping. Redraft's
  first extension, off unless a checkpoint or request asks for it, is a left-to-right bias in the
  ranking of tokens to accept (:mod:`model.sampling`), which small models need to write coherent text.
* Several candidates develop side by side as one batch and are ranked by the model's own score. With
  a suffix they also try shorter lengths (``LENGTH_SHARES`` for a gap, ``REWRITE_LENGTH_SHARES`` for
  a rewrite): each candidate has its own number of free slots, with the suffix pinned right after
  them, so the ranking chooses the length too.
* Optionally (``polish_rounds``, the second extension, also off by default) each finished block is
  polished: its weakest tokens, as the model re-reads the clean canvas, are replaced by noise and
  predicted again with everything else in place, a few rounds with fewer tokens each time
  (:meth:`Engine._polish`).
* New text inside a line stays on it (``_Layout.single_line``): line-break tokens are banned from the
  free slots of a rewrite whose selection has none, and of a gap with text on both sides of it.
* A span longer than one canvas is done block by block: each finished block is committed to the KV
  cache through the encoder and the next canvas starts after it.
* With no suffix (continuation) every canvas position is free, which makes the loop produce exactly
  the tokens ``DiffusionGemmaForBlockDiffusion.generate`` produces for the same seed and settings.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import torch
from transformers import DynamicCache
from transformers.models.diffusion_gemma.generation_diffusion_gemma import (
    EntropyBoundSamplerConfig,
    LinearTemperatureScheduleLogitsProcessor,
    StableAndConfidentStoppingCriteria,
)

from model.cache_kwarg import with_cache
from model.conditioning import zero_self_conditioning_at
from model.errors import EditCancelled, RequestError
from model.loading import LoadedModel
from model.request import CONTEXT_CHARS_PER_TOKEN, EditRequest, ResolvedOptions
from model.sampling import LeftToRightEntropyBoundSampler

CancelCheck = Callable[[], bool]

# Rewrites get a few spare slots beyond the span's length; the model pads the ones it does not need.
REWRITE_SLACK_FRACTION = 0.2
REWRITE_SLACK_MIN = 2
# The last canvas of a span keeps at least this share of its positions for pinned suffix context.
MIN_PINNED_FRACTION = 0.25
# Long prefixes go through the encoder in chunks: attention scores for the whole prefix at once would
# need gigabytes at 8k tokens (no flash kernel for 512-wide heads), chunks bound that.
PREFILL_CHUNK = 2048
SPACE = " "
# Ranking candidates: the suffix tokens re-predicted to judge the seam, and that score's weight
# beside the mean log-probability of the span's own tokens. The seam score spreads about 80 times
# wider (sd 3.2 against 0.04 nats on held-out gaps), so 0.01 already gives it a real say. On 120
# held-out gaps, best of 3: seam perplexity 311 -> 187, the whole fill's 65 -> 68 (single draws: 84).
SEAM_TOKENS = 4
SEAM_WEIGHT = 0.01
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
# Polishing (``polish_rounds``): the first round re-noises this share of each candidate's slots (its
# least likely tokens), later rounds linearly fewer. Uniform-noise diffusion trains the model to spot
# and replace wrong tokens anywhere on a canvas, but the sampler never revisits a finished one.
POLISH_SHARE = 0.3
LINE_BREAKS = ("\n", "\r")


def polish_shares(rounds: int) -> list[float]:
    """The share of each candidate's slots every polish round re-noises: ``POLISH_SHARE``, then linearly less."""
    return [POLISH_SHARE * (1 - r / rounds) for r in range(rounds)]


def candidate_widths(slots: int, candidates: int, shares: tuple[float, ...] = LENGTH_SHARES) -> list[int]:
    """Free slots per candidate: ``shares`` of ``slots``, cycled, at least one each."""
    return [max(1, round(slots * shares[c % len(shares)])) for c in range(candidates)]


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
    # Text the span's first token carries that the document already has (see ``_Layout.lead``): it is
    # left out of ``pieces``; a painter decoding tokens itself drops it from the span's start.
    lead: str = ""

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


@dataclass(frozen=True)
class _Layout:
    """How an edit is laid out on canvases (computed once per request)."""

    prompt_ids: list[int]
    block_slots: list[int]  # free slots per block
    suffix_tail: list[int]  # suffix ids (then end-of-text) pinned after the last block's slots, ≤ a canvas
    keep_slots: int  # how many result tokens to keep (continuation truncates full canvases)
    stop_at_eos: bool  # continuation and instructions end at the first end-of-text
    original: list[int] = field(default_factory=list)  # rewrite: the span's tokens, slot by slot
    # Gap fills and rewrites must write at least one token: their training examples always start the
    # free slots with a real token ([span][pad…]), so pad or end-of-text there is a model error.
    must_write: bool = False
    # A space ending the prefix, moved onto the canvas ("" when none). Byte-level BPE (and
    # SentencePiece) glue a space to the word after it, so in training text a prefix never ends
    # in a bare space token; the model would read one as a word break inside a word and start
    # the span with a fragment ("ed it was strong"). The prompt stops before the space, the first
    # slot may only hold a token starting with it, and it is cut from the span's text again.
    lead: str = ""
    trail: str = ""  # whitespace moved from the document onto the suffix's start (``Engine._trail``)
    # A span inside a line stays inside it: no line breaks in the new text (``Engine._single_line``).
    single_line: bool = False
    # Free slots of the last block per candidate (``LENGTH_SHARES``, ``REWRITE_LENGTH_SHARES``); empty: all
    # have the block's.
    candidate_slots: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _Bans:
    """Vocabulary ids (boolean masks over the vocabulary) the free slots may not hold: ``first`` in the
    span's first slot (``Engine._first_slot_forbidden``), ``every`` in any slot (``_Layout.single_line``)."""

    first: torch.Tensor | None = None
    every: torch.Tensor | None = None

    def applied(self, slot_logits: torch.Tensor) -> torch.Tensor:
        """``slot_logits`` (batch, slots, vocabulary) with the banned ids ruled out (a copy; no bans: unchanged)."""
        if self.first is None and self.every is None:
            return slot_logits
        # Finite, so entropies stay finite; the self-conditioning signal keeps the unmasked logits.
        slot_logits = slot_logits.masked_fill(self.every, -1e4) if self.every is not None else slot_logits.clone()
        if self.first is not None:
            slot_logits[:, 0] = slot_logits[:, 0].masked_fill(self.first, -1e4)
        return slot_logits


class Engine:
    """Runs edit requests on one loaded model. Not thread-safe: one edit at a time."""

    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded = loaded
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.device = loaded.device
        self.canvas_length = loaded.canvas_length
        self.vocab_size = loaded.vocab_size
        self.pad_id = int(self.tokenizer.pad_token_id)
        self.eos_id = int(self.tokenizer.eos_token_id)
        bos = self.tokenizer.bos_token_id
        self.bos_id = int(bos) if bos is not None else None
        end_of_turn = self.tokenizer.convert_tokens_to_ids("<end_of_turn>")
        unk = self.tokenizer.unk_token_id
        self.end_of_turn_id = end_of_turn if isinstance(end_of_turn, int) and end_of_turn != unk else None
        self.prefill_chunk = PREFILL_CHUNK
        self._vocabulary_texts: list[str] | None = None
        self._vocabulary_masks: dict[str, torch.Tensor] = {}

    # -- public API -------------------------------------------------------------------------------

    def run(
        self,
        request: EditRequest,
        cancel: CancelCheck | None = None,
        on_pass: Callable[[Pass], None] | None = None,
    ) -> EditResult:
        """Run ``request`` to the end; ``on_pass`` sees every pass. Raises EditCancelled if cancelled."""
        passes = self.edit(request, cancel)
        while True:
            try:
                step = next(passes)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            if on_pass is not None:
                on_pass(step)

    def edit(self, request: EditRequest, cancel: CancelCheck | None = None) -> Generator[Pass, None, EditResult]:
        """Yield a :class:`Pass` per denoising step; return the :class:`EditResult`.

        ``cancel`` is checked before every pass: when it returns True the generator raises
        :class:`EditCancelled`, so an edit stops within one pass. Closing the generator works too.
        """
        request.validate()
        options = request.options.resolved(self.loaded.generation_defaults)
        layout = self._layout(request)
        seed = request.seed if request.seed is not None else secrets.randbits(63)
        with torch.inference_mode():
            result = yield from self._develop(request, options, layout, seed, cancel)
        return result

    # -- layout -----------------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=False))

    def span_text(self, ids: list[int]) -> str:
        """The text of new span tokens, with the documents' in-memory line breaks.

        Byte-level vocabularies can emit a carriage return; a document holds only "\n" while open
        (files keep their own line endings on disk), so a stray "\r" would otherwise land in it.
        """
        return self.decode(ids).replace("\r\n", "\n").replace("\r", "\n")

    def _space_led_tokens(self) -> torch.Tensor:
        """Per vocabulary id, whether its text starts with a space."""
        return self._vocabulary_mask("space_led", lambda text: text.startswith(SPACE))

    def _line_break_tokens(self) -> torch.Tensor:
        """Per vocabulary id, whether its text holds a line break."""
        return self._vocabulary_mask("line_break", lambda text: any(mark in text for mark in LINE_BREAKS))

    def _vocabulary_mask(self, name: str, test: Callable[[str], bool]) -> torch.Tensor:
        """Per vocabulary id, ``test`` of its decoded text (computed once per name, on first use)."""
        if name not in self._vocabulary_masks:
            if self._vocabulary_texts is None:  # 262k tokens on the large model: decode them once
                self._vocabulary_texts = self.tokenizer.batch_decode([[i] for i in range(len(self.tokenizer))])
            flags = [test(text) for text in self._vocabulary_texts][: self.vocab_size]
            flags += [False] * (self.vocab_size - len(flags))
            self._vocabulary_masks[name] = torch.tensor(flags, device=self.device)
        return self._vocabulary_masks[name]

    def _prefix_ids(self, prefix: str, budget: int) -> list[int]:
        # Tokenize only the tail that can matter: a token covers at least one character, except
        # multi-byte characters split into bytes, hence the generous factor.
        reach = budget * CONTEXT_CHARS_PER_TOKEN
        tail = prefix[-reach:] if reach < len(prefix) else prefix
        ids = self.encode(tail) if tail else []
        room = budget - (1 if self.bos_id is not None else 0)
        ids = ids[-room:] if room > 0 else []
        return ([self.bos_id] if self.bos_id is not None else []) + ids

    def _suffix_ids(self, suffix: str, limit: int) -> tuple[list[int], bool]:
        """The first ``limit`` suffix tokens, and whether they reach the end of the document."""
        head = suffix[: limit * CONTEXT_CHARS_PER_TOKEN]
        ids = self.encode(head) if head else []
        reaches_end = len(head) == len(suffix) and len(ids) <= limit
        return ids[:limit], reaches_end

    def _instruction_prompt(self, request: EditRequest, budget: int) -> list[int]:
        context_chars = budget * 2
        content = (
            f"{request.instruction}\n\n"
            f"Text before:\n{request.prefix[-context_chars:]}\n\n"
            f"Text to rewrite:\n{request.span}\n\n"
            f"Text after:\n{request.suffix[:context_chars]}\n\n"
            "Reply with the rewritten text only."
        )
        messages = [{"role": "user", "content": content}]
        encoded: Any = self.tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
        if hasattr(encoded, "keys"):  # transformers 5 returns a BatchEncoding
            encoded = encoded["input_ids"]
        ids = [int(token) for token in encoded]
        return ids[-budget:]

    def _layout(self, request: EditRequest) -> _Layout:
        canvas = self.canvas_length
        if request.mode == "instruct":
            if not self.loaded.follows_instructions:
                raise RequestError(
                    f"{self.loaded.name} is not instruction-tuned (it has no chat template); "
                    "use Rewrite, or load an instruction-tuned checkpoint such as diffusiongemma-26B-A4B-it"
                )
            span_tokens = len(self.encode(request.span or ""))
            slots = request.max_new_tokens or min(2 * span_tokens + 8, 4 * canvas)
            prompt = self._instruction_prompt(request, request.context_budget)
            return self._blocks(prompt, slots, suffix="", stop_at_eos=True)
        lead = SPACE if request.prefix.endswith(SPACE) and self._space_led_tokens().any() else ""
        prompt = self._prefix_ids(request.prefix[: len(request.prefix) - len(lead)], request.context_budget)
        span = request.span or ""
        trail = self._trail(request)
        original: list[int] = []
        if request.mode == "rewrite":
            original = self.encode(lead + span[: len(span) - len(trail)])
            slots = len(original) + max(REWRITE_SLACK_MIN, math.ceil(len(original) * REWRITE_SLACK_FRACTION))
            if request.max_new_tokens is not None:
                slots = min(slots, request.max_new_tokens)
        else:
            assert request.max_new_tokens is not None  # validated
            slots = request.max_new_tokens
        layout = self._blocks(prompt, slots, trail + request.suffix, stop_at_eos=not request.suffix)
        # A fill at the very end stays plain continuation (exactly generate()'s loop, end-of-text allowed).
        must_write = request.mode == "rewrite" or bool(request.suffix)
        single_line = self._single_line(request, trail)
        layout = replace(layout, must_write=must_write, lead=lead, trail=trail, single_line=single_line)
        if request.suffix and request.vary_length and request.candidates > 1:
            shares = LENGTH_SHARES if request.mode == "fill" else REWRITE_LENGTH_SHARES
            widths = candidate_widths(layout.block_slots[-1], request.candidates, shares)
            layout = replace(layout, candidate_slots=widths)
        return replace(layout, original=original) if request.strength < 1 else layout

    @staticmethod
    def _single_line(request: EditRequest, trail: str) -> bool:
        """Whether the new text must not break a line: a rewrite of a span that holds no line break (less
        the ``trail`` put back after it), or a gap with text before and after it on the same line.

        The model learnt line breaks from stories and books, where they end paragraphs and lines of
        dialogue, and writes them freely; a writer redrafting a sentence or filling a gap inside a
        paragraph does not want it split. A span or gap at a line's edge may still break lines.
        """
        if request.mode == "rewrite":
            span = request.span or ""
            return not any(mark in span[: len(span) - len(trail)] for mark in LINE_BREAKS)
        if request.mode == "fill":
            prefix, suffix = request.prefix, request.suffix
            return bool(prefix and suffix) and prefix[-1] not in LINE_BREAKS and suffix[0] not in LINE_BREAKS
        return False

    @staticmethod
    def _trail(request: EditRequest) -> str:
        """Whitespace between the span and a suffix that starts a word, as the model should see it.

        The mirror of ``_Layout.lead``: a suffix starting with a bare word ("Then") never follows a
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

    def _blocks(self, prompt: list[int], slots: int, suffix: str, stop_at_eos: bool) -> _Layout:
        canvas = self.canvas_length
        if not suffix:
            # Continuation: whole canvases of free slots, truncated to the slots asked for.
            return _Layout(prompt, [canvas] * math.ceil(slots / canvas), [], slots, stop_at_eos)
        suffix_ids, reaches_end = self._suffix_ids(suffix, canvas)
        end_ids = [self.eos_id] if reaches_end else []
        wanted_pinned = min(len(suffix_ids) + len(end_ids), max(1, int(canvas * MIN_PINNED_FRACTION)))
        last_capacity = canvas - wanted_pinned
        full_blocks = max(0, math.ceil((slots - last_capacity) / canvas))
        last_slots = slots - full_blocks * canvas
        if last_slots < 1:
            # No whole number of full canvases leaves the last block between 1 slot and its capacity
            # (slots just past a multiple of the canvas): one full block fewer, and the last block pins
            # fewer suffix tokens than it would like, but at least one.
            full_blocks -= 1
            last_slots = min(slots - full_blocks * canvas, canvas - 1)
        tail = (suffix_ids + end_ids)[:canvas]
        return _Layout(prompt, [canvas] * full_blocks + [last_slots], tail, slots, stop_at_eos)

    def _pinned(self, tail: list[int], slots: int, widths: list[int]) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Each candidate's canvas past its ``widths`` free slots: ``tail`` then padding.

        Returns the ids after the block's ``slots`` columns, (B, canvas - slots), and for candidates
        with fewer free slots the ids pinned inside the slot columns, (B, slots) with -1 where free,
        or None when every candidate has them all.
        """
        rows = []
        for width in widths:
            room = self.canvas_length - width
            rows.append([-1] * width + tail[:room] + [self.pad_id] * max(0, room - len(tail)))
        canvas = torch.tensor(rows, dtype=torch.long, device=self.device)
        held = canvas[:, :slots] if min(widths) < slots else None
        return canvas[:, slots:], held

    # -- the loop ---------------------------------------------------------------------------------

    def _develop(
        self,
        request: EditRequest,
        options: ResolvedOptions,
        layout: _Layout,
        seed: int,
        cancel: CancelCheck | None,
    ) -> Generator[Pass, None, EditResult]:
        model, device = self.model, self.device
        batch = request.candidates
        canvas_length = self.canvas_length
        steps = options.max_denoising_steps
        torch.manual_seed(seed)  # the sampler classes draw from the global generator, as generate() does

        cache = DynamicCache(config=model.config.get_text_config(decoder=True))
        # Every candidate has the same prefix: encode it once and copy its cache to each of them. Four
        # candidates at a 1.7k-token prefix, built-in model, two CPU cores: 2.48 -> 2.26 s per fill
        # (bench/engine_speed.py --candidates 4); the share grows with the model and the prefix.
        prompt = torch.tensor([layout.prompt_ids], device=device)
        position = prompt.shape[1]
        for start in range(0, position, self.prefill_chunk):
            chunk = prompt[:, start : start + self.prefill_chunk]
            model.model.encoder(
                input_ids=chunk,
                **with_cache(cache),
                position_ids=torch.arange(start, start + chunk.shape[1], device=device, dtype=torch.int32)[None],
            )
        cache.batch_repeat_interleave(batch)

        # Typed as Any: the library annotates ints and LongTensors where generate() itself passes tensors.
        temperature: Any = LinearTemperatureScheduleLogitsProcessor(options.t_min, options.t_max, steps)
        stopper: Any = StableAndConfidentStoppingCriteria(options.stability_threshold, options.confidence_threshold)
        sampler_config = EntropyBoundSamplerConfig(entropy_bound=options.entropy_bound)
        embed_dtype = model.model.decoder.embed_tokens.weight.dtype

        blocks = len(layout.block_slots)
        kept: list[list[int]] = [[] for _ in range(batch)]
        committed_text = [""] * batch
        forward_passes = torch.zeros(batch, dtype=torch.long)
        pass_ms: list[float] = []
        step_index = 0
        ended = torch.zeros(batch, dtype=torch.bool)  # candidates that wrote end-of-text (continuation)
        block_scores: list[torch.Tensor] = []
        seam_scores: torch.Tensor | None = None

        for block, slots in enumerate(layout.block_slots):
            last = block == blocks - 1
            widths = layout.candidate_slots if last and layout.candidate_slots else [slots] * batch
            pinned, held = self._pinned(layout.suffix_tail if last else [], slots, widths)
            keep_signal = None
            if min(widths) < canvas_length:
                columns = torch.arange(canvas_length, device=device)[None]
                keep_signal = (columns < torch.tensor(widths, device=device)[:, None]).float()
            sampler: Any = LeftToRightEntropyBoundSampler(
                sampler_config, slots, self.vocab_size, steps, options.left_to_right_bias
            )
            bans = self._bans(layout, block)
            # What every pass of this block hands a painter besides its own canvas.
            paint = partial(
                self._pass,
                block=block,
                blocks=blocks,
                committed=committed_text,
                lead=layout.lead if block == 0 else "",
                widths=widths,
            )
            stopper.reset()
            decoder_positions = torch.arange(
                position, position + canvas_length, dtype=torch.int32, device=device
            )[None]

            slot_canvas: torch.Tensor = sampler.initialize_canvas(batch, device)
            if layout.original:
                slot_canvas = self._keep_original(slot_canvas, layout.original, block, request.strength)
            if held is not None:
                slot_canvas = torch.where(held >= 0, held, slot_canvas)
            argmax_slots = slot_canvas
            sc_logits: torch.Tensor | None = None
            finished = torch.zeros(batch, dtype=torch.bool, device=device)

            for cur_step in reversed(range(1, steps + 1)):
                if cancel is not None and cancel():
                    raise EditCancelled("the edit was cancelled")
                started = time.perf_counter()
                forward_passes += (~finished).cpu().long()
                canvas = torch.cat([slot_canvas, pinned], dim=1)
                # As in generate(): the step is an int32 tensor, so the schedule's arithmetic matches.
                step_tensor = torch.tensor(cur_step, device=device, dtype=torch.int32)
                raw_logits = self._decode(canvas, decoder_positions, cache, sc_logits, keep_signal)
                logits = temperature(None, raw_logits, cur_step=step_tensor)
                slot_logits = self._slot_logits(logits, slots, bans, held)
                probs = torch.softmax(slot_logits, dim=-1, dtype=torch.float32)
                sampled = torch.multinomial(probs.reshape(-1, self.vocab_size), num_samples=1).view(batch, slots)
                new_argmax = torch.argmax(slot_logits, dim=-1)
                accepted_canvas = sampler.accept_canvas(slot_canvas, sampled, slot_logits, step_tensor)
                accepted_mask = sampler.accepted_token_mask
                new_slots = sampler.renoise_canvas(accepted_canvas, step_tensor)
                if held is not None:
                    new_slots = torch.where(held >= 0, held, new_slots)
                if finished.any():
                    # Finished candidates keep their canvas while the others go on (as in generate()).
                    new_argmax = torch.where(finished[:, None], argmax_slots, new_argmax)
                    new_slots = torch.where(finished[:, None], slot_canvas, new_slots)
                    if sc_logits is not None:
                        logits = torch.where(finished[:, None, None], sc_logits, logits)
                        slot_logits = self._slot_logits(logits, slots, bans, held)
                finished = finished | stopper(new_argmax, slot_logits)
                slot_canvas, argmax_slots = new_slots, new_argmax
                sc_logits = logits.to(embed_dtype)

                log_probs = torch.log_softmax(slot_logits.float(), dim=-1)
                entropy = -(log_probs.exp() * log_probs).sum(-1)
                pass_ms.append((time.perf_counter() - started) * 1000)
                yield paint(step=step_index, slot_canvas=slot_canvas, accepted=accepted_mask, entropy=entropy,
                            finished=finished, ms=pass_ms[-1])
                step_index += 1
                if bool(finished.all()):
                    break

            for share in polish_shares(options.polish_rounds):
                if cancel is not None and cancel():
                    raise EditCancelled("the edit was cancelled")
                started = time.perf_counter()
                argmax_slots, sc_logits, entropy = self._polish(
                    argmax_slots, pinned, widths, share, bans, held, sc_logits, keep_signal,
                    decoder_positions, cache,
                )
                forward_passes += 2
                pass_ms.append((time.perf_counter() - started) * 1000)
                everything = torch.ones_like(argmax_slots, dtype=torch.bool)
                yield paint(step=step_index, slot_canvas=argmax_slots, accepted=everything, entropy=entropy,
                            finished=finished, ms=pass_ms[-1])
                step_index += 1

            if batch > 1:
                block_scores.append(
                    self._score_block(argmax_slots, pinned, sc_logits, keep_signal, decoder_positions, cache)
                )
                if last:
                    seam_scores = self._score_seam(
                        argmax_slots, pinned, widths, layout.suffix_tail, decoder_positions, cache
                    )
            block_ids = argmax_slots.tolist()
            for candidate in range(batch):
                kept[candidate].extend(block_ids[candidate][: widths[candidate]])
                committed_text[candidate] = self._new_text(self._clean(kept[candidate], layout), layout.lead)
            if layout.stop_at_eos:
                ended |= (argmax_slots == self.eos_id).any(dim=1).cpu()
            if last or bool(ended.all()):
                break
            # Commit the finished block to the KV cache, so the next canvas is conditioned on it.
            model.model.encoder(
                input_ids=argmax_slots.contiguous(),
                **with_cache(cache),
                position_ids=decoder_positions,
            )
            position += canvas_length

        positions = [self._kept_positions(ids, layout) for ids in kept]
        token_ids = [[ids[i] for i in where] for ids, where in zip(kept, positions, strict=True)]
        scores = [0.0]
        if block_scores:
            scores = self._candidate_scores(positions, torch.cat(block_scores, dim=1), seam_scores)
        texts = [_with_trail(self._new_text(ids, layout.lead), layout.trail) for ids in token_ids]
        per_forward = [len(ids) / max(1, int(n)) for ids, n in zip(token_ids, forward_passes, strict=True)]
        return EditResult(
            texts=texts,
            token_ids=token_ids,
            raw_tokens=kept,
            passes=step_index,
            blocks=blocks,
            tokens_per_forward=sum(per_forward) / len(per_forward),
            ms_per_pass=sum(pass_ms) / max(1, len(pass_ms)),
            pass_ms=pass_ms,
            seed=seed,
            prompt_tokens=len(layout.prompt_ids),
            scores=scores,
        )

    @staticmethod
    def _candidate_scores(
        positions: list[list[int]], slot_log_probs: torch.Tensor, seam: torch.Tensor | None = None
    ) -> list[float]:
        """Mean log-probability of the tokens each candidate keeps (-inf for an empty candidate), plus
        ``SEAM_WEIGHT`` × its seam score (:meth:`_score_seam`) when the span has a suffix.

        A mean, not a sum: padding is the model's most confident prediction, so sums favour writing
        nothing. On 40 held-out gaps with the built-in model, best-of-4 by the mean cut the fills'
        trigram perplexity by about a fifth (261 → 213); the sum made it worse. The mean alone prefers
        self-assured fills that ignore the text after them; the seam term trades a little of that
        for fills that lead into it (MODEL_CARD.md).
        """
        return [
            float(slot_log_probs[candidate, where].mean())
            + (SEAM_WEIGHT * float(seam[candidate]) if seam is not None else 0.0)
            if where
            else -math.inf
            for candidate, where in enumerate(positions)
        ]

    def _score_seam(
        self,
        slots: torch.Tensor,
        pinned: torch.Tensor,
        widths: list[int],
        suffix_tail: list[int],
        positions: torch.Tensor,
        cache: DynamicCache,
    ) -> torch.Tensor | None:
        """Per candidate, how well the new text leads into the suffix: the mean log-probability of the
        first ``SEAM_TOKENS`` suffix tokens (right after the candidate's own ``widths`` slots) when they
        are replaced by noise and predicted again from the finished span and the rest of the suffix (a
        real denoising question, unlike reading pinned tokens, on which the model was never trained).
        None when no suffix text follows.
        """
        stops = {self.pad_id, self.eos_id}
        count = 0
        for token in suffix_tail[: min(SEAM_TOKENS, pinned.shape[1])]:
            if token in stops:
                break
            count += 1
        if count == 0:
            return None
        canvas = torch.cat([slots, pinned], dim=1)
        batch = canvas.shape[0]
        columns = torch.tensor(widths, device=canvas.device)[:, None] + torch.arange(count, device=canvas.device)
        noised = canvas.scatter(1, columns, torch.randint(0, self.vocab_size, (batch, count), device=canvas.device))
        # No self-conditioning: as on the first pass of a self-conditioned training step.
        logits = self.model(decoder_input_ids=noised, **with_cache(cache), decoder_position_ids=positions).logits
        rows = torch.arange(batch, device=canvas.device)[:, None]
        log_probs = torch.log_softmax(logits[rows, columns].float(), dim=-1)
        return log_probs.gather(-1, canvas.gather(1, columns)[..., None])[..., 0].mean(dim=1).cpu()

    def _decode(
        self,
        canvas: torch.Tensor,
        positions: torch.Tensor,
        cache: DynamicCache,
        sc_logits: torch.Tensor | None,
        keep_signal: torch.Tensor | None,
    ) -> torch.Tensor:
        """One decoder pass over whole canvases; pinned positions (``keep_signal`` 0) get no self-conditioning."""
        with zero_self_conditioning_at(self.model, keep_signal if sc_logits is not None else None):
            return self.model(  # type: ignore[no-any-return]
                decoder_input_ids=canvas,
                **with_cache(cache),
                decoder_position_ids=positions,
                self_conditioning_logits=sc_logits,
            ).logits

    def _score_block(
        self,
        slots: torch.Tensor,
        pinned: torch.Tensor,
        sc_logits: torch.Tensor | None,
        keep_signal: torch.Tensor | None,
        positions: torch.Tensor,
        cache: DynamicCache,
    ) -> torch.Tensor:
        """Log-probability of each finished slot token, re-read by the model on the clean final canvas."""
        raw_logits = self._decode(torch.cat([slots, pinned], dim=1), positions, cache, sc_logits, keep_signal)
        log_probs = torch.log_softmax(raw_logits[:, : slots.shape[1]].float(), dim=-1)
        return log_probs.gather(-1, slots[..., None])[..., 0].cpu()

    def _polish(
        self,
        slots: torch.Tensor,
        pinned: torch.Tensor,
        widths: list[int],
        share: float,
        bans: _Bans,
        held: torch.Tensor | None,
        sc_logits: torch.Tensor | None,
        keep_signal: torch.Tensor | None,
        positions: torch.Tensor,
        cache: DynamicCache,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One polishing round of finished slots (``polish_rounds``).

        The model re-reads the clean canvas; each candidate's ``share`` of its own slots (at least one)
        whose tokens it finds least likely become noise and are predicted again (argmax) from the rest,
        which stay in place. Returns the new slots, the re-read's logits (the next pass's
        self-conditioning) and the per-slot entropy of the new predictions.
        """
        batch, slot_count = slots.shape
        reread = self._decode(torch.cat([slots, pinned], dim=1), positions, cache, sc_logits, keep_signal)
        log_probs = torch.log_softmax(self._slot_logits(reread, slot_count, bans, held).float(), dim=-1)
        own = log_probs.gather(-1, slots[..., None])[..., 0]
        width = torch.tensor(widths, device=slots.device)[:, None]
        own = own.masked_fill(torch.arange(slot_count, device=slots.device)[None] >= width, math.inf)
        counts = torch.tensor([max(1, round(share * w)) for w in widths], device=slots.device)[:, None]
        weakest = own.argsort(dim=1, stable=True).argsort(dim=1) < counts  # each row's rank below its count
        noise = torch.randint(0, self.vocab_size, (batch, slot_count), device=slots.device)
        noised = torch.where(weakest, noise, slots)
        sc = reread.to(self.model.model.decoder.embed_tokens.weight.dtype)
        logits = self._slot_logits(
            self._decode(torch.cat([noised, pinned], dim=1), positions, cache, sc, keep_signal),
            slot_count,
            bans,
            held,
        )
        log_probs = torch.log_softmax(logits.float(), dim=-1)
        entropy = -(log_probs.exp() * log_probs).sum(-1)
        return torch.where(weakest, logits.argmax(dim=-1), slots), sc, entropy

    def _bans(self, layout: _Layout, block: int) -> _Bans:
        """What the free slots of ``block`` may not hold."""
        return _Bans(
            first=self._first_slot_forbidden(layout) if block == 0 else None,
            every=self._line_break_tokens() if layout.single_line else None,
        )

    def _first_slot_forbidden(self, layout: _Layout) -> torch.Tensor | None:
        """Which vocabulary ids the span's first slot may not hold (None: any)."""
        if not layout.must_write and not layout.lead:
            return None
        ends = [self.pad_id, self.eos_id] + ([self.end_of_turn_id] if self.end_of_turn_id is not None else [])
        if layout.lead:
            forbidden = ~self._space_led_tokens()
            # A continuation may still end at once; a fill or rewrite must write (``must_write``).
            forbidden[ends] = layout.must_write
        else:
            forbidden = torch.zeros(self.vocab_size, dtype=torch.bool, device=self.device)
            forbidden[ends] = True
        return forbidden

    @classmethod
    def _slot_logits(cls, logits: torch.Tensor, slots: int, bans: _Bans, held: torch.Tensor | None) -> torch.Tensor:
        """The free slots' logits as the sampler sees them: bans and held ids applied."""
        return cls._hold(bans.applied(logits[:, :slots]), held)

    @staticmethod
    def _hold(slot_logits: torch.Tensor, held: torch.Tensor | None) -> torch.Tensor:
        """The slot logits made certain of the ``held`` ids where a candidate pins them (-1: free), so
        those slots are sampled, accepted and judged stable as what they hold (a copy; None: unchanged)."""
        if held is None:
            return slot_logits
        certain = torch.full_like(slot_logits, -1e4).scatter(-1, held.clamp(min=0)[..., None], 0.0)
        return torch.where((held >= 0)[..., None], certain, slot_logits)

    def _new_text(self, ids: list[int], lead: str) -> str:
        """The span's text from its tokens, without the ``lead`` the document already has."""
        return without_lead(self.span_text(ids), lead)

    def _keep_original(self, noise: torch.Tensor, original: list[int], block: int, strength: float) -> torch.Tensor:
        """Start a rewrite canvas from the span itself, each token re-noised with probability ``strength``.

        This is the training distribution at noise level ``strength`` (the model is trained to predict
        every free slot, noised or not), so clean tokens of the original tend to be kept and the
        re-noised ones re-imagined. Spare slots past the span stay noise.
        """
        start = block * self.canvas_length
        span = torch.tensor(original[start : start + noise.shape[1]], dtype=noise.dtype, device=noise.device)
        if not span.numel():
            return noise
        keep = torch.rand(noise.shape[0], span.numel(), device=noise.device) >= strength
        seeded = noise.clone()
        seeded[:, : span.numel()] = torch.where(keep, span[None], noise[:, : span.numel()])
        return seeded

    def _clean(self, ids: list[int], layout: _Layout) -> list[int]:
        """The new span's tokens: up to the slots asked for, without padding and end markers."""
        return [ids[i] for i in self._kept_positions(ids, layout)]

    def _kept_positions(self, ids: list[int], layout: _Layout) -> list[int]:
        """Which slots make the new span: before the first stop marker, not padding or end-of-text."""
        stops = {self.eos_id} if layout.stop_at_eos else set()
        if self.end_of_turn_id is not None:
            stops.add(self.end_of_turn_id)
        dropped = {self.pad_id, self.eos_id}
        positions = []
        for index, token in enumerate(ids[: layout.keep_slots]):
            if token in stops:
                break
            if token not in dropped:
                positions.append(index)
        return positions

    def _pass(
        self,
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
    ) -> Pass:
        # Each candidate's own slots only: a shorter one holds suffix tokens in the rest.
        tokens = [row[:width] for row, width in zip(slot_canvas.tolist(), widths, strict=True)]
        pieces = [self.tokenizer.batch_decode([[t] for t in row]) for row in tokens]
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
        )


def without_lead(text: str, lead: str) -> str:
    """``text`` less a leading ``lead`` (``Pass.lead``) that the document already holds."""
    return text[len(lead) :] if lead and text.startswith(lead) else text


def _with_trail(text: str, trail: str) -> str:
    return text + trail if trail and text and not text[-1].isspace() else text

