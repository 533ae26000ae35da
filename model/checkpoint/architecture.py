"""Building DiffusionGemma configs for Redraft's own small checkpoints and for tests.

The real 26B-A4B checkpoint ships its config; the built-in model and the tests' tiny models are
built here with the same classes, so they load through exactly the same code path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from transformers import DiffusionGemmaConfig, DiffusionGemmaTextConfig, PreTrainedConfig

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
    # Extra keywords that __post_init__ turns into per_layer_config; transformers' declared signature omits them.
    full_attention: dict[str, Any] = {
        "global_head_dim": shape.global_head_dim or shape.head_dim,
        "num_global_key_value_heads": shape.num_global_key_value_heads or shape.num_key_value_heads,
    }
    text_config = DiffusionGemmaTextConfig(
        vocab_size=shape.vocab_size,
        hidden_size=shape.hidden_size,
        intermediate_size=shape.intermediate_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        num_key_value_heads=shape.num_key_value_heads,
        head_dim=shape.head_dim,
        num_experts=shape.num_experts,
        top_k_experts=shape.top_k_experts,
        moe_intermediate_size=shape.moe_intermediate_size,
        sliding_window=shape.sliding_window,
        layer_types=layer_types,
        max_position_embeddings=shape.max_position_embeddings,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=2,
        **full_attention,
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


# --------------------------------------------------------------------------------------------------
# Typed access. transformers annotates these fields with every form its constructors accept (a dict or
# None for a sub-config, None for sizes a dense model lacks); a built DiffusionGemma config always holds
# the concrete value, so anything else is a broken config and is reported as one.


def text_config_of(config: DiffusionGemmaConfig) -> DiffusionGemmaTextConfig:
    """``config.text_config``, which ``__post_init__`` always turns into a ``DiffusionGemmaTextConfig``."""
    text = config.text_config
    if not isinstance(text, DiffusionGemmaTextConfig):
        raise TypeError(f"config.text_config is a {type(text).__name__}, not a DiffusionGemmaTextConfig")
    return text


def vision_config_of(config: DiffusionGemmaConfig) -> PreTrainedConfig:
    """``config.vision_config``, which ``__post_init__`` always turns into a config (Gemma 4's vision config)."""
    vision = config.vision_config
    if not isinstance(vision, PreTrainedConfig):
        raise TypeError(f"config.vision_config is a {type(vision).__name__}, not a PreTrainedConfig")
    return vision


def canvas_length_of(config: DiffusionGemmaConfig) -> int:
    """``config.canvas_length`` (transformers allows None; DiffusionGemma cannot sample without it)."""
    if config.canvas_length is None:
        raise ValueError("the DiffusionGemma config has no canvas_length")
    return config.canvas_length


def layer_types_of(text: DiffusionGemmaTextConfig) -> list[str]:
    """``text.layer_types`` (None only before ``__post_init__`` fills in the default pattern)."""
    if text.layer_types is None:
        raise ValueError("the DiffusionGemma text config has no layer_types")
    return text.layer_types


@dataclass(frozen=True)
class ExpertSizes:
    """The Mixture-of-Experts sizes of a text config (DiffusionGemma's text layers always have experts)."""

    num_experts: int
    top_k_experts: int
    moe_intermediate_size: int

    @classmethod
    def of(cls, text: DiffusionGemmaTextConfig) -> ExpertSizes:
        if text.num_experts is None or text.top_k_experts is None or text.moe_intermediate_size is None:
            raise ValueError("the DiffusionGemma text config lacks num_experts, top_k_experts or moe_intermediate_size")
        return cls(text.num_experts, text.top_k_experts, text.moe_intermediate_size)
