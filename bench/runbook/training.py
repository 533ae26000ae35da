"""Steps train-a and train-b: the next built-in model trained on the device in two calls. train-a measures
each size, picks one, trains and returns a compact checkpoint in pieces; train-b resumes (from the machine's
own checkpoint if still warm, else from the carried pieces), finishes, exports, and evaluates.
"""

from __future__ import annotations

import json
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runbook.common import BACK_PIECES, MIB, PIECE_BYTES, SHIP_LIMIT, SHIPPED, Report, elapsed_s, say
from runbook.corpus import unpack_corpus
from runbook.packing import pack_tensors, packed_bytes, packed_values, save_packed, unpack_tensors
from runbook.plan import STEP_BUDGET
from runbook.sizing import (
    GPU_RECIPE,
    LADDER,
    TOY_LADDER,
    TOY_RECIPE,
    candidate_parameters,
    choose_size,
    enough_tokens,
    parameter_cap,
)
from runbook.transfer import folder_bytes, join_pieces, split_file
from runbook.wheels import library_versions


def pack_to_fit(weights: dict[str, Any], room: int) -> dict[str, Any]:
    """The weights in int8 where they fit ``room`` bytes, else NF4 (the closer copy first)."""
    packed = pack_tensors(weights, "int8")
    return packed if packed_bytes(packed) <= room else pack_tensors(weights, "nf4")


def compact_checkpoint(run_dir: Path, target: Path, room: int) -> tuple[float, str]:
    """The resumable part of a checkpoint small enough to come back and be carried: packed weights (int8,
    else NF4, within ``room``), the sampler and noise states, counters and history; no optimizer state
    (train.py then warms the rate up again over fresh moments)."""
    import torch

    state = torch.load(run_dir / "checkpoint.pt", weights_only=False, map_location="cpu")
    compact = {key: value for key, value in state.items() if key != "optimizer"}
    compact["model"] = pack_to_fit(state["model"], room)
    compact["generator"] = state["generator"].cpu()
    torch.save(compact, target)
    return float(state["elapsed"]), str(compact["model"]["scheme"])  # seconds of training so far


def resume_from_compact(compact_path: Path, run_dir: Path) -> str:
    """train.py's checkpoint.pt from a carried compact one (float32 weights unpacked); its packing scheme."""
    import torch

    state = torch.load(compact_path, weights_only=False, map_location="cpu")
    scheme = str(state["model"]["scheme"])
    state["model"] = unpack_tensors(state["model"])
    torch.save(state, run_dir / "checkpoint.pt")
    return scheme


def corpus_listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.txt"))


def train_in_process(argv: list[str]) -> dict[str, Any]:
    from model.training.train import parse_args, train

    result: dict[str, Any] = train(parse_args(argv))
    return result


def train_keeping_checkpoint(
    argv: list[str], run_dir: Path, report: Report, train: Callable[[list[str]], dict[str, Any]] = train_in_process
) -> dict[str, Any]:
    """Train; if training breaks off (out of memory, a kernel), go on from the last checkpoint written, so
    the call still returns a model, and say so in the report."""
    try:
        return train(argv)
    except Exception as error:
        report["training_error"] = f"{type(error).__name__}: {error}"
        say(f"training stopped: {report['training_error']}; going on from the last checkpoint")
        import torch

        if not (run_dir / "checkpoint.pt").exists():
            raise
        state = torch.load(run_dir / "checkpoint.pt", weights_only=False, map_location="cpu")
        return {"step": state["step"], "history": state["history"]}


