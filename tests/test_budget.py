"""An edit that cannot finish in reasonable time on the loaded model is refused up front, in words
(model/edit/budget.py), priced by what a canvas pass measurably costs on this engine."""

from __future__ import annotations

import pytest

from model import DenoiseOptions, EditRequest, Engine, RequestError
from model.edit.budget import PassClock, canvas_passes, drafts_within


def test_an_edit_at_the_limits_is_refused_before_its_first_pass(engine: Engine) -> None:
    engine.run(EditRequest(prefix="The cat", suffix=" sat.", mode="fill", max_new_tokens=8, candidates=2, seed=1))
    assert engine.clock.ms_per_canvas_pass is not None  # measured on this machine, by that edit
    # The tiny model is fast (a quiet machine prices 16 x 8,192 tokens under five minutes); a limit of
    # ten seconds is still far below what 196,608 canvas passes take.
    engine.max_edit_seconds = 10.0
    huge = EditRequest(prefix="a", suffix="b", mode="fill", max_new_tokens=8192, candidates=16)
    passes = engine.edit(huge)
    with pytest.raises(RequestError, match=r"would take about .* ask for fewer drafts or less text"):
        next(passes)


def test_the_limit_follows_the_measured_speed(engine: Engine) -> None:
    request = EditRequest(prefix="The cat", suffix=" sat.", mode="fill", max_new_tokens=8, candidates=2, seed=1)
    engine.run(request)
    price = engine.clock.ms_per_canvas_pass
    assert price is not None
    options = request.options.resolved(engine.loaded.generation_defaults)
    work_s = canvas_passes(2, 1, options.max_denoising_steps, options.polish_rounds) * price / 1000
    engine.max_edit_seconds = work_s * 4  # room for this edit
    assert engine.run(request).texts
    engine.max_edit_seconds = work_s / 4  # the same edit, priced over the limit
    with pytest.raises(RequestError, match="more than the"):
        engine.run(request)


def test_first_passes_do_not_set_the_price() -> None:
    clock = PassClock()
    clock.record([5000.0, 4000.0], candidates=1)  # a warm-up's two slow passes: nothing learnt
    assert clock.ms_per_canvas_pass is None
    clock.record([5000.0, 4000.0, 40.0, 40.0, 44.0], candidates=4)
    assert clock.ms_per_canvas_pass == pytest.approx(10.0)
    clock.record([900.0, 900.0, 800.0, 800.0, 800.0], candidates=4)  # a busy moment: the machine can still do 10
    assert clock.ms_per_canvas_pass == pytest.approx(10.0)


def test_before_any_edit_the_price_comes_from_the_models_size() -> None:
    clock = PassClock()
    cpu = clock.price_ms(parameters=5_000_000, canvas=64, device="cpu")
    assert cpu == pytest.approx(12.8)
    assert clock.price_ms(parameters=5_000_000, canvas=64, device="cuda") < cpu / 100


def test_a_fresh_engine_refuses_what_its_size_says_is_hours(engine: Engine) -> None:
    fresh = Engine(engine.loaded)
    assert fresh.clock.ms_per_canvas_pass is None
    fresh.max_edit_seconds = 0.001
    with pytest.raises(RequestError, match="would take about"):
        fresh.run(EditRequest(prefix="a", suffix="b", mode="fill", max_new_tokens=64, candidates=2,
                              options=DenoiseOptions(max_denoising_steps=4)))


def test_as_many_drafts_as_fit_and_never_none() -> None:
    assert drafts_within(4, passes_per_draft=48, ms_per_canvas_pass=100.0, seconds=10.0) == 2  # 4.8 s a draft
    assert drafts_within(4, passes_per_draft=48, ms_per_canvas_pass=10.0, seconds=10.0) == 4  # all fit
    assert drafts_within(4, passes_per_draft=48, ms_per_canvas_pass=1000.0, seconds=10.0) == 1  # even 48 s


def test_where_drafts_are_slow_the_engine_develops_as_many_as_fit(engine: Engine) -> None:
    request = EditRequest(prefix="The cat", suffix=" sat on the mat.", mode="fill", max_new_tokens=8, candidates=4,
                          seed=1, options=DenoiseOptions(max_denoising_steps=10, polish_rounds=0))
    assert len(engine.run(request).texts) == 4  # the CLI's engine: what it asks for
    engine.fit_drafts_seconds = 30.0
    engine.clock.ms_per_canvas_pass = 1000.0  # 10 s a draft, as a model 100 times the tiny one's size would be
    slow = engine.run(request)
    assert len(slow.texts) == len(slow.scores) == 3
    assert all(slow.token_ids)  # each one developed (the random model's text can be lone bytes, which go)
    engine.clock.ms_per_canvas_pass = 1000.0
    engine.fit_drafts_seconds = 5.0
    assert len(engine.run(request).texts) == 1  # one draft even where it alone takes longer
    engine.fit_drafts_seconds = 1000.0
    assert len(engine.run(request).texts) == 4
