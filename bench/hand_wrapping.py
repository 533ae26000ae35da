"""How well ``model.edit.wrapping`` tells hand-wrapped paragraphs from paragraphs typed a line each.

    python bench/hand_wrapping.py                      # the first six Gutenberg books of the shared corpus
    python bench/hand_wrapping.py --books 12 --slack 0 2 4 6

Found: the books' paragraphs of three lines or more (Project Gutenberg wraps its texts by hand at about 70
columns) that the rule takes for hand-wrapped. Taken: paragraphs made of the same books' one-line sentences
(50-100 characters, three to six of them, one Enter apart, as a writer types paragraphs in the editor) that
it wrongly takes for hand-wrapped; their breaks would then be reflowed. For each slack (``HARD_WRAP_SLACK``).
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

from model.edit import wrapping

CORPUS = Path("/work/shared/corpus")
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--books", type=int, default=6)
    parser.add_argument("--slack", type=int, nargs="+", default=[0, 2, 4, 6, 8])
    parser.add_argument("--typed", type=int, default=2000, help="typed paragraphs to make")
    args = parser.parse_args(argv)
    books = sorted(args.corpus.glob("gutenberg_*.txt"))[: args.books]
    paragraphs = [p.replace("\r\n", "\n") for book in books for p in PARAGRAPH_BREAK.split(book.read_text())]
    wrapped = [lines for p in paragraphs if len(lines := p.strip("\n").split("\n")) >= wrapping.HARD_WRAP_MIN_LINES]
    sentences = [s for p in paragraphs if 50 <= len(s := " ".join(p.split())) <= 100
                 and wrapping.SENTENCE_END.search(s)]  # fmt: skip
    rng = random.Random(0)
    typed = [[rng.choice(sentences) for _ in range(rng.randint(3, 6))] for _ in range(args.typed)]
    kept = wrapping.HARD_WRAP_SLACK
    print(f"{len(books)} books: {len(wrapped)} wrapped paragraphs of 3+ lines, {len(typed)} typed ones")
    print(f"{'slack':>5} {'found':>14} {'taken':>12}")
    try:
        for slack in args.slack:
            wrapping.HARD_WRAP_SLACK = slack
            found = sum(bool(wrapping.wrap_width(lines)) for lines in wrapped)
            taken = sum(bool(wrapping.wrap_width(lines)) for lines in typed)
            print(f"{slack:>5} {found:>6} ({100 * found / max(1, len(wrapped)):4.1f}%) {taken:>6} of {len(typed)}")
    finally:
        wrapping.HARD_WRAP_SLACK = kept


if __name__ == "__main__":
    main()
