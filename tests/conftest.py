"""Shared fixtures: tiny random-weight DiffusionGemma checkpoints, built once per test session."""

from __future__ import annotations

import os

# Triton decides at import whether its kernels compile or run in the CPU interpreter, so the switch
# must be on before anything imports it. Only the fused NF4 kernel's tests use it (see
# tests/test_nf4_kernel.py); no code path picks that kernel on a CPU by itself.
os.environ.setdefault("TRITON_INTERPRET", "1")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from figures import FIGURES  # noqa: E402
from hub_stub import TINY_REPO, HubStub, serving  # noqa: E402

from model import Engine, LoadedModel, load  # noqa: E402
from model.checkpoint.tiny import build_tiny_checkpoint  # noqa: E402

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


@pytest.fixture(scope="module")
def served(tiny_checkpoint: Path) -> Iterator[HubStub]:
    """The hub stub serving the tiny checkpoint as ``TINY_REPO`` (the model manager's tests)."""
    yield from serving(TINY_REPO, tiny_checkpoint)



def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if FIGURES:
        terminalreporter.section("Redraft figures")
        for name, figure in FIGURES.items():
            terminalreporter.write_line(f"{name}: {figure}")
