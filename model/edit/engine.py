"""The one sampler loop: develops new text in a span, pass by pass, with a DiffusionGemma model.

The editor, the CLI, the benchmarks and the tests all drive :meth:`Engine.edit`, a generator that yields
one :class:`Pass` per denoising step and returns an :class:`EditResult`. This module is the loop and
nothing else; each thing it calls lives in a module of its own:

* :mod:`model.edit.canvas` lays the edit out once per request: the prompt ([bos] + the last
  ``context_budget`` tokens before the span, through the causal encoder once, into the KV cache), the
  free slots per block, the suffix *pinned* in the last block (clean tokens in every pass, with a
  zeroed self-conditioning signal, :mod:`model.runtime.conditioning`), and each candidate's length.
* :mod:`model.edit.bans` says what the free slots may not hold (a first slot that must write, new text
  inside a line that must not break it).
* Each pass is DiffusionGemma's own step, built from the samplers transformers ships: the linear
  temperature schedule, sampling, entropy-bound acceptance, uniform re-noising of the rest, and the
  stable-and-confident early stop. Only the free slots take part in acceptance and stopping. Redraft's
  first extension, off unless a checkpoint or request asks for it, is a left-to-right bias in the
  ranking of tokens to accept (:mod:`model.edit.sampling`), which small models need to write coherent text;
  another, ``wide_entropy_bound``, lets a draft wider than half the canvas accept more tokens a pass.
* :mod:`model.edit.polish` (``polish_rounds``, the second extension, also off by default) re-develops each
  finished block's weakest tokens.
* :mod:`model.edit.ranking` scores several candidates, developed side by side as one batch, by the
  model's own reading of them. Once one has settled, the passes run the model on the others alone
  (:mod:`model.edit.live_rows`).
* :mod:`model.runtime.forward` holds the model calls; :mod:`model.edit.passes` what the loop yields and returns.
* A span longer than one canvas is done block by block: each finished block is committed to the KV
  cache through the encoder and the next canvas starts after it.
* With no suffix (continuation) every canvas position is free, and a library-exact engine
  (``Engine(loaded, library_exact=True)``) produces exactly the tokens
  ``DiffusionGemmaForBlockDiffusion.generate`` produces for the same seed and settings. The everyday engine
  runs the same sampler with each pass's statistics and draw computed in fewer, other floats
  (:func:`model.edit.sampling.slot_statistics`, :func:`model.edit.draws.draw_accepted`): 2.5x ``generate()``
  per pass at the editor's four drafts and about 2x at one, against 1.7x and 1.6x library-exact (README, the
  engine against the library).
"""

from __future__ import annotations

import copy
import secrets
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, cast

import torch
from transformers import DynamicCache
from transformers.models.diffusion_gemma.generation_diffusion_gemma import EntropyBoundSamplerConfig

from model.checkpoint.loading import LoadedModel
from model.edit import bans as slot_bans
from model.edit import canvas, draws, ranking, word_choices
from model.edit.budget import MAX_EDIT_SECONDS, PassClock, canvas_passes, check_budget, drafts_within
from model.edit.canvas import Layout
from model.edit.live_rows import LiveCaches, cache_bytes, live_rows, merged, rows
from model.edit.passes import EditResult, Pass, painted_pass, run_to_end, without_lead
from model.edit.polish import polish, polish_shares
from model.edit.request import DenoiseOptions, EditRequest, ResolvedOptions
from model.edit.sampling import (
    InPlaceLinearTemperature,
    LeftToRightEntropyBoundSampler,
    StableAndConfident,
    block_entropy_bound,
    slot_statistics,
    token_entropy,
)
from model.edit.shape import shape_request, shaped
from model.edit.vocabulary import Vocabulary
from model.edit.word_choices import WordChoice
from model.errors import EditCancelled
from model.runtime.allocator import keep_freed_memory
from model.runtime.forward import PREFILL_CHUNK, commit_block, decode, prefill

__all__ = ["CancelCheck", "EditResult", "Engine", "Pass", "without_lead"]

