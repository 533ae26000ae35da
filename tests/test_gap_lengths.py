"""Each gap of Fill Gaps in Selection is offered about the length its mark suggests (#46: every "___"
became 10-20 words when each was offered DEFAULT_GAP_TOKENS)."""

from __future__ import annotations

from model.edit.engine import Engine
from model.edit.holds import plan_regions
from model.edit.request import EditRequest, gap_tokens


def _gap_slots(engine: Engine, span: str, max_new_tokens: int | None = None) -> list[int]:
    request = EditRequest(prefix="The keeper", span=span, mode="gaps", max_new_tokens=max_new_tokens)
    return [region.slots for region in plan_regions(request, engine.vocabulary, "") if not region.held]


def test_a_gap_gets_the_length_its_mark_asks_for(engine: Engine) -> None:
    assert _gap_slots(engine, " climbed ___ and [...] then ______ home.") == [6, 8, 12]
    assert gap_tokens("___") <= 6  # a few words, not a sentence
    assert gap_tokens("_" * 200) == 64  # a long run asks for more, within reason


def test_a_length_named_in_the_request_still_wins(engine: Engine) -> None:
    assert _gap_slots(engine, " climbed ___ and [...].", max_new_tokens=20) == [20, 20]
