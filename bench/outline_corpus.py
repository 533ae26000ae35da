"""The Outline of every book we have, to see what a change to the chapter rules (app/documents/chapters.py) does.

    python bench/outline_corpus.py --save /tmp/before.json      # before the change
    python bench/outline_corpus.py --compare /tmp/before.json   # after it: every book whose outline changed

Reads the 55 texts of ../shared/corpus and the 1,213 books of ../shared/corpus-xl (one book per
``<|endoftext|>``), as a .txt opened in the editor is outlined. Prints, per book, how many headings and levels
it has and the time taken; with ``--compare``, the headings a change took away and put in, book by book, and
how many books changed. The rules are heuristics tuned on these books: a change that mends one book's outline
is checked here against all of them before it lands (2026-12-07: 15 of 1,268 changed: 14 contents entries gone,
War and Peace's two epilogues found).
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.documents.chapters import chapters  # noqa: E402

SHARED = ROOT.parent / "shared"
Outline = list[tuple[int, int, str]]  # (line, level, title)


def books(shared: Path) -> Iterator[tuple[str, str]]:
    """(name, text) of every book: the corpus's files, then corpus-xl's shards' books as ``books_NN#index``."""
    for path in sorted((shared / "corpus").glob("*.txt")):
        yield path.name, path.read_text(encoding="utf-8")
    for shard in sorted((shared / "corpus-xl").glob("books_*.txt.xz")):
        with lzma.open(shard, "rt", encoding="utf-8") as stream:
            for index, book in enumerate(stream.read().split("\n<|endoftext|>\n")):
                yield f"{shard.name.removesuffix('.txt.xz')}#{index}", book


def outlines(shared: Path) -> tuple[dict[str, Outline], float]:
    found: dict[str, Outline] = {}
    spent = 0.0
    for name, text in books(shared):
        started = time.perf_counter()
        found[name] = [(chapter.line, chapter.level, chapter.title) for chapter in chapters(text.split("\n"))]
        spent += time.perf_counter() - started
    return found, spent


def _rows(outline: Outline) -> set[tuple[int, int, str]]:
    return {(int(line), int(level), str(title)) for line, level, title in outline}  # JSON read them as lists


def changes(before: dict[str, Outline], after: dict[str, Outline], shown: int = 6) -> int:
    """Print each book whose outline differs, with the headings taken away (-) and put in (+); how many."""
    changed = 0
    for name in before.keys() & after.keys():
        old, new = _rows(before[name]), _rows(after[name])
        if old == new:
            continue
        changed += 1
        print(f"== {name}: {len(old)} -> {len(new)} headings")
        for sign, rows in (("-", sorted(old - new)), ("+", sorted(new - old))):
            for line, level, title in rows[:shown]:
                print(f"   {sign} line {line}, level {level}: {title[:70]}")
            if len(rows) > shown:
                print(f"   {sign} … {len(rows) - shown} more")
    return changed


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shared", type=Path, default=SHARED, help="the folder holding corpus/ and corpus-xl/")
    p.add_argument("--save", type=Path, help="write every book's outline here (JSON)")
    p.add_argument("--compare", type=Path, help="a file --save wrote: print what changed since")
    args = p.parse_args(argv)
    found, spent = outlines(args.shared)
    heads = sum(map(len, found.values()))
    print(f"{len(found)} books, {heads:,} headings, {sum(1 for rows in found.values() if rows)} with any; "
          f"{spent:.1f} s in the rules")  # fmt: skip
    if args.save:
        args.save.write_text(json.dumps(found), encoding="utf-8")
    if args.compare:
        changed = changes(json.loads(args.compare.read_text(encoding="utf-8")), found)
        print(f"{changed} of {len(found)} books' outlines changed")


if __name__ == "__main__":
    main()
