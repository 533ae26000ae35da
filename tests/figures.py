"""Figures tests measure as they go (cases fuzzed, kills survived...), printed at the end of the run.

A module of its own, not conftest: tests/gui has a conftest too, and ``from conftest import`` would find
whichever was imported first.
"""

from __future__ import annotations

FIGURES: dict[str, str] = {}
