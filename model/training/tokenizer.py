"""The built-in model's 8k byte-level BPE tokenizer, trained on the training split only."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from transformers import PreTrainedTokenizerFast

from model.checkpoint.tokenization import train_bpe_tokenizer
from model.training.data import Section


def _texts(sections: Sequence[Section], max_chars: int) -> Iterator[str]:
    """Stories first (the style we weight most), then books, up to ``max_chars`` in all."""
    used = 0
    for section in sorted(sections, key=lambda s: not s.is_story):
        if used >= max_chars:
            return
        used += len(section.text)
        yield section.text


def build_tokenizer(
    train_sections: Sequence[Section], vocab_size: int = 8192, max_chars: int = 40_000_000
) -> PreTrainedTokenizerFast:
    """Train the tokenizer; ``max_chars`` bounds the time BPE training takes on two cores."""
    return train_bpe_tokenizer(_texts(train_sections, max_chars), vocab_size)


def save_tokenizer(tokenizer: PreTrainedTokenizerFast, folder: Path) -> None:
    tokenizer.save_pretrained(str(folder))
