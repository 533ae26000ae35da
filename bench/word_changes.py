"""How long a draft's word-level changes take (model/edit/changes.py, #48), on prose from the shared corpus.

    python bench/word_changes.py [--corpus FILE] [--repeats 5]

For spans of 100 to 6,000 words (a rewrite's canvas holds at most 8,192 tokens): a "rewrite" that keeps about
85% of the words (the others dropped, replaced or joined by a word from elsewhere in the book), and a draft
sharing no order with the original (a span rewritten from scratch); then a span that repeats one word, the
case difflib's autojunk is on for. Prints the median milliseconds and the number of changes of each.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

from model.edit.changes import apply_changes, word_changes

CORPUS = Path("/work/shared/corpus/gutenberg_00084_frankenstein.txt")


def _rewrite(words: list[str], vocabulary: list[str], rng: random.Random) -> str:
    out: list[str] = []
    for word in words:
        roll = rng.random()
        if roll < 0.05:
            continue
        if roll < 0.12:
            out.append(rng.choice(vocabulary))
            continue
        out.append(word)
        if roll > 0.97:
            out.append(rng.choice(vocabulary))
    return " ".join(out)


def _time(original: str, draft: str, repeats: int) -> tuple[float, int]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        changes = word_changes(original, draft)
        times.append(time.perf_counter() - start)
    assert apply_changes(original, changes) == draft
    return statistics.median(times) * 1000, len(changes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    words = args.corpus.read_text(encoding="utf-8").split(" ")[5000:]
    rng = random.Random(1)
    print(f"{'words':>6}  {'kind':<24} {'ms':>8}  changes")
    for size in (100, 400, 1500, 6000):
        span = words[:size]
        original = " ".join(span)
        shuffled = span[:]
        rng.shuffle(shuffled)
        for kind, draft in (
            ("rewrite keeping ~85%", _rewrite(span, words[:5000], rng)),
            ("shuffled", " ".join(shuffled)),
        ):
            ms, count = _time(original, draft, args.repeats)
            print(f"{size:>6}  {kind:<24} {ms:>8.1f}  {count}")
    ms, count = _time("the x " * 3000, "the y " * 3000, args.repeats)
    print(f"{6000:>6}  {'one word repeated':<24} {ms:>8.1f}  {count}")


if __name__ == "__main__":
    main()
