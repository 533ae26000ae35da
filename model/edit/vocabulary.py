"""The tokenizer as the sampler needs it: text to ids and back, the special ids, and per-id masks of what a
token's text holds (a leading space, a line break), decoded once per model.

The masks need every id's own text. Decoding the ids one by one is a Python call per id: with Gemma's
262,144 tokens that took 6.2 s on a quiet core (batch_decode), minutes on a busy 2-core machine, all in a
writer's first edit. :func:`token_texts` decodes the whole vocabulary in one call instead, each id followed
by a separator token, and splits the text at the separators (0.8 s for Gemma's vocabulary, 0.05 s for the
built-in model's 8k); the masks are then tested with C-level ``map``, no Python per id either.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from itertools import repeat
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase

from model.edit.passes import without_broken_bytes

SPACE = " "
LINE_BREAKS = ("\n", "\r")
# Ids checked one by one against the joined decode: every special or added token, and this many spread
# over the vocabulary. A mismatch (a decoder that treats a token differently inside a text, such as one
# that strips the first token's space) falls back to decoding every id alone.
CHECKED_IDS = 256

TextTest = Callable[[list[str]], Iterable[bool]]


def decoded_alone(tokenizer: PreTrainedTokenizerBase, ids: Iterable[int]) -> list[str]:
    """Each id's text as ``batch_decode`` of that id alone gives it (a Python call per id: the reference)."""
    return list(tokenizer.batch_decode([[i] for i in ids]))


def token_texts(tokenizer: PreTrainedTokenizerBase) -> list[str]:
    """Every id's own text, as :func:`decoded_alone` gives it, from one decode of the whole vocabulary."""
    count = len(tokenizer)
    separator = tokenizer.eos_token_id
    mark = str(tokenizer.decode([separator], skip_special_tokens=False)) if separator is not None else ""
    if count < 2 or not mark:
        return decoded_alone(tokenizer, range(count))
    others = list(range(count))
    del others[separator]
    ids = [separator] * (2 * len(others) - 1)
    ids[0::2] = others
    texts = str(tokenizer.decode(ids, skip_special_tokens=False)).split(mark)
    if len(texts) != len(others):  # some token's own text holds the separator's
        return decoded_alone(tokenizer, range(count))
    texts.insert(separator, mark)
    special = {int(i) for i in tokenizer.all_special_ids} | {int(i) for i in tokenizer.added_tokens_decoder}
    checked = sorted({i for i in special if 0 <= i < count} | set(range(0, count, max(1, count // CHECKED_IDS))))
    if decoded_alone(tokenizer, checked) != [texts[i] for i in checked]:
        return decoded_alone(tokenizer, range(count))
    return texts


def starts_with_space(texts: list[str]) -> Iterable[bool]:
    return map(str.startswith, texts, repeat(SPACE))


def holds_line_break(texts: list[str]) -> Iterable[bool]:
    found: Iterable[bool] = repeat(False, len(texts))
    for mark in LINE_BREAKS:
        found = map(operator.or_, found, map(operator.contains, texts, repeat(mark)))
    return found


class Vocabulary:
    """One model's tokenizer and vocabulary; masks live on ``device``, computed on first use."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, vocab_size: int, device: torch.device) -> None:
        self.tokenizer = tokenizer
        self.size = vocab_size
        self.device = device
        self.pad_id = int(tokenizer.pad_token_id)
        self.eos_id = int(tokenizer.eos_token_id)
        bos = tokenizer.bos_token_id
        self.bos_id = int(bos) if bos is not None else None
        end_of_turn = tokenizer.convert_tokens_to_ids("<end_of_turn>")
        unk = tokenizer.unk_token_id
        self.end_of_turn_id = end_of_turn if isinstance(end_of_turn, int) and end_of_turn != unk else None
        self._texts: list[str] | None = None
        self._masks: dict[str, torch.Tensor] = {}
        self._pieces: dict[int, str] = {}

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=False))

    def chat_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """``messages`` in the model's chat template, ready for the model's turn (instruction-tuned models)."""
        encoded: Any = self.tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
        if hasattr(encoded, "keys"):  # transformers 5 returns a BatchEncoding
            encoded = encoded["input_ids"]
        return [int(token) for token in encoded]

    def pieces(self, ids: list[int]) -> list[str]:
        """Each id's own text, as ``batch_decode`` of one id gives it; remembered, since every pass paints them."""
        missing = [i for i in set(ids) if i not in self._pieces]
        if missing:
            self._pieces.update(zip(missing, self.tokenizer.batch_decode([[i] for i in missing]), strict=True))
        return [self._pieces[i] for i in ids]

    def span_text(self, ids: list[int]) -> str:
        """The text of new span tokens, with the documents' in-memory line breaks.

        Byte-level vocabularies can emit a carriage return; a document holds only "\n" while open
        (files keep their own line endings on disk), so a stray "\r" would otherwise land in it. They can also
        emit a byte of a multi-byte character without the rest of it (:func:`without_broken_bytes`).
        """
        return without_broken_bytes(self.decode(ids).replace("\r\n", "\n").replace("\r", "\n"))

    def space_led(self) -> torch.Tensor:
        """Per vocabulary id, whether its text starts with a space."""
        return self._mask("space_led", starts_with_space)

    def line_breaks(self) -> torch.Tensor:
        """Per vocabulary id, whether its text holds a line break."""
        return self._mask("line_break", holds_line_break)

    def _mask(self, name: str, test: TextTest) -> torch.Tensor:
        """Per vocabulary id, ``test`` of the decoded texts (computed once per name, on first use; ids past the
        tokenizer's, which the model's padded vocabulary may have, are False)."""
        if name not in self._masks:
            if self._texts is None:  # 262k tokens on the large model: decode them once
                self._texts = token_texts(self.tokenizer)
            texts = self._texts[: self.size]
            flags = torch.zeros(self.size, dtype=torch.bool)
            if texts:
                flags[: len(texts)] = torch.frombuffer(bytearray(test(texts)), dtype=torch.bool)
            self._masks[name] = flags.to(self.device)
        return self._masks[name]
