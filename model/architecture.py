"""Building DiffusionGemma configs for Redraft's own small checkpoints and for tests.

The real 26B-A4B checkpoint ships its config; the built-in model and the tests' tiny models are
built here with the same classes, so they load through exactly the same code path.
"""

from __future__ import annotations

from dataclasses import dataclass

from transformers import DiffusionGemmaConfig, DiffusionGemmaTextConfig

# DiffusionGemmaEncoderModel always builds a vision tower. Text-only checkpoints get the smallest
# one the Gemma 4 vision config allows (a few thousand parameters), so the weights stay text.
MINIMAL_VISION_CONFIG = {
    "model_type": "gemma4_vision",
    "hidden_size": 8,
    "intermediate_size": 16,
    "num_hidden_layers": 1,
    "num_attention_heads": 1,
    "num_key_value_heads": 1,
    "head_dim": 8,
    "patch_size": 1,
    "position_embedding_size": 1,
}


@dataclass(frozen=True)
class TextModelShape:
    """The sizes that matter for a text-only DiffusionGemma (a Mixture-of-Experts like the real one)."""

    vocab_size: int
    hidden_size: int = 64
    num_hidden_layers: int = 2
    num_attention_heads: int = 2
    num_key_value_heads: int = 1
    head_dim: int = 32
    intermediate_size: int = 128
    num_experts: int = 4
    top_k_experts: int = 2
    moe_intermediate_size: int = 32
    sliding_window: int = 128
    canvas_length: int = 32
    full_attention_every: int = 2
    # Full-attention layers may use wider heads and fewer KV heads (the 26B-A4B: 512 and 2, keys shared
    # as values); None means the same as the sliding layers, which keeps config.json free of overrides.
    global_head_dim: int | None = None
    num_global_key_value_heads: int | None = None
    max_position_embeddings: int = 32_768


def build_config(shape: TextModelShape) -> DiffusionGemmaConfig:
    """A ``DiffusionGemmaConfig`` for a small text model; the last layer is always full attention."""
    layer_types = [
        "full_attention" if (i + 1) % shape.full_attention_every == 0 else "sliding_attention"
        for i in range(shape.num_hidden_layers)
    ]
    layer_types[-1] = "full_attention"
    text_config = DiffusionGemmaTextConfig(
        vocab_size=shape.vocab_size,
        hidden_size=shape.hidden_size,
        intermediate_size=shape.intermediate_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        num_key_value_heads=shape.num_key_value_heads,
        head_dim=shape.head_dim,
        global_head_dim=shape.global_head_dim or shape.head_dim,
        num_global_key_value_heads=shape.num_global_key_value_heads or shape.num_key_value_heads,
        num_experts=shape.num_experts,
        top_k_experts=shape.top_k_experts,
        moe_intermediate_size=shape.moe_intermediate_size,
        sliding_window=shape.sliding_window,
        layer_types=layer_types,
        max_position_embeddings=shape.max_position_embeddings,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=2,
    )
    return DiffusionGemmaConfig(
        text_config=text_config,
        vision_config=dict(MINIMAL_VISION_CONFIG),
        canvas_length=shape.canvas_length,
        # Text-only: image marker ids just past the vocabulary, so no text token is ever taken for one.
        image_token_id=shape.vocab_size,
        boi_token_id=shape.vocab_size + 1,
        eoi_token_id=shape.vocab_size + 2,
    )
