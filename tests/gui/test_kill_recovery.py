"""SIGKILL the real editor while a writer types and while a rewrite develops; start it again; recover.

Each run of tests/gui/kill_driver.py is one Redraft process: it recovers what the previous one left
(through the real recovery dialog), then types until this test kills it at a random moment. What
comes back must be exactly the text typed up to some point (never a half-developed span), and no
character typed more than the autosave interval before the kill may be missing.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from figures import FIGURES
from kill_driver import SENTENCE, TEXT

from app.documents.autosave import AUTOSAVE_INTERVAL_MS

ROOT = Path(__file__).resolve().parents[2]
KILLS = 50
# The autosave timer fires on the GUI thread: allow it one more second to get its turn and write.
GRACE_S = AUTOSAVE_INTERVAL_MS / 1000 + 1.0


def _typed(log: Path) -> tuple[str, list[tuple[int, float]], bool]:
    """(the text the driver put in, [(characters typed, when)], whether a rewrite was running)."""
    base, times, rewrite = "", [], False
    for line in log.read_text().splitlines():
        word, _, when = line.partition(" ")
        if word == "base":
            base = SENTENCE + " "
        elif word == "rewrite":
            rewrite = True
        elif word.isdigit():
            times.append((int(word), float(when)))
    return base, times, rewrite


def test_killed_editors_lose_nothing_beyond_the_autosave_interval(tiny_checkpoint: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "REDRAFT_HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    rng = random.Random(2026)
    kill_times: dict[int, float] = {}
    rewrites = lost_beyond = torn = recovered_runs = worst_lag = 0
    for iteration in range(KILLS + 1):  # the last run only recovers what the 50th kill left
        rewrite = iteration % 3 == 1
        command = [sys.executable, str(ROOT / "tests" / "gui" / "kill_driver.py"), str(out), str(iteration),
                   str(tiny_checkpoint), *(["rewrite"] if rewrite else [])]
        driver = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        log = out / f"typed-{iteration}.log"
        deadline = time.monotonic() + 120
        while not (log.exists() and "start" in log.read_text()) and time.monotonic() < deadline:
            assert driver.poll() is None, driver.communicate()[1].decode()
            time.sleep(0.05)
        if iteration == KILLS:
            driver.kill()
            driver.wait()
        else:
            time.sleep(rng.uniform(0.2, 4.0))
            kill_times[iteration] = time.monotonic()
            driver.send_signal(signal.SIGKILL)
            driver.wait()
        if iteration == 0:
            continue
        # What this run recovered is what the previous run had typed, up to some point.
        previous = iteration - 1
        base, times, had_rewrite = _typed(out / f"typed-{previous}.log")
        rewrites += had_rewrite
        recovered_file = out / f"recovered-{iteration}.txt"
        recovered = recovered_file.read_text(encoding="utf-8") if recovered_file.exists() else None
        typed_text = base + TEXT
        if recovered is not None:
            recovered_runs += 1
            if not typed_text.startswith(recovered) or len(recovered) < len(base):
                torn += 1  # noise, a half rewrite, or text that was never typed
                continue
        kept = 0 if recovered is None else len(recovered) - len(base)
        settled = [count for count, when in times if when <= kill_times[previous] - GRACE_S]
        must_have = max(settled, default=0)
        lost_beyond += max(0, must_have - kept)
        typed_by_kill = max((count for count, when in times if when <= kill_times[previous]), default=0)
        worst_lag = max(worst_lag, typed_by_kill - kept)
    FIGURES["editor kills"] = (
        f"{KILLS} kills ({rewrites} while a rewrite was developing), {recovered_runs} recoveries (the other "
        "kills came before the first autosave), "
        f"{lost_beyond} characters lost beyond the {AUTOSAVE_INTERVAL_MS} ms autosave interval (+1 s grace), "
        f"{torn} half-rewritten or torn texts recovered, at most {worst_lag} characters typed after the last autosave"
    )
    assert torn == 0
    assert lost_beyond == 0  # also fails a kill after the first autosave that recovered nothing
