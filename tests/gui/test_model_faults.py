"""Model faults mid-rewrite: the document untouched, the editor usable, the message clear.

Faults are injected with PyTorch's own forward hooks on the real model: a pass that raises, a GPU that
runs out of memory, a checkpoint whose every token is padding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from gui_helpers import DOCUMENT, SIGNAL_TIMEOUT_MS, place_cursor, select

from app.window.editor_widget import Phase
from app.window.main_window import MainWindow

SPAN = "climbed the stairs"


def _model(window: MainWindow) -> Any:
    engine = window.service.worker._engine
    assert engine is not None
    return engine.model


def _fail_on_call(number: int, error: BaseException) -> Callable[..., None]:
    calls = {"n": 0}

    def hook(_module: Any, _inputs: Any) -> None:
        calls["n"] += 1
        if calls["n"] == number:
            raise error

    return hook


@pytest.mark.parametrize(
    "error, words",
    [
        (RuntimeError("a kernel failed"), ["unexpected RuntimeError: a kernel failed"]),
        (torch.OutOfMemoryError("CUDA out of memory"), ["ran out of memory", "4-bit", "CPU device"]),
    ],
)
def test_a_pass_that_fails_mid_rewrite_leaves_the_document(
    document_window: Callable[..., MainWindow], qtbot, error: BaseException, words: list[str]
) -> None:
    window = document_window(candidates=1)
    editor = window.editor
    undo_steps = editor.document().availableUndoSteps()
    handle = _model(window).model.decoder.register_forward_pre_hook(_fail_on_call(3, error))
    try:
        select(window, SPAN)
        window.rewrite_selection()
        qtbot.waitUntil(window.message_bar.isVisible, timeout=SIGNAL_TIMEOUT_MS)
    finally:
        handle.remove()
    message = window.message_bar.label.text()
    assert message.startswith("The rewrite failed:") and message.endswith("Your text is unchanged.")
    for word in words:
        assert word in message
    assert editor.plain_text() == DOCUMENT
    assert editor.phase is Phase.IDLE and not editor.document().isModified()
    assert editor.document().availableUndoSteps() == undo_steps
    # Still an editor, and still a rewriting one.
    select(window, SPAN)
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.last_result is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert editor.phase is Phase.REVIEW


def test_a_model_that_writes_only_padding(document_window: Callable[..., MainWindow], qtbot) -> None:
    window = document_window(candidates=1)
    model = _model(window)
    pad = model.config.get_text_config().pad_token_id

    def only_padding(_module: Any, _inputs: Any, logits: torch.Tensor) -> torch.Tensor:
        logits = logits.clone()
        logits[..., pad] += 1e4
        return logits

    handle = model.lm_head.register_forward_hook(only_padding)
    try:
        # A gap at the end: nothing forces a first word (a rewrite or a gap before text must write one).
        place_cursor(window, len(DOCUMENT))
        window.fill_gap(8)
        qtbot.waitUntil(lambda: window.last_result is not None, timeout=SIGNAL_TIMEOUT_MS)
    finally:
        handle.remove()
    assert window.last_result is not None and window.last_result.texts == [""]
    assert "The model wrote nothing here" in window.statusBar().currentMessage()
    window.accept_rewrite()
    assert window.editor.plain_text() == DOCUMENT and window.editor.phase is Phase.IDLE
