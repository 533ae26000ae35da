"""Tiny random-weight DiffusionGemma checkpoints for tests, benchmarks and demos.

They are real checkpoints (config.json, model.safetensors, tokenizer.json) built with the same classes
as the real model, only small and untrained, so every loading and sampling path runs on them.
"""

from __future__ import annotations

from pathlib import Path

import torch

from model.checkpoint.architecture import TextModelShape, build_config
from model.checkpoint.building import new_model
from model.checkpoint.tokenization import train_bpe_tokenizer

# A little English to give the tiny tokenizer real merges (and non-ASCII characters to round-trip).
SAMPLE_TEXT = """\
The lighthouse keeper climbed the stairs every evening, counting the steps as his father had.
She wrote the letter twice, then tore up both copies and walked to the harbour instead.
Rain fell on the market square; the stalls folded their awnings and the pigeons took cover.
"Are you coming?" asked the girl. The boy shrugged, smiled, and followed her into the woods.
Café owners in Zürich argue about the weather — naïvely, some say — every single morning.
"""


def build_tiny_checkpoint(
    folder: Path,
    *,
    seed: int = 0,
    vocab_size: int = 384,
    canvas_length: int = 32,
    hidden_size: int = 64,
    num_hidden_layers: int = 2,
) -> Path:
    """Write a tiny random DiffusionGemma checkpoint with a matching byte-level BPE tokenizer."""
    folder.mkdir(parents=True, exist_ok=True)
    # With a chat template, so tests reach the instruction path too.
    tokenizer = train_bpe_tokenizer([SAMPLE_TEXT] * 4, vocab_size, chat_template=True)
    shape = TextModelShape(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_hidden_layers,
        canvas_length=canvas_length,
    )
    torch.manual_seed(seed)
    model = new_model(build_config(shape))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
