"""Write ``MODEL_CARD.md`` for the exported model from the bench report and the model's training record.

    python -m model.training.card --model resources/models/redraft-tiny --report runs/eval.json

The record is the model folder's ``training_runs.json``, written by the export: every run in order, the
first trained from scratch, each later one started from the export of the one before
(``train --init-from``); the card reports the whole chain.

Figures, fills and rewrites are copied from the bench's JSON report as they are (never edited); the
data section is built from the corpus's ``SOURCE.md`` so titles, licenses and commits stay exact.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from model.canvas import REWRITE_LENGTH_SHARES, REWRITE_SLACK_FRACTION, candidate_widths
from model.loading import REDRAFT_SAMPLER_FILE, REDRAFT_SAMPLER_KEYS, generation_defaults
from model.polish import polish_shares
from model.training.data import ExampleMix
from model.training.export import LINEAGE_FILE
from model.training.train import DEFAULT_MIX, example_mix

CORPUS_SOURCE = Path("/work/shared/corpus/SOURCE.md")
# The first run was extended once (see the card): planned steps, and the checkpoint it resumed from.
PLANNED_STEPS = 2400
RESUMED_AT = 1379
# The run from which training steps got their speed-ups (free-slot head, tcmalloc): same losses, faster.
FAST_STEPS_FROM_RUN = 4
# Arguments that shape the model: the same in every run of a chain, so stated once.
SHAPE_ARGS = (
    "hidden_size",
    "heads",
    "kv_heads",
    "head_dim",
    "intermediate_size",
    "experts",
    "top_k",
    "moe_intermediate_size",
    "canvas",
)
# Per-run arguments written into the reproduction commands, in this order.
RUN_ARGS = (
    "batch_size",
    "story_weight",
    "router_aux_weight",
    "lr",
    "warmup_steps",
    "threads",
    "seed",
    "mix",
    "max_minutes",
)


@dataclass(frozen=True)
class Run:
    """One training run of the chain: its arguments and its final checkpoint's counters."""

    run_dir: str
    args: dict
    step: int
    tokens: int
    minutes: float
    history: list[dict]

    @classmethod
    def from_record(cls, record: dict) -> Run:
        return cls(
            record["run_dir"], record["args"], record["step"], record["tokens"], record["minutes"], record["history"]
        )

    @property
    def train_losses(self) -> list[dict]:
        return [h for h in self.history if "loss" in h]

    @property
    def heldout_losses(self) -> list[dict]:
        return [h for h in self.history if "heldout_loss" in h]

    def command(self, **overrides: object) -> str:
        flags = [f"--run-dir {self.run_dir}"]
        if self.args.get("init_from") not in (None, "None"):
            flags.append(f"--init-from {overrides.pop('init_from', self.args['init_from'])}")
        flags += [f"--{k.replace('_', '-')} {self.args[k]}" for k in SHAPE_ARGS + RUN_ARGS if k in self.args]
        if self.args.get("word_aligned") == "True":
            flags.append("--word-aligned")
        flags += [f"--{k.replace('_', '-')} {v}" for k, v in overrides.items()]
        lines, line = [], "python -m model.training.train"
        for flag in flags:
            if len(line) + len(flag) > 100:
                lines.append(line + " \\")
                line = "   "
            line += " " + flag
        return "\n".join([*lines, line])


