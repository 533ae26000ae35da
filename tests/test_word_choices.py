"""Words That Fit (model/edit/word_choices.py): one reading of a word's place with the text on both sides, and the
whole words it offers there. On the built-in model, whose 4.8M parameters still know which words fit a sentence,
and on the tiny random model for what holds whatever the weights."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from model import Engine, load
from model.checkpoint.folders import builtin_model_folder
from model.edit import word_choices
from model.edit.request import WHOLE_WORD
from model.edit.word_choices import WordChoiceError, in_case_of, pooled
from model.training.data import Section

BENCH = Path(__file__).resolve().parents[1] / "bench"

DAY = ("It was a ", "wonderful", " day, and the children played in the garden.")


@pytest.fixture(scope="module")
def builtin() -> Engine:
    return Engine(load(builtin_model_folder(), device="cpu"))


def test_the_words_offered_are_those_that_fit_the_sentence(builtin: Engine) -> None:
    offered = [choice.word for choice in builtin.word_choices(*DAY)]
    fitting = {"great", "happy", "good", "fun", "special", "beautiful", "lovely", "nice", "sunny", "perfect"}
    assert len(set(offered) & fitting) >= 3, offered
    verbs = [c.word for c in builtin.word_choices("The numbers do not ", "match", " the figures in the table.")]
    assert {"see", "make", "have", "find", "like"} & set(verbs), verbs


def test_the_offer_is_whole_words_once_each_likeliest_first_and_never_the_word_itself(builtin: Engine) -> None:
    places = (DAY, ("Mara ", "watched", " it from the lamp room."), ("no ship had ", "foundered", "."))
    for prefix, word, suffix in places:
        choices = builtin.word_choices(prefix, word, suffix)
        words = [choice.word for choice in choices]
        assert 0 < len(words) <= word_choices.CHOICES
        assert all(WHOLE_WORD.fullmatch(w) for w in words), words
        assert word.casefold() not in {w.casefold() for w in words}
        assert len({w.casefold() for w in words}) == len(words)
        shares = [choice.share for choice in choices]
        assert shares == sorted(shares, reverse=True) and shares[-1] > 0 and sum(shares) <= 1
    assert len(builtin.word_choices(*DAY, count=3)) == 3


def test_the_reading_is_the_same_every_time(builtin: Engine) -> None:
    assert builtin.word_choices(*DAY) == builtin.word_choices(*DAY)


def test_a_choice_takes_the_words_case_and_its_place_after_a_line_or_a_quote(builtin: Engine) -> None:
    opening = builtin.word_choices("The storm came in at dusk.\n\n", "She", " had kept the light for eleven years.")
    assert opening and all(choice.word[0].isupper() for choice in opening), opening
    quoted = builtin.word_choices("He said, “", "Never", " again.”")
    assert quoted and all(not choice.word.startswith(" ") and choice.word[0].isupper() for choice in quoted)
    shouted = builtin.word_choices("It was a ", "WONDERFUL", " day, and the children played in the garden.")
    assert shouted and all(choice.word.isupper() for choice in shouted), shouted
    assert in_case_of("great", "Wonderful") == "Great"
    assert in_case_of("great", "OK") == "GREAT"
    assert in_case_of("Mara", "she") == "Mara"  # a name the model wrote keeps its capital
    assert in_case_of("great", "I") == "Great"  # one capital letter is a first capital, not a shout


def test_the_noise_in_the_slot_is_not_read_as_a_word_already_written(
    builtin: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model gives a token it is shown in the slot weight of its own (0.24 for "dropped", the seed's noise,
    in place of "watched"); the reading leaves each draw's noise token out of that draw."""
    noise_word = " dropped"
    (noise_id,) = builtin.encode(noise_word)
    real_randint = torch.randint

    def shown_dropped(low: int, high: int, size: Any, **kwargs: Any) -> torch.Tensor:
        return torch.full(size, noise_id, dtype=torch.long)

    monkeypatch.setattr(torch, "randint", shown_dropped)
    offered = [choice.word for choice in builtin.word_choices("Mara ", "watched", " it from the lamp room.")]
    monkeypatch.setattr(torch, "randint", real_randint)
    assert "dropped" not in offered, offered
    assert offered, "every other word was left out with it"


@pytest.mark.parametrize(
    ("prefix", "word", "suffix", "why"),
    [
        ("It was a ", "wonderful day", ".", "not a single word"),
        ("It was ", "42", " days.", "not a single word"),
        ("", "Hello", "", "no text around it"),
        ("  \n", "Hello", " \n", "no text around it"),
    ],
)
def test_what_is_not_one_word_with_text_around_it_is_refused_with_the_reason(
    engine: Engine, prefix: str, word: str, suffix: str, why: str
) -> None:
    with pytest.raises(WordChoiceError, match=why):
        engine.word_choices(prefix, word, suffix)


def test_a_random_model_offers_whole_words_too(engine: Engine) -> None:
    """Whatever the weights: the slot's bans and the word filter hold (the tiny model's tokenizer is Gemma's)."""
    choices = engine.word_choices("The storm came in from the ", "west", " just after dusk.")
    assert choices
    assert all(WHOLE_WORD.fullmatch(choice.word) for choice in choices)
    assert "west" not in [choice.word for choice in choices]


def test_the_bench_measures_how_often_the_writers_own_word_is_found(builtin: Engine) -> None:
    """bench/word_choices.py runs (benchmarks are run by hand, so a change could stop one unseen) and its figures
    hold together; what they are lives in its own runs (README)."""
    sys.path.insert(0, str(BENCH))
    try:
        import word_choices as bench
    finally:
        sys.path.remove(str(BENCH))
    story = "Tom had a red ball. He liked to play with it in the park every day. " * 30
    book = "The old captain walked along the harbour wall, looking out at the grey sea. " * 30
    sections = [Section("tinystories", 0, story, True, True), Section("book", 0, book, False, True)]
    cases = bench.word_cases(sections, 6, seed=1)
    assert [case.prefix + case.gap + case.suffix in (story + book) for case in cases] == [True] * 6
    figures = bench.measure(builtin, cases, sections, threads=1)
    assert figures["cases"] == 6 and 0 < figures["one_token_words"] <= 6
    assert 0 <= figures["own_word_first"] <= figures["own_word_in_list"] <= 1
    assert 0 < figures["median_ms"] <= figures["p90_ms"]


def test_a_servers_readings_are_pooled_as_full_ones_are() -> None:
    """A server names only its likeliest ids: each draw's own noise token leaves it, the rest is shared out again
    over what the draw named, and an id a draw did not name counts nothing there."""
    readings = [{1: 0.5, 2: 0.3, 3: 0.2}, {1: 0.6, 4: 0.4}]
    ranked = pooled(readings, noise=[3, 4])
    assert [token for token, _ in ranked] == [1, 2]
    assert [share for _, share in ranked] == pytest.approx([(0.625 + 1.0) / 2, 0.375 / 2])
    assert pooled([{5: 1.0}, {6: 0.5, 7: 0.5}], noise=[5, 6]) == [(7, 0.5)]  # a draw of its noise alone says nothing
