"""Shared fixtures: tiny random-weight DiffusionGemma checkpoints, built once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from model import Engine, LoadedModel, load
from model.tiny import build_tiny_checkpoint

# Tiny models gain nothing from threads, and on a busy 2-core machine extra threads make them far slower.
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="session")
def tiny_model(tiny_checkpoint: Path) -> LoadedModel:
    return load(tiny_checkpoint, device="cpu")


@pytest.fixture()
def engine(tiny_model: LoadedModel) -> Engine:
    return Engine(tiny_model)
