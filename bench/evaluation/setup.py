"""What the held-out benches share: their options, the engine on the CPU and the held-out sections."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from model import Engine, load
from model.training.data import Section, read_sections, split_sections

DEFAULT_CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def held_out_parser(description: str, cases_help: str) -> argparse.ArgumentParser:
    """--model, --corpus, --cases, --candidates, --seed, --threads and --json, as every such bench takes them."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=None, help="a model folder (default: the built-in model)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--cases", type=int, default=40, help=cases_help)
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser


def engine_and_held_out(args: argparse.Namespace) -> tuple[Engine, list[Section]]:
    """The engine on the CPU with ``args.threads``, and the corpus' held-out sections (the training split's rule)."""
    torch.set_num_threads(args.threads)
    engine = Engine(load(args.model, device="cpu"))
    _, held_out = split_sections(read_sections(args.corpus))
    return engine, held_out
