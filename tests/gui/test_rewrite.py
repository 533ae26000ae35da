"""Rewriting in place, end to end: real worker thread, real tiny model, keys as the writer presses them."""

from __future__ import annotations

from gui_helpers import DOCUMENT, SIGNAL_TIMEOUT_MS, PassRecorder, place_cursor, select
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextCursor

from app.rewrite.drafts import leading_candidate
from app.rewrite.worker import Ink
from app.window.editor_widget import Phase
from model import EditRequest, EditResult
from model.edit.wrapping import SENTENCE_END

SPAN = "climbed the stairs"


def finish(qtbot, window) -> EditResult:
    """Wait for the current run's result to land in the editor."""
    qtbot.waitUntil(
        lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS
    )
    assert window.editor.phase is Phase.REVIEW
    return window.run.result


def test_rewrite_paints_each_pass_in_the_span_only_and_escape_restores(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=6)
    editor = window.editor
    start, end = select(window, SPAN)
    prefix, suffix = DOCUMENT[:start], DOCUMENT[end:]
    undo_steps = editor.document().availableUndoSteps()
    outside_changed: list[str] = []

    def check(job_id: int, painted) -> None:  # runs right after the window painted this pass
        text = editor.plain_text()
        if not (text.startswith(prefix) and text.endswith(suffix)):
            outside_changed.append(text)
        live = editor.live_range()
        assert live is not None
        shown = editor.text_between(*live)
        assert shown == "".join(segment.text for segment in painted.frames[painted.shown])

    recorder = PassRecorder(window, check)
    job_id = window.rewrite_selection()
    assert editor.phase is Phase.DEVELOPING
    result = finish(qtbot, window)

    # Several candidates (the default): each pass painted once, live, the leading draft in the span.
    assert window.prefs.candidates > 1
    assert recorder.count(job_id) == result.passes >= 1
    assert not outside_changed
    assert editor.plain_text() == prefix + result.text + suffix
    assert "passes" in window.figures_label.toolTip()  # the model's figures; the label says drafts, seconds

    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert editor.plain_text() == DOCUMENT  # byte for byte
    assert editor.phase is Phase.IDLE
    assert editor.document().availableUndoSteps() == undo_steps  # no leftover undo entry
    assert not editor.document().isRedoAvailable()
    assert not editor.document().isModified()
    assert editor.textCursor().selectedText() == SPAN  # the original is selected again


def test_accept_then_one_undo_restores_the_original(document_window, qtbot) -> None:
    window = document_window()
    editor = window.editor
    start, end = select(window, SPAN)
    window.rewrite_selection()
    result = finish(qtbot, window)
    assert result.text != SPAN

    qtbot.keyClick(editor, Qt.Key.Key_Return)
    accepted = DOCUMENT[:start] + result.text + DOCUMENT[end:]
    assert editor.plain_text() == accepted
    assert editor.phase is Phase.IDLE and window.run is None
    assert editor.document().isModified()

    window.undo()  # one step, however many passes ran
    assert editor.plain_text() == DOCUMENT
    assert not editor.document().isModified()
    window.redo()
    assert editor.plain_text() == accepted


