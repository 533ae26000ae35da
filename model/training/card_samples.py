"""The model card's samples of what the model wrote, unedited, and the limitations they and the figures show."""

from __future__ import annotations

from model.training.card_facts import ModelFacts
from model.training.data import ExampleMix


def _one_line(text: str) -> str:
    return text.replace("\n", " / ")


def sample_sections(facts: ModelFacts, report: dict) -> list[str]:
    """Sample fills and rewrites from the report, then the limitations."""
    left_to_right, polish_rounds, total_minutes = facts.left_to_right, facts.polish_rounds, facts.total_minutes
    fills = report["fills"]
    slots = report.get("fill_slots", 24)
    best = report.get("fills_best_of")
    rewritten = report.get("rewrite_figures")
    mix = ExampleMix()
    out: list[str] = []
    w = out.append
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
    trained = max(mix.prefix_lengths)
    cap = facts.extension.get("max_context_tokens")
    if cap is not None and cap <= trained:
        w(
            f"- Trained with prefixes of at most {trained} tokens, and Redraft's engine gives it no more "
            f"(`max_context_tokens` {cap}, whatever the writer's context budget): about {round(cap * 0.63, -1):.0f} "
            "words before a span (0.63 words a token on War and Peace), so a rewrite does not see the chapter's "
            "names and threads. With 2048 tokens, what the editor sends, 12 of the 40 drafts of ten War and "
            "Peace paragraphs (four each, after 20,000 characters) came back as a word or two (\"The.\"), none "
            "with 128; 40 held-out sentence rewrites after about 2,200 characters judged 40 (32-50) against 31 "
            "(27-36), and 40 fills after about 1,600 characters 28 against 30, a wash. The figures above were "
            "measured before the cap, after 600 characters (about 170 tokens), where it is a wash too: the "
            "editor's fills 30 (seam 92) against 31 (126), single draws 39 against 36, rewrites 31 against 32."
        )
    else:
        w(
            f"- Trained with prefixes of at most {trained} tokens: longer context (the engine allows "
            "more) is outside what it has seen and may not help, or may hurt."
        )
    w(
        "- English prose only; the Gutenberg books carry 19th-century attitudes and vocabulary; no instruction "
        "tuning (`instruct` mode is not meaningful with this model); no safety tuning of any kind."
    )
    w("- Evaluation figures are on a 2% held-out slice of the same sources, not on writers' own text.")
    return out
