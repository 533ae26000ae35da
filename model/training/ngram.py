"""A smoothed word trigram model: the independent fluency judge for fills.

No small pretrained language model can be installed offline here, so fluency is measured with an
interpolated Kneser-Ney-style trigram (absolute discounting, continuation-count unigrams) trained on
the *training* split's text. It only judges word choice and local order, which is what distinguishes
a fluent fill from word salad at this model size.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|[0-9]+|[^\sa-z0-9]")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower().replace("’", "'"))


class TrigramLM:
    def __init__(self, texts: Iterable[str], discount: float = 0.75) -> None:
        self.d = discount
        self.tri: Counter[tuple[str, str, str]] = Counter()
        self.bi: Counter[tuple[str, str]] = Counter()
        for text in texts:
            padded = ["<s>", "<s>", *words(text)]
            self.tri.update(zip(padded, padded[1:], padded[2:], strict=False))
            self.bi.update(zip(padded[1:], padded[2:], strict=False))
        self.ctx2: Counter[tuple[str, str]] = Counter()
        self.types2: Counter[tuple[str, str]] = Counter()
        for (u, v, _), c in self.tri.items():
            self.ctx2[u, v] += c
            self.types2[u, v] += 1
        self.ctx1: Counter[str] = Counter()
        self.types1: Counter[str] = Counter()
        left_types: defaultdict[str, int] = defaultdict(int)
        for (v, w), c in self.bi.items():
            self.ctx1[v] += c
            self.types1[v] += 1
            left_types[w] += 1  # continuation count: in how many contexts w appears
        self.cont = dict(left_types)
        self.cont_total = sum(left_types.values())
        self.vocab = len(self.cont) + 1

    def _p_uni(self, w: str) -> float:
        return (self.cont.get(w, 0) + 0.5) / (self.cont_total + 0.5 * self.vocab)

    def _p_bi(self, v: str, w: str) -> float:
        n = self.ctx1.get(v, 0)
        if n == 0:
            return self._p_uni(w)
        c = self.bi.get((v, w), 0)
        return max(c - self.d, 0) / n + self.d * self.types1[v] / n * self._p_uni(w)

    def prob(self, u: str, v: str, w: str) -> float:
        n = self.ctx2.get((u, v), 0)
        if n == 0:
            return self._p_bi(v, w)
        c = self.tri.get((u, v, w), 0)
        return max(c - self.d, 0) / n + self.d * self.types2[u, v] / n * self._p_bi(v, w)

    def log_probs(self, context: Sequence[str], target: Sequence[str]) -> list[float]:
        """Natural-log probabilities of ``target`` words after ``context`` words."""
        history = ["<s>", "<s>", *context][-2:]
        out = []
        for w in target:
            out.append(math.log(self.prob(history[-2], history[-1], w)))
            history.append(w)
        return out

    def perplexity(self, context: Sequence[str], target: Sequence[str]) -> float:
        lps = self.log_probs(context, target)
        return math.exp(-sum(lps) / max(1, len(lps)))
