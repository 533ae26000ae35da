"""The vocabulary masks' start-up work: every id's own text from one decode, no Python call per id.

With Gemma's 262,144 tokens the per-id pass (``batch_decode`` of each id alone, then a Python test per
text) cost seconds on a quiet core and minutes on a busy one, all in a writer's first edit. These tests
count calls rather than time them, so the per-id loop cannot come back unnoticed.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import torch
from tokenizers import decoders
from transformers import AutoTokenizer

from model.checkpoint.folders import builtin_model_folder
from model.edit.vocabulary import CHECKED_IDS, Vocabulary, decoded_alone, token_texts


@pytest.fixture()
def tokenizer() -> Any:
    return AutoTokenizer.from_pretrained(str(builtin_model_folder()))


@contextmanager
def counted_calls() -> Iterator[Counter[str]]:
    """Python and C function calls made from Python code while the block runs, by function name."""
    calls: Counter[str] = Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls[frame.f_code.co_name] += 1
        elif event == "c_call":
            calls[getattr(arg, "__name__", "?")] += 1

    sys.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(None)


def reference_masks(texts: list[str], size: int) -> tuple[torch.Tensor, torch.Tensor]:
    led = [text.startswith(" ") for text in texts][:size]
    breaks = [("\n" in text) or ("\r" in text) for text in texts][:size]
    pad = [False] * (size - len(led))
    return torch.tensor(led + pad), torch.tensor(breaks + pad)


def test_token_texts_are_each_id_decoded_alone(tokenizer: Any) -> None:
    assert token_texts(tokenizer) == decoded_alone(tokenizer, range(len(tokenizer)))


@pytest.mark.parametrize("size", [8192, 8200])  # the model's vocabulary, and one padded past the tokenizer's
def test_masks_match_the_per_id_reference(tokenizer: Any, size: int) -> None:
    vocabulary = Vocabulary(tokenizer, size, torch.device("cpu"))
    led, breaks = reference_masks(decoded_alone(tokenizer, range(len(tokenizer))), size)
    assert torch.equal(vocabulary.space_led(), led)
    assert torch.equal(vocabulary.line_breaks(), breaks)
    assert vocabulary.space_led().any() and vocabulary.line_breaks().any()  # the tests see real tokens


def test_no_id_is_decoded_alone_beyond_the_checked_sample(tokenizer: Any) -> None:
    """The per-id decode runs only for the spot check, however large the vocabulary: the old pass ran it
    for all 8,192 ids here (and 262,144 for Gemma's)."""
    vocabulary = Vocabulary(tokenizer, 8192, torch.device("cpu"))
    with counted_calls() as calls:
        vocabulary.space_led()
    specials = len(set(tokenizer.all_special_ids) | set(tokenizer.added_tokens_decoder))
    assert 0 < calls["_decode"] <= CHECKED_IDS + specials + 2, calls.most_common(5)


def test_mask_tests_make_no_python_call_per_text(tokenizer: Any) -> None:
    """Once the texts are decoded, each mask is tested in C (``map``): a lambda or a comprehension calling
    a method per text would make thousands of calls here."""
    vocabulary = Vocabulary(tokenizer, 8192, torch.device("cpu"))
    vocabulary.space_led()  # decodes the texts
    with counted_calls() as calls:
        vocabulary.line_breaks()
    assert sum(calls.values()) < 100, calls.most_common(5)


def test_a_decoder_that_joins_tokens_differently_falls_back_to_exact_texts(tokenizer: Any) -> None:
    """WordPiece joins tokens with spaces, so the joined decode's pieces differ from each id alone: the spot
    check sees it and every id is decoded alone, exactly as before."""
    tokenizer.backend_tokenizer.decoder = decoders.WordPiece()
    alone = decoded_alone(tokenizer, range(len(tokenizer)))
    assert token_texts(tokenizer) == alone
    led, _ = reference_masks(alone, 8192)
    assert torch.equal(Vocabulary(tokenizer, 8192, torch.device("cpu")).space_led(), led)
