"""Edits on a team's vLLM server, driven exactly like :class:`model.Engine`: ``edit`` yields a
:class:`Pass` at a time and returns an :class:`EditResult`, so the editor's worker, the CLI and the tests
need not know where the model runs.

What leaves the machine is one edit's context and nothing else: the prompt (up to ``context_budget``
tokens before the span), the span's own tokens for a rewrite at strength < 1, and up to a canvas of the
text after it, as token ids, plus the text of those pieces sent to ``/tokenize``.

How an edit maps onto vLLM's diffusion controls (``vllm_xargs`` on ``/v1/completions``, checked in
``vllm/utils/diffusion.py``): the layout is :func:`model.edit.canvas.plan_layout`'s, as locally, on the served
canvas. Per block and candidate, one request: ``prompt`` = the prompt ids (+ the candidate's earlier
blocks), ``diffusion_seed_canvas`` = noise drawn here for the free slots (a rewrite keeps part of the
original, as :func:`model.edit.canvas.keep_original` does) + the suffix, end-of-text and padding;
``diffusion_pinned`` = every position past the free slots; ``diffusion_read_only`` = 1 (return the
converged canvas, commit nothing). vLLM answers its argmax at pinned positions too (a pin holds the model's
input): what was pinned is put back into each answer (:func:`model.server.answers.held_as_sent`).
Candidates are separate requests with their own noise and length, sent side by side (the server batches
them); they are ranked by the mean log-probability the server reports for their own tokens (the writer's
held words left out: :func:`model.server.answers.own_scores`).

The server's sampler is its own (the published DiffusionGemma one): Redraft's left-to-right bias, polish
rounds, temperatures and bans do not cross; only ``max_denoising_steps`` does (``diffusion_max_steps``).
New text inside a line that must not break it has its line breaks turned into spaces here instead.

Two ways to show the passes (``SERVER_PASSES``): ``one-request`` (the default) sends each block as one
request and yields *waiting* passes (noise, ``Pass.waiting``) until its text arrives; ``per-pass`` sends
one request per denoising pass (``diffusion_max_steps`` 1, the last canvas fed back as the seed). The
README's "Team server" section has the measurements behind the default.

First contact (what the server serves, its canvas) is :mod:`model.server.contact`'s. This module is a
little under 500 lines because both ways of driving the server share the candidates' and blocks'
bookkeeping here, as the local loop's do in :mod:`model.edit.engine`.
"""

from __future__ import annotations

import math
import random
import secrets
import threading
import time
from collections.abc import Callable, Generator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Literal

from model.edit import canvas
from model.edit.canvas import Layout
from model.edit.passes import EditResult, Pass, run_to_end, without_lead
from model.edit.request import EditRequest
from model.edit.shape import shaped
from model.edit.vocabulary import LINE_BREAKS
from model.edit.word_choices import CHOICES, NOISE_DRAWS, NOISE_SEED, WordChoice, gap_request, pooled, whole_words
from model.errors import EditCancelled, RequestError
from model.server.answers import Answer, Candidate, held_as_sent, known_from, own_scores, read_answer, sleep_until_done
from model.server.contact import CancelCheck, ServerInfo, connect
from model.server.http import Deadline, Endpoint, request_json
from model.server.refill import REFILL_TRIES, ask_for_choices, left_empty, must_write, opening_words, refill_seed
from model.server.vocabulary import ServerVocabulary

PassMode = Literal["one-request", "per-pass"]
SERVER_PASSES: tuple[PassMode, ...] = ("one-request", "per-pass")
WAIT_TICK_S = 0.06  # a waiting pass this often while a request runs (the veil keeps moving)
NOISE_POOL = 48  # distinct noise pieces decoded once per connection, for waiting passes
PER_PASS_DEFAULT_STEPS = 48  # the published sampler's cap, when the request sets none
WORD_TOP = 20  # the likeliest ids asked for in Words That Fit's slot: vLLM's default cap (max_logprobs)


