"""The model thread: one long-lived QThread owns the model and torch; the GUI thread never runs a pass.

:class:`ModelWorker` lives in that thread and drives :meth:`model.Engine.edit`; every :class:`Pass`
crosses to the GUI thread as a signal, already turned into paintable segments, every candidate's. With
several candidates the span shows the leading draft as it develops (``app.rewrite.drafts.leading_candidate``:
the most slots accepted so far), the drafts panel all of them; the ranking at the end chooses the one
offered first. Only a server's waiting passes, before any text exists, are veiled. :class:`RewriteService`
is the GUI-side handle: it queues loads and edits to the worker and owns the cancel flags, which the
engine checks before every pass, so a cancel or a newer request stops a running edit within one pass.
"""

from __future__ import annotations

import logging
import random
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from itertools import groupby
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.rewrite.cancel_board import CancelBoard
from app.rewrite.drafts import leading_candidate
from app.rewrite.outliving import keep_until_exit
from model import EditCancelled, EditRequest, EditResult, Pass, RedraftError
from model.edit.passes import without_broken_bytes, without_lead

if TYPE_CHECKING:
    # torch, transformers and the engines load on the model thread (``ModelWorker.load_model``), so the
    # window shows before those seconds of imports; see model/__init__.py.
    from model import Engine
    from model.server import PassMode, ServerEngine

log = logging.getLogger(__name__)

# A noise slot shows at most this many characters (its leading space included): about a word piece.
NOISE_WIDTH = 4
_NOISE_LETTERS = "etaoinshrdlu"  # stand-ins for unprintable pieces, common letters so noise reads as text
_CancelCheck = Callable[[], bool]


class Ink(Enum):
    SETTLED = "settled"  # accepted on an earlier pass too, or a finished block
    FRESH = "fresh"  # locked in on this pass
    NOISE = "noise"  # not accepted yet


@dataclass(frozen=True)
class Segment:
    text: str
    ink: Ink
    # The sampler's entropy for this word (nats, its least settled slot); None for noise, and where the
    # engine reports none (a server's passes carry a stand-in, ``model.server.engine``).
    entropy: float | None = None


@dataclass(frozen=True)
class PaintedPass:
    """A pass plus, per candidate, the segments to paint where the span is, and which one to paint."""

    raw: Pass
    frames: list[list[Segment]]
    shown: int = 0  # the candidate whose frame the span shows: the leading draft while several develop
    # A server's request still running with several candidates: the frame is noise, no draft exists yet.
    veiled: bool = False
    # The most passes this run can show (every block's denoising steps and polish rounds), or None where
    # it is not known (a server decides its own steps).
    most: int | None = None


@dataclass(frozen=True)
class ServerSpec:
    """A team's vLLM server to edit on instead of a local model."""

    url: str
    model: str | None = None  # None: the first model the server lists
    api_key: str | None = field(default=None, repr=False)  # never logged
    passes: PassMode = "one-request"


@dataclass(frozen=True)
class ModelSpec:
    spec: str | None  # None: the built-in model
    device: str = "auto"
    allow_download: bool = False
    server: ServerSpec | None = None  # set: edits run on this server, nothing is loaded here
    experts: str = "auto"  # where a Mixture-of-Experts model's routed experts live (Preferences.experts)


@dataclass(frozen=True)
class ModelInfo:
    name: str
    device: str
    precision: str
    canvas_length: int
    follows_instructions: bool = False
    # Where the routed experts ended up (LoadedModel.experts): "device", "host-stream" or "host-compute", and
    # with a host placement how many layers' experts the GPU kept.
    experts: str = "device"
    resident_layers: int = 0


@dataclass(frozen=True)
class EditJob:
    job_id: int
    request: EditRequest
    pass_display_ms: int = 0
    fit_drafts_seconds: float | None = None  # fewer drafts where more would take longer here (Engine's)


def noise_text(token: int, piece: str) -> str:
    """What an unaccepted slot shows: its token's text, printable and no wider than a typical word piece.

    Random tokens decode to longer text than a sentence's own (5.7 characters against about 3.6 for the
    built-in model), so uncut noise ran 1.5-2x the selection and pushed the text after it down a line
    each pass. Byte pieces of multi-byte characters (U+FFFD), control characters and special tokens show
    as letters picked by the token, so nothing looks like a broken glyph.
    """
    out = []
    for char in piece:
        if char == " " or (char.isprintable() and char != "\ufffd" and unicodedata.category(char)[0] not in "CZ"):
            out.append(char)
        else:
            out.append(_NOISE_LETTERS[(token + len(out)) % len(_NOISE_LETTERS)])
    text = "".join(out) or _NOISE_LETTERS[token % len(_NOISE_LETTERS)]
    return text[:NOISE_WIDTH]


