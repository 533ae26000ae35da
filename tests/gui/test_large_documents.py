"""Huge documents and awkward selections: bounded work per rewrite, the same text, clear refusals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gui_helpers import SIGNAL_TIMEOUT_MS, select

from app.window.main_window import MainWindow
from model import Engine
from model.edit.request import CONTEXT_CHARS_PER_TOKEN, MAX_CANVAS_TOKENS

LINE = "She wrote the letter twice, then walked to the harbour instead.\n"
TARGET = "The keeper climbed the stairs."


def test_a_rewrite_in_a_huge_document_sends_only_what_the_model_reads(
    document_window: Callable[..., MainWindow], qtbot, monkeypatch: Any
) -> None:
    half = LINE * (600_000 // len(LINE))  # 1.2 MB around the sentence
    window = document_window(half + TARGET + "\n" + half, candidates=1)
    sent: list[Any] = []
    submit = window.service.submit
    monkeypatch.setattr(window.service, "submit", lambda request, *rest: sent.append(request) or submit(request, *rest))
    select(window, TARGET)
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.last_result is not None, timeout=SIGNAL_TIMEOUT_MS)
    request = sent[0]
    bound = max(window.prefs.context_budget, MAX_CANVAS_TOKENS) * CONTEXT_CHARS_PER_TOKEN
    assert len(request.prefix) == len(request.suffix) == bound
    # The sentence's full stop stays in the document, after the live span (model/edit/shape.py).
    assert request.span == TARGET[:-1]
    assert half.endswith(request.prefix) and (".\n" + half).startswith(request.suffix)
    # The model reads the same tokens either way: the whole document gives the very same rewrite.
    engine: Engine = window.service.worker._engine
    whole = replace(request, prefix=half, suffix=".\n" + half)
    assert engine.run(whole).texts == engine.run(request).texts == [window.last_result.texts[0]]


def test_a_whitespace_selection_is_refused_in_words(document_window: Callable[..., MainWindow]) -> None:
    window = document_window("First paragraph.\n\n   \n\nSecond paragraph.\n")
    select(window, "\n   \n")
    assert window.rewrite_selection() is None
    assert "only spaces or line breaks" in window.statusBar().currentMessage()
    assert window.editor.plain_text() == "First paragraph.\n\n   \n\nSecond paragraph.\n"