CancelCheck = Callable[[], bool]
# The largest prompt cache kept for the next edit (``Engine.prepare``): the built-in model's at 2k tokens
# is about 6 MiB; a large model's at a long context (gigabytes) is encoded again instead of held twice.
PREPARED_CACHE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class _Block:
    """What stays fixed over one block's passes."""

    slots: int  # free slot columns (each candidate uses its own ``widths`` of them)
    pinned: torch.Tensor  # (batch, canvas - slots): the suffix and padding after the slots
    held: torch.Tensor | None  # (batch, slots): ids a shorter candidate pins in its spare slots, -1 free
    keep_signal: torch.Tensor | None  # (batch, canvas): 0 where a position gets no self-conditioning
    positions: torch.Tensor  # (1, canvas) decoder positions
    bans: slot_bans.Bans
    sampler: LeftToRightEntropyBoundSampler
    # (batch,) each candidate's entropy bound, by its own width (model.edit.sampling.block_entropy_bound); None
    # where every candidate has the sampler's own
    bounds: torch.Tensor | None
    live_caches: LiveCaches = field(default_factory=LiveCaches)  # the cache's rows of the candidates developing


@dataclass(frozen=True)
class _Canvas:
    """A block's canvas between passes."""

    slots: torch.Tensor  # (batch, slots): accepted tokens and fresh noise
    argmax: torch.Tensor  # (batch, slots): the last prediction's argmax
    sc_logits: torch.Tensor | None  # the last pass's logits: the next pass's self-conditioning
    finished: torch.Tensor  # (batch,) candidates whose block has settled
    entropy: torch.Tensor  # (batch, slots) of the last prediction (zeros before the first)
    accepted: torch.Tensor  # (batch, slots) what the last pass accepted (none before the first)