class _FrameBuilder:
    """Turns passes into segments, remembering the previous pass to spot tokens that just locked in.

    Runs of neighbouring accepted tokens are decoded together, so a character split across several
    byte tokens shows as itself rather than as one replacement mark per token.
    """

    def __init__(
        self,
        special_ids: set[int],
        decode: Callable[[list[int]], str],
        vocab_size: int,
        noise_ids: list[int] | None = None,
        salt: int = 0,
        passes_per_block: int | None = None,
        entropy_known: bool = True,
    ) -> None:
        self.special_ids = special_ids
        self.entropy_known = entropy_known  # False: Pass.entropy is a stand-in, words carry none
        self.salt = salt
        self.passes_per_block = passes_per_block  # denoising steps plus polish rounds, when known
        self.decode = decode
        self.vocab_size = vocab_size
        # Where veil noise is drawn from: any id locally; on a server, ids whose text is already known
        # (``ServerEngine.noise_ids``), so a veil costs no request.
        self.noise_ids = noise_ids
        self.previous: tuple[int, list[list[int]], list[list[bool]]] | None = None

    def veil(self, step: Pass, tick: int = 0) -> PaintedPass:
        """The pass as pure noise: as many random tokens as the widest candidate has slots.

        Nothing of any candidate's text shows (not even earlier blocks), so none seems chosen before the
        ranking has run. The noise is drawn per pass from a generator seeded by the step (and ``tick``: a
        server's waiting passes share one step, and their veil must still move), not from torch's, which
        the sampler draws from. ``salt`` (the job) varies it per request, so no two rewrites start from the
        same-looking canvas.
        """
        rng = random.Random(f"{self.salt}:{step.step}:{tick}")
        widest = max(len(candidate_pieces) for candidate_pieces in step.pieces)
        noise = []
        for _ in range(widest):
            token = rng.choice(self.noise_ids) if self.noise_ids else rng.randrange(self.vocab_size)
            noise.append(noise_text(token, "" if token in self.special_ids else self.decode([token])))
        return PaintedPass(step, [[Segment("".join(noise), Ink.NOISE)]], veiled=True, most=self.most(step))

    def most(self, step: Pass) -> int | None:
        """The most passes the edit can take (``PaintedPass.most``)."""
        return None if self.passes_per_block is None else self.passes_per_block * step.blocks

    def live(self, step: Pass, shown: int = 0) -> PaintedPass:
        return PaintedPass(step, self.frames(step), shown=shown, most=self.most(step))

    def frames(self, step: Pass) -> list[list[Segment]]:
        previous = self.previous if self.previous is not None and self.previous[0] == step.block else None
        frames = []
        for candidate, pieces in enumerate(step.pieces):
            slots: list[tuple[Ink, int, str, int, int]] = []  # ink, token, piece, slot index, word
            word = 0
            for slot, piece in enumerate(pieces):
                word += piece[:1].isspace()  # a piece that starts with a space starts a word
                token = step.tokens[candidate][slot]
                if not step.accepted[candidate][slot]:
                    slots.append((Ink.NOISE, token, "" if token in self.special_ids else piece, slot, word))
                elif token not in self.special_ids:  # accepted padding and end markers show as nothing
                    held = (
                        previous is not None
                        and previous[2][candidate][slot]
                        and previous[1][candidate][slot] == token
                    )
                    slots.append((Ink.SETTLED if held else Ink.FRESH, token, piece, slot, word))
            segments = [Segment(step.committed[candidate], Ink.SETTLED)] if step.committed[candidate] else []
            entropy = step.entropy[candidate]
            # Runs of one ink within one word: each word can carry its own entropy (the shading).
            for (ink, _word), group in groupby(slots, key=lambda item: (item[0], item[4])):
                items = list(group)
                if ink is Ink.NOISE:
                    segments.extend(Segment(noise_text(token, piece), ink) for _, token, piece, _, _ in items)
                else:
                    # As on Accept (Vocabulary.span_text), so the last frame reads what the writer is left with.
                    text = without_broken_bytes(self.decode([token for _, token, _, _, _ in items]))
                    unsure = max(entropy[item[3]] for item in items) if self.entropy_known else None
                    text = without_lead(text, step.lead) if items[0][3] == 0 else text
                    segments.append(Segment(text, ink, unsure))
            frames.append(segments)
        self.previous = (step.block, step.tokens, step.accepted)
        return frames


def describe_failure(error: BaseException) -> str:
    import torch

    if isinstance(error, torch.OutOfMemoryError | MemoryError):
        if torch.cuda.is_available():
            torch.cuda.empty_cache()  # what the failed pass held goes back, so the next try can run
        return (
            "the model ran out of memory; try a shorter selection, fewer candidates or a smaller context "
            "budget, or in Settings a lower precision (4-bit) or the CPU device"
        )
    if isinstance(error, RedraftError):
        return str(error)
    return f"unexpected {type(error).__name__}: {error}"


