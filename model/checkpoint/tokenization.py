"""Tokenizer conventions shared by the engine, the training recipe and the tests.

Redraft's own checkpoints use a byte-level BPE tokenizer (Hugging Face ``tokenizers``) saved as a
standard ``tokenizer.json``. The special tokens come first so their ids match DiffusionGemma's text
config defaults (pad 0, eos 1, bos 2).
"""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

PAD, EOS, BOS, UNK = "<pad>", "<eos>", "<bos>", "<unk>"
START_OF_TURN, END_OF_TURN = "<start_of_turn>", "<end_of_turn>"
SPECIAL_TOKENS = [PAD, EOS, BOS, UNK, START_OF_TURN, END_OF_TURN]

# A minimal Gemma-style turn format for instruction prompts (``instruct`` mode).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<start_of_turn>{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{{ message['content'] }}<end_of_turn>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def train_bpe_tokenizer(texts: Iterable[str], vocab_size: int, chat_template: bool = False) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE tokenizer on ``texts`` and wrap it for ``AutoTokenizer``.

    Byte-level means any text round-trips, whatever characters the writer types. ``chat_template``
    marks the checkpoint as instruction-tuned: only then does the editor offer instructions.
    """
    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    # No automatic bos/eos: the engine places special tokens itself.
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return wrap_tokenizer(tokenizer, chat_template)


def wrap_tokenizer(tokenizer: Tokenizer, chat_template: bool = False) -> PreTrainedTokenizerFast:
    """The ``transformers`` view of a raw ``tokenizers`` object, with our special tokens named."""
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token=PAD,
        eos_token=EOS,
        bos_token=BOS,
        unk_token=UNK,
        additional_special_tokens=[START_OF_TURN, END_OF_TURN],
        clean_up_tokenization_spaces=False,
    )
    if chat_template:
        fast.chat_template = CHAT_TEMPLATE
    return fast
