"""What the model thread hands the editor to paint for each pass (real engine, tiny model)."""

from __future__ import annotations

from app.rewrite.worker import Ink, _FrameBuilder
from model import DenoiseOptions, EditRequest, Engine, LoadedModel, Pass


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
            assert segments[0].text.startswith(first_token[1:])
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