class Engine:
    """Runs edit requests on one loaded model. Not thread-safe: one edit at a time."""

    def __init__(self, loaded: LoadedModel, library_exact: bool = False) -> None:
        """``library_exact``: compute each pass's statistics and draws with the very operations transformers'
        ``generate()`` uses, so a continuation makes its tokens for the same seed (the equivalence tests and
        bench/engine_vs_library.py's same-work check). Otherwise the same sampler in fewer, other floats
        (:func:`model.edit.sampling.slot_statistics`, :func:`model.edit.draws.draw_accepted`)."""
        self.loaded = loaded
        self.library_exact = library_exact
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.device = loaded.device
        self.canvas_length = loaded.canvas_length
        self.vocab_size = loaded.vocab_size
        self.vocabulary = Vocabulary(self.tokenizer, self.vocab_size, self.device)
        self.pad_id = self.vocabulary.pad_id
        self.eos_id = self.vocabulary.eos_id
        self.bos_id = self.vocabulary.bos_id
        self.end_of_turn_id = self.vocabulary.end_of_turn_id
        self.prefill_chunk = PREFILL_CHUNK
        # The last prompt encoded, and its cache before any candidate or block was added (``prepare``).
        self._prepared: tuple[tuple[int, ...], DynamicCache] | None = None
        # What a canvas pass costs here (model.edit.budget), and the longest an edit may take.
        self.clock = PassClock()
        self.max_edit_seconds = MAX_EDIT_SECONDS
        # When set (the editor's "fewer drafts when slow"), an edit asking for more drafts than develop within
        # this many seconds here gets fewer (model.edit.budget.drafts_within); the CLI keeps what it asks for.
        self.fit_drafts_seconds: float | None = None
        self._parameters = sum(parameter.numel() for parameter in self.model.parameters())
        keep_freed_memory()  # each pass frees and reallocates the same vocabulary-sized tensors

    # -- public API -------------------------------------------------------------------------------

    def run(
        self,
        request: EditRequest,
        cancel: CancelCheck | None = None,
        on_pass: Callable[[Pass], None] | None = None,
    ) -> EditResult:
        """Run ``request`` to the end; ``on_pass`` sees every pass. Raises EditCancelled if cancelled."""
        return run_to_end(self.edit(request, cancel), on_pass)

    @shaped
    def edit(self, request: EditRequest, cancel: CancelCheck | None = None) -> Generator[Pass, None, EditResult]:
        """Yield a :class:`Pass` per denoising step; return the :class:`EditResult`.

        ``cancel`` is checked before every pass: when it returns True the generator raises
        :class:`EditCancelled`, so an edit stops within one pass. Closing the generator works too. The
        span's edges and ending stay the writer's (:mod:`model.edit.shape`).
        """
        request.validate()
        options = request.options.resolved(self.loaded.generation_defaults)
        layout = self._layout(request)
        blocks = len(layout.block_slots)
        price = self.clock.price_ms(self._parameters, self.canvas_length, self.device.type)
        if self.fit_drafts_seconds is not None and request.candidates > 1:
            per_draft = canvas_passes(1, blocks, options.max_denoising_steps, options.polish_rounds)
            fitting = drafts_within(request.candidates, per_draft, price, self.fit_drafts_seconds)
            if fitting < request.candidates:  # each draft's length comes from how many there are: laid out again
                request = replace(request, candidates=fitting)
                layout = self._layout(request)
        passes = canvas_passes(request.candidates, blocks, options.max_denoising_steps, options.polish_rounds)
        check_budget(passes, price, request.candidates, blocks, self.max_edit_seconds)
        seed = request.seed if request.seed is not None else secrets.randbits(63)
        with torch.inference_mode():
            result = yield from self._develop(request, options, layout, seed, cancel)
        self.clock.record(result.pass_ms, request.candidates)
        return result

    def prepare(self, request: EditRequest) -> bool:
        """Encode ``request``'s prompt into the KV cache ahead of the edit, and keep it: an edit whose prompt is
        the same token for token (a regeneration too) starts from a copy. The editor calls this when a selection's
        start (or the caret) has held still, so the prefill (about 200 ms for 2k tokens of context at the built-in
        model's size, which reads 128) is done before Ctrl+R. Returns whether it is kept (``PREPARED_CACHE_BYTES``)."""
        request.validate()
        prompt_ids = self._layout(shape_request(request)[0]).prompt_ids
        if not self._holds_prepared(prompt_ids):
            with torch.inference_mode():
                self._prompt_cache(prompt_ids)
        return self._prepared is not None

    def _holds_prepared(self, prompt_ids: list[int]) -> bool:
        return self._prepared is not None and self._prepared[0] == tuple(prompt_ids)

    def _prompt_cache(self, prompt_ids: list[int]) -> DynamicCache:
        """A cache holding ``prompt_ids`` encoded: a copy of the prepared one if it holds the same ids,
        else freshly encoded (and kept for the next edit if small enough). The numbers are the same."""
        if self._prepared is not None and self._holds_prepared(prompt_ids):
            return copy.deepcopy(self._prepared[1])
        model = self.model
        cache = DynamicCache(config=model.config.get_text_config(decoder=True))
        prefill(model, torch.tensor([prompt_ids], device=self.device), cache, self.prefill_chunk)
        # One assignment: the editor's thread, reading it meanwhile, sees the old prompt or the new, never none.
        small = cache_bytes(cache) <= PREPARED_CACHE_BYTES
        self._prepared = (tuple(prompt_ids), copy.deepcopy(cache)) if small else None
        return cache

    def warm_up(self) -> None:
        """Run one small edit, so a writer's first one does not pay the first-use costs (the lean pass's check,
        :mod:`model.runtime.forward`; the first call of each kernel): 810 ms to a first pass cold, 246 warm."""
        request = EditRequest(
            prefix="Warm", suffix=" up.", mode="fill", max_new_tokens=2, candidates=2, seed=0,
            options=DenoiseOptions(max_denoising_steps=2, polish_rounds=0),
        )  # fmt: skip
        self.run(request)

    def word_choices(self, prefix: str, word: str, suffix: str, count: int = word_choices.CHOICES) -> list[WordChoice]:
        """Other words the model reads as fitting where ``word`` stands between ``prefix`` and ``suffix``,
        likeliest first: one reading, no sampling (:mod:`model.edit.word_choices`)."""
        layout = self._layout(word_choices.gap_request(prefix, word, suffix))
        with torch.inference_mode():
            cache = self._prompt_cache(layout.prompt_ids)
            shares = word_choices.slot_shares(self, layout, cache, self._bans(layout, 0))
        return word_choices.whole_words(word_choices.ranked(shares), self.vocabulary.pieces, word, layout.lead, count)

    def encode(self, text: str) -> list[int]:
        return self.vocabulary.encode(text)

    def decode(self, ids: list[int]) -> str:
        return self.vocabulary.decode(ids)

    def span_text(self, ids: list[int]) -> str:
        """The text of new span tokens, with the documents' in-memory line breaks (:mod:`model.edit.vocabulary`)."""
        return self.vocabulary.span_text(ids)

    # -- the pieces the loop calls, bound to this model ---------------------------------------------

    def _layout(self, request: EditRequest) -> Layout:
        most = self.loaded.generation_defaults.get("max_context_tokens")
        if most is not None and request.context_budget > most:  # past what the model was trained to read
            request = replace(request, context_budget=int(most))
        return canvas.plan_layout(request, self.vocabulary, self.loaded)

    def _prefix_ids(self, prefix: str, budget: int) -> list[int]:
        return canvas.prefix_ids(prefix, budget, self.vocabulary)

    def _bans(self, layout: Layout, block: int) -> slot_bans.Bans:
        return slot_bans.bans_for(layout, block, self.vocabulary)

    _slot_logits = staticmethod(slot_bans.slot_logits)

    def _new_text(self, ids: list[int], lead: str) -> str:
        """The span's text from its tokens, without the ``lead`` the document already has."""
        return without_lead(self.span_text(ids), lead)

    def _kept_positions(self, ids: list[int], layout: Layout) -> list[int]:
        return canvas.kept_positions(ids, layout, self.vocabulary)

    def _clean(self, ids: list[int], layout: Layout) -> list[int]:
        """The new span's tokens: up to the slots asked for, without padding and end markers."""
        return [ids[i] for i in self._kept_positions(ids, layout)]

    def _held_text(
        self, layout: Layout, block: int, slots: int, batch: int, held: torch.Tensor | None
    ) -> torch.Tensor | None:
        """``held`` with the kept words or the text between gaps this block holds (:mod:`model.edit.holds`)."""
        offset = layout.block_offset(block)
        row = layout.held_template[offset : offset + slots]
        if not any(token >= 0 for token in row):
            return held
        text = torch.tensor([row] * batch, dtype=torch.long, device=self.device)
        return text if held is None else torch.where(text >= 0, text, held)

    # -- the loop ---------------------------------------------------------------------------------

    def _denoise(
        self,
        block: _Block,
        state: _Canvas,
        cur_step: int,
        temperature: Any,
        stopper: StableAndConfident,
        cache: DynamicCache,
    ) -> tuple[_Canvas, torch.Tensor]:
        """One denoising pass, DiffusionGemma's step: the new canvas, and the mask of slots it accepted."""
        # As in generate(): the step is an int32 tensor, so the schedule's arithmetic matches.
        step = torch.tensor(cur_step, device=self.device, dtype=torch.int32)
        finished = state.finished
        # Only the candidates still developing go through the model once one has settled (the everyday engine):
        # a settled candidate keeps its canvas anyway, so its row of the batch was work thrown away.
        live = None if self.library_exact else live_rows(finished, cache)
        slots_before = rows(live, state.slots)
        full_canvas = torch.cat([slots_before, rows(live, block.pinned)], dim=1)
        # Only the free slots' logits: pinned positions are never sampled and get no self-conditioning.
        raw_logits = decode(
            self.model, full_canvas, block.positions, block.live_caches.rows_of(cache, live),
            rows(live, state.sc_logits), rows(live, block.keep_signal), columns=block.slots,
        )  # fmt: skip
        logits = temperature(None, raw_logits, cur_step=step)
        held = rows(live, block.held)
        slot_logits = self._slot_logits(logits, block.slots, block.bans, held)
        # One entropy for acceptance, stopping and painting (model.edit.sampling); the sample is drawn for the
        # accepted slots only (model.edit.draws).
        if self.library_exact:
            argmax, entropy, probs = torch.argmax(slot_logits, dim=-1), token_entropy(slot_logits), None
        else:
            argmax, entropy, probs = slot_statistics(slot_logits)
        accepted = block.sampler.acceptance(entropy, rows(live, block.bounds))
        sampled = (
            draws.draw_accepted(probs, accepted)
            if probs is not None
            else draws.sample_accepted(slot_logits, accepted, entropy)
        )
        accepted_canvas = torch.where(accepted, sampled, slots_before)
        slots = block.sampler.renoise(accepted_canvas, step)
        if held is not None:
            slots = torch.where(held >= 0, held, slots)
        sc_logits = logits.to(self.model.model.decoder.embed_tokens.weight.dtype)
        shown_entropy = entropy
        if live is not None:
            # The settled candidates' rows as they were; the live rows' new values put in among them.
            slots, argmax, shown_entropy, accepted = (
                merged(old, live, new)
                for old, new in ((state.slots, slots), (state.argmax, argmax), (state.entropy, entropy),
                                 (state.accepted, accepted))
            )  # fmt: skip
            entropy = shown_entropy
            # In place: the last pass's logits are this pass's alone (no Pass or result holds them).
            sc_logits = cast(torch.Tensor, state.sc_logits).index_copy_(0, live, sc_logits)
        elif finished.any():
            # Finished candidates keep their canvas while the others go on (as in generate()).
            argmax = torch.where(finished[:, None], state.argmax, argmax)
            slots = torch.where(finished[:, None], state.slots, slots)
            if state.sc_logits is not None:
                sc_logits = torch.where(finished[:, None, None], state.sc_logits, sc_logits)
            shown_entropy = torch.where(finished[:, None], state.entropy, entropy)
        # The stopper reads the fresh entropy: a finished candidate stays finished whatever it says.
        finished = finished | stopper(argmax, entropy)
        new_state = _Canvas(slots, argmax, sc_logits, finished, shown_entropy, accepted)
        if block.held is not None:
            # Held slots (kept words, the text between gaps) are the writer's from the first pass: painted as
            # ink, not as noise that the sampler's left-to-right frontier has yet to reach.
            accepted = accepted | (block.held >= 0)
        return new_state, accepted

    def _develop(
        self,
        request: EditRequest,
        options: ResolvedOptions,
        layout: Layout,
        seed: int,
        cancel: CancelCheck | None,
    ) -> Generator[Pass, None, EditResult]:
        """Prefill the prompt, then per block: denoising passes, polish rounds, scores, commit to the cache."""
        model, device = self.model, self.device
        batch = request.candidates
        canvas_length = self.canvas_length
        steps = options.max_denoising_steps
        torch.manual_seed(seed)  # the sampler classes draw from the global generator, as generate() does

        # Every candidate has the same prefix: encode it once and copy its cache to each of them. Four
        # candidates at a 1.7k-token prefix, built-in model, two CPU cores: 2.48 -> 2.26 s per fill
        # (bench/engine_speed.py --candidates 4); the share grows with the model and the prefix.
        cache = self._prompt_cache(layout.prompt_ids)
        position = len(layout.prompt_ids)
        cache.batch_repeat_interleave(batch)

        # Typed as Any: the library annotates ints and LongTensors where generate() itself passes tensors.
        temperature: Any = InPlaceLinearTemperature(options.t_min, options.t_max, steps)
        stopper = StableAndConfident(options.stability_threshold, options.confidence_threshold)
        sampler_config = EntropyBoundSamplerConfig(entropy_bound=options.entropy_bound)

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
            pinned, held = canvas.pinned_columns(
                layout.suffix_tail if last else [], slots, widths, canvas_length, self.pad_id, device
            )
            held = self._held_text(layout, block, slots, batch, held)
            keep_signal = None
            if min(widths) < canvas_length:
                columns = torch.arange(canvas_length, device=device)[None]
                keep_signal = (columns < torch.tensor(widths, device=device)[:, None]).float()
            sampler = LeftToRightEntropyBoundSampler(
                sampler_config, slots, self.vocab_size, steps, options.left_to_right_bias
            )
            bounds = [block_entropy_bound(options.entropy_bound, options.wide_entropy_bound, w, canvas_length)
                      for w in widths]  # fmt: skip
            row_bounds = None if set(bounds) == {options.entropy_bound} else torch.tensor(bounds, device=device)
            bans = self._bans(layout, block)
            # What every pass of this block hands a painter besides its own canvas.
            paint = partial(
                painted_pass,
                self.vocabulary.pieces,
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
                slot_canvas = canvas.keep_original(
                    slot_canvas, layout.original, block, request.strength, canvas_length
                )
            if held is not None:
                slot_canvas = torch.where(held >= 0, held, slot_canvas)
            plan = _Block(slots, pinned, held, keep_signal, decoder_positions, bans, sampler, row_bounds)
            state = _Canvas(
                slot_canvas, slot_canvas, None, torch.zeros(batch, dtype=torch.bool, device=device),
                torch.zeros(slot_canvas.shape, device=device), torch.zeros_like(slot_canvas, dtype=torch.bool),
            )

            for cur_step in reversed(range(1, steps + 1)):
                if cancel is not None and cancel():
                    raise EditCancelled("the edit was cancelled")
                started = time.perf_counter()
                forward_passes += (~state.finished).cpu().long()
                state, accepted = self._denoise(plan, state, cur_step, temperature, stopper, cache)
                pass_ms.append((time.perf_counter() - started) * 1000)
                yield paint(step=step_index, slot_canvas=state.slots, accepted=accepted, entropy=state.entropy,
                            finished=state.finished, ms=pass_ms[-1])
                step_index += 1
                if bool(state.finished.all()):
                    break
            argmax_slots, sc_logits, finished = state.argmax, state.sc_logits, state.finished

            for share in polish_shares(options.polish_rounds):
                if cancel is not None and cancel():
                    raise EditCancelled("the edit was cancelled")
                started = time.perf_counter()
                argmax_slots, sc_logits, entropy = polish(
                    model, self.vocab_size, argmax_slots, pinned, widths, share, bans, held, sc_logits, keep_signal,
                    decoder_positions, cache,
                )
                forward_passes += 2
                pass_ms.append((time.perf_counter() - started) * 1000)
                everything = torch.ones_like(argmax_slots, dtype=torch.bool)
                yield paint(step=step_index, slot_canvas=argmax_slots, accepted=everything, entropy=entropy,
                            finished=finished, ms=pass_ms[-1], polishing=True)
                step_index += 1

            if batch > 1:
                block_scores.append(
                    ranking.score_block(model, argmax_slots, pinned, sc_logits, keep_signal, decoder_positions, cache)
                )
                if last:
                    seam_scores = ranking.score_seam(
                        model, self.vocab_size, {self.pad_id, self.eos_id}, argmax_slots, pinned, widths,
                        layout.suffix_tail, decoder_positions, cache,
                    )
            block_ids = argmax_slots.tolist()
            for candidate in range(batch):
                kept[candidate].extend(block_ids[candidate][: widths[candidate]])
                committed_text[candidate] = self._new_text(self._clean(kept[candidate], layout), layout.lead)
            if layout.stop_at_eos:
                ended |= (argmax_slots == self.eos_id).any(dim=1).cpu()
            if last or bool(ended.all()):
                break
            commit_block(model, argmax_slots, cache, decoder_positions)
            position += canvas_length

        texts, positions = canvas.span_texts(kept, layout, self.vocabulary)
        token_ids = [[ids[i] for i in where] for ids, where in zip(kept, positions, strict=True)]
        scores = [0.0]
        if block_scores:
            wanted = layout.wanted_words
            ratios = [len(text.split()) / wanted for text in texts] if wanted else None
            scores = ranking.candidate_scores(positions, torch.cat(block_scores, dim=1), seam_scores, ratios)
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