def _heldout(history: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((h for h in reversed(history) if "heldout_loss" in h), None)


def step_train_a(out: Path, dry_run: bool, budget_s: float, carry: Path, work: Path) -> dict[str, Any]:
    report = Report(out, "train-a")
    report["versions"] = library_versions()
    import torch

    cuda = torch.cuda.is_available() and not dry_run
    train_dir = work / "train"
    if train_dir.exists():
        shutil.rmtree(train_dir)  # a fresh start: step A always begins a new run
    run_dir, corpus = train_dir / "run", train_dir / "corpus"
    books = unpack_corpus(carry / "corpus-a", corpus)
    report["corpus"] = {"files": len(books), "bytes": folder_bytes(corpus)}
    say(f"corpus: {len(books)} files, {folder_bytes(corpus) / MIB:.0f} MiB of text")
    # The shipped tokenizer: the held-out split's text is tokenized as before, and no BPE training here.
    (run_dir / "tokenizer").mkdir(parents=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(SHIPPED / name, run_dir / "tokenizer" / name)
    from transformers import AutoTokenizer

    vocab = len(AutoTokenizer.from_pretrained(str(run_dir / "tokenizer")))
    canvas = 64  # the built-in model's; the dry run too (a 2-block rewrite with several candidates fails in the engine)
    recipe = [*(GPU_RECIPE if cuda else TOY_RECIPE), "--vocab-size", str(vocab), "--canvas", str(canvas)]
    ladder = LADDER if not dry_run else TOY_LADDER
    base = ["--run-dir", str(run_dir), "--corpus", str(corpus), *recipe]
    # Two caps: the bf16 folder under the ship limit, and the weights back in one call's pieces.
    # The dry run cuts small pieces (several, to exercise the join) in a small room (so NF4 is exercised).
    piece = PIECE_BYTES if not dry_run else 256 * 1024
    room = BACK_PIECES * piece if not dry_run else 2 * piece
    caps = parameter_cap(SHIP_LIMIT, BACK_PIECES * PIECE_BYTES, embedding=vocab * max(c.hidden for c in ladder))
    cap = caps["cap"]
    report["parameter_cap"] = {**caps, "ship_limit_bytes": SHIP_LIMIT, "back_room_bytes": room}

    probe_steps = 20 if not dry_run else 2
    batch = int(recipe[recipe.index("--batch-size") + 1])
    # The time both calls leave for training once the probes are done: this call's remainder (less ~75 s for
    # the held-out loss and the checkpoint), and train-b's (~180 s for wheels, corpus, pools, export, packing).
    b_seconds = float(STEP_BUDGET["train-b"] - 180) if not dry_run else 5.0

    def seconds_left() -> tuple[float, float]:
        return max(30.0, budget_s - elapsed_s() - (75 if not dry_run else 10)), b_seconds

    def probe_ladder(base: list[str]) -> list[dict[str, Any]]:
        """Largest first, stopping at the first size the time left trains on enough tokens: the sizes above
        it did not, and the smaller ones would only be chosen if it did not either."""
        probes = []
        for candidate in reversed(ladder):
            parameters = candidate_parameters(candidate, vocab, canvas)
            if parameters > cap:
                report.append("probes", {"name": candidate.name, "parameters": parameters, "skipped": "over the cap"})
                continue
            try:
                probe = train_in_process([*base, *candidate.flags(), "--probe", str(probe_steps)])
            except Exception as error:  # a kernel missing on this device for this shape, or memory: try the others
                report.append("probes", {"name": candidate.name, "error": f"{type(error).__name__}: {error}"})
                continue
            # Mean prefix of ExampleMix's lengths (58) and the bos token: the encoder's share of a step.
            row = {"name": candidate.name, "parameters": parameters, "s_per_step": probe["s_per_step"],
                   "tokens_per_step": batch * (canvas + 59), "flags": candidate.flags()}  # fmt: skip
            row["tokens_per_s"] = round(row["tokens_per_step"] / row["s_per_step"])
            say(f"probe {json.dumps(row)}")
            probes.append(row)
            report.append("probes", row)
            if enough_tokens(row, sum(seconds_left())) and not dry_run:
                break
        return probes

    probes = probe_ladder(base)
    if not probes and "--bf16" in base:  # bf16 autocast failed on every size: train in float32 (TF32)
        base = [a for a in base if a != "--bf16"]
        probes = probe_ladder(base)
    if not probes:
        raise SystemExit("every candidate failed its probe (see train-a.json)")
    a_seconds, b_seconds = seconds_left()
    chosen = choose_size(probes, a_seconds + b_seconds, cap)
    max_steps = max(10, int((a_seconds + b_seconds) / chosen["s_per_step"]))
    if dry_run:
        max_steps = 12
    argv = [*base, *chosen["flags"], "--max-steps", str(max_steps)]
    report["chosen"] = {**chosen, "max_steps": max_steps, "a_seconds": round(a_seconds), "b_seconds": b_seconds}
    report["train_args"] = [a for a in argv if a not in ("--run-dir", str(run_dir), "--corpus", str(corpus))]
    say(f"chosen {chosen['name']} ({chosen['parameters'] / 1e6:.1f}M parameters), {max_steps} steps in all")
    stop = ["--max-minutes", f"{a_seconds / 60:.3f}"] if not dry_run else ["--stop-at-step", str(max_steps // 2)]
    result = train_keeping_checkpoint([*argv, *stop], run_dir, report)
    report["step_reached"] = result["step"]
    report["heldout"] = _heldout(result["history"])
    (train_dir / "corpus.json").write_text(json.dumps(corpus_listing(corpus)))
    report["train_elapsed_s"], report["checkpoint_scheme"] = compact_checkpoint(run_dir, train_dir / "compact.pt",
                                                                               room)  # fmt: skip
    manifest = split_file(train_dir / "compact.pt", out, "checkpoint", piece)
    report["checkpoint"] = manifest
    (train_dir / "train-a.json").write_text(json.dumps(report.data, default=str))
    say(f"checkpoint: step {result['step']}, {manifest['bytes'] / MIB:.1f} MiB in {len(manifest['pieces'])} pieces")
    return report.data


def step_train_b(out: Path, dry_run: bool, budget_s: float, carry: Path, work: Path) -> dict[str, Any]:
    report = Report(out, "train-b")
    report["versions"] = library_versions()
    train_dir = work / "train"
    run_dir, corpus = train_dir / "run", train_dir / "corpus"
    warm = (run_dir / "checkpoint.pt").exists() and (train_dir / "train-a.json").exists()
    resume = carry / "resume"
    if warm:
        a = json.loads((train_dir / "train-a.json").read_text())
        say("warm machine: resuming train-a's full checkpoint (optimizer state included)")
    elif (resume / "train-a.json").exists():
        a = json.loads((resume / "train-a.json").read_text())
        if train_dir.exists():
            shutil.rmtree(train_dir)
        (run_dir / "tokenizer").mkdir(parents=True)
        for name in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copyfile(SHIPPED / name, run_dir / "tokenizer" / name)
        join_pieces(a["checkpoint"], resume, train_dir / "compact.pt")
        scheme = resume_from_compact(train_dir / "compact.pt", run_dir)
        say(f"fresh machine: resuming from the carried compact checkpoint ({scheme} weights, fresh optimizer moments)")
    else:
        raise SystemExit("no checkpoint: neither train-a's run on this machine nor carried pieces in "
                         f"{resume} (run `python bench/gpu_runbook.py take-back train-a FILES_AT` first)")  # fmt: skip
    report["resumed_from"] = "full checkpoint (warm machine)" if warm else "compact checkpoint (carried)"
    before = corpus_listing(corpus)
    for folder in ("corpus-b", "corpus-b-cold"):  # a warm machine gets two new shards, a fresh one what fits
        if (carry / folder).exists():
            unpack_corpus(carry / folder, corpus)
    after = corpus_listing(corpus)
    if after != before and (run_dir / "pools").exists():
        shutil.rmtree(run_dir / "pools")  # new books: the pools are tokenized again (same held-out rule)
    report["corpus"] = {"files": len(after), "added": len(set(after) - set(before)), "bytes": folder_bytes(corpus)}
    argv = ["--run-dir", str(run_dir), "--corpus", str(corpus), *a["train_args"]]
    # train.py's --max-minutes counts the run's whole training time, train-a's included.
    allowance = max(30.0, budget_s - elapsed_s() - 120) if not dry_run else 600.0
    minutes = (a["train_elapsed_s"] + allowance) / 60
    result = train_keeping_checkpoint([*argv, "--max-minutes", f"{minutes:.3f}"], run_dir, report)
    report["step_reached"] = result["step"]
    report["max_steps"] = int(a["train_args"][a["train_args"].index("--max-steps") + 1])
    report["heldout"] = _heldout(result["history"])
    report["history"] = [h for h in result["history"] if "heldout_loss" in h]

    from model.training.export import export

    model_dir = train_dir / "model"
    if model_dir.exists():
        shutil.rmtree(model_dir)
    export(run_dir, model_dir)
    for name in ("SOURCE.md", "manifest.tsv"):  # which books it learned from, and their licence
        source = corpus.parent / f"corpus-xl-{name}"
        if source.exists():
            shutil.copyfile(source, model_dir / f"corpus-xl-{name}")
    # What comes back: the folder without its float32 weights, and the weights packed (int8 where five
    # pieces hold them, else NF4); take-back writes them as bf16 model.safetensors, which model.load reads.
    import torch

    back = train_dir / "back" / "model"
    if back.parent.exists():
        shutil.rmtree(back.parent)
    shutil.copytree(model_dir, back, ignore=shutil.ignore_patterns("model.safetensors"))
    state = torch.load(run_dir / "checkpoint.pt", weights_only=False, map_location="cpu")
    room = BACK_PIECES * (PIECE_BYTES if not dry_run else 2 * MIB) - folder_bytes(back) - MIB
    packed = pack_to_fit(state["model"], room)
    save_packed(packed, back / "weights.packed.pt")
    parameters = packed_values(packed)
    size = folder_bytes(back) - (back / "weights.packed.pt").stat().st_size + 2 * parameters
    report["weights"] = {"scheme": packed["scheme"], "packed_bytes": packed_bytes(packed)}
    report["model_bytes"] = size  # the folder take-back writes (bf16 weights)
    report["model_under_ship_limit"] = size <= SHIP_LIMIT
    say(f"packed {packed['scheme']}: {packed_bytes(packed) / MIB:.1f} MiB; the bf16 folder will be {size / 1e6:.1f} MB")
    tar_path = train_dir / "model.tar"
    with tarfile.open(tar_path, "w") as tar:
        tar.add(back, arcname="model")
    report["model"] = split_file(tar_path, out, "model.tar", PIECE_BYTES if not dry_run else 2 * MIB)
    # The evaluation we have (bench/builtin_model_eval.py), on the held-out part of this run's corpus; the
    # figures comparable with the shipped model's are computed here on CPU afterwards (README).
    if elapsed_s() < budget_s - (120 if not dry_run else 0):
        import builtin_model_eval

        counts = ["--fills", "24", "--rewrites", "12", "--show-fills", "6", "--show-rewrites", "3", "--threads", "12"]
        if dry_run:
            counts = ["--fills", "2", "--rewrites", "2", "--show-fills", "1", "--show-rewrites", "1", "--batches",
                      "1", "--candidates", "2", "--threads", "1"]  # fmt: skip
        builtin_model_eval.main(["--model", str(model_dir), "--corpus", str(corpus), "--json", str(out / "eval.json"),
                                 *counts])  # fmt: skip
        figures = json.loads((out / "eval.json").read_text())
        best = figures.get("fills_best_of", figures["fills"])
        # The target is the editor's fills at most 1.2x the original's perplexity (there, a hidden
        # judge's; here the trigram judge's, on this run's held-out text).
        report["eval"] = {"file": "eval.json", "fill_over_original_perplexity": round(
            best["ppl_fill"] / figures["fills"]["ppl_original"], 3)}  # fmt: skip
    else:
        report.append("skipped", "evaluation: out of time (run it here on CPU)")
    return report.data