class ServerEngine:
    """Runs edit requests on a vLLM server. One edit at a time, as :class:`model.Engine`."""

    def __init__(
        self, endpoint: Endpoint, info: ServerInfo, passes: PassMode = "one-request", setup: Deadline | None = None
    ) -> None:
        """``setup`` bounds the requests made here (special tokens, the veil's noise pieces); by default
        :meth:`Deadline.for_contact`, or pass the one ``connect`` used so that the whole first contact shares it."""
        if passes not in SERVER_PASSES:
            raise RequestError(f"server passes must be one of {', '.join(SERVER_PASSES)}, got {passes!r}")
        self.endpoint = endpoint
        self.info = info
        self.passes: PassMode = passes
        self.name = info.name
        self.canvas_length = info.canvas_length
        self.vocab_size = info.vocab_size
        setup = setup or Deadline.for_contact(endpoint)
        self.vocabulary = ServerVocabulary(endpoint, info.name, info.vocab_size, setup)
        vocabulary = self.vocabulary
        vocabulary.deadline = setup
        try:  # instructions cross when the served model has a chat template (its /tokenize applies it)
            vocabulary.chat_ids([{"role": "user", "content": "Hello"}])
            self.follows_instructions = True
        except RequestError:
            self.follows_instructions = False
        finally:
            vocabulary.deadline = None
        self.special_ids = {i for i in (vocabulary.pad_id, vocabulary.eos_id, vocabulary.bos_id,
                                        vocabulary.end_of_turn_id) if i is not None}
        self._decoded: dict[tuple[int, ...], str] = {}
        self._deadline: Deadline | None = None  # the running edit's: every request of it ends by then
        pool = random.Random(0)
        self.noise_ids = [pool.randrange(info.vocab_size) for _ in range(NOISE_POOL)]
        vocabulary.deadline = setup
        try:
            vocabulary.pieces(self.noise_ids)  # decoded once: waiting passes draw from these
        finally:
            vocabulary.deadline = None

    @classmethod
    def open(
        cls, url: str, model: str | None = None, api_key: str | None = None, passes: PassMode = "one-request",
        timeout_s: float = 120.0,
    ) -> ServerEngine:
        endpoint = Endpoint(url, api_key, timeout_s=timeout_s)
        setup = Deadline.for_contact(endpoint)
        return cls(endpoint, connect(endpoint, model, deadline=setup), passes, setup)

    # -- what the worker and the CLI use, as on Engine -----------------------------------------------

    def run(
        self, request: EditRequest, cancel: CancelCheck | None = None, on_pass: Callable[[Pass], None] | None = None
    ) -> EditResult:
        return run_to_end(self.edit(request, cancel), on_pass)

    def decode(self, ids: list[int]) -> str:
        """Text of ``ids``, remembered (the painter decodes the same runs pass after pass)."""
        if len(ids) == 1:  # one token's text is its piece: the veil's noise was fetched at connection
            return self.vocabulary.pieces(ids)[0]
        key = tuple(ids)
        if key not in self._decoded:
            self._decoded[key] = self.vocabulary.decode(list(ids))
        return self._decoded[key]

    def encode(self, text: str) -> list[int]:
        return self.vocabulary.encode(text)

    def describe_device(self) -> str:
        return f"server {self.info.url}"

    def word_choices(self, prefix: str, word: str, suffix: str, count: int = CHOICES) -> list[WordChoice]:
        """As :meth:`model.Engine.word_choices`, from the server's ``WORD_TOP`` likeliest ids at a one-slot canvas
        after one pass, for ``NOISE_DRAWS`` noise tokens drawn here, sent side by side (:func:`pooled`)."""
        request = gap_request(prefix, word, suffix)
        layout = self._layout(request)
        rng = random.Random(NOISE_SEED)
        seeds = [self._seed_canvas(rng, layout, request, 0, 1, layout.suffix_tail) for _ in range(NOISE_DRAWS)]
        bodies = [self._body(layout, Candidate([], []), seed, 1, 1) for seed in seeds]
        for body in bodies:
            ask_for_choices(body, WORD_TOP)
        self._deadline = Deadline.after(self.endpoint.timeout_s)
        try:
            with ThreadPoolExecutor(NOISE_DRAWS, thread_name_prefix="redraft-words") as pool:
                answers = list(pool.map(lambda body: self._send(body, lambda: False), bodies))
        finally:
            self._deadline = None
        readings = [{t: math.exp(v) for t, v in (a.top[0] if a.top else {}).items()} for a in answers]
        ranked = pooled(readings, [seed[0] for seed in seeds])
        return whole_words(ranked, self.vocabulary.pieces, word, layout.lead, count)

    # -- one edit ------------------------------------------------------------------------------------

    @shaped
    def edit(self, request: EditRequest, cancel: CancelCheck | None = None) -> Generator[Pass, None, EditResult]:
        """Yield passes (waiting ones, or one per server pass); return the :class:`EditResult`.

        A cancel (``cancel`` returning True, or closing the generator) closes the open connections at once
        and raises :class:`EditCancelled`; nothing is returned, so no document can be touched. The whole
        edit, every request of it included, ends within the endpoint's ``timeout_s`` (else a ServerError).
        """
        request.validate()
        stop = threading.Event()
        user_cancel = cancel

        def cancelled() -> bool:
            return stop.is_set() or (user_cancel is not None and user_cancel())

        self.vocabulary.cancel = cancelled
        self._deadline = self.vocabulary.deadline = Deadline.after(self.endpoint.timeout_s)
        pool = ThreadPoolExecutor(max(1, request.candidates), thread_name_prefix="redraft-server")
        try:
            layout = self._layout(request)
            seed = request.seed if request.seed is not None else secrets.randbits(63)
            result = yield from self._develop(request, layout, seed, cancelled, pool)
            return result
        finally:
            stop.set()  # any request still open sees it within a poll and closes its connection
            pool.shutdown(wait=True)
            self.vocabulary.cancel = None
            self._deadline = self.vocabulary.deadline = None

    def _layout(self, request: EditRequest) -> Layout:
        """The local layout on the served canvas, the context cut so that prompt and canvases fit the server."""
        layout = canvas.plan_layout(request, self.vocabulary, self)
        needed = len(layout.prompt_ids) + self.canvas_length * len(layout.block_slots)
        over = needed - self.info.max_model_len
        if over <= 0:
            return layout
        budget = len(layout.prompt_ids) - over
        if budget < 2:
            raise RequestError(
                f"the span needs {self.canvas_length * len(layout.block_slots)} tokens of canvas, more than the "
                f"server's context of {self.info.max_model_len} tokens allows; select less text"
            )
        return canvas.plan_layout(replace(request, context_budget=budget), self.vocabulary, self)

    def _develop(
        self, request: EditRequest, layout: Layout, seed: int, cancel: CancelCheck, pool: ThreadPoolExecutor
    ) -> Generator[Pass, None, EditResult]:
        rng = random.Random(seed)
        batch = request.candidates
        blocks = len(layout.block_slots)
        candidates = [Candidate([], []) for _ in range(batch)]
        committed = [""] * batch
        pass_ms: list[float] = []
        step_index = 0
        ended = [False] * batch
        for block, slots in enumerate(layout.block_slots):
            last = block == blocks - 1
            widths = layout.candidate_slots if last and layout.candidate_slots else [slots] * batch
            tail = layout.suffix_tail if last else []
            seeds = [self._seed_canvas(rng, layout, request, block, width, tail) for width in widths]
            lead = layout.lead if block == 0 else ""
            if self.passes == "one-request":
                answers = yield from self._one_request(
                    pool, candidates, layout, seeds, widths, request, block, blocks, committed, lead, cancel,
                    step_index, pass_ms,
                )
            else:
                answers = yield from self._per_pass(
                    pool, candidates, layout, seeds, widths, request, block, blocks, committed, lead, cancel,
                    step_index, pass_ms,
                )
            answers = yield from self._refilled(
                pool, candidates, layout, answers, widths, request, block, cancel
            )
            step_index = len(pass_ms)
            for c, (answer, width) in enumerate(zip(answers, widths, strict=True)):
                state = candidates[c]
                state.kept.extend(answer.canvas[:width])
                state.context.extend(answer.canvas)
                where = canvas.kept_positions(answer.canvas[:width], replace(layout, keep_slots=width), self.vocabulary)
                scored = own_scores(answer, where, self._held(layout, block, width))
                state.score_sum += sum(scored)
                state.score_count += len(scored)
                committed[c] = self._text(self._clean(state.kept, layout), layout)
                if layout.stop_at_eos and self.vocabulary.eos_id in answer.canvas[:width]:
                    ended[c] = True
            if last or all(ended):
                break
        kept = [state.kept for state in candidates]
        texts, positions = canvas.span_texts(kept, layout, self.vocabulary, self._free_text(layout))
        token_ids = [[ids[i] for i in where] for ids, where in zip(kept, positions, strict=True)]
        scores = [0.0]
        if batch > 1:
            scores = [s.score_sum / s.score_count if s.score_count else -math.inf for s in candidates]
        passes = max(1, len(pass_ms))
        return EditResult(
            texts=texts,
            token_ids=token_ids,
            raw_tokens=[state.kept for state in candidates],
            passes=passes,
            blocks=blocks,
            tokens_per_forward=sum(len(ids) for ids in token_ids) / max(1, batch) / passes,
            ms_per_pass=sum(pass_ms) / passes,
            pass_ms=pass_ms,
            seed=seed,
            prompt_tokens=len(layout.prompt_ids),
            scores=scores,
        )

    def _refilled(
        self, pool: ThreadPoolExecutor, candidates: list[Candidate], layout: Layout, answers: list[Answer],
        widths: list[int], request: EditRequest, block: int, cancel: CancelCheck,
    ) -> Generator[Pass, None, list[Answer]]:
        """``answers`` with each region that must be written but came back empty developed again, the rest of
        its canvas pinned (:mod:`model.server.refill`)."""
        ends = {i for i in (self.vocabulary.pad_id, self.vocabulary.eos_id, self.vocabulary.end_of_turn_id)
                if i is not None}
        rng = random.Random(sum(answers[0].canvas))  # fresh noise, reproducible from what came back
        answers = list(answers)
        for _ in range(REFILL_TRIES):
            futures: dict[int, Future[Answer]] = {}
            for c, (answer, width) in enumerate(zip(answers, widths, strict=True)):
                empty = left_empty(answer.canvas, must_write(layout, block, width), ends, self._free_text(layout))
                if empty:
                    seed, pinned = refill_seed(
                        answer.canvas, empty, rng, self.vocab_size,  # its pinned tail as sent (held_as_sent)
                        opening_words(answer, empty, ends, self._free_text(layout)),
                    )
                    body = self._body(layout, candidates[c], seed, width, request.options.max_denoising_steps, block)
                    body["vllm_xargs"]["diffusion_pinned"] = pinned
                    ask_for_choices(body)
                    futures[c] = pool.submit(self._send, body, cancel)
            if not futures:
                break
            fresh = yield from self._gather(list(futures.values()), cancel, None)
            for c, answer in zip(futures, fresh, strict=True):
                answers[c] = known_from(answer, answers[c])
        return answers

    def _seed_canvas(
        self, rng: random.Random, layout: Layout, request: EditRequest, block: int, width: int, tail: list[int]
    ) -> list[int]:
        """Noise for ``width`` free slots (a rewrite below full strength keeps some of its own tokens), then
        the pinned ``tail`` and padding up to the canvas."""
        size = self.canvas_length
        slots = [rng.randrange(self.vocab_size) for _ in range(width)]
        if layout.original:
            original = layout.original[block * size : block * size + width]
            for i, token in enumerate(original):
                if rng.random() >= request.strength and token >= 0:
                    slots[i] = token
        for i, token in enumerate(self._held(layout, block, width)):
            if token >= 0:  # kept words, the text between gaps: on the seed, and pinned (``_body``)
                slots[i] = token
        room = size - width
        return slots + tail[:room] + [self.vocabulary.pad_id] * max(0, room - len(tail))

    @staticmethod
    def _held(layout: Layout, block: int, width: int) -> list[int]:
        """The ids a steered layout holds in this block's first ``width`` slots (-1 free)."""
        offset = layout.block_offset(block)
        return layout.held_template[offset : offset + width]

    def _body(
        self, layout: Layout, state: Candidate, seed: list[int], width: int, steps: int | None, block: int = 0
    ) -> dict[str, Any]:
        held = [slot for slot, token in enumerate(self._held(layout, block, width)) if token >= 0]
        xargs: dict[str, Any] = {
            "diffusion_seed_canvas": seed,
            "diffusion_pinned": held + list(range(width, self.canvas_length)),
            "diffusion_read_only": 1,
        }
        if not xargs["diffusion_pinned"]:
            del xargs["diffusion_pinned"]  # nothing to hold: a canvas of free slots
        if steps is not None:
            xargs["diffusion_max_steps"] = steps
        return {
            "model": self.name,
            "prompt": layout.prompt_ids + state.context,
            "max_tokens": self.canvas_length,  # the whole canvas (vLLM's default would cut it to 16)
            "return_token_ids": True,
            "logprobs": 0,
            "vllm_xargs": xargs,
        }

    def _send(self, body: dict[str, Any], cancel: CancelCheck) -> Answer:
        answer = request_json(self.endpoint, "POST", "/v1/completions", body, cancel=cancel, deadline=self._deadline)
        return held_as_sent(read_answer(answer, self.info.url, self.vocabulary, self.canvas_length), body)

    def _gather(
        self, futures: list[Future[Answer]], cancel: CancelCheck, waiting: Callable[[], Pass] | None
    ) -> Generator[Pass, None, list[Answer]]:
        """Wait for every request, yielding a waiting pass each tick; a cancel closes them all."""
        while not all(f.done() for f in futures):
            if cancel():
                raise EditCancelled("the edit was cancelled")
            for future in futures:
                if future.done() and future.exception() is not None:
                    raise future.exception()  # type: ignore[misc]
            if waiting is not None:
                yield waiting()
            sleep_until_done(futures, WAIT_TICK_S)
        if cancel():
            raise EditCancelled("the edit was cancelled")
        return [f.result() for f in futures]

    def _one_request(
        self, pool: ThreadPoolExecutor, candidates: list[Candidate], layout: Layout, seeds: list[list[int]],
        widths: list[int], request: EditRequest, block: int, blocks: int, committed: list[str], lead: str,
        cancel: CancelCheck, step_index: int, pass_ms: list[float],
    ) -> Generator[Pass, None, list[Answer]]:
        steps = request.options.max_denoising_steps
        started = time.perf_counter()
        futures = [
            pool.submit(self._send, self._body(layout, state, seed, width, steps, block), cancel)
            for state, seed, width in zip(candidates, seeds, widths, strict=True)
        ]
        noise = random.Random(step_index)

        def waiting() -> Pass:
            tokens = [[noise.choice(self.noise_ids) for _ in range(width)] for width in widths]
            return self._pass(step_index, block, blocks, tokens, None, committed, lead, started, waiting=True)

        answers = yield from self._gather(futures, cancel, waiting)
        pass_ms.append((time.perf_counter() - started) * 1000)
        tokens = [answer.canvas[:width] for answer, width in zip(answers, widths, strict=True)]
        yield self._pass(step_index, block, blocks, tokens, None, committed, lead, started, answers=answers)
        return answers

    def _per_pass(
        self, pool: ThreadPoolExecutor, candidates: list[Candidate], layout: Layout, seeds: list[list[int]],
        widths: list[int], request: EditRequest, block: int, blocks: int, committed: list[str], lead: str,
        cancel: CancelCheck, step_index: int, pass_ms: list[float],
    ) -> Generator[Pass, None, list[Answer]]:
        """One request per pass and candidate: ``diffusion_max_steps`` 1, the returned canvas as the next seed.

        A candidate stops when a pass leaves its free slots as they were (the stability rule, threshold 1).
        """
        steps = request.options.max_denoising_steps or PER_PASS_DEFAULT_STEPS
        current = [list(seed) for seed in seeds]
        previous: list[list[int] | None] = [None] * len(seeds)
        answers: list[Answer | None] = [None] * len(seeds)
        finished = [False] * len(seeds)
        for _ in range(steps):
            started = time.perf_counter()
            running = [c for c in range(len(seeds)) if not finished[c]]
            futures = [
                pool.submit(self._send, self._body(layout, candidates[c], current[c], widths[c], 1, block), cancel)
                for c in running
            ]
            fresh = yield from self._gather(futures, cancel, None)
            for c, answer in zip(running, fresh, strict=True):
                width = widths[c]
                slots = answer.canvas[:width]
                previous[c] = current[c][:width]
                current[c] = list(answer.canvas)  # its pinned slots as sent (held_as_sent)
                answers[c] = answer
                finished[c] = previous[c] == slots
            pass_ms.append((time.perf_counter() - started) * 1000)
            tokens = [current[c][: widths[c]] for c in range(len(seeds))]
            accepted = [
                [prev is not None and i < len(prev) and prev[i] == t for i, t in enumerate(row)]
                for prev, row in zip(previous, tokens, strict=True)
            ]
            done = all(finished)
            if done:
                accepted = [[True] * len(row) for row in tokens]
            yield self._pass(
                step_index, block, blocks, tokens, accepted, committed, lead, started, finished=list(finished)
            )
            step_index += 1
            if done:
                break
        return [a if a is not None else Answer(s, [], []) for a, s in zip(answers, current, strict=True)]

    def _pass(
        self, step: int, block: int, blocks: int, tokens: list[list[int]], accepted: list[list[bool]] | None,
        committed: list[str], lead: str, started: float, *, waiting: bool = False,
        answers: list[Answer] | None = None, finished: list[bool] | None = None,
    ) -> Pass:
        pieces: list[list[str]] = []
        for c, row in enumerate(tokens):
            given = answers[c].pieces[: len(row)] if answers is not None else []
            if len(given) < len(row):
                given = [None] * len(row)
            # The server's own pieces: no extra requests. Those it did not give, or gave as bytes, are fetched.
            missing = [t for t, piece in zip(row, given, strict=True) if piece is None or piece.startswith("bytes:")]
            fetched = dict(zip(missing, self.vocabulary.pieces(missing), strict=True))
            pieces.append([
                piece if piece is not None and not piece.startswith("bytes:") else fetched[t]
                for t, piece in zip(row, given, strict=True)
            ])
        if lead:
            for texts in pieces:
                if texts:
                    texts[0] = without_lead(texts[0], lead)
        if accepted is None:
            accepted = [[not waiting] * len(row) for row in tokens]
        return Pass(
            step=step,
            block=block,
            blocks=blocks,
            tokens=tokens,
            accepted=accepted,
            entropy=[[0.0] * len(row) for row in tokens],
            pieces=pieces,
            committed=list(committed),
            finished=finished if finished is not None else [not waiting] * len(tokens),
            ms=(time.perf_counter() - started) * 1000,
            lead=lead,
            waiting=waiting,
        )

    def _clean(self, ids: list[int], layout: Layout) -> list[int]:
        """The new span's tokens: up to the slots asked for, without padding and end markers (as locally)."""
        return [ids[i] for i in canvas.kept_positions(ids, layout, self.vocabulary)]

    def _text(self, ids: list[int], layout: Layout) -> str:
        return without_lead(self._free_text(layout)(ids), layout.lead)

    def _free_text(self, layout: Layout) -> Callable[[list[int]], str]:
        """New tokens' text; inside a line, line breaks turned into spaces (the server cannot ban them in
        these slots as model.edit.bans does locally): a span inside a line stays inside it."""

        def text(ids: list[int]) -> str:
            new = self.vocabulary.span_text(ids) if ids else ""
            if layout.single_line:
                for mark in LINE_BREAKS:
                    new = new.replace(mark, " ")
            return new

        return text

