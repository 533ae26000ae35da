"""The model card's account of how the model was made: data and licenses, tokenizer, architecture, recipe, runs.

Everything here is read from the model folder (config, training record) and the corpus's ``SOURCE.md``;
what only a run's history can tell comes from that run's ``card`` entry in the record.
"""

from __future__ import annotations

from pathlib import Path

from model.training.card_facts import ModelFacts, Run
from model.training.data import ExampleMix
from model.training.train import DEFAULT_MIX, example_mix


def _books(source_md: Path) -> list[str]:
    rows = []
    for line in source_md.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `gutenberg_"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            title, author, translator, number = cells[2], cells[3], cells[4], cells[5]
            by = f"{author}" + (f", tr. {translator}" if translator else "")
            rows.append(f"{title} ({by}; PG #{number})")
    return rows



def _mix_changes(runs: list[Run]) -> str:
    """The runs that trained on another mix, or on word-aligned examples (`train --mix`, `--word-aligned`)."""
    def shares(mix: ExampleMix) -> list[float]:
        total = mix.continuation + mix.infill + mix.gap
        return [mix.continuation / total, mix.infill / total, mix.gap / total]

    notes = []
    for number, run in enumerate(runs, 1):
        run_shares = shares(example_mix(run.args.get("mix", DEFAULT_MIX)))
        changed = run_shares != shares(ExampleMix())
        aligned = run.args.get("word_aligned") == "True"
        if not (changed or aligned):
            continue
        parts = []
        if changed:
            c, i, g = run_shares
            parts.append(f"{c:.0%} continuation, {i:.0%} infill, {g:.0%} gaps")
        if aligned:
            parts.append(
                "word-aligned examples (canvases start and spans end between words, never inside one, as "
                "a writer's cursor and selections do)"
            )
        notes.append(f"run {number}: " + "; ".join(parts))
    return (" Changed later — " + "; ".join(notes) + ".") if notes else ""


def training_sections(facts: ModelFacts, report: dict, source_md: Path) -> list[str]:
    """The card from its title to the commands that reproduce the training chain."""
    split, runs, config, text_cfg = facts.split, facts.runs, facts.config, facts.text_cfg
    args = runs[0].args
    mix = ExampleMix()
    books = _books(source_md)
    out: list[str] = []
    w = out.append
    w("# redraft-tiny\n")
    w(
        "Redraft's built-in text-diffusion model: a small DiffusionGemma (the architecture of the 26B "
        "checkpoint, `DiffusionGemmaForBlockDiffusion`, loaded through exactly the same code path) trained by "
        "the Redraft project from scratch on two CPU cores, so that rewriting and filling work offline on any "
        "laptop. It writes simple, story-like English; it is a fallback, not a substitute for the large model.\n"
    )
    w(
        f"- Parameters: {report['parameters'] / 1e6:.2f} M (float16 weights on disk, {facts.weights_mb:.1f} MB, "
        "computed in float32; "
        f"folder {facts.total_bytes / 1e6:.1f} MB)"
    )
    w(f"- Canvas: {config['canvas_length']} tokens; vocabulary {text_cfg['vocab_size']} (byte-level BPE)")
    w("- License of the weights: released with Redraft (Apache-2.0). The training data licenses are below.\n")

    w("## Training data and licenses\n")
    w("All of `/work/shared/corpus/` (55 files, 64.4 MiB of plain English prose), as listed in its `SOURCE.md`:\n")
    w(
        "- **TinyStories** (Ronen Eldan and Yuanzhi Li, 2023, arXiv:2305.07759), 5,314 stories in two files: "
        "`tinystories_subset_maxme1.txt` (3,000 stories, from GitHub `maxme1/tiny-stories`, "
        "`frontend/src/assets/tiny-stories.json` at `037e886f4ee35dca2c469b0da3638ebf2255e4cb`) and "
        "`tinystories_train_head.txt` (2,314 stories, the first 2 MiB of `TinyStories-train.txt`, from "
        "`gusjengis/toy-RNN`, `data/tinystories_sample.txt` at `e4c7ff8bba4ff7989e69a3a816ebe4b14813b41e`). "
        'License: **CDLA-Sharing-1.0**. A trained model and its outputs are "Results", on which CDLA-Sharing '
        "places no restriction; the stories themselves are not redistributed with the model (the held-out "
        "passages quoted in the samples below are short excerpts, shared under the same license)."
    )
    w(
        f"- **{len(books)} Project Gutenberg books** (GITenberg repositories, one per book; header, footer, "
        "license boilerplate, producer credits and transcriber notes removed by the corpus preparation), all "
        "published before 1927 and **public domain in the United States** (check other countries' law before "
        "relying on that elsewhere). The books: " + "; ".join(books) + ".\n"
    )
    w("Preparation in `model/training/data.py`:\n")
    w("- TinyStories split on `<|endoftext|>`: one story is one *section*.")
    w(
        "- Books: Gutenberg's hard 70-column wrapping undone (a paragraph becomes one line, as writers type), "
        "then cut into sections of about 6,000 characters at paragraph boundaries."
    )
    w(
        "- **Held-out slice: 2% of sections**, chosen by a hash of (seed 0, file, section index) — whole stories "
        "and whole book sections, never random lines. Training windows never cross a section, so no held-out "
        "text is seen in training, even as context."
    )
    w("")
    w("| split | sections | characters | tokens |")
    w("|---|---:|---:|---:|")
    for name in ("train_stories", "train_books", "heldout_stories", "heldout_books"):
        s = split[name]
        w(f"| {name.replace('_', ' ')} | {s['sections']:,} | {s['chars']:,} | {s['tokens']:,} |")
    w("")

    w("## Tokenizer\n")
    w(
        f"Byte-level BPE (`tokenizers`), {text_cfg['vocab_size']} tokens, trained on the training split only "
        f"(all training stories first, then book sections, {int(args['tokenizer_chars']) / 1e6:.0f} M "
        "characters in all). Saved as a standard `tokenizer.json` that `AutoTokenizer` loads. Special tokens "
        "with the ids DiffusionGemma's config expects: `<pad>` 0, `<eos>` 1, `<bos>` 2, `<unk>` 3, "
        "`<start_of_turn>` 4, `<end_of_turn>` 5. Any text round-trips byte for byte.\n"
    )

    w("## Architecture\n")
    w(
        f"`DiffusionGemmaConfig` built by `model/checkpoint/architecture.py`: {text_cfg['num_hidden_layers']} layers "
        f"(sliding-window {text_cfg['sliding_window']} and full attention alternating, the last full), hidden "
        f"size {text_cfg['hidden_size']}, {text_cfg['num_attention_heads']} query heads and "
        f"{text_cfg['num_key_value_heads']} key/value head of size {text_cfg['head_dim']}, a dense GeGLU MLP of "
        f"{text_cfg['intermediate_size']} plus a **Mixture-of-Experts block of {text_cfg['num_experts']} "
        f"experts, top-{text_cfg['top_k_experts']} routing**, expert size {text_cfg['moe_intermediate_size']} "
        "(like the real model, every layer has both). The encoder (prefix → KV cache) and the canvas decoder "
        "share their weights; input and output embeddings are tied; self-conditioning block as in the real "
        "model. The vision tower is the minimal one (a few hundred parameters) because the class always "
        "builds one.\n"
    )

    w("## Training recipe\n")
    w(
        "Uniform-state discrete diffusion through the real `DiffusionGemmaForBlockDiffusion` forward: the "
        "encoder writes `[bos] + prefix` into the KV cache, the decoder denoises the canvas (`model/training/"
        "objective.py`).\n"
    )
    w(
        "- **Noise**: per canvas, t ~ U(0.02, 1); every free slot becomes a uniformly random token (whole "
        "vocabulary, as the sampler initialises canvases) with probability t. Loss: cross-entropy of the clean "
        "token at free slots only."
    )
    w(
        "- **Self-conditioning** on 50% of steps: a first decoder pass without it (no gradient); its logits, "
        "divided by a temperature drawn from [0.4, 1.0] (the range the sampler's temperature schedule feeds "
        "back), go into the second pass, which is trained. Pinned positions get a zeroed signal through "
        "`model.runtime.conditioning.zero_self_conditioning_at`, the helper the engine uses."
    )
    w(
        f"- **Example mix** (per canvas): {mix.continuation:.0%} continuation (all {config['canvas_length']} "
        f"slots free), {mix.infill:.0%} in-place infill (1..{config['canvas_length'] // 2} free slots, then "
        f"the real suffix pinned clean, then `eos`/`pad` pinned if the document ends), {mix.gap:.0%} "
        "variable-length gaps (the free slots hold the span then `pad`, so `fill` can stop early). "
        "Continuation gets the largest share because it teaches plain language modelling, which everything "
        "else needs at this size; infill matches how the engine pins suffixes; the gap share is enough for "
        "the model to learn to leave surplus slots empty."
        + _mix_changes(runs)
    )
    w(
        f"- **Prefix lengths** (one per batch, so batches need no padding): {list(mix.prefix_lengths)} tokens "
        f"with weights {list(mix.prefix_weights)}; 0 means the canvas starts the document."
    )
    w(
        "- **Sources**: a fixed share of canvases from TinyStories (per run, below), the rest from the books — "
        "TinyStories is weighted far above its 7% share of the tokens because a model this small learns its "
        "simple, regular English much faster, and that is what makes short fills readable."
    )
    w(
        f"- **Optimiser**: AdamW (β = 0.9, 0.95, weight decay {args['weight_decay']} on matrices), linear warmup "
        "then cosine decay to 10% of the peak learning rate over the run's planned steps, gradient clipping at "
        "1.0. Optional load-balancing loss on the routers (Switch-style, weight below)."
    )
    # What changed in the compute along the chain (how the size was chosen, later speed-ups) is history:
    # each run's record says it.
    notes = "".join(" " + run.card["compute"] for run in runs if "compute" in run.card)
    w(
        f"- **Compute**: {sum(r.step for r in runs):,} steps, {sum(r.tokens for r in runs):,} canvas tokens "
        f"(plus their prefixes) in {facts.total_minutes:.0f} minutes on 2 shared CPU cores, in {len(runs)} "
        "run(s), each later one starting from the previous one's exported weights (`train --init-from`)."
        + notes
        + "\n"
    )
    w(
        "| run | steps | canvas tokens | minutes | story share | peak lr | warmup | planned steps | router aux "
        "| threads | seed | train loss first → last | last held-out loss |"
    )
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for index, run in enumerate(runs, 1):
        first, last = run.train_losses[0], run.train_losses[-1]
        held = run.heldout_losses[-1]
        a = run.args
        w(
            f"| {index} | {run.step:,} | {run.tokens:,} | {run.minutes:.0f} | {float(a['story_weight']):.2f} | "
            f"{a['lr']} | {a['warmup_steps']} | {a['max_steps']} | {a.get('router_aux_weight', '0.0')} | "
            f"{a['threads']} | {a['seed']} | {first['loss']} → {last['loss']} | {held['heldout_loss']} |"
        )
    w(
        "\nHeld-out loss is on fixed held-out batches drawn with each run's own story share, so it compares "
        "checkpoints within a run; the evaluation below compares models. Held-out loss by step: "
        + "; ".join(
            f"run {i}: " + ", ".join(f"{h['heldout_loss']} at {h['step']}" for h in run.heldout_losses)
            for i, run in enumerate(runs, 1)
        )
        + ".\n"
    )
    stopped = [run.card["stopped"] for run in runs if "stopped" in run.card]
    w(
        "".join(sentence + " " for sentence in stopped)
        + ("Later runs" if stopped else "Runs")
        + " stop at their planned step or at `--max-minutes`, whichever comes first "
        "(a time limit makes a run's length depend on the machine). Every run is deterministic given its "
        "arguments, so this reproduces the chain:\n"
    )
    w("```")
    w("# optional, speed only: export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4")
    for index, run in enumerate(runs):
        if index:
            previous = f"runs/export-{index}"
            w(f"python -m model.training.export --run-dir {runs[index - 1].run_dir} --out {previous}")
        for command in run.commands(**({"init_from": previous} if index else {})):
            w(command)
    w(f"python -m model.training.export --run-dir {runs[-1].run_dir} --out resources/models/redraft-tiny")
    w("```\n")
    return out