def test_ctrl_z_key_after_accept(document_window, qtbot) -> None:
    window = document_window()
    select(window, SPAN)
    window.rewrite_selection()
    finish(qtbot, window)
    qtbot.keyClick(window.editor, Qt.Key.Key_Tab)  # Tab accepts too
    assert window.editor.plain_text() != DOCUMENT
    qtbot.keyClick(window.editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.editor.plain_text() == DOCUMENT


def test_fill_gap_takes_the_length_the_model_chose(document_window, qtbot) -> None:
    window = document_window()
    editor = window.editor
    gap = DOCUMENT.index(" every evening")
    place_cursor(window, gap)
    recorder = PassRecorder(window)
    job_id = window.fill_gap(max_new_tokens=6)
    result = finish(qtbot, window)
    assert recorder.count(job_id) == result.passes  # every pass live, the leading draft in the span
    assert len(result.token_ids[0]) <= 6
    assert editor.plain_text() == DOCUMENT[:gap] + result.text + DOCUMENT[gap:]
    assert window.prefs.fill_max_tokens == 6  # the popup's choice is remembered
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.plain_text() == DOCUMENT[:gap] + result.text + DOCUMENT[gap:]
    window.undo()
    assert editor.plain_text() == DOCUMENT


def test_a_fill_after_a_sentence_develops_with_the_space_and_full_stop_it_will_have(document_window, qtbot) -> None:
    # The trial: "table.He felt very happy|He counted" on every pass; the space and the full stop came only
    # with the finished draft, so the sentence jumped as it landed.
    prefix, suffix = "It was late. The keeper climbed the stairs.", " He counted the steps.\n"
    window = document_window(prefix + suffix, max_denoising_steps=4)
    editor = window.editor
    place_cursor(window, len(prefix))
    seen: list[str] = []
    recorder = PassRecorder(window, lambda _job, _painted: seen.append(editor.plain_text()))
    job_id = window.fill_gap(max_new_tokens=6)
    result = finish(qtbot, window)
    assert recorder.count(job_id) >= 1 and seen
    for text in seen:
        assert text.startswith(prefix + " ") and text.endswith(suffix), text
        fill = text[len(prefix) : len(text) - len(suffix)]
        assert SENTENCE_END.search(fill) and "\n" not in fill, fill  # ends a sentence, in the paragraph's flow
    assert result.text.startswith(" ") and SENTENCE_END.search(result.text), result.text
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.plain_text() == prefix + result.text + suffix


def test_cancel_mid_run_stops_within_one_pass_and_restores(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=40, pass_display_ms=60, candidates=1)
    editor = window.editor
    select(window, SPAN)
    undo_steps = editor.document().availableUndoSteps()
    recorder = PassRecorder(window)
    job_id = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(job_id) >= 2, timeout=SIGNAL_TIMEOUT_MS)
    assert editor.plain_text() != DOCUMENT  # the canvas is in the document

    emitted_at_cancel = len([1 for job, _ in recorder.passes if job == job_id])
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert editor.plain_text() == DOCUMENT  # restored at once, not when the worker notices
    assert editor.document().availableUndoSteps() == undo_steps
    qtbot.waitUntil(lambda: job_id in recorder.cancelled, timeout=SIGNAL_TIMEOUT_MS)
    assert recorder.count(job_id) <= emitted_at_cancel + 1  # at most the pass already in flight
    assert job_id not in recorder.finished
    assert editor.plain_text() == DOCUMENT and editor.phase is Phase.IDLE


def test_second_request_cancels_the_first_cleanly(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=40, pass_display_ms=60)
    editor = window.editor
    recorder = PassRecorder(window)
    select(window, SPAN)
    first = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(first) >= 1, timeout=SIGNAL_TIMEOUT_MS)

    window.apply_preferences(window.prefs.__class__(**{**vars(window.prefs), "max_denoising_steps": 5}))
    second_span = "the letter twice"
    # The first span is still developing; find the second by its place relative to the end.
    offset_from_end = len(DOCUMENT) - DOCUMENT.index(second_span)
    start = editor.end_position() - offset_from_end
    cursor = editor.textCursor()
    cursor.setPosition(start)
    cursor.setPosition(start + len(second_span), cursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)
    assert cursor.selectedText() == second_span

    second = window.rewrite_selection()
    assert second != first
    assert editor.plain_text().startswith(DOCUMENT[: DOCUMENT.index(second_span)])  # first span restored
    qtbot.waitUntil(lambda: first in recorder.cancelled, timeout=SIGNAL_TIMEOUT_MS)
    result = finish(qtbot, window)
    assert first not in recorder.finished
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    expected = DOCUMENT.replace(second_span, result.text, 1)
    assert editor.plain_text() == expected
    window.undo()
    assert editor.plain_text() == DOCUMENT