def _books(source_md: Path) -> list[str]:
    rows = []
    for line in source_md.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `gutenberg_"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            title, author, translator, number = cells[2], cells[3], cells[4], cells[5]
            by = f"{author}" + (f", tr. {translator}" if translator else "")
            rows.append(f"{title} ({by}; PG #{number})")
    return rows


def _interval(figures: dict) -> str:
    """The bootstrap interval of a fill perplexity as a parenthesis, or "" for older reports without one."""
    interval = figures.get("ppl_fill_interval")
    return f" (90% bootstrap interval over gaps {interval[0]:.0f}-{interval[1]:.0f})" if interval else ""


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


def _length_choice(best: dict, fills: dict, slots: int) -> str:
    """How the editor's candidates choose a gap's length, with the words per fill it gives."""
    widths = sorted(set(candidate_widths(slots, best["candidates"])), reverse=True)
    return (
        f" For a gap the candidates develop at different lengths ({', '.join(map(str, widths))} of the {slots} "
        "slots), each with the text after it pinned right behind its last slot, so the ranking chooses the "
        f"length as well: {best['mean_fill_words']:.1f} words per fill, where a single draw at {slots} slots "
        f"writes {fills['mean_fill_words']:.1f} and the original gaps hold {fills['mean_original_words']:.1f}."
    )


def _rewrite_figures(figures: dict) -> str:
    """The rewrite paragraph of the evaluation: fluency like the fills', then length and kept words."""
    low, high = figures["ppl_rewrite_interval"]
    lengths = ", ".join(f"{share * (1 + REWRITE_SLACK_FRACTION):.2g}" for share in REWRITE_LENGTH_SHARES)
    varied = (
        f"; with a suffix the candidates take about {lengths} times the sentence's tokens and the ranking "
        "chooses"
        if figures["candidates"] > 1
        else ""
    )
    return (
        f"Rewrites through the engine ({figures['rewrites']} held-out sentences, each rewritten in place at "
        f"strength {figures['strength']}, best of {figures['candidates']} as the editor does them{varied}): "
        f"trigram perplexity **{figures['ppl_rewrite']:.0f}** (90% bootstrap interval {low:.0f}-{high:.0f}), "
        f"the original sentences **{figures['ppl_original']:.0f}**; the seam alone "
        f"**{figures['ppl_rewrite_seam']:.0f}**, originals **{figures['ppl_original_seam']:.0f}**. A rewrite "
        f"comes out {figures['length_ratio']:.2f} times as long as its sentence and keeps "
        f"{figures['words_kept']:.0%} of its distinct words ({figures['passes_per_rewrite']:.1f} passes)."
    )


def _one_line(text: str) -> str:
    return text.replace("\n", " / ")


def read_lineage(model_dir: Path) -> tuple[dict, list[Run]]:
    """The data split and the runs behind the model folder's weights, from its ``training_runs.json``."""
    path = model_dir / LINEAGE_FILE
    if not path.exists():
        raise SystemExit(f"{path} is missing: export the model with `python -m model.training.export` first")
    lineage = json.loads(path.read_text())
    return lineage["split"], [Run.from_record(record) for record in lineage["runs"]]


def render(model_dir: Path, report: dict, source_md: Path = CORPUS_SOURCE, sampler_note: str = "") -> str:
    split, runs = read_lineage(model_dir)
    config = json.loads((model_dir / "config.json").read_text())
    gen = json.loads((model_dir / "generation_config.json").read_text())
    # Read (and validated) as the engine reads it; only the keys the folder sets are stated.
    loaded_defaults = generation_defaults(model_dir)
    extension = {key: loaded_defaults[key] for key in REDRAFT_SAMPLER_KEYS if key in loaded_defaults}
    left_to_right = float(extension.get("left_to_right_bias", 0.0))
    polish_rounds = int(extension.get("polish_rounds", 0))
    text_cfg = config["text_config"]
    args = runs[0].args
    total_bytes = sum(p.stat().st_size for p in model_dir.iterdir() if p.is_file())
    weights_mb = (model_dir / "model.safetensors").stat().st_size / 1e6
    fills = report["fills"]
    slots = report.get("fill_slots", 24)
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
        f"- Parameters: {report['parameters'] / 1e6:.2f} M (float32 weights, {weights_mb:.1f} MB; "
        f"folder {total_bytes / 1e6:.1f} MB)"
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
        f"`DiffusionGemmaConfig` built by `model/architecture.py`: {text_cfg['num_hidden_layers']} layers "
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
        "`model.conditioning.zero_self_conditioning_at`, the helper the engine uses."
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
    total_minutes = sum(r.minutes for r in runs)
    w(
        f"- **Compute**: {sum(r.step for r in runs):,} steps, {sum(r.tokens for r in runs):,} canvas tokens "
        f"(plus their prefixes) in {total_minutes:.0f} minutes on 2 shared CPU cores, in {len(runs)} "
        "run(s), each later one starting from the previous one's exported weights (`train --init-from`). "
        "The size was chosen by measuring throughput first: 4.8 M parameters ran about 1.5 s per step on one "
        "busy thread, 7.9 M about twice that."
        + (
            f" From run {FAST_STEPS_FROM_RUN} on, the trained pass computes the vocabulary head on the free slots "
            "only and tcmalloc is preloaded: the same losses, about 1.4x faster steps (0.42 → 0.30 s per step "
            "of 16 canvases on two idle cores)."
            if len(runs) >= FAST_STEPS_FROM_RUN
            else ""
        )
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
    w(
        f"Run 1 was planned for {PLANNED_STEPS} steps; when the shared machine turned out faster than measured, "
        f"it was stopped at its step-{RESUMED_AT} checkpoint and resumed with `--max-steps {args['max_steps']}` "
        "(the cosine schedule stretched from there: the learning rate stepped up from 7.1e-4 to 1.05e-3 and "
        "decayed again). Later runs stop at their planned step or at `--max-minutes`, whichever comes first "
        "(a time limit makes a run's length depend on the machine). Every run is deterministic given its "
        "arguments, so this reproduces the chain:\n"
    )
    w("```")
    w("# optional, speed only: export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4")
    w(runs[0].command(max_steps=PLANNED_STEPS, stop_at_step=RESUMED_AT))
    w(runs[0].command(max_steps=args["max_steps"]))
    for index in range(1, len(runs)):
        previous = f"runs/export-{index}"
        w(f"python -m model.training.export --run-dir {runs[index - 1].run_dir} --out {previous}")
        w(runs[index].command(init_from=previous, max_steps=runs[index].args["max_steps"]))
    w(f"python -m model.training.export --run-dir {runs[-1].run_dir} --out resources/models/redraft-tiny")
    w("```\n")

    w("## Evaluation (held-out slice)\n")
    w("`python bench/builtin_model_eval.py` prints all of these.\n")
    w(
        "Denoising accuracy — continuation canvases, each slot replaced by a random token with probability t, "
        "one forward pass, argmax:\n"
    )
    w("| t | accuracy, all slots | accuracy, replaced slots |")
    w("|---:|---:|---:|")
    for level, acc in report["denoising_accuracy"].items():
        w(f"| {float(level):.2f} | {acc['all']:.3f} | {acc['replaced']:.3f} |")
    inf = report["infill_accuracy"]
    w(
        f"\nInfill accuracy — span of 1..{config['canvas_length'] // 2} tokens fully replaced, prefix in the "
        f"cache, suffix pinned: **{inf['one_pass']:.3f}** of span tokens exact in one pass, "
        f"**{inf['self_conditioned']:.3f}** in a second, self-conditioned pass ({inf['span_tokens']} span "
        "tokens).\n"
    )
    w(
        f"Fills through the engine (`model.engine`, default sampler settings below, {fills['fills']} held-out "
        f"gaps of 4-14 words, {slots} slots offered, the model chooses the length):\n"
    )
    w(
        f"- tokens per forward: **{fills['tokens_per_forward']:.2f}**; passes per fill: "
        f"**{fills['passes_per_fill']:.1f}**; {fills['ms_per_pass']:.0f} ms per pass "
        "on two CPU cores"
        + (
            f" (the {polish_rounds} polish rounds included: a pass each, two decoder forwards each)"
            if polish_rounds
            else ""
        )
    )
    w(
        f"- words per fill {fills['mean_fill_words']:.1f} (the original gaps: {fills['mean_original_words']:.1f}); "
        f"empty fills: {fills['empty_fills']}"
    )
    w(
        "- fluency — perplexity under an independent word trigram model (interpolated absolute discounting "
        "with continuation unigrams, `model/training/ngram.py`, trained on the training split: all stories "
        "and 6 M characters of books), over the gap's words and the two words after it (so the seam counts): "
        f"fills **{fills['ppl_fill']:.0f}**{_interval(fills)}, original passages "
        f"**{fills['ppl_original']:.0f}**, the original "
        f"words shuffled **{fills['ppl_shuffled']:.0f}**. No small pretrained language model can be installed "
        "offline here, hence the n-gram judge; it rewards common, locally fitting words, so a fill can score "
        "*better* than the original while meaning less."
        + (
            f" The seam alone (the two words after the gap, in the fill's context): fills "
            f"**{fills['ppl_fill_seam']:.0f}**, originals **{fills['ppl_original_seam']:.0f}**."
            if "ppl_fill_seam" in fills
            else ""
        )
        + "\n"
    )
    best = report.get("fills_best_of")
    if best:
        w(
            f"The editor develops {best['candidates']} candidates side by side and shows the one the model "
            "rates best: the mean log-probability of its own tokens, re-read on the finished canvas, plus "
            "a small weight on how well it leads into the text after it (the first suffix tokens replaced by "
            "noise and predicted again). On the same "
            f"gaps, those fills score **{best['ppl_fill']:.0f}**{_interval(best)}"
            + (f", the seam alone **{best['ppl_fill_seam']:.0f}**" if "ppl_fill_seam" in best else "")
            + f" ({best['passes_per_fill']:.1f} passes per fill, "
            f"{best['ms_per_pass']:.0f} ms per pass for the batch, {best['empty_fills']} empty)."
            + (_length_choice(best, fills, slots) if best.get("vary_length") else "")
            + "\n"
        )
    rewritten = report.get("rewrite_figures")
    if rewritten:
        w(_rewrite_figures(rewritten) + "\n")
    if report.get("expert_usage"):
        balanced = [i for i, r in enumerate(runs, 1) if float(r.args.get("router_aux_weight", 0.0)) > 0]
        why = (
            ("Runs " if len(balanced) > 1 else "Run ")
            + f"{', '.join(map(str, balanced))} trained with a load-balancing loss on the routers, after run 1 "
            "(without one) had left some experts nearly unused."
            if balanced
            else "No run used a load-balancing loss (`--router-aux-weight`), and some experts may be nearly unused."
        )
        w(
            "Expert routing on held-out canvases (share of the top-2 routing slots each expert receives, per "
            f"decoder layer; an even split is {1 / text_cfg['num_experts']:.2f} each). {why}\n"
        )
        w("| layer | " + " | ".join(f"expert {e}" for e in range(len(report["expert_usage"][0]))) + " |")
        w("|---:|" + "---:|" * len(report["expert_usage"][0]))
        for layer, shares in enumerate(report["expert_usage"]):
            w(f"| {layer} | " + " | ".join(f"{x:.2f}" for x in shares) + " |")
        w("")
    # The defaults are always stated; the sweep table only when the report ran one.
    tuning = report.get("tuning") or []
    w("### Sampler defaults\n")
    defaults = ", ".join(
        f"`{k}` {gen[k]}"
        for k in ("max_denoising_steps", "t_min", "t_max", "stability_threshold", "confidence_threshold")
    )
    sentences = [f"`generation_config.json`: {defaults}, `entropy_bound` {gen['sampler_config']['entropy_bound']}."]
    if extension:
        sentences.append(
            f"`{REDRAFT_SAMPLER_FILE}`: "
            + ", ".join(f"`{k}` {v}" for k, v in extension.items())
            + f" (Redraft's extension{'s' if len(extension) > 1 else ''} of the sampler, which transformers' "
            "generation config cannot hold)."
        )
    if left_to_right > 0:
        sentences.append(
            "The left-to-right bias ranks a pass's tokens for acceptance by their entropy plus "
            f"{left_to_right:g} × their slot's index, in nats (`model/sampling.py`): the text settles roughly "
            "in reading order, each word conditioned on settled words before it, instead of as scattered "
            "confident words with the holes filled in afterwards. The entropy bound still counts true "
            "entropies, and a very certain token further right can still be taken early."
        )
    if polish_rounds > 0:
        shares = ", ".join(f"{share:.0%}" for share in polish_shares(polish_rounds))
        sentences.append(
            f"The {polish_rounds} polish rounds (`model/engine.py`) revisit a canvas once it has developed: "
            "the model re-reads it, and each candidate's least likely tokens (a share of its slots, one "
            f"round after another: {shares}) turn back into noise and are predicted again from everything "
            "else, which stays in place. Training on uniform noise teaches the model to spot and replace "
            "wrong tokens anywhere on a canvas, but the sampler itself never returns to a finished one."
        )
    if tuning:
        sentences.append(
            f"The sweep below runs on {tuning[0]['fills']} *other* held-out gaps (a different seed) than the "
            "figures above."
        )
    if sampler_note:
        sentences.append(sampler_note)
    w(" ".join(sentences) + "\n")
    if tuning:
        seams = all("ppl_fill_seam" in row for row in tuning)
        w(
            "| settings (changes from published defaults) | fill perplexity | "
            + ("seam | " if seams else "")
            + "passes | tokens/forward | words | empty |"
        )
        w("|---|---:|" + ("---:|" if seams else "") + "---:|---:|---:|---:|")
        for row in tuning:
            w(
                f"| {json.dumps(row['settings']) if row['settings'] else 'published defaults'} | "
                f"{row['ppl_fill']:.0f} | "
                + (f"{row['ppl_fill_seam']:.0f} | " if seams else "")
                + f"{row['passes_per_fill']:.1f} | {row['tokens_per_forward']:.2f} | "
                f"{row['mean_fill_words']:.1f} | {row['empty_fills']} |"
            )
        w("")
    w("## Sample fills (held-out passages, unedited)\n")
    shown = report.get("candidates", 1)
    best_of = f", the best of {shown} candidates as the editor shows it" if shown > 1 else ""
    w(
        "The text between `⟦` and `⟧` is what the model wrote into the gap (the engine's `fill`, default "
        f"settings, {slots} slots"
        + best_of
        + "); the original gap follows. Line breaks are shown as ` / `; nothing else is "
        "changed. The same for rewrites: the engine's `rewrite` of the sentence, in place.\n"
    )
    for i, f in enumerate(report["shown_fills"], 1):
        before, after = _one_line(f["prefix"][-200:]), _one_line(f["suffix"][:100])
        w(f"{i}. *{f['source']}* — …{before}⟦{_one_line(f['fill'])}⟧{after}…  ")
        w(f"   original: ⟦{_one_line(f['gap'])}⟧")
    w("\n## Sample rewrites (held-out sentences, unedited)\n")
    strength = report.get("rewrite_strength", 1.0)
    w(
        f"Rewrite strength {strength}: the first canvas holds the sentence with each token re-randomised with "
        f"probability {strength}"
        + (" (the editor's default)" if strength == 0.7 else "")
        + ", so a rewrite keeps part of the sentence and re-develops the rest.\n"
    )
    for i, r in enumerate(report["rewrites"], 1):
        w(f"{i}. *{r['source']}* ({r['passes']} passes)  ")
        w(f"   before: {_one_line(r['gap'])}  ")
        w(f"   after: {_one_line(r['rewrite'])}")
    w("\n## Limitations\n")
    w(
        f"- Trained for {total_minutes / 60:.1f} hours on two CPU cores: it writes simple, often ungrammatical, "
        "children's-story English, loses track of who is who, and knows little about the world. Fills are "
        "plausible in their immediate context far more often than they are right for the passage."
    )
    if left_to_right > 0 and best and best.get("vary_length"):
        w(
            f"- A single draw uses most of the slots offered ({fills['mean_fill_words']:.1f} words for {slots} "
            f"slots where the original gaps had {fills['mean_original_words']:.1f}): the model rarely ends a gap "
            f"early by itself. The editor's {best['candidates']} candidates at several lengths let the ranking "
            f"choose ({best['mean_fill_words']:.1f} words); from the command line pass "
            f"`--candidates {best['candidates']}` for the same."
        )
    elif left_to_right > 0:
        w(
            f"- Fills use most of the slots offered ({fills['mean_fill_words']:.1f} words for {slots} slots where the "
            f"original gaps had {fills['mean_original_words']:.1f}): with the left-to-right bias the model "
            "rarely ends a gap early. For a short gap, ask for fewer tokens (the editor's Fill gap popup)."
        )
    if polish_rounds > 0:
        w(
            "- Polishing makes fills more grammatical phrase by phrase and also more generic: re-developed words "
            "are the model's most likely ones, so fills lean on stock phrases and now and then repeat one "
            "(\"the world of the world\"). The trigram judge rewards exactly that, which is why polished fills "
            "score better than the original text without reading better than it."
        )
    w(
        "- `rewrite` re-develops the span at about its own length from a canvas that keeps part of it "
        "(strength < 1) or none of it (strength 1); at this size it does not reliably preserve the sentence's "
        "meaning"
        + (f" (it keeps {rewritten['words_kept']:.0%} of the sentence's words)." if rewritten else ".")
    )
    w(
        f"- Trained with prefixes of at most {max(mix.prefix_lengths)} tokens: longer context (the engine allows "
        "more) is outside what it has seen and may not help, or may hurt."
    )
    w(
        "- English prose only; the Gutenberg books carry 19th-century attitudes and vocabulary; no instruction "
        "tuning (`instruct` mode is not meaningful with this model); no safety tuning of any kind."
    )
    w("- Evaluation figures are on a 2% held-out slice of the same sources, not on writers' own text.")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, required=True, help="an exported model folder (with training_runs.json)")
    p.add_argument("--report", type=Path, required=True, help="JSON written by bench/builtin_model_eval.py")
    p.add_argument("--sampler-note", default="", help="how the sampler defaults were chosen, if not from the sweep")
    args = p.parse_args(argv)
    card = render(args.model, json.loads(args.report.read_text()), sampler_note=args.sampler_note)
    (args.model / "MODEL_CARD.md").write_text(card, encoding="utf-8")
    print(args.model / "MODEL_CARD.md")


if __name__ == "__main__":
    main()
