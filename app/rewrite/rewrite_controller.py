"""The rewrite controller: from a writer's request to the text that lands, one run at a time.

It turns a request (rewrite the selection, fill the gap at the cursor, rewrite following an
instruction) into an :class:`EditRequest` for the model thread, locks the span in the editor, paints
each pass that comes back into the live span, and accepts, rejects, cancels or regenerates the run.
Only the newest job is ever painted: a pass, result or failure from any other job id is stale and
ignored, which is what makes "a second request cancels the first" and "cancel restores at once" safe
without waiting for the worker.

The window holds one controller (``MainWindow.rewrites``); what it reads of the window is
:class:`RewriteWindow`, and ``stateChanged`` tells the window when its actions need updating.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QTextCursor
from PySide6.QtWidgets import QLabel, QStatusBar

from app.dialogs.message_bar import MessageBar
from app.rewrite.run import (
    RewriteRun,
    fill_frame,
    progress_message,
    time_left_ms,
    waiting_original,
    with_lead,
    without_lead,
    wrap_lead,
    wrapped_frame,
)
from app.rewrite.worker import Ink, PaintedPass, RewriteService, Segment
from app.settings import Preferences
from app.window.announce import show_quietly
from app.window.editor_widget import Phase, RewriteEditor
from app.window.rewrap import left_ragged
from app.window.text_changes import change_in_the_way
from model import EditRequest, EditResult, RequestError
from model.edit.budget import COMFORTABLE_EDIT_SECONDS
from model.edit.request import CONTEXT_CHARS_PER_TOKEN, LENGTH_FACTORS, MAX_CANVAS_TOKENS, Length, Mode
from model.edit.shape import shape_request

# How long the selection's start (or the caret) and the document must hold still before the model thread
# encodes the context before it, ahead of Ctrl+R: well inside a writer's reach for the shortcut (the encoding
# takes about 200 ms for 2k tokens on two cores). The context depends on the start alone, so the encoding done
# while the writer drags the selection's end is the one the rewrite, or a fill at the caret, uses.
PREPARE_AFTER_MS = 150
# After a keystroke changes the text the wait is longer: a writer types a key every 100-300 ms, and the
# context is worth encoding (two cores busy for 200 ms) only once the writer has stopped typing.
AFTER_TYPING_MS = 1000
REVIEW_HINT = "Enter in the draft: accept · Esc: reject · Ctrl+Shift+R: regenerate"  # while a finished draft waits


def _length(value: str) -> Length:
    """Rewrite ▸ Length from the preferences (checked there) as the request's type."""
    return value if value in LENGTH_FACTORS else "same"  # type: ignore[return-value]


class RewriteWindow(Protocol):
    """What the controller uses of its window (read when it is used: preferences change live)."""

    @property
    def editor(self) -> RewriteEditor: ...

    @property
    def service(self) -> RewriteService: ...

    @property
    def prefs(self) -> Preferences: ...

    @property
    def model_loading(self) -> bool: ...

    @property
    def message_bar(self) -> MessageBar: ...

    @property
    def figures_label(self) -> QLabel: ...

    @property
    def text_language(self) -> str: ...  # the document's ("de"): a new text's drafts quote as it does

    def statusBar(self) -> QStatusBar: ...


