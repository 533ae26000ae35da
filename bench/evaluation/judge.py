"""The fluency judge of the built-in model's evaluation: a word trigram model, and the figures it gives.

No small pretrained language model can be installed offline here, hence the n-gram judge, trained on the
training split; a text is judged in its place, with the two words after it so the seam counts.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from evaluation.cases import Case
from model.training.data import read_sections, split_sections
from model.training.ngram import TrigramLM, words


def fluency_lm(corpus: Path, seed: int, book_chars: int = 6_000_000) -> TrigramLM:
    """Trigram judge trained on the training split: every story and a fixed share of book text."""
    train, _ = split_sections(read_sections(corpus), 0.02, seed)
    stories = [s.text for s in train if s.is_story]
    books: list[str] = []
    used = 0
    for section in sorted((s for s in train if not s.is_story), key=lambda s: (s.index, s.source)):
        if used > book_chars:
            break
        books.append(section.text)
        used += len(section.text)
    return TrigramLM(stories + books)


def pooled_ppl(logs: list[list[float]]) -> float:
    flat = [x for row in logs for x in row]
    return math.exp(-sum(flat) / max(1, len(flat)))


def bootstrap_interval(logs: list[list[float]], seed: int, draws: int = 2000) -> tuple[float, float]:
    """5th and 95th percentiles of the pooled perplexity over gaps resampled with replacement.

    Forty gaps make a noisy figure (a few unlikely words move it a lot); the interval says how noisy,
    so two models are only called different when their figures are well apart.
    """
    rng = random.Random(seed)
    samples = sorted(pooled_ppl([rng.choice(logs) for _ in logs]) for _ in range(draws))
    return samples[int(0.05 * draws)], samples[int(0.95 * draws) - 1]


def judged(lm: TrigramLM, case: Case, span_words: list[str]) -> tuple[list[float], list[float]]:
    """Trigram log-probabilities of ``span_words`` in the case's place, followed by the two words after it
    (so the seam counts), and of those two words alone (the seam)."""
    junction = words(case.suffix)[:2]
    logs = lm.log_probs(words(case.prefix)[-2:], span_words + junction)
    return logs, logs[len(logs) - len(junction) :]