def test_typing_before_the_span_during_a_run_keeps_its_place(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=30, pass_display_ms=40)
    editor = window.editor
    start, end = select(window, SPAN)
    recorder = PassRecorder(window)
    job_id = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(job_id) >= 1, timeout=SIGNAL_TIMEOUT_MS)

    place_cursor(window, 0)
    qtbot.keyClicks(editor, "Draft ")
    assert editor.live_range() is not None and editor.live_range()[0] == start + len("Draft ")

    # Inside the developing span the text is locked.
    live_start, _ = editor.live_range()
    place_cursor(window, live_start + 1)
    before = editor.plain_text()
    qtbot.keyClicks(editor, "xyz")
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    assert editor.plain_text() == before

    result = finish(qtbot, window)
    assert recorder.count(job_id) == result.passes  # live, nothing veiled or replayed
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.plain_text() == "Draft " + DOCUMENT[:start] + result.text + DOCUMENT[end:]

    window.undo()  # the rewrite, in one step; the writer's typing stays
    assert editor.plain_text() == "Draft " + DOCUMENT
    while editor.document().isUndoAvailable():
        window.undo()
    assert editor.plain_text() == DOCUMENT


def test_typing_after_the_span_then_reject(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=30, pass_display_ms=40)
    editor = window.editor
    select(window, SPAN)
    recorder = PassRecorder(window)
    job_id = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(job_id) >= 1, timeout=SIGNAL_TIMEOUT_MS)
    place_cursor(window, editor.end_position())
    qtbot.keyClicks(editor, "The end.")
    finish(qtbot, window)
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert editor.plain_text() == DOCUMENT + "The end."
    seen = []
    while editor.document().isUndoAvailable():  # only the writer's typing is in the history
        window.undo()
        seen.append(editor.plain_text())
    assert all(text.startswith(DOCUMENT) for text in seen)
    assert editor.plain_text() == DOCUMENT


def test_candidates_cycle_in_place(document_window, qtbot) -> None:
    window = document_window(candidates=2)
    editor = window.editor
    start, end = select(window, SPAN)
    window.rewrite_selection()
    result = finish(qtbot, window)
    assert len(result.texts) == 2
    best, other = result.ranking
    assert "Candidate 1 of 2" in window.candidate_label.toolTip()
    assert editor.text_between(*editor.live_range()) == result.texts[best] == result.text
    window.cycle_candidate(+1)
    assert "Candidate 2 of 2" in window.candidate_label.toolTip()
    assert editor.text_between(*editor.live_range()) == result.texts[other]
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.plain_text() == DOCUMENT[:start] + result.texts[other] + DOCUMENT[end:]


def test_several_candidates_develop_live_the_leader_shown_then_the_winner_lands(document_window, qtbot) -> None:
    window = document_window(candidates=4, seed=5, pass_display_ms=1, polish_rounds=2)  # ends on the final text
    editor = window.editor
    gap = DOCUMENT.index(" every evening")
    place_cursor(window, gap)
    shown: list[tuple[object, str]] = []

    def check(job_id: int, painted) -> None:  # what the span shows right after each pass was painted
        shown.append((painted, editor.text_between(*editor.live_range())))

    recorder = PassRecorder(window, check)
    window.fill_gap(max_new_tokens=8)
    result = finish(qtbot, window)
    winner = result.ranking[0]
    assert winner != 0  # this seed's best is not candidate 0: the ranking, not the order, decides what lands

    assert len(shown) == result.passes  # no veil: text shows from the first pass
    assert [painted.raw.step for painted, _ in shown] == list(range(result.passes))
    leader = None
    for painted, text in shown:
        assert not painted.veiled and len(painted.frames) == 4
        leader = leading_candidate(painted.raw, leader)  # the most slots accepted so far
        assert painted.shown == leader
        assert text == "".join(segment.text for segment in painted.frames[leader])
    assert any(segment.ink is not Ink.NOISE for segment in shown[0][0].frames[shown[0][0].shown])
    assert editor.text_between(*editor.live_range()) == result.texts[winner] == result.text  # the best lands
    # The recorder's own queued slot for the same signal may run a moment after the window's (seen on a loaded
    # machine): wait for it, then there is exactly one.
    qtbot.waitUntil(lambda: len(recorder.finished) > 0, timeout=SIGNAL_TIMEOUT_MS)
    assert len(recorder.finished) == 1


