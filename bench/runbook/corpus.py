"""The text each training call carries (TinyStories and corpus-xl shards, xz), unpacked on the device the way
the training code reads the shared corpus, and the toy corpus of the dry run.
"""

from __future__ import annotations

import lzma
import shutil
from pathlib import Path
from typing import Any

from runbook.transfer import folder_bytes

# Corpus carried per training call: TinyStories (the story share of every batch) and corpus-xl shards,
# different books in each call so step B adds unseen ones: two 13 MiB shards a call (~24M tokens) is what
# the 64 MiB leave beside the tree (~21 MiB) and the wheels (~10 MiB). xz text is the densest form (~1.1
# bytes a token; the token ids as uint16 are 2, and xz'd ~1.4) and the device's 16 cores tokenize it in
# seconds. On a fresh machine train-b carries the checkpoint instead of part of its books (cold_resume).
CORPUS_A_SHARDS = ("books_00", "books_01")
CORPUS_B_SHARDS = ("books_02", "books_03")
STORY_FILES = ("tinystories_subset_maxme1.txt", "tinystories_train_head.txt")


def compress_to(source: Path, target: Path) -> None:
    with source.open("rb") as f, lzma.open(target, "wb", preset=6) as out:
        shutil.copyfileobj(f, out)


def prepare_corpus(carry: Path, shared: Path) -> dict[str, Any]:
    """``corpus-a`` and ``corpus-b``: TinyStories (xz) and the corpus-xl shards of each training call."""
    rows: dict[str, Any] = {}
    stories = carry / "stories-cache"
    stories.mkdir(parents=True, exist_ok=True)
    for name in STORY_FILES:
        if not (stories / f"{name}.xz").exists():
            compress_to(shared / "corpus" / name, stories / f"{name}.xz")
    for folder, shards in (("corpus-a", CORPUS_A_SHARDS), ("corpus-b", CORPUS_B_SHARDS)):
        target = carry / folder
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for name in STORY_FILES:
            shutil.copyfile(stories / f"{name}.xz", target / f"{name}.xz")
        for shard in shards:
            source = shared / "corpus-xl" / f"{shard}.txt.xz"
            shutil.copyfile(source, target / source.name)
        for text in ("SOURCE.md", "manifest.tsv"):  # the licence record travels with the books
            shutil.copyfile(shared / "corpus-xl" / text, target / f"corpus-xl-{text}")
        rows[folder] = {"files": sorted(p.name for p in target.iterdir()), "bytes": folder_bytes(target)}
    return rows


def head_of_shard(source: Path, target: Path, compressed_bytes: int) -> int:
    """The first books of a shard, as many as about ``compressed_bytes`` of xz hold (same format)."""
    with lzma.open(source, "rt", encoding="utf-8") as f:
        books = f.read().split("\n<|endoftext|>\n")
    ratio = source.stat().st_size / sum(len(b.encode()) for b in books)  # xz bytes per text byte
    kept: list[str] = []
    size = 0
    for book in books:
        size += len(book.encode())
        if size * ratio > compressed_bytes and kept:
            break
        kept.append(book)
    with lzma.open(target, "wt", encoding="utf-8", preset=6) as out:
        out.write("\n<|endoftext|>\n".join(kept))
    return len(kept)


def unpack_corpus(source: Path, target: Path) -> list[str]:
    """TinyStories as they are, each corpus-xl book as a file of its own (``xl_<shard>_<book>.txt``), so the
    training code reads them like the shared corpus and the held-out split (by file and section) stays the
    same whichever call unpacks them."""
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.txt.xz")):
        with lzma.open(path, "rt", encoding="utf-8") as f:
            text = f.read()
        stem = path.name[: -len(".txt.xz")]
        if stem.startswith("tinystories"):
            (target / f"{stem}.txt").write_text(text, encoding="utf-8")
            continue
        for index, book in enumerate(part for part in text.split("\n<|endoftext|>\n") if part.strip()):
            (target / f"xl_{stem}_{index:04d}.txt").write_text(book, encoding="utf-8")
    for path in source.glob("corpus-xl-*"):  # the books' sources and licence, kept beside the corpus
        shutil.copyfile(path, target.parent / path.name)
    return sorted(p.name for p in target.glob("*.txt"))


def toy_corpus(folder: Path, shard: str = "books_00", stories_too: bool = True) -> None:
    """TinyStories-like and book-like text in the carried formats (xz; books joined by end-of-text lines)."""
    folder.mkdir(parents=True, exist_ok=True)
    names, things = ["Lily", "Tom", "Mia", "Ben", "Sam", "Anna"], ["ball", "kite", "cat", "boat", "cake", "dog"]
    # Enough stories over 400 characters and book sections over 1,500 that the evaluation's 2% held out
    # holds both kinds.
    stories = "\n<|endoftext|>\n".join(
        f"One day, {names[i % 6]} went to the park with a {things[i % 6]}. {names[i % 6]} played for {i} hours. "
        f"The sun was warm and the birds sang in the tall trees by the pond. A dog ran after the {things[i % 5]}, "
        f"and everyone laughed. Then it began to rain, so they sat under a tree and shared a cake. Mom came with "
        f"a big red umbrella, and they all walked back along the river, singing a happy song about the rain. "
        f"When the sun went down {names[(i + 1) % 6]} said it was time to go home." for i in range(300)
    )  # fmt: skip
    if stories_too:
        with lzma.open(folder / "tinystories_toy.txt.xz", "wt", encoding="utf-8") as f:
            f.write(stories)
    books = []
    first = 0 if shard == "books_00" else 100
    for b in range(first, first + 100):
        paragraphs = [
            f"Paragraph {i} of book {b}. The old man walked slowly along the road to the {things[i % 6]} market,\n"
            f"thinking of the house where he had been young and of {names[(i + b) % 6]}." for i in range(80)
        ]  # fmt: skip
        books.append("\n\n".join(paragraphs))
    with lzma.open(folder / f"{shard}.txt.xz", "wt", encoding="utf-8") as f:
        f.write("\n<|endoftext|>\n".join(books))
