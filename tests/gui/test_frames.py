"""What the model thread hands the editor to paint for each pass (real engine, tiny model)."""

from __future__ import annotations

from app.rewrite.worker import Ink, _FrameBuilder
from model import DenoiseOptions, EditRequest, Engine, LoadedModel, Pass
from model.edit.passes import without_broken_bytes


def test_a_space_moved_onto_the_canvas_is_not_painted_twice(tiny_model: LoadedModel) -> None:
    engine = Engine(tiny_model)
    tokenizer = engine.tokenizer
    builder = _FrameBuilder({int(i) for i in tokenizer.all_special_ids}, engine.decode, engine.vocab_size)
    passes: list[Pass] = []
    request = EditRequest(prefix="The keeper ", suffix=" the stairs.", mode="fill", max_new_tokens=8, seed=2,
                          candidates=2, options=DenoiseOptions(max_denoising_steps=12, left_to_right_bias=2.0))
    engine.run(request, on_pass=passes.append)
    checked = 0
    for step in passes:
        frames = builder.frames(step)
        for candidate, segments in enumerate(frames):
            if not step.accepted[candidate][0]:
                continue
            first_token = engine.decode([step.tokens[candidate][0]])
            assert first_token.startswith(" ")  # the first slot only takes tokens that bring the space
            assert segments[0].ink in (Ink.FRESH, Ink.SETTLED)
            assert segments[0].text.startswith(without_broken_bytes(first_token[1:]))  # a lone byte shows as nothing
            assert not segments[0].text.startswith(" ") or first_token.startswith("  ")
            checked += 1
    assert checked > 0


def test_polish_rounds_paint_as_text_with_only_redrawn_words_fresh(tiny_model: LoadedModel) -> None:
    engine = Engine(tiny_model)
    builder = _FrameBuilder({int(i) for i in engine.tokenizer.all_special_ids}, engine.decode, engine.vocab_size)
    passes: list[Pass] = []
    request = EditRequest(prefix="The keeper", suffix=" the stairs.", mode="fill", max_new_tokens=8, seed=3,
                          options=DenoiseOptions(max_denoising_steps=12, polish_rounds=3))
    result = engine.run(request, on_pass=passes.append)
    frames = [builder.frames(step)[0] for step in passes]
    for before, step, segments in zip(passes[-4:-1], passes[-3:], frames[-3:], strict=True):
        assert all(segment.ink is not Ink.NOISE for segment in segments)  # polished canvases are all text
        redrawn = sum(old != new for old, new in zip(before.tokens[0], step.tokens[0], strict=True))
        fresh = sum(segment.ink is Ink.FRESH for segment in segments)
        assert fresh <= redrawn
    assert "".join(segment.text for segment in frames[-1]) == result.texts[0]  # what the writer is left with


def test_painting_only_what_changed_leaves_the_span_as_a_whole_repaint_would(qtbot) -> None:
    # Random passes over a span: runs shared with the last paint at either end stay in place, the rest is
    # replaced. After each, the span reads exactly the runs in their formats; one restore brings the original
    # back byte for byte with the undo history as it was.
    import random

    from PySide6.QtGui import QTextCursor

    from app.window.editor_widget import RewriteEditor
    from app.window.live_span import positions, shared_ends, text_format
    from app.window.theme import canvas_colors

    assert shared_ends([("a", 1), ("b", 1), ("c", 1)], [("a", 1), ("x", 1), ("c", 1)]) == (1, 1)  # type: ignore[list-item]
    assert shared_ends([("a", 1)], [("a", 1), ("a", 1)]) == (1, 0)  # type: ignore[list-item]
    editor = RewriteEditor()
    qtbot.addWidget(editor)
    document = "Before the span. The original words\nof the span. After it.\n"
    editor.setPlainText(document)
    undo_steps = editor.document().availableUndoSteps()
    start = document.index("The original")
    end = document.index(" After")
    span = editor.begin_live_span(start, end)
    rng = random.Random(5)
    colors = editor.colors  # the theme's own inks, so a theme switch recolours them
    formats = [text_format(colors.ink, colors.canvas), text_format(colors.noise, colors.canvas),
               text_format(colors.ink, colors.fresh)]
    pieces = ["word ", "\n", "𒃦", "", "é", "a longer run of settled text ", "x"]
    runs = [(rng.choice(pieces), rng.choice(formats)) for _ in range(6)]
    def check_span() -> None:
        assert span.end - span.start == positions(span.last_paint)
        assert editor.text_between(span.start, span.end) == "".join(text for text, _ in span.last_paint)
        at = span.start
        for text, run_format in span.last_paint:  # each run's first character carries its format
            if text and text[0] != "\n":
                cursor = QTextCursor(editor.document())
                cursor.setPosition(at + 1)
                assert cursor.charFormat().foreground().color() == run_format.foreground().color()
                assert cursor.charFormat().background().color() == run_format.background().color()
            at += positions([(text, run_format)])
        assert editor.text_between(0, span.start) == document[:start]
        assert editor.text_between(span.end, editor.end_position()) == document[end:]

    for _ in range(150):
        runs = list(runs)
        for _ in range(rng.randint(1, 3)):  # a pass changes a few runs, adds or drops one
            at = rng.randrange(len(runs) + 1)
            what = rng.random()
            if what < 0.4 and runs:
                runs[min(at, len(runs) - 1)] = (rng.choice(pieces), rng.choice(formats))
            elif what < 0.7 or not runs:
                runs.insert(at, (rng.choice(pieces), rng.choice(formats)))
            else:
                del runs[min(at, len(runs) - 1)]
        editor._paint(runs)
        check_span()
    editor.set_colors(canvas_colors(dark=colors.ink.lightness() < 128))  # the other theme: every run repainted
    assert span.last_paint != runs
    check_span()
    editor.restore_live_span()
    assert editor.plain_text() == document and editor.document().availableUndoSteps() == undo_steps
