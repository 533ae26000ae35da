"""The tokenizer as the sampler needs it: text to ids and back, the special ids, and per-id masks of what a
token's text holds (a leading space, a line break), decoded once per model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase

SPACE = " "
LINE_BREAKS = ("\n", "\r")


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
        (files keep their own line endings on disk), so a stray "\r" would otherwise land in it.
        """
        return self.decode(ids).replace("\r\n", "\n").replace("\r", "\n")

    def space_led(self) -> torch.Tensor:
        """Per vocabulary id, whether its text starts with a space."""
        return self._mask("space_led", lambda text: text.startswith(SPACE))

    def line_breaks(self) -> torch.Tensor:
        """Per vocabulary id, whether its text holds a line break."""
        return self._mask("line_break", lambda text: any(mark in text for mark in LINE_BREAKS))

    def _mask(self, name: str, test: Callable[[str], bool]) -> torch.Tensor:
        """Per vocabulary id, ``test`` of its decoded text (computed once per name, on first use)."""
        if name not in self._masks:
            if self._texts is None:  # 262k tokens on the large model: decode them once
                self._texts = self.tokenizer.batch_decode([[i] for i in range(len(self.tokenizer))])
            flags = [test(text) for text in self._texts][: self.size]
            flags += [False] * (self.size - len(flags))
            self._masks[name] = torch.tensor(flags, device=self.device)
        return self._masks[name]
