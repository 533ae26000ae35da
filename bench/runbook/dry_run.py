"""The dry run: every device step at toy scale on CPU, each in its own process through the runbook's command
line as on the device, what it returns checked against the limits; then the take-backs and the reassembled
model loaded by the engine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from runbook.common import CARRY, ROOT, T0_ENV, say
from runbook.corpus import toy_corpus
from runbook.plan import CALLS
from runbook.transfer import check_back, take_back
from runbook.wheels import check_wheels, slim_import_check, synthetic_wheel_check

# The entry point each step runs through, in a process of its own (as a device call does).
RUNBOOK = ROOT / "bench" / "gpu_runbook.py"
# bench26b's toy rows on a busy two-core CPU take longer than the 4 minutes the 15-minute plan gives it on
# the device; the dry run keeps its former 7 so every row is still exercised.
BUDGETS = {"bench26b": ["--budget-s", "420"]}


def _call(step: str, out: Path, carry: Path, work: Path) -> None:
    env = {**os.environ, "OUT": str(out), T0_ENV: str(time.time())}
    subprocess.run([sys.executable, str(RUNBOOK), step, "--dry-run", "--carry", str(carry), "--work", str(work)],
                   env=env, check=True)  # fmt: skip


def transplant_sessions(out: Path, tmp: Path, carry: Path, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Two lent sessions of the 15-minute plan's adaptation at toy scale: a toy Gemma 3 transplanted, packed
    into three parts, each call given only what its carry list names (on one warm machine per session), the
    adapted weights taken back and loaded by the engine; the second session resumes the first on a fresh machine."""
    from runbook.adapt import prepare_transplant, take_back_adapt, toy_transplant

    folder = toy_transplant(tmp / "transplant")
    toy_corpus(carry / "corpus-adapt")
    runs, resume, sessions = tmp / "runs", None, []
    for session in (1, 2):
        work = tmp / f"work-session-{session}"  # a fresh machine each session
        # Three parts as if each call had a third of the room (the real rooms hold the toy in one).
        whole = prepare_transplant(folder, carry, resume, limits=[1 << 40] * 3)["bytes"]
        size = whole // 3 + 1
        packed = prepare_transplant(folder, carry, resume, limits=[size, size, size])
        steps: dict[str, Any] = {}
        for number, call in enumerate(CALLS[:3], 1):
            call_carry = tmp / f"carry-s{session}-c{number}"
            for path in call.carry:
                source = ROOT / path if not path.startswith(".gpu-carry/") else carry / path.removeprefix(".gpu-carry/")
                if source.exists():
                    shutil.copytree(source, call_carry / path.removeprefix(".gpu-carry/"))
            step_out = out / f"dry-s{session}-{number}-{call.step}"
            if step_out.exists():
                shutil.rmtree(step_out)
            if session == 2 and call.step == "transplant-carry":
                # The first session ran these as processes; here in-process (same code, no start-up), so
                # the dry run stays within minutes on a busy machine.
                from runbook.adapt import step_transplant_carry
                from runbook.common import logged

                with logged(step_out, call.step):
                    step_transplant_carry(step_out, True, call.budget_s, call_carry, work)
            else:
                _call(call.step, step_out, call_carry, work)
            steps[f"{number}-{call.step}"] = {"files": sorted(p.name for p in step_out.iterdir()),
                                             "back_problems": check_back(step_out)}  # fmt: skip
        model = take_back_adapt(step_out, carry, runs)
        report = json.loads((step_out / "adapt-transplant.json").read_text())
        from model import EditRequest, Engine, load

        loaded = load(model, device="cpu")
        fill = Engine(loaded).run(EditRequest(prefix="One day, Lily went to the", suffix=" with a kite.",
                                              mode="fill", max_new_tokens=4, seed=0)).texts[0]  # fmt: skip
        sessions.append({"packed": packed, "steps": steps, "trained": report["trained"], "log": report["log"],
                         "scheme_back": report["scheme_back"], "fill": fill,
                         "profile": report["profile"], "batch_choice": report["batch_choice"],
                         "norms_choice": report["norms_choice"], "attention_choice": report["attention_choice"],
                         "recipe": report["recipe"]})  # fmt: skip
        summary["steps"].update({f"s{session}-{k}": v for k, v in steps.items()})
        if session == 1:
            # The next session's checkout is fresh: only main's history carries the pieces over (history.py).
            model = _through_history(step_out, tmp, folder, carry, runs, summary)
        folder, resume = model, runs / "adapt" / "resume.pt"
    return sessions