class ModelWorker(QObject):
    """Lives in the model thread. Slots run there; signals are delivered to the GUI thread."""

    loadProgress = Signal(str, float)
    loaded = Signal(object)  # ModelInfo
    loadFailed = Signal(str)
    passReady = Signal(int, object)  # job id, PaintedPass
    editFinished = Signal(int, object)  # job id, EditResult
    editFailed = Signal(int, str)
    editCancelled = Signal(int)

    def __init__(self, board: CancelBoard) -> None:
        super().__init__()
        self._board = board
        self._engine: Engine | ServerEngine | None = None
        self._load_error: str | None = "the model has not been loaded yet"

    @property
    def engine(self) -> Engine | ServerEngine | None:
        """The loaded engine (None before a load, after a failed one); used on the model thread only."""
        return self._engine

    @Slot(object)
    def load_model(self, spec: ModelSpec) -> None:
        self._engine = None
        if spec.server is not None:
            self._connect(spec.server)
            return
        self.loadProgress.emit("starting PyTorch", 0.0)

        def progress(stage: str, fraction: float) -> None:
            if self._board.closing.is_set():  # the window closed during the load: stop at the next stage
                raise _LoadAbandoned
            self.loadProgress.emit(stage, fraction)

        try:
            from model import Engine, load

            loaded = load(
                spec.spec, device=spec.device, experts=spec.experts, allow_download=spec.allow_download,
                progress=progress,
            )
        except _LoadAbandoned:
            return
        except Exception as error:  # any failure must reach the writer, not kill the thread
            # The notice bar says it in words; the traceback goes to the log file only (app.gui), never to
            # the terminal (INFO is below what Python prints when no log is set up).
            log.info("loading the model failed", exc_info=True)
            self._load_error = f"could not load the model: {describe_failure(error)}"
            self.loadFailed.emit(self._load_error)
            return
        engine = Engine(loaded)
        self.loadProgress.emit("warming up", 1.0)
        try:
            engine.warm_up()
        except Exception:  # a model that cannot edit says so at the writer's first request, in words
            log.exception("warming the model up failed")
        self._engine = engine
        self._load_error = None
        self.loaded.emit(
            ModelInfo(
                loaded.name,
                loaded.describe_device(),
                loaded.precision,
                loaded.canvas_length,
                loaded.follows_instructions,
                loaded.experts,
                loaded.resident_layers,
            )
        )

    def _connect(self, server: ServerSpec) -> None:
        """Ask the server what it serves (``model.server.connect``); a failure is reported like a failed load."""
        self.loadProgress.emit(f"connecting to {server.url}", 0.0)
        try:
            from model.server import ServerEngine

            engine = ServerEngine.open(server.url, server.model, server.api_key, passes=server.passes)
        except Exception as error:
            log.warning("connecting to the server failed: %s", error)
            self._load_error = f"could not use the server: {describe_failure(error)}"
            self.loadFailed.emit(self._load_error)
            return
        self._engine = engine
        self._load_error = None
        self.loaded.emit(ModelInfo(engine.name, engine.describe_device(), "server", engine.canvas_length, False))

    @Slot(object, int)
    def prepare(self, request: EditRequest, ticket: int) -> None:
        """Encode a likely request's prompt ahead of Ctrl+R (``Engine.prepare``); a local model only.
        Skipped if the writer has moved on since (a newer preparation is queued behind this one)."""
        engine = self._engine
        if engine is None or not hasattr(engine, "prepare") or self._board.is_stale_preparation(ticket):
            return
        try:
            engine.prepare(request)
        except Exception:  # a request that cannot run says so when it is really asked for
            log.debug("preparing a request failed", exc_info=True)

    @Slot(object)
    def run_edit(self, job: EditJob) -> None:
        job_id = job.job_id
        if self._board.is_cancelled(job_id):
            self.editCancelled.emit(job_id)
            return
        engine = self._engine
        if engine is None:
            self.editFailed.emit(job_id, self._load_error or "no model is loaded")
            return
        from model.server import ServerEngine

        if isinstance(engine, ServerEngine):
            # A server reports no entropy (its passes carry zeros): words are not shaded rather than shown sure.
            builder = _FrameBuilder(
                engine.special_ids, engine.decode, engine.vocab_size, engine.noise_ids, salt=job_id,
                entropy_known=False,
            )  # fmt: skip
        else:
            engine.fit_drafts_seconds = job.fit_drafts_seconds
            special_ids = {int(i) for i in engine.tokenizer.all_special_ids}
            per_block = None
            try:  # a request the engine refuses says why when it runs, below
                options = job.request.options.resolved(engine.loaded.generation_defaults)
                per_block = options.max_denoising_steps + options.polish_rounds
            except Exception:
                log.debug("the request's options do not resolve", exc_info=True)
            builder = _FrameBuilder(
                special_ids, engine.decode, engine.vocab_size, salt=job_id, passes_per_block=per_block
            )
        cancel = lambda: self._board.is_cancelled(job_id)  # noqa: E731
        several = job.request.candidates > 1
        leader: int | None = None  # the draft the span shows while several develop
        ticks = 0  # waiting passes so far
        try:
            passes = engine.edit(job.request, cancel=cancel)
            while True:
                started = time.perf_counter()
                try:
                    step = next(passes)
                except StopIteration as stop:
                    result: EditResult = stop.value
                    break
                if step.waiting:  # a server request still running: its veil moves, nothing is recorded
                    ticks += 1
                    painted = builder.veil(step, ticks) if several else builder.live(step)
                    self.passReady.emit(job_id, painted)
                    continue
                leader = leading_candidate(step, leader) if several else 0
                self.passReady.emit(job_id, builder.live(step, leader))
                self._hold(started, job.pass_display_ms, cancel)
        except EditCancelled:
            self.editCancelled.emit(job_id)
            return
        except Exception as error:
            log.exception("edit %d failed", job_id)
            self.editFailed.emit(job_id, describe_failure(error))
            return
        self.editFinished.emit(job_id, result)

    @staticmethod
    def _hold(started: float, display_ms: int, cancel: _CancelCheck) -> None:
        """Keep a pass on screen at least ``display_ms``, waking often enough to honour a cancel."""
        deadline = started + display_ms / 1000
        while not cancel():
            left = deadline - time.perf_counter()
            if left <= 0:
                return
            time.sleep(min(left, 0.01))