def test_cancel_while_the_drafts_develop_restores(document_window, qtbot) -> None:
    window = document_window(candidates=2, pass_display_ms=60)
    editor = window.editor
    select(window, SPAN)
    recorder = PassRecorder(window)
    job_id = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(job_id) >= 2, timeout=SIGNAL_TIMEOUT_MS)
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert editor.plain_text() == DOCUMENT
    qtbot.waitUntil(lambda: job_id in recorder.cancelled, timeout=SIGNAL_TIMEOUT_MS)
    assert job_id not in recorder.finished
    assert editor.phase is Phase.IDLE and window.run is None


def test_regenerate_runs_again_on_the_original(document_window, qtbot) -> None:
    window = document_window()
    select(window, SPAN)
    first = window.rewrite_selection()
    finish(qtbot, window)
    second = window.regenerate()
    assert second is not None and second != first
    assert window.run is not None and window.run.regenerations == 1
    result = finish(qtbot, window)
    assert result.seed == window.prefs.seed + 1  # fixed seed: each regeneration moves it on
    window.reject_rewrite()
    assert window.editor.plain_text() == DOCUMENT


def test_worker_failure_shows_an_error_and_leaves_the_document(document_window, qtbot, tmp_path) -> None:
    window = document_window(wait_for_model=False, model=str(tmp_path / "no-such-model"))
    qtbot.waitUntil(lambda: window.message_bar.isVisible(), timeout=SIGNAL_TIMEOUT_MS)
    assert "could not load the model" in window.message_bar.label.text()
    editor = window.editor
    undo_steps = editor.document().availableUndoSteps()
    select(window, SPAN)
    window.message_bar.hide()
    window.rewrite_selection()
    qtbot.waitUntil(window.message_bar.isVisible, timeout=SIGNAL_TIMEOUT_MS)
    assert "rewrite failed" in window.message_bar.label.text()
    assert editor.plain_text() == DOCUMENT
    assert editor.document().availableUndoSteps() == undo_steps
    assert not editor.document().isModified()
    qtbot.keyClicks(editor, "still a plain editor")  # typing works as usual
    assert "still a plain editor" in editor.plain_text()


def test_bad_request_from_the_worker_is_reported(document_window, qtbot) -> None:
    window = document_window(t_max=0.2, t_min=0.9)  # the engine refuses an inverted schedule
    select(window, SPAN)
    window.rewrite_selection()
    qtbot.waitUntil(window.message_bar.isVisible, timeout=SIGNAL_TIMEOUT_MS)
    assert "temperature" in window.message_bar.label.text()
    assert window.editor.plain_text() == DOCUMENT
    assert window.editor.phase is Phase.IDLE


