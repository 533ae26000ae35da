"""bench/gpu_runbook.py: the dry run of every step (what a lent GPU will run, at toy scale on CPU), and the
pieces it relies on: the limits of what comes back, split and join, slimmed wheels, the size rule, the
README's table and plan."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from argparse import Namespace
from pathlib import Path

import pytest

from model.training.train import lr_at  # first: model's warning filters are in place before torch loads

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import gpu_runbook as rb  # noqa: E402


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("out")
    env = {**os.environ, "OUT": str(out)}
    env.pop(rb.T0_ENV, None)
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_runbook.py"), "--dry-run"], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out, json.loads((out / "dry-run.json").read_text())


def test_dry_run_runs_every_step_and_everything_comes_back(dry_run: tuple[Path, dict]) -> None:
    out, summary = dry_run
    assert set(summary["steps"]) == {"bench26b", "engine-vs-library", "train-a", "train-b-warm", "train-b"}
    for step, row in summary["steps"].items():
        assert row["back_problems"] == [], step
        name = step.removesuffix("-warm")
        assert f"{name}.json" in row["files"] and f"{name}.log" in row["files"]
        assert len(row["files"]) <= rb.BACK_FILES
    # The wheels it carries: the real ones when prepared (installable for the device, importable), else the
    # mechanism on a made-up wheel.
    wheels = summary["wheels"]
    if wheels.get("synthetic"):
        assert any("over 16 MiB" in p for p in wheels["unslimmed_problems"])
        assert wheels["slim_problems"] == []
        assert not any("cuda118" in name for name in wheels["kept"])
        assert wheels["pieces"] == 3 and wheels["joined_identical"]
    else:
        assert wheels["problems"] == [] and wheels["import_check"]["ok"], wheels
    # The fill of the model reassembled from train-b's pieces, loaded by the engine.
    assert summary["reassembled_model"]["parameters"] > 0
    assert summary["plan"] == [call.invocation() for call in rb.CALLS]


def test_dry_run_26b_step_checks_the_kernel_and_measures_both_kernels(dry_run: tuple[Path, dict]) -> None:
    out, _ = dry_run
    data = json.loads((out / "dry-bench26b" / "bench26b.json").read_text())
    assert len(data["nf4_check"]) == 4 and all(row["ok"] for row in data["nf4_check"])
    rows = data["rows"]
    assert {(r["precision"], r["expert_kernel"]) for r in rows} == {("4bit", "fused"), ("4bit", "dequantize"),
                                                                    ("bf16", "none")}  # fmt: skip
    assert all(r["ms_per_pass"] > 0 and r["peak_bytes"] > 0 for r in rows)
    assert [line.split("|")[1].strip() for line in data["readme_rows"]] == ["4bit (NF4 experts, int8 linears)", "bf16"]
    targets = data["targets"]
    assert targets["measured"] and targets["context"] == 16
    fastest = min(r["ms_per_pass"] for r in rows if r["precision"] == "4bit" and r["prefix"] == 16)
    assert targets["tokens_per_pass_for_1500_tok_s"] == pytest.approx(1.5 * fastest, abs=0.1)


def test_dry_run_training_resumes_from_carried_pieces_and_exports(dry_run: tuple[Path, dict]) -> None:
    out, _ = dry_run
    a = json.loads((out / "dry-train-a" / "train-a.json").read_text())
    b = json.loads((out / "dry-train-b" / "train-b.json").read_text())
    assert a["chosen"]["name"] in {c.name for c in rb.TOY_LADDER}
    assert a["parameter_cap"]["checkpoint_room_bytes"] == 3 * rb.MIB  # prepare's arithmetic, carried with corpus-a
    assert a["parameter_cap"]["cap"] == int(3 * rb.MIB / 2.04)
    assert a["step_reached"] == a["chosen"]["max_steps"] // 2
    assert len(a["checkpoint"]["pieces"]) >= 2  # the dry run cuts small pieces to exercise the join
    assert b["resumed_from"].startswith("compact")  # the dry run's train-b runs as on a fresh machine
    assert b["step_reached"] == b["max_steps"] == a["chosen"]["max_steps"]
    assert b["corpus"]["added"] > 0  # the second call's books
    assert b["model_under_ship_limit"] and b["heldout"]["heldout_loss"] > 0
    evaluation = json.loads((out / "dry-train-b" / "eval.json").read_text())
    assert evaluation["fills"]["fills"] == 2
    ratio = evaluation["fills_best_of"]["ppl_fill"] / evaluation["fills"]["ppl_original"]
    assert b["eval"]["fill_over_original_perplexity"] == pytest.approx(ratio, rel=1e-2)


def test_dry_run_training_on_a_machine_still_warm_resumes_the_full_checkpoint(dry_run: tuple[Path, dict]) -> None:
    out, _ = dry_run
    a = json.loads((out / "dry-train-a" / "train-a.json").read_text())
    warm = json.loads((out / "dry-train-b-warm" / "train-b.json").read_text())
    cold = json.loads((out / "dry-train-b" / "train-b.json").read_text())
    assert warm["resumed_from"].startswith("full")
    assert warm["step_reached"] == a["chosen"]["max_steps"]
    assert warm["corpus"]["files"] > cold["corpus"]["files"]  # train-a's books are still there, and the new ones
    assert warm["heldout"] != cold["heldout"]  # Adam's moments kept, and more books: another run


def test_engine_vs_library_step_compares_the_same_tokens(dry_run: tuple[Path, dict]) -> None:
    out, _ = dry_run
    data = json.loads((out / "dry-engine-vs-library" / "engine-vs-library.json").read_text())
    (row,) = data["comparisons"]
    assert row["same_tokens"] and row["engine"]["passes"] == row["library"]["passes"]
    assert row["ratio_ms_per_pass"] == pytest.approx(row["engine"]["ms_per_pass"] / row["library"]["ms_per_pass"],
                                                     rel=1e-3)  # fmt: skip


def test_what_comes_back_is_checked_against_the_tools_limits(tmp_path: Path) -> None:
    assert rb.check_back(tmp_path) == []
    for i in range(9):
        (tmp_path / f"f{i}.json").write_text("{}")
    assert any("9 files" in p for p in rb.check_back(tmp_path))
    for i in range(9):
        (tmp_path / f"f{i}.json").unlink()
    (tmp_path / "big.bin").write_bytes(b"\0" * (rb.BACK_FILE_LIMIT + 1))
    (tmp_path / "odd name.txt").write_text("x")
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "deep.txt").write_text("x")
    problems = rb.check_back(tmp_path)
    assert any(p.startswith("big.bin") for p in problems)
    assert any(p.startswith("odd name.txt") for p in problems)
    assert any("2 folders down" in p for p in problems)


def test_split_and_join_round_trip_and_refuse_damage(tmp_path: Path) -> None:
    source = tmp_path / "blob.bin"
    source.write_bytes(os.urandom(2500))
    pieces = tmp_path / "pieces"
    pieces.mkdir()
    manifest = rb.split_file(source, pieces, "blob", piece_bytes=1000)
    assert [p["bytes"] for p in manifest["pieces"]] == [1000, 1000, 500]
    assert rb.join_pieces(manifest, pieces, tmp_path / "joined.bin").read_bytes() == source.read_bytes()
    damaged = bytearray((pieces / "blob.part01").read_bytes())
    damaged[0] ^= 1
    (pieces / "blob.part01").write_bytes(bytes(damaged))
    with pytest.raises(SystemExit, match="damaged"):
        rb.join_pieces(manifest, pieces, tmp_path / "again.bin")


def test_slimmed_wheels_keep_what_the_device_needs_and_a_consistent_record(tmp_path: Path) -> None:
    assert rb.slim_bitsandbytes("bitsandbytes/libbitsandbytes_cuda130.so")
    assert rb.slim_bitsandbytes("bitsandbytes/libbitsandbytes_cpu.so")
    assert not rb.slim_bitsandbytes("bitsandbytes/libbitsandbytes_cuda118.so")
    assert not rb.slim_bitsandbytes("bitsandbytes/libbitsandbytes_rocm64.so")
    assert rb.slim_bitsandbytes("bitsandbytes/functional.py")
    assert rb.slim_transformers("transformers/models/diffusion_gemma/modeling_diffusion_gemma.py")
    assert rb.slim_transformers("transformers/models/auto/tokenization_auto.py")
    assert rb.slim_transformers("transformers/models/__init__.py")
    assert not rb.slim_transformers("transformers/models/bert/modeling_bert.py")
    wheel = tmp_path / "transformers-9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name in ("transformers/__init__.py", "transformers/models/bert/x.py", "transformers/models/gemma4/y.py"):
            z.writestr(name, "pass\n")
        z.writestr("transformers-9.9.dist-info/RECORD", "transformers/__init__.py,,\ntransformers/models/bert/x.py,,\n"
                   "transformers/models/gemma4/y.py,,\ntransformers-9.9.dist-info/RECORD,,\n")  # fmt: skip
    slim = tmp_path / "slim" / wheel.name
    slim.parent.mkdir()
    assert rb._rewrite_wheel(wheel, slim, rb.slim_transformers)[0] == 1
    with zipfile.ZipFile(slim) as z:
        assert "transformers/models/bert/x.py" not in z.namelist()
        record = [line.split(",")[0] for line in z.read("transformers-9.9.dist-info/RECORD").decode().splitlines()]
    assert sorted(record) == sorted(z.namelist())  # RECORD lists exactly the members


def test_size_rule_takes_the_largest_candidate_trained_on_enough_tokens() -> None:
    probes = [
        {"name": "xs", "parameters": 6_000_000, "s_per_step": 0.05, "tokens_per_step": 30_000},
        {"name": "s", "parameters": 9_000_000, "s_per_step": 0.07, "tokens_per_step": 30_000},
        {"name": "m", "parameters": 12_000_000, "s_per_step": 0.09, "tokens_per_step": 30_000},
    ]
    # 600 s: m gets 200M tokens (16.7 per parameter, too few), s 257M (28.6): s.
    assert rb.choose_size([dict(p) for p in probes], 600, cap=13_000_000)["name"] == "s"
    assert rb.choose_size([dict(p) for p in probes], 3000, cap=13_000_000)["name"] == "m"
    assert rb.choose_size([dict(p) for p in probes], 3000, cap=10_000_000)["name"] == "s"  # the cap binds
    assert rb.choose_size([dict(p) for p in probes], 10, cap=13_000_000)["name"] == "xs"  # none enough: fastest
    # Every candidate of the real ladder fits the cap that prepare's carry arithmetic gives (~13M).
    assert all(rb.candidate_parameters(c, 8192, 64) < 13_000_000 for c in rb.LADDER)


def test_a_resume_without_optimizer_state_warms_the_rate_up_again() -> None:
    args = Namespace(lr=2e-3, warmup_steps=100, max_steps=1000, min_lr_ratio=0.1)
    assert lr_at(500, args, rewarm_from=500) == pytest.approx(lr_at(500, args) / 100)
    assert lr_at(599, args, rewarm_from=500) == pytest.approx(lr_at(599, args))
    assert lr_at(700, args, rewarm_from=500) == lr_at(700, args)


def test_readme_table_is_filled_from_the_steps_json(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text((ROOT / "README.md").read_text())
    gib = 2**30
    rows = [{"precision": "4bit", "expert_kernel": k, "weights_bytes": 14 * gib, "prefix": p, "ms_per_pass": ms,
             "peak_bytes": (15 + i) * gib} for k, base in (("fused", 20), ("dequantize", 50))
            for i, (p, ms) in enumerate(((0, base), (2048, base + 5), (8192, base + 20)))]  # fmt: skip
    data = {"device": "NVIDIA H100 80GB HBM3", "canvas": 256, "rows": rows}
    text = rb.write_readme_table(data, readme)
    line = next(line for line in text.splitlines() if line.startswith("| 4bit"))
    assert "15.0 / 16.0 / 17.0 GiB" in line
    assert "20 / 25 / 40 ms (fused)" in line and "50 / 55 / 70 ms (dequantize)" in line
    assert "17.1 GiB" in line  # the estimate stays
    assert text.count("Measured with `bench/gpu_runbook.py bench26b` on NVIDIA H100") == 1
    assert rb.write_readme_table(data, readme).count("Measured with") == 1  # idempotent


def test_readme_holds_the_session_plan() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "## On a lent GPU" in readme
    assert rb.plan_markdown() in readme, "README is behind `python bench/gpu_runbook.py plan`"


def test_training_that_breaks_off_goes_on_from_the_last_checkpoint(tmp_path: Path, monkeypatch) -> None:
    import torch

    def broken(_argv: list[str]) -> dict:
        raise RuntimeError("CUDA out of memory")

    monkeypatch.setattr(rb, "_train", broken)
    report = rb.Report(tmp_path / "out", "train-a")
    with pytest.raises(RuntimeError):  # nothing to go on from
        rb._train_keeping_checkpoint([], tmp_path / "run", report)
    (tmp_path / "run").mkdir()
    torch.save({"step": 7, "history": [{"step": 7, "heldout_loss": 5.0}]}, tmp_path / "run" / "checkpoint.pt")
    assert rb._train_keeping_checkpoint([], tmp_path / "run", report)["step"] == 7
    assert "out of memory" in json.loads(report.path.read_text())["training_error"]


class _Exec(Exception):
    pass


def test_on_the_device_the_carried_wheels_are_installed_once_and_the_step_re_executed(tmp_path: Path,
                                                                                       monkeypatch) -> None:
    import types

    monkeypatch.setitem(sys.modules, "transformers", types.ModuleType("transformers"))  # the image's: too old
    monkeypatch.delenv(rb.SITE_ENV, raising=False)
    monkeypatch.setattr(rb.tempfile, "gettempdir", lambda: str(tmp_path))
    commands: list[list[str]] = []
    monkeypatch.setattr(rb.subprocess, "run", lambda command, check: commands.append(command))

    def execve(path: str, argv: list[str], env: dict[str, str]) -> None:
        raise _Exec(env)

    monkeypatch.setattr(rb.os, "execve", execve)
    carry = tmp_path / "carry"
    with pytest.raises(SystemExit, match="holds no wheels"):
        rb.use_carried_wheels(carry, needs_bitsandbytes=False)
    (carry / "wheels").mkdir(parents=True)
    for name in ("transformers-5.24.0-py3-none-any.whl", "regex-2026.11.19-cp312-cp312-manylinux_2_17_x86_64.whl"):
        (carry / "wheels" / name).write_bytes(b"")
    with pytest.raises(_Exec) as raised:
        rb.use_carried_wheels(carry, needs_bitsandbytes=False)
    site = tmp_path / "redraft-site"
    (command,) = commands
    assert {"--no-index", "--no-deps", "--target", str(site)} <= set(command)
    assert sum(arg.endswith(".whl") for arg in command) == 2
    env = raised.value.args[0]
    assert env[rb.SITE_ENV] == str(site) and env["PYTHONPATH"].split(os.pathsep)[0] == str(site)
    # A machine still warm from the last call: installed already, so only the re-execution.
    for name in ("transformers-5.24.0.dist-info", "regex-2026.11.19.dist-info"):
        (site / name).mkdir(parents=True)
    with pytest.raises(_Exec):
        rb.use_carried_wheels(carry, needs_bitsandbytes=False)
    assert len(commands) == 1
    # Re-executed (or with the libraries in place): nothing more to do.
    monkeypatch.setenv(rb.SITE_ENV, str(site))
    rb.use_carried_wheels(carry, needs_bitsandbytes=False)