class RewriteService(QObject):
    """GUI-side handle on the model thread: queue loads and edits, cancel them, shut down."""

    _loadRequested = Signal(object)
    _editRequested = Signal(object)
    _prepareRequested = Signal(object, int)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._board = CancelBoard()
        self.model_thread = QThread()
        self.model_thread.setObjectName("redraft-model")
        self.worker = ModelWorker(self._board)
        self.worker.moveToThread(self.model_thread)
        self._loadRequested.connect(self.worker.load_model)
        self._editRequested.connect(self.worker.run_edit)
        self._prepareRequested.connect(self.worker.prepare)
        self.model_thread.finished.connect(self.worker.deleteLater)
        # What a window that joins this model finds (File ▸ New Window): the model asked for last, and what it
        # loaded as (None while it loads, or where it failed). Connected first: set before any window hears.
        self.spec: ModelSpec | None = None
        self.model_info: ModelInfo | None = None
        self.loading = False
        self.worker.loaded.connect(self._loaded)
        self.worker.loadFailed.connect(self._load_failed)
        self.model_thread.start()

    def _loaded(self, info: ModelInfo) -> None:
        self.model_info, self.loading = info, False

    def _load_failed(self, _message: str) -> None:
        self.loading = False

    def load_model(self, spec: ModelSpec) -> None:
        """Queue a (re)load; every window's running edit is cancelled first so the load does not wait for it."""
        self._board.cancel_all()
        self.spec, self.model_info, self.loading = spec, None, True
        self._loadRequested.emit(spec)

    def submit(self, request: EditRequest, pass_display_ms: int = 0, fit_drafts_seconds: float | None = None,
               owner: int = 0) -> int:  # fmt: skip
        """Queue an edit and return its job id; ``owner``'s earlier edit (a window's) is cancelled by this one,
        another's waits its turn."""
        job_id = self._board.new_job(owner)
        self._editRequested.emit(EditJob(job_id, request, pass_display_ms, fit_drafts_seconds))
        return job_id

    def prepare(self, request: EditRequest) -> None:
        """Queue the encoding of a request's prompt, so that request (if it comes) starts sooner."""
        self._prepareRequested.emit(request, self._board.new_preparation())

    def cancel(self, job_id: int) -> None:
        self._board.cancel(job_id)

    def shutdown(self, timeout_ms: int = 10_000) -> None:
        self._board.closing.set()
        self._board.cancel_all()
        self.model_thread.quit()
        if not self.model_thread.wait(timeout_ms):
            # A load inside transformers cannot be interrupted. Qt aborts the process when a running QThread
            # is destroyed, so the thread and its worker outlive this service (app.rewrite.outliving).
            log.warning("the model thread did not stop within %d ms", timeout_ms)
            keep_until_exit(self.model_thread, self.worker)


class _LoadAbandoned(Exception):
    """Raised from a load's progress report once its window is closing."""