def test_window_appears_before_the_model_has_loaded(make_window, qtbot) -> None:
    window = make_window(wait_for_model=False)
    # Construction returned and the window is up while the worker thread loads the model.
    assert window.isVisible()
    assert window.model_info is None and window.model_loading
    assert window.load_progress.isVisible()
    qtbot.waitUntil(lambda: window.model_info is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert not window.load_progress.isVisible()
    assert "CPU" in window.model_label.text()


def test_rewrite_with_instruction_and_history(document_window, qtbot) -> None:
    window = document_window()
    start, end = select(window, SPAN)
    window.rewrite_with_instruction("Make this shorter.")
    result = finish(qtbot, window)
    assert window.prefs.instruction_history[0] == "Make this shorter."
    qtbot.keyClick(window.editor, Qt.Key.Key_Return)
    assert window.editor.plain_text() == DOCUMENT[:start] + result.text + DOCUMENT[end:]


def test_undo_key_during_a_run_cancels_it_and_nothing_more(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=40, pass_display_ms=60)
    editor = window.editor
    place_cursor(window, editor.end_position())
    qtbot.keyClicks(editor, "More")
    typed = editor.plain_text()
    select(window, SPAN)
    recorder = PassRecorder(window)
    job_id = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(job_id) >= 1, timeout=SIGNAL_TIMEOUT_MS)
    qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.run is None and editor.live_span is None
    assert editor.plain_text() == typed  # the rewrite was the newest step; the writer's "More" stays (#46)
    qtbot.waitUntil(lambda: job_id in recorder.cancelled, timeout=SIGNAL_TIMEOUT_MS)
    assert window.statusBar().currentMessage() == "Rewrite undone; the original is back."
    window.rewrite_selection()  # a finished draft waiting: Ctrl+Z puts the original back, and says so
    qtbot.waitUntil(lambda: window.last_result is not None and window.run is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert "Enter in the draft: accept" in window.statusBar().currentMessage()
    qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert editor.plain_text() == typed and editor.live_span is None
    assert window.statusBar().currentMessage() == "Rewrite undone; the original is back."  # not Enter's stale hint


def test_a_draft_let_go_with_its_document_leaves_no_hint_to_accept_it(document_window, qtbot) -> None:
    window = document_window(candidates=1)
    select(window, SPAN)
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert window.statusBar().currentMessage().startswith("Enter in the draft: accept")
    window.editor.document().setModified(False)
    window.new_document()  # File ▸ New: the draft goes with the text
    assert window.run is None and "Enter in the draft" not in window.statusBar().currentMessage()


def test_instruct_is_offered_only_for_instruction_tuned_models(make_window, tiny_checkpoint, tmp_path) -> None:
    import shutil

    plain = shutil.copytree(tiny_checkpoint, tmp_path / "plain")
    (plain / "chat_template.jinja").unlink()
    window = make_window(model=str(plain))
    window.editor.setPlainText(DOCUMENT)
    select(window, SPAN)
    assert window.rewrite_action.isEnabled()
    assert not window.instruct_action.isEnabled()
    assert "not instruction-tuned" in window.instruct_action.toolTip()

    tuned = make_window()
    tuned.editor.setPlainText(DOCUMENT)
    select(tuned, SPAN)
    assert tuned.instruct_action.isEnabled()


def test_a_selection_that_holds_still_has_its_context_encoded_before_the_rewrite(document_window, qtbot) -> None:
    from app.rewrite.rewrite_controller import PREPARE_AFTER_MS

    window = document_window(max_denoising_steps=6)
    engine = window.service.worker._engine
    encoded: list[int] = []  # lengths of every input the encoder gets on the model thread
    handle = engine.model.model.encoder.register_forward_pre_hook(
        lambda _module, _args, kwargs: encoded.append(kwargs["input_ids"].shape[1]), with_kwargs=True
    )
    try:
        warmed_up = engine._prepared  # the warm-up edit's prompt, kept until another is encoded
        select(window, SPAN)
        # The pause prepared it (set on the model thread once its encoding is done).
        qtbot.waitUntil(lambda: engine._prepared is not None and engine._prepared is not warmed_up,
                        timeout=SIGNAL_TIMEOUT_MS)  # fmt: skip
        prepared = engine._prepared
        assert prepared is not None and len(encoded) == 1
        qtbot.wait(PREPARE_AFTER_MS * 2)
        assert len(encoded) == 1  # once per settled selection, not again while it stays
        window.rewrite_selection()
        result = finish(qtbot, window)
        assert result.prompt_tokens == len(prepared[0])
        assert len(encoded) == 1  # the rewrite started from the prepared prompt: no second prefill
    finally:
        handle.remove()


def _count_encodings(engine) -> tuple[list[int], object]:
    """Lengths of every input the encoder gets on the model thread, and the hook's handle."""
    encoded: list[int] = []
    handle = engine.model.model.encoder.register_forward_pre_hook(
        lambda _module, _args, kwargs: encoded.append(kwargs["input_ids"].shape[1]), with_kwargs=True
    )
    return encoded, handle


def _prompt_before(engine, position: int, text: str = DOCUMENT) -> tuple[int, ...]:
    """The prompt ids of any edit whose span starts at ``position``."""
    request = EditRequest(prefix=text[:position], suffix=text[position:], mode="fill", max_new_tokens=1)
    return tuple(engine._layout(request).prompt_ids)


def _prepared_for(engine, prompt: tuple[int, ...]) -> bool:
    return engine._prepared is not None and engine._prepared[0] == prompt


def test_a_drag_uses_the_context_encoded_while_the_mouse_moved(document_window, qtbot) -> None:
    from app.rewrite.rewrite_controller import PREPARE_AFTER_MS

    window = document_window(max_denoising_steps=6)
    engine = window.service.worker._engine
    start = DOCUMENT.index(SPAN)
    expected = _prompt_before(engine, start)
    encoded, handle = _count_encodings(engine)
    try:
        # The mouse goes down at the span's start and drags at once: the end moves every frame, faster
        # than the wait, for several waits' time; the start stays where the mouse went down.
        cursor = window.editor.textCursor()
        cursor.setPosition(start)
        window.editor.setTextCursor(cursor)
        frames = 6 * PREPARE_AFTER_MS // 16
        for frame in range(1, frames + 1):
            qtbot.wait(16)
            cursor.setPosition(start + len(SPAN) * frame // frames, QTextCursor.MoveMode.KeepAnchor)
            window.editor.setTextCursor(cursor)
        # Encoded once, while the mouse moved (a tiny model's prompt takes milliseconds).
        assert _prepared_for(engine, expected) and encoded == [len(expected)]
        window.rewrite_selection()  # at once, as the mouse comes up
        result = finish(qtbot, window)
    finally:
        handle.remove()
    assert result.prompt_tokens == len(expected)
    assert encoded[1:] == [engine.canvas_length] * len(encoded[1:])  # no second prefill: only finished blocks


def test_a_resting_caret_has_its_context_encoded_for_a_fill(document_window, qtbot) -> None:
    window = document_window(max_denoising_steps=6)
    engine = window.service.worker._engine
    gap = DOCUMENT.index(SPAN)
    place_cursor(window, gap)
    qtbot.waitUntil(lambda: _prepared_for(engine, _prompt_before(engine, gap)), timeout=SIGNAL_TIMEOUT_MS)
    prepared = engine._prepared
    encoded, handle = _count_encodings(engine)
    try:
        window.fill_gap(6)
        result = finish(qtbot, window)
    finally:
        handle.remove()
    assert result.prompt_tokens == len(prepared[0])
    assert all(length == engine.canvas_length for length in encoded)  # the fill found its prompt encoded


def test_typing_encodes_nothing_until_the_writer_pauses(document_window, qtbot) -> None:
    from app.rewrite.rewrite_controller import PREPARE_AFTER_MS

    window = document_window(max_denoising_steps=6)
    engine = window.service.worker._engine
    place_cursor(window, len(DOCUMENT))
    qtbot.waitUntil(lambda: _prepared_for(engine, _prompt_before(engine, len(DOCUMENT))), timeout=SIGNAL_TIMEOUT_MS)
    encoded, handle = _count_encodings(engine)
    try:
        # A writer's pace: slower than a caret's wait, faster than the wait after typing.
        for character in " The lamp":
            qtbot.keyClicks(window.editor, character)
            qtbot.wait(PREPARE_AFTER_MS + 50)
        assert encoded == []
        qtbot.keyClicks(window.editor, " went out")
        qtbot.waitUntil(lambda: len(encoded) == 1, timeout=SIGNAL_TIMEOUT_MS)  # one encoding after the pause
        qtbot.wait(PREPARE_AFTER_MS * 2)
        assert len(encoded) == 1
    finally:
        handle.remove()
    typed = DOCUMENT + " The lamp went out"
    assert _prepared_for(engine, _prompt_before(engine, len(typed), typed))


def test_a_preparation_the_writer_has_moved_on_from_is_skipped(document_window) -> None:
    window = document_window()
    service, engine = window.service, window.service.worker._engine
    encoded, handle = _count_encodings(engine)
    try:
        old_ticket = service._board.new_preparation()
        service._board.new_preparation()  # the writer moved on: a newer preparation is queued
        request = EditRequest(prefix=DOCUMENT[:40], suffix=DOCUMENT[40:], mode="fill", max_new_tokens=4)
        service.worker.prepare(request, old_ticket)
    finally:
        handle.remove()
    assert encoded == []


def test_a_triple_clicked_paragraph_keeps_its_break_and_full_stop_while_it_develops(document_window, qtbot) -> None:
    # Qt's triple click takes a paragraph with the break after it. The live span is only the words: the
    # break and the full stop stay in the document on every pass and after the accept (model/edit/shape.py).
    letter = "Dear Sam,\n\nThe charts need work.\n\nBest,\nAnn\n"
    window = document_window(letter, max_denoising_steps=4)
    editor = window.editor
    paragraph = "The charts need work.\n"
    start, end = select(window, paragraph)
    seen: list[str] = []
    recorder = PassRecorder(window, lambda _job, _painted: seen.append(editor.plain_text()))
    job_id = window.rewrite_selection()
    live = editor.live_range()
    assert live == (start, end - len(".\n"))
    result = finish(qtbot, window)
    assert recorder.count(job_id) >= 1 and seen
    for text in seen:  # every pass painted: the words change, the shape does not
        assert text.startswith("Dear Sam,\n\n") and text.endswith(".\n\nBest,\nAnn\n"), text
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.plain_text() == letter[:start] + result.text + letter[end - len(".\n") :]
    assert editor.plain_text().endswith(".\n\nBest,\nAnn\n")


def test_waiting_original_is_the_share_later_blocks_replace_from_a_word_edge() -> None:
    from app.rewrite.run import waiting_original

    original = "one two three four five six seven eight"
    assert waiting_original(original, 0, 1) == ""  # one block: nothing waits
    assert waiting_original(original, 1, 2) == ""  # the last block: nothing after it
    half = waiting_original(original, 0, 2)
    assert original.endswith(half) and half.startswith(" ")  # a word's edge, never a word cut in two
    assert len(original) // 2 <= len(original) - len(half) < len(original) // 2 + len("three ")
    thirds = [waiting_original(original, block, 3) for block in range(3)]
    assert len(thirds[0]) > len(thirds[1]) > len(thirds[2]) == 0  # shrinks as blocks come
    assert waiting_original("", 0, 3) == ""


def test_a_long_rewrite_keeps_the_rest_of_the_selection_faded_below_the_developing_block(
    document_window, qtbot
) -> None:
    # The whole document is two canvases of the tiny model: while the first block develops, the second
    # half of the original waits in the span (the page does not jump up), then the draft replaces it all.
    from app.rewrite.run import waiting_original

    window = document_window(candidates=1)
    editor = window.editor
    seen: list[tuple[int, int, str, str]] = []  # block, blocks, the span's text, its original
    edges: list[int] = []  # where the caret is, from the span's end
    canvases: list[tuple[Qt.BrushStyle, Qt.BrushStyle, QColor]] = []  # the block's background, the waiting words'

    def check(_job: int, painted) -> None:
        span = editor.live_span
        if span is not None:
            seen.append((painted.raw.block, painted.raw.blocks, editor.text_between(span.start, span.end),
                         span.original))
            edges.append(span.end - editor.textCursor().position())
            # The developing block on the canvas, the original's words waiting below it off it, in faded ink.
            at = QTextCursor(editor.document())
            at.setPosition(span.end - len(waiting_original(span.original, painted.raw.block, painted.raw.blocks)))
            block = at.charFormat()  # the character before the cursor: the block's last
            at.setPosition(span.end)
            waiting = at.charFormat()
            canvases.append((block.background().style(), waiting.background().style(), waiting.foreground().color()))

    recorder = PassRecorder(window, check)
    select(window, DOCUMENT.rstrip("\n"))
    window.rewrite_selection()
    result = finish(qtbot, window)
    assert result.blocks == 2
    first = [(text, original) for block, _blocks, text, original in seen if block == 0]
    last = [(text, original) for block, _blocks, text, original in seen if block == 1]
    assert first and last and len(seen) == len(recorder.passes)
    for (text, original), edge, canvas in zip(first, edges, canvases, strict=False):
        waiting = waiting_original(original, 0, 2)
        assert waiting and text.endswith(waiting)
        assert edge == len(waiting)  # the caret at the developing edge: Enter and the view stay there
        assert canvas == (Qt.BrushStyle.SolidPattern, Qt.BrushStyle.NoBrush, editor.colors.noise)
    for text, original in last:
        assert not text.endswith(waiting_original(original, 0, 2))  # the original is gone once its block comes
    original = seen[0][3]  # the selection less the sentence ending kept outside it
    start = DOCUMENT.index(original)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.plain_text() == DOCUMENT[:start] + result.text + DOCUMENT[start + len(original):]
    window.undo()
    assert editor.plain_text() == DOCUMENT


def test_each_block_of_a_selection_longer_than_the_view_scrolls_into_sight(document_window, qtbot) -> None:
    window = document_window(text=DOCUMENT * 3, candidates=1)
    editor = window.editor
    editor.setFixedHeight(90)  # two or three lines: the selection's end is far below its start
    first_passes: list[bool] = []  # per block: whether its first pass showed the caret
    blocks_seen: list[int] = []

    def check(_job: int, painted) -> None:
        if not blocks_seen or blocks_seen[-1] != painted.raw.block:
            blocks_seen.append(painted.raw.block)
            first_passes.append(editor.viewport().rect().intersects(editor.cursorRect()))

    recorder = PassRecorder(window, check)
    select(window, (DOCUMENT * 3).rstrip("\n"))  # the view scrolls to the selection's end
    window.rewrite_selection()
    result = finish(qtbot, window)
    assert result.blocks >= 3 and blocks_seen == list(range(result.blocks)) and recorder.passes
    assert all(first_passes)


def test_a_writer_who_scrolled_away_is_not_pulled_back_when_the_next_block_starts(document_window, qtbot) -> None:
    after = "".join(f"A line of the chapter after, number {n}.\n" for n in range(40))
    window = document_window(text=DOCUMENT * 3 + after, candidates=1)
    editor = window.editor
    editor.setFixedHeight(90)
    bar = editor.verticalScrollBar()
    blocks_seen: list[int] = []
    away: list[bool] = []  # at each block's start, after the writer scrolled away: whether the edge was in view

    def check(_job: int, painted) -> None:
        if blocks_seen and blocks_seen[-1] == painted.raw.block:
            return
        blocks_seen.append(painted.raw.block)
        if painted.raw.block == 0:
            assert editor.viewport().rect().intersects(editor.cursorRect())  # followed at the start
            bar.setValue(bar.maximum())  # the writer scrolls to the end of the document to read it
            assert not editor.viewport().rect().intersects(editor.cursorRect())
            return
        away.append(editor.viewport().rect().intersects(editor.cursorRect()))

    recorder = PassRecorder(window, check)
    select(window, (DOCUMENT * 3).rstrip("\n"))
    window.rewrite_selection()
    result = finish(qtbot, window)
    assert result.blocks >= 3 and recorder.passes and len(away) == result.blocks - 1
    assert not any(away)  # the view stayed at the chapter after: the edge was never brought back into it