class RewriteController(QObject):
    """The current run (``run``) and the last finished result (``last_result``) of one window."""

    stateChanged = Signal()  # a run started, finished, changed candidate or ended
    # For the drafts panel and the span's versions (app/rewrite/drafts_panel.py, app/rewrite/versions.py):
    passPainted = Signal(object)  # PaintedPass of the current run, after the span painted it
    # A span's reports give its words: a hand-wrapped rewrite's lead (RewriteRun.lead) is left out of them.
    spanBegan = Signal(int, int, str)  # start, end, the original text
    draftShown = Signal(str, str)  # a finished draft put in the span: its text, its label
    spanEnded = Signal(int, int)  # where the span's text is after accept, reject or cancel

    def __init__(self, window: RewriteWindow, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.window = window
        self.run: RewriteRun | None = None
        self.last_result: EditResult | None = None
        worker = window.service.worker
        worker.passReady.connect(self._on_pass)
        worker.editFinished.connect(self._on_finished)
        worker.editFailed.connect(self._on_failed)
        worker.editCancelled.connect(self._on_cancelled)
        # A span start that holds still this long is prepared for (``selection_settled``).
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(PREPARE_AFTER_MS)
        self._settle.timeout.connect(self.selection_settled)
        self._watched_start = -1  # where the span started at the last move: the wait restarts when it changes
        self._typed_at: float | None = None  # when the writer last typed a key that edits (time.monotonic())
        window.editor.cursorPositionChanged.connect(self._span_start_moved)
        window.editor.selectionChanged.connect(self._span_start_moved)
        window.editor.document().contentsChanged.connect(self._context_changed)
        self._accepted: tuple[str, str, int] | None = None  # what was accepted, its message, undo steps after
        window.editor.document().contentsChanged.connect(self._after_accept)
        window.editor.installEventFilter(self)  # keystrokes: the longer wait while the writer types

    def start(self, mode: Mode, instruction: str | None = None, max_new_tokens: int | None = None,
              regenerations: int = 0, keep: tuple[tuple[int, int], ...] = ()) -> int | None:
        """Lock the span, send the request to the model thread; a running rewrite is cancelled first.
        ``keep``: words of the span to keep verbatim (a rewrite's), as offsets into it.

        With a span live: asked at the span (the caret in it or at its edges), the span starts again from
        its original, as Regenerate does; asked elsewhere while it develops, it stops (its original back) and
        the new one starts; a finished draft the writer waited for is never dropped that way: they are told
        to accept or reject it first."""
        window = self.window
        editor = window.editor
        run = self.run
        if run is not None and editor.live_span is not None:
            if not editor.caret_at_span() and run.result is not None:
                window.statusBar().showMessage(
                    "A rewrite is still open: accept it (Enter, with the cursor in it) or reject it (Esc) first.",
                    6000,
                )
                return None
            if not editor.caret_at_span():
                self.end_live_span(select_original=False)  # the writer's new selection stays as it is
            else:
                if mode == run.mode and not keep:
                    keep = run.keep
                self.end_live_span(select_original=True)  # the original, selected as the writer had it
        else:
            self.end_live_span(select_original=False)
        cursor = editor.textCursor()
        if mode == "fill":
            start = end = cursor.position()
        else:
            start, end = cursor.selectionStart(), cursor.selectionEnd()
            if start == end:
                window.statusBar().showMessage("Select the text you want to rewrite first.", 4000)
                return None
            if not editor.text_between(start, end).strip():
                window.statusBar().showMessage(
                    "The selection is only spaces or line breaks: select words to rewrite, or put the cursor "
                    "in a gap to fill it.",
                    6000,
                )
                return None
        in_the_way = change_in_the_way(editor, start, end)  # a draft would take a {++ … ++} mark apart
        if in_the_way:
            window.statusBar().showMessage(in_the_way, 8000)
            return None
        request = self._request(mode, start, end, instruction, max_new_tokens, regenerations, keep)
        try:
            request.validate()  # before the span locks: a request the engine would refuse says why now
        except RequestError as error:
            window.message_bar.show_message(f"Redraft cannot start this: {error}. Your text is unchanged.")
            return None
        margins = (0, 0)
        lead = ""
        wrapped: tuple[bool, ...] = ()
        wrap_width = 0
        fill_shape = None
        if mode == "fill":
            fill_shape = shape_request(request)[1]  # in a hand-wrapped paragraph: wrapped as a rewrite is
            wrapped, wrap_width = fill_shape.wrapped_paragraphs, fill_shape.wrap_width
        else:
            # The selection's edge whitespace and its sentence ending stay in the document, outside the live
            # span (model/edit/shape.py): the passes paint only the words they replace, so a paragraph's break
            # and its full stop never vanish while it develops. The engine gets the narrowed request as is.
            request, shape = shape_request(request)
            margins = (len(shape.before), len(shape.ending) + len(shape.after))
            wrapped, wrap_width = shape.wrapped_paragraphs, shape.wrap_width
            start, end = start + margins[0], end - margins[1]
            if wrap_width:  # the spaces before the first word too: a line break may take their place
                lead = wrap_lead(request.prefix.rsplit("\n", 1)[-1])  # the shaped prefix ends where the words start
                start, margins = start - len(lead), (margins[0] - len(lead), margins[1])
            bound = self._context_chars()
            request = replace(request, prefix=request.prefix[-bound:], suffix=request.suffix[:bound])
        # Before the span is painted over: its versions find it by its text (app/rewrite/versions.py).
        self.spanBegan.emit(start + len(lead), end, editor.text_between(start + len(lead), end))
        editor.begin_live_span(start, end)
        fit = COMFORTABLE_EDIT_SECONDS if window.prefs.fewer_drafts_when_slow else None
        job_id = window.service.submit(request, window.prefs.pass_display_ms, fit, id(self))  # this window's
        self.run = RewriteRun(
            job_id, mode, instruction, max_new_tokens, regenerations=regenerations, keep=keep,
            margins=margins, asked_drafts=request.candidates, wrapped_paragraphs=wrapped, wrap_width=wrap_width,
            fill_shape=fill_shape, lead=lead,
        )  # fmt: skip
        window.message_bar.hide()
        window.statusBar().showMessage("Waiting for the model…" if window.model_loading else "Developing…")
        self.stateChanged.emit()
        return job_id

    def _context_chars(self) -> int:
        """The most characters of context the engine reads on either side of a span."""
        return max(self.window.prefs.context_budget, MAX_CANVAS_TOKENS) * CONTEXT_CHARS_PER_TOKEN

    def _request(
        self,
        mode: Mode,
        start: int,
        end: int,
        instruction: str | None = None,
        max_new_tokens: int | None = None,
        regenerations: int = 0,
        keep: tuple[tuple[int, int], ...] = (),
    ) -> EditRequest:
        """The request for the span ``start:end`` of the document (a gap where they are equal)."""
        editor = self.window.editor
        prefs = self.window.prefs
        seed = None if prefs.random_seed else prefs.seed + regenerations
        # Only the context the model can read crosses to the worker (the engine reads at most
        # CONTEXT_CHARS_PER_TOKEN characters a token, the budget before the span and up to a canvas
        # after it), so a rewrite in a 10 MB novel costs no more than in a short story.
        context = self._context_chars()
        return EditRequest(
            prefix=editor.text_between(max(0, start - context), start),
            span=None if mode == "fill" else editor.text_between(start, end),
            suffix=editor.text_between(end, min(editor.end_position(), end + context)),
            mode=mode,
            instruction=instruction,
            max_new_tokens=max_new_tokens,
            options=prefs.denoise_options(),
            seed=seed,
            candidates=prefs.candidates,
            context_budget=prefs.context_budget,
            strength=prefs.rewrite_strength,
            keep=keep,
            length=_length(prefs.rewrite_length) if mode == "rewrite" else "same",
            language=self.window.text_language,
        )

    def _span_start_moved(self) -> None:
        """The caret or selection moved: wait for stillness again only if the span now starts elsewhere
        (the context before it is all the preparation depends on)."""
        start = self.window.editor.textCursor().selectionStart()
        if start != self._watched_start:
            self._watched_start = start
            self._wait_for_stillness()

    def _context_changed(self) -> None:
        """The text changed, maybe before the span: wait for stillness again."""
        self._watched_start = -1
        self._wait_for_stillness()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Note the editor's keystrokes that edit text (not a pass painted, a file opened, a restore)."""
        editing = isinstance(event, QKeyEvent) and (
            event.text() or event.key() in (Qt.Key.Key_Backspace, Qt.Key.Key_Delete)
        )
        if event.type() == QEvent.Type.KeyPress and editing:
            self._typed_at = time.monotonic()
        return super().eventFilter(watched, event)

    def _wait_for_stillness(self) -> None:
        wait_ms = PREPARE_AFTER_MS
        if self._typed_at is not None:
            since_typing_ms = (time.monotonic() - self._typed_at) * 1000
            wait_ms = max(wait_ms, math.ceil(AFTER_TYPING_MS - since_typing_ms))
        self._settle.start(wait_ms)

    def selection_settled(self) -> None:
        """The span's start and the document have held still (``PREPARE_AFTER_MS``): have the model
        thread encode the context before it (``Engine.prepare``), so a rewrite of the selection, or a
        fill at the caret, starts without that wait. Not while something develops, and not while the
        writer types (``AFTER_TYPING_MS``)."""
        window = self.window
        if self.run is not None or window.model_loading or not window.editor.isVisible():  # closed: nothing to do
            return
        cursor = window.editor.textCursor()
        start, end = cursor.selectionStart(), cursor.selectionEnd()
        # The context is the same for both: the text before ``start`` (model.edit.canvas.plan_layout).
        selected_words = start != end and window.editor.text_between(start, end).strip()
        if selected_words:
            window.service.prepare(self._request("rewrite", start, end))
        else:
            window.service.prepare(self._request("fill", start, start, max_new_tokens=1))

    def _current(self, job_id: int) -> RewriteRun | None:
        run = self.run
        return run if run is not None and run.job_id == job_id else None

    def _on_pass(self, job_id: int, painted: PaintedPass) -> None:
        run = self._current(job_id)
        editor = self.window.editor
        if run is None or editor.phase is not Phase.DEVELOPING:
            return
        run.passes += 1
        new_block = run.last_pass is None or run.last_pass.raw.block != painted.raw.block
        run.last_pass = painted
        self._paint_frame(painted, self._shown(run, painted), follow=new_block)
        now = time.monotonic()
        phase = "veiled" if painted.veiled else "live"
        if phase != run.phase:
            run.phase, run.phase_passes, run.phase_started = phase, 0, now
        run.phase_passes += 1
        left = time_left_ms(run, painted, self.window.prefs.pass_display_ms, now)
        show_quietly(self.window.statusBar(), progress_message(run, painted, left))  # not said at every pass
        self.passPainted.emit(painted)

    def _paint_frame(self, painted: PaintedPass, frame: int, follow: bool = False) -> None:
        editor = self.window.editor
        span = editor.live_span
        waiting = waiting_original(span.original, painted.raw.block, painted.raw.blocks) if span else ""
        segments = painted.frames[frame]
        run = self.run
        if run is not None and run.fill_shape is not None and not painted.veiled:
            segments = fill_frame(segments, run.fill_shape)
        if run is not None and run.lead:
            segments = [Segment(run.lead, Ink.SETTLED), *segments]
        if run is not None and run.wrap_width and span is not None:
            # Wrapped as the finished text will be, with the original's words that wait below it, beside the
            # rest of its line: a hand-wrapped paragraph keeps its shape while it develops.
            column, tail = editor.line_around(span.start, span.end)
            segments, waiting = wrapped_frame(segments, waiting, run.wrap_width, column, run.wrapped_paragraphs,
                                              tail)  # fmt: skip
        editor.paint_pass(segments, waiting, follow)

    @staticmethod
    def _shown(run: RewriteRun, painted: PaintedPass) -> int:
        """The frame the span paints: the draft the writer chose, else the leader (a veil has one frame)."""
        if run.pinned is not None and run.pinned < len(painted.frames):
            return run.pinned
        return painted.shown if painted.shown < len(painted.frames) else 0

    def _on_finished(self, job_id: int, result: EditResult) -> None:
        run = self._current(job_id)
        if run is None:
            return
        if run.lead:
            result = replace(result, texts=[with_lead(text, run.lead) for text in result.texts])
        run.result = result
        # Several candidates: the one the model rates best comes first, unless the writer chose one.
        chosen = run.pinned is not None and run.pinned < len(result.texts)
        run.candidate = run.pinned if chosen and run.pinned is not None else result.ranking[0]
        self.last_result = result
        window = self.window
        window.editor.show_result(result.texts[run.candidate])
        self.draftShown.emit(without_lead(result.texts[run.candidate], run.lead), run.draft_label(run.candidate))
        drafts = len(result.texts)
        seconds = time.monotonic() - run.started
        # Words a writer reads; the model's own figures are for whoever hovers.
        of = f" (of {run.asked_drafts})" if drafts < run.asked_drafts else ""
        window.figures_label.setText(f"{drafts} draft{'s' if drafts != 1 else ''}{of} · {seconds:.1f} s")
        window.figures_label.setToolTip(
            f"{result.passes} passes · {result.tokens_per_forward:.1f} tokens/pass · "
            f"{result.ms_per_pass:.0f} ms/pass"
            + (f"\nFewer drafts than the {run.asked_drafts} asked for: all of them would take more than about "
               f"{COMFORTABLE_EDIT_SECONDS:.0f} s with this model here (Settings ▸ Rewriting ▸ Drafts)." if of else "")
        )
        # Enter accepts only with the caret in the draft (elsewhere it types): the hint outlives a caret move.
        hint = REVIEW_HINT
        if not result.texts[run.candidate]:
            hint = "The model wrote nothing here. " + hint
        window.statusBar().showMessage(hint)
        self.stateChanged.emit()

    def _on_failed(self, job_id: int, message: str) -> None:
        if self._current(job_id) is None:
            return
        self.end_live_span()
        self.window.message_bar.show_message(f"The rewrite failed: {message}. Your text is unchanged.")
        self.window.statusBar().showMessage("Rewrite failed", 4000)

    def _on_cancelled(self, job_id: int) -> None:
        """Cancelled from elsewhere (another window changed the model they share): this window's own cancels end
        its span before the worker hears of them."""
        if self._current(job_id) is None:
            return
        self.end_live_span()
        self.window.message_bar.show_message("The rewrite stopped: another window changed the model. Your text is "
                                             "unchanged.", "info")  # fmt: skip

    def escape(self) -> None:
        """Esc in the editor: reject a finished rewrite, cancel a developing one."""
        if self.window.editor.phase is Phase.REVIEW:
            self.reject()
        else:
            self.cancel()

    def end_live_span(self, select_original: bool = True) -> None:
        """Cancel the running job (if any) and put the original span back (selected as the writer had it)."""
        run = self.run
        if run is not None:
            self.window.service.cancel(run.job_id)
            self.run = None
        editor = self.window.editor
        if editor.live_span is not None:
            start, end = editor.restore_live_span(select_original)
            if select_original and run is not None and run.margins != (0, 0):
                cursor = editor.textCursor()
                cursor.setPosition(start - run.margins[0])
                cursor.setPosition(end + run.margins[1], QTextCursor.MoveMode.KeepAnchor)
                editor.setTextCursor(cursor)
            self.spanEnded.emit(start + (len(run.lead) if run is not None else 0), end)
        if self.window.statusBar().currentMessage().endswith(REVIEW_HINT):
            self.window.statusBar().clearMessage()  # no draft left to accept (File ▸ New, a model change, …)
        self.stateChanged.emit()

    def cancel(self) -> None:
        if self.run is None:
            return
        self.end_live_span()
        self.window.statusBar().showMessage("Rewrite cancelled; the original is back.", 3000)

    def reject(self) -> None:
        if self.run is None:
            return
        self.end_live_span()
        self.window.statusBar().showMessage("Rewrite rejected; the original is back.", 3000)

    def accept(self) -> None:
        run = self.run
        if run is None or run.result is None:
            return
        self.run = None
        editor = self.window.editor
        text = run.result.texts[run.candidate]
        if run.decided is not None:
            text = run.decided[0]
            self.draftShown.emit(without_lead(text, run.lead), run.decided[1])  # a version, as each draft is
        start, end = editor.accept_live_span(text)
        self.spanEnded.emit(start + len(text) - len(without_lead(text, run.lead)), end)
        what = "Fill" if run.mode in ("fill", "gaps") else "Rewrite"
        message = f"{what} accepted (Ctrl+Z undoes it)."
        if run.wrap_width and left_ragged(editor, end, run.wrap_width):  # the writer's lines after it kept their breaks
            message += " Its paragraph's lines are uneven now: Alt+Q (Edit ▸ Rewrap Paragraph) evens them."
        self.window.statusBar().showMessage(message, 8000 if run.wrap_width else 3000)
        # Until the document next changes: then the message is stale (an undo says so instead).
        self._accepted = (what, message, editor.document().availableUndoSteps())
        self.stateChanged.emit()

    def _after_accept(self) -> None:
        """The document changed after an accept: say so if it was the undo, else drop the stale hint."""
        if self._accepted is None:
            return
        what, message, steps = self._accepted
        self._accepted = None
        bar = self.window.statusBar()
        if self.window.editor.document().availableUndoSteps() < steps:
            bar.showMessage(f"{what} undone; the original is back.", 3000)
        elif bar.currentMessage() == message:
            bar.clearMessage()

    def regenerate(self) -> int | None:
        run = self.run
        if run is None:
            return None
        self.end_live_span()  # the original span is selected again (or the cursor is at the gap)
        return self.start(run.mode, run.instruction, run.max_new_tokens, run.regenerations + 1, run.keep)

    def cycle_candidate(self, step: int) -> None:
        run = self.run
        if run is None or run.result is None or len(run.result.texts) < 2:
            return
        ranking = run.result.ranking
        self.choose_candidate(ranking[(ranking.index(run.candidate) + step) % len(ranking)])

    def choose_candidate(self, candidate: int) -> None:
        """Put draft ``candidate`` in the span: a finished one for review, or, while they develop, the one
        the span follows from now on (the drafts panel's click, Alt+1…9)."""
        run = self.run
        if run is None:
            return
        if run.result is None:
            painted = run.last_pass
            if painted is None or not 0 <= candidate < len(painted.raw.pieces):
                return
            run.pinned = candidate
            if not painted.veiled:
                self._paint_frame(painted, candidate)
            self.stateChanged.emit()
            return
        if not 0 <= candidate < len(run.result.texts):
            return
        run.candidate = candidate
        self.window.editor.show_result(run.result.texts[candidate])
        self.draftShown.emit(without_lead(run.result.texts[candidate], run.lead), run.draft_label(candidate))
        self.stateChanged.emit()