def _through_history(files_at: Path, tmp: Path, base: Path, carry: Path, runs: Path, summary: dict[str, Any]) -> Path:
    """The first session's pieces kept in a scratch repository's history, everything ignored wiped (a fresh
    checkout), the base transplant packed again and the pieces restored and merged: the model the second
    session starts from, checked against the one the first session's take-back made."""
    import subprocess

    from safetensors.torch import load_file

    from runbook.adapt import prepare_transplant, take_back_adapt
    from runbook.history import keep_adapted, restore_adapted

    repo = tmp / "main"
    repo.mkdir()
    for args in (["init", "-q"], ["config", "user.name", "dry run"], ["config", "user.email", "dry@run"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    (repo / "README.md").write_text("scratch\n")
    subprocess.run(["git", "-C", str(repo), "add", "README.md"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "start"], check=True)
    keeping = keep_adapted(files_at, runs / "adapt" / "model", repo)
    before = load_file(runs / "adapt" / "model" / "model.safetensors")
    shutil.rmtree(runs)
    prepare_transplant(base, carry, None, limits=[1 << 40] * 3)
    model = take_back_adapt(restore_adapted(tmp / "restored", repo), carry, runs)
    after = load_file(model / "model.safetensors")
    tree = subprocess.run(["git", "-C", str(repo), "ls-files"], check=True, capture_output=True, text=True).stdout
    identical = before.keys() == after.keys() and all(bool((before[k] == after[k]).all()) for k in before)
    summary["history"] = {"commit": keeping, "tree": tree.split(), "identical": identical}
    return model


def dry_run(out: Path) -> dict[str, Any]:
    """Every step at toy scale on CPU, each in its own process as on the device, each output checked
    against the limits of what comes back; then the take-backs and the reassembled model loaded."""
    out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"steps": {}}
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="redraft-dry-") as tmp_name:
        tmp = Path(tmp_name)
        carry, work = tmp / "carry", tmp / "work"
        toy_corpus(carry / "corpus-a")
        toy_corpus(carry / "corpus-b", "books_01", stories_too=False)
        shutil.copyfile(carry / "corpus-a" / "tinystories_toy.txt.xz", carry / "corpus-b" / "tinystories_toy.txt.xz")
        real = CARRY / "wheels"
        if any(real.glob("*.whl")):
            summary["wheels"] = check_wheels(real, tmp / "site")
            summary["wheels"]["import_check"] = slim_import_check(real, tmp / "slim")
        else:
            summary["wheels"] = synthetic_wheel_check(tmp / "synthetic")
        say(f"wheels: {json.dumps(summary['wheels'])[:400]}")
        summary["transplant_sessions"] = transplant_sessions(out, tmp, carry, summary)
        for step in ("bench26b", "engine-vs-library", "train-a", "train-b"):
            step_out = out / f"dry-{step}"
            if step_out.exists():
                shutil.rmtree(step_out)
            if step == "train-b":
                # First as on a machine still warm (train-a's folder there), then as on a fresh one: only
                # the pieces that came back, taken back as README says.
                warm_out = out / "dry-train-b-warm"
                if warm_out.exists():
                    shutil.rmtree(warm_out)
                shutil.copytree(work, tmp / "work-warm")
                subprocess.run(
                    [sys.executable, str(RUNBOOK), step, "--dry-run", "--carry", str(carry),
                     "--work", str(tmp / "work-warm")],
                    env={**os.environ, "OUT": str(warm_out), T0_ENV: str(time.time())}, check=True,
                )  # fmt: skip
                summary["steps"]["train-b-warm"] = {"files": sorted(p.name for p in warm_out.iterdir()),
                                                    "back_problems": check_back(warm_out)}  # fmt: skip
                take_back("train-a", out / "dry-train-a", carry, tmp / "runs")
                shutil.rmtree(work)
                # A fresh machine gets only what the cold plan carries: the checkpoint and the books beside it.
                cold = tmp / "carry-cold"
                for folder in ("resume", "corpus-b-cold"):
                    shutil.copytree(carry / folder, cold / folder)
                summary["cold_resume"] = json.loads((tmp / "runs" / "cold-resume.json").read_text())
            env = {**os.environ, "OUT": str(step_out), "TRITON_INTERPRET": "1", T0_ENV: str(time.time())}
            t = time.time()
            subprocess.run(
                [sys.executable, str(RUNBOOK), step, "--dry-run", "--carry", str(carry if step != "train-b" else cold),
                 "--work", str(work), *BUDGETS.get(step, [])],
                env=env, check=True,
            )  # fmt: skip
            summary["steps"][step] = {"seconds": round(time.time() - t, 1), "files": sorted(
                p.name for p in step_out.iterdir()), "back_problems": check_back(step_out)}  # fmt: skip
        model = take_back("train-b", out / "dry-train-b", carry, tmp / "runs")
        from model import EditRequest, Engine, load

        loaded = load(model, device="cpu")
        result = Engine(loaded).run(EditRequest(prefix="One day, Lily went to the", suffix=" with a kite.",
                                                mode="fill", max_new_tokens=4, seed=0))  # fmt: skip
        summary["reassembled_model"] = {"parameters": sum(p.numel() for p in loaded.model.parameters()),
                                        "fill": result.texts[0]}  # fmt: skip
    summary["plan"] = [call.invocation() for call in CALLS]
    summary["seconds"] = round(time.time() - started, 1)
    (out / "dry-run.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    return summary
