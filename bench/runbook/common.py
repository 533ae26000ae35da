"""What every step of the runbook shares: the device tool's limits, the paths, the step's clock, and its
report and log in ``$OUT`` (written as it goes, so a step that is killed still returns what it did).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[2]

MIB = 2**20
# The device tool's limits (/work/.library/device/README.md).
CARRY_LIMIT = 64 * MIB  # the working tree plus carried paths, per call
BACK_FILE_LIMIT = 16 * MIB
BACK_FILES = 8
BACK_TOTAL = 64 * MIB
CALL_LIMIT_S = 600
BACK_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
PIECE_BYTES = 15 * MIB  # pieces a little under the 16 MiB limit
BACK_PIECES = BACK_FILES - 3  # beside a step's JSON, its log and eval.json

CARRY = ROOT / ".gpu-carry"
WORK = ROOT / ".gpu-work"  # on the device: kept between calls while the machine stays warm
SHARED = ROOT.parent / "shared"
SHIPPED = ROOT / "resources" / "models" / "redraft-tiny"
SHIP_LIMIT = 150_000_000  # the shipped model folder, bytes (issue #41: up to 150 MB if the model earns it)
T0_ENV = "REDRAFT_RUNBOOK_T0"
SITE_ENV = "REDRAFT_RUNBOOK_SITE"


def elapsed_s() -> float:
    """Seconds since the step started (before any re-execution with the carried wheels)."""
    return time.time() - float(os.environ.get(T0_ENV, time.time()))


class Report:
    """The step's JSON in ``$OUT``, rewritten after every figure so a killed step still returns its results,
    and its log (everything printed) beside it."""

    def __init__(self, out: Path, name: str) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.path = out / f"{name}.json"
        self.data: dict[str, Any] = {"step": name, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self.save()

    def __setitem__(self, key: str, value: Any) -> None:
        self.data[key] = value
        self.save()

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def append(self, key: str, value: Any) -> None:
        self.data.setdefault(key, []).append(value)
        self.save()

    def save(self) -> None:
        self.data["elapsed_s"] = round(elapsed_s(), 1)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, default=str) + "\n")
        tmp.replace(self.path)


class _Tee(io.TextIOBase):
    def __init__(self, *streams: TextIO) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
            stream.flush()
        return len(text)


@contextlib.contextmanager
def logged(out: Path, name: str) -> Iterator[None]:
    """Everything the step prints also goes to ``$OUT/<name>.log``."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / f"{name}.log").open("a", encoding="utf-8") as log:
        tee = _Tee(sys.__stdout__ or sys.stdout, log)
        with contextlib.redirect_stdout(tee), contextlib.redirect_stderr(tee):  # type: ignore[type-var]
            yield


def say(text: str) -> None:
    print(f"[{elapsed_s():6.1f}s] {text}", flush=True)
