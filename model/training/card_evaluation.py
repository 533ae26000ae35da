"""The model card's measured figures: accuracy, fills and rewrites as judged, expert routing, sampler defaults.

Figures are copied from the bench's JSON report (``bench/builtin_model_eval.py --json``) as they are.
"""

from __future__ import annotations

import json

from model.checkpoint.loading import REDRAFT_SAMPLER_FILE
from model.edit.canvas import REWRITE_LENGTH_SHARES, REWRITE_SLACK_FRACTION, candidate_widths
from model.edit.polish import polish_shares
from model.training.card_facts import ModelFacts


def _interval(figures: dict) -> str:
    """The bootstrap interval of a fill perplexity as a parenthesis, or "" for older reports without one."""
    interval = figures.get("ppl_fill_interval")
    return f" (90% bootstrap interval over gaps {interval[0]:.0f}-{interval[1]:.0f})" if interval else ""



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



def evaluation_sections(facts: ModelFacts, report: dict, sampler_note: str) -> list[str]:
    """The evaluation section, ending with the sampler defaults (and the sweep, when the report ran one)."""
    runs, config, text_cfg, gen, extension = facts.runs, facts.config, facts.text_cfg, facts.gen, facts.extension
    left_to_right, polish_rounds = facts.left_to_right, facts.polish_rounds
    fills = report["fills"]
    slots = report.get("fill_slots", 24)
    out: list[str] = []
    w = out.append
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
        f"Fills through the engine (`model.edit.engine`, default sampler settings below, {fills['fills']} held-out "
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
            f"{left_to_right:g} × their slot's index, in nats (`model/edit/sampling.py`): the text settles roughly "
            "in reading order, each word conditioned on settled words before it, instead of as scattered "
            "confident words with the holes filled in afterwards. The entropy bound still counts true "
            "entropies, and a very certain token further right can still be taken early."
        )
    if polish_rounds > 0:
        shares = ", ".join(f"{share:.0%}" for share in polish_shares(polish_rounds))
        sentences.append(
            f"The {polish_rounds} polish rounds (`model/edit/polish.py`) revisit a canvas once it has developed: "
            "the model re-reads it, and each candidate's least likely tokens (a share of its slots, one "
            f"round after another: {shares}) turn back into noise and are predicted again from everything "
            "else, which stays in place. Training on uniform noise teaches the model to spot and replace "
            "wrong tokens anywhere on a canvas, but the sampler itself never returns to a finished one."
        )
    bound = float(gen["sampler_config"]["entropy_bound"])
    if facts.wide_entropy_bound > bound:
        sentences.append(
            f"A draft wider than half the canvas ({facts.canvas} slots) accepts more a pass: its entropy bound rises "
            f"linearly from {bound:g} at half the canvas to {facts.wide_entropy_bound:g} at all of it "
            "(`wide_entropy_bound`, `model/edit/sampling.py`), where one bound for every width let a wide block "
            "accept a token or two a pass and run to its step cap."
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
    return out
