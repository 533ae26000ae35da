"""Redraft against the transformers it runs on: the cache keyword, and library warnings kept off stderr.

scripts/test-newest runs these on the lock's transformers and on the floor of our range (5.23, before
the cache= rename), so both sides of the keyword switch are exercised.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from transformers import DiffusionGemmaForBlockDiffusion

from model import EditRequest, Engine
from model.runtime.cache_kwarg import CACHE_KEYWORD, cache_keyword, with_cache
from model.runtime.library_warnings import KNOWN


def test_cache_keyword_follows_the_signature_through_decorators() -> None:
    def renamed(self: object, cache: object = None) -> None: ...

    def older(self: object, past_key_values: object = None) -> None: ...

    def decorate(forward: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(forward)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return forward(*args, **kwargs)

        return wrapper

    assert cache_keyword(renamed) == "cache"
    assert cache_keyword(older) == "past_key_values"
    assert cache_keyword(decorate(decorate(renamed))) == "cache"
    assert cache_keyword(decorate(older)) == "past_key_values"
    assert with_cache("kv") == {CACHE_KEYWORD: "kv"}


def test_every_forward_we_call_takes_the_chosen_keyword(engine: Engine) -> None:
    # The top model, its inner model and the causal encoder all receive the cache from Redraft's code.
    model = engine.model
    assert isinstance(model, DiffusionGemmaForBlockDiffusion)
    for module in (model, model.model, model.model.encoder):
        assert CACHE_KEYWORD in inspect.signature(type(module).forward).parameters, type(module).__name__


def test_an_edit_raises_no_deprecation_or_future_warning(engine: Engine) -> None:
    request = EditRequest(prefix="The keeper", suffix=" every evening.", mode="fill", max_new_tokens=6, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        warnings.simplefilter("error", DeprecationWarning)
        for known in KNOWN:  # what model.runtime.library_warnings filters for the writer, it filters here too
            warnings.filterwarnings("ignore", message=known.message, category=known.category)
        result = engine.run(request)
    assert result.passes > 0
