"""Steps transplant-carry and adapt-transplant (#47): the Gemma 3 transplant adapted on the device, resumed
across lent sessions.

Here, ``prepare-transplant`` packs the transplant (``model/training/transplant_build.py``'s folder, or the
last session's adapted model and its resume state) into one blob: the frozen embedding at int8, the rest
at int8 where the three calls' room holds it, else NF4, the text files xz'd. It is cut into three parts,
one per call's carry (``.gpu-carry/transplant-1..3``), each sized to what that call leaves beside the tree
(the first also carries the wheels, the last the adaptation's corpus). On the device the first two calls
(``transplant-carry``) check and keep their part in ``.gpu-work`` (kept while the machine stays warm);
the third (``adapt-transplant``) joins the parts, rebuilds the model, adapts it for the time left
(``model.training.adapt.run``, bf16 autocast) and returns the trained weights (the embedding stays the
transplant's and is not returned) packed int8 if they fit the pieces that come back, else NF4, with the
sampler and noise states. ``take-back adapt-transplant`` merges them here into ``runs/gpu/adapt/model``
(a folder ``model.load`` reads) and ``resume.pt``; the next session's ``prepare-transplant --resume``
carries that, so each lent GPU adds to the same run (optimizer moments start fresh; the rate warms up again).
"""

from __future__ import annotations

import io
import json
import lzma
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from model.checkpoint.building import MODEL_BUILDING, new_model
from runbook.common import BACK_PIECES, CARRY, CARRY_LIMIT, MIB, PIECE_BYTES, ROOT, Report, elapsed_s, say
from runbook.corpus import compress_to, head_of_shard, unpack_corpus
from runbook.packing import _int8, pack_tensors, packed_bytes, unpack_tensors
from runbook.transfer import folder_bytes, join_pieces, split_file, tree_bytes

PARTS = 3  # transplant-carry twice, then adapt-transplant with the last part
EMBEDDING = "model.decoder.embed_tokens.weight"  # the name save_pretrained keeps for the tied table
TEXT_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
              "source_vocabulary.json", "transplant.json", "GEMMA_TERMS.html", "NOTICE.md", "NOTICE",
              "MODIFIED")  # fmt: skip
# The adaptation's corpus: TinyStories and books from the shared corpus, xz (~6 MiB).
ADAPT_CORPUS_FILES = ("tinystories_subset_maxme1.txt", "gutenberg_00011_alice_s_adventures_in_wonderland.txt",
                      "gutenberg_00035_the_time_machine.txt", "gutenberg_00045_anne_of_green_gables.txt",
                      "gutenberg_00084_frankenstein.txt", "gutenberg_00158_emma.txt",
                      "gutenberg_00514_little_women.txt")  # fmt: skip
# Books of corpus-xl beside them, as many as about this much xz holds (82 books, ~7.9M tokens: the six books and
# the stories alone were 1.3M, which the first lent session read 1.4 times over; a session reads ~3.4M). A shard
# the training calls (train-a/train-b) do not carry; the size keeps call 3's part within its room, and leaves
# the tree room to grow (each byte of it is carried three times). 7.7 MiB, not 8.5: the 88th book alone is
# 0.65 MiB of xz; 87 books measured 9.83 MiB of corpus in all (2026-12-05), 82 are ~0.35 MiB less.
ADAPT_XL_SHARD = "books_04"
ADAPT_XL_BYTES = int(7.7 * MIB)
# Multiples of the recipe's batch a lent GPU times before it trains (the dry run: the first two). The first
# H100 session took 0.51 s a step at 32 canvases, where a 151M model's arithmetic is ~15 ms of an H100's: a
# step's fixed costs dwarf its work, so larger batches may buy tokens almost free. A larger one is taken only
# when it trains MIN_BATCH_GAIN times the tokens a second of the best before it. Counted here
# (bench/step_operators.py), a step runs ~23,000-26,000 operators whatever its batch: at ~20 us of launch and
# Python each, about the 0.51 s measured, so the growth goes on to MAX_BATCH.
BATCH_GROWTH = (1, 2, 4, 8, 16)
MIN_BATCH_GAIN = 1.15
MAX_BATCH = 512  # a resumed session starts from the batch the last one chose
# Fused norms (model.training.lean_step) are taken where a step is this much faster with them and the first
# batch's loss agrees with the model's own norms to this relative tolerance (bf16 autocast rounds both).
MIN_NORMS_GAIN = 1.03
NORMS_LOSS_TOLERANCE = 1e-2
# The same rule for leaving cuDNN's attention (PyTorch then takes its memory-efficient kernel): the second
# lent session's profile gave cuDNN's backward ~5 ms of host time a call, a third of a step, while the GPU
# itself was busy 24 ms of a 230 ms step.
MIN_ATTENTION_GAIN = 1.03
# Trials compare like with like: every trial step has the longest prefix the run draws (the run's shapes at
# their largest, so its peak memory too), timed after TRIAL_WARMUP steps. The second lent session's trials
# drew prefix lengths at random, and a shape cuDNN had not seen costs a plan of its own (hundreds of ms): its
# batch of 64 timed 2.7 times its 32, and the run kept 32 canvases a step on a GPU ~90 % idle.
TRIAL_WARMUP = 2
TRIAL_TIMED = 3
# The device's recipe: the CPU comparison's (README, "The transplant"), at a GPU's batch.
GPU_RECIPE = {"lr": 3e-4, "warmup_steps": 100, "max_steps": 30_000, "batch_size": 32, "canvas": 64,
              "distill": 0.0, "anneal_steps": 0, "max_prefix": 128}  # fmt: skip
TOY_RECIPE = {"lr": 1e-3, "warmup_steps": 2, "max_steps": 40, "batch_size": 2, "canvas": 16,
              "distill": 0.0, "anneal_steps": 0, "max_prefix": 16}  # fmt: skip


def rooms(carry: Path = CARRY, root: Path = ROOT) -> list[int]:
    """Bytes each call's part may take: 64 MiB less the tree, the first call's wheels and the last's corpus."""
    tree = tree_bytes(root)
    wheels = folder_bytes(carry / "wheels") if (carry / "wheels").exists() else 0
    corpus = folder_bytes(carry / "corpus-adapt") if (carry / "corpus-adapt").exists() else 0
    base = CARRY_LIMIT - tree - MIB
    return [base - wheels, base, base - corpus]


def prepare_corpus_adapt(carry: Path, shared: Path) -> dict[str, Any]:
    target = carry / "corpus-adapt"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name in ADAPT_CORPUS_FILES:
        stem = name.removesuffix(".txt")
        # unpack_corpus keeps tinystories* as they are and splits the rest into books; one book a file.
        compress_to(shared / "corpus" / name, target / f"{stem}.txt.xz")
    books = head_of_shard(shared / "corpus-xl" / f"{ADAPT_XL_SHARD}.txt.xz",
                          target / f"{ADAPT_XL_SHARD}_head.txt.xz", ADAPT_XL_BYTES)  # fmt: skip
    for text in ("SOURCE.md", "manifest.tsv"):  # the books' licence record travels with them
        shutil.copyfile(shared / "corpus-xl" / text, target / f"corpus-xl-{text}")
    return {"files": sorted(p.name for p in target.iterdir()), "bytes": folder_bytes(target), "xl_books": books}


def transplant_blob(folder: Path, resume: Path | None, scheme: str) -> dict[str, Any]:
    """The transplant (or adapted model) as one packable dict: embedding int8, the rest ``scheme``."""
    import torch
    from safetensors.torch import load_file

    state = load_file(str(folder / "model.safetensors"))
    embedding = state.get(EMBEDDING, state.get("lm_head.weight"))
    if embedding is None:
        raise SystemExit(f"{folder} has no embedding table ({EMBEDDING})")
    body = {k: v for k, v in state.items() if v.data_ptr() != embedding.data_ptr() and k != EMBEDDING}
    texts = {name: lzma.compress((folder / name).read_bytes()) for name in TEXT_FILES if (folder / name).exists()}
    return {
        "embedding": _int8(embedding),
        "embedding_shape": tuple(embedding.shape),
        "body": pack_tensors(body, scheme),
        "texts": texts,
        "resume": torch.load(resume, weights_only=False) if resume is not None else None,
    }


def blob_bytes(blob: dict[str, Any]) -> int:
    import torch

    buffer = io.BytesIO()
    torch.save(blob, buffer)
    return buffer.tell()


def prepare_transplant(folder: Path, carry: Path = CARRY, resume: Path | None = None,
                       limits: list[int] | None = None) -> dict[str, Any]:  # fmt: skip
    """Pack and cut the transplant into ``carry/transplant-1..3`` within each call's room (int8, else NF4)."""
    import torch

    limits = limits or rooms(carry)
    for scheme in ("int8", "nf4"):
        blob = transplant_blob(folder, resume, scheme)
        if blob_bytes(blob) <= sum(limits):
            break
    else:
        raise SystemExit(f"the transplant does not fit {PARTS} calls even at NF4 ({blob_bytes(blob) / MIB:.0f} MiB)")
    whole = carry / "transplant.pt"
    carry.mkdir(parents=True, exist_ok=True)
    torch.save(blob, whole)
    data = whole.read_bytes()
    manifest: dict[str, Any] = {"file": whole.name, "bytes": len(data), "scheme": scheme, "parts": []}
    start = 0
    for index, room in enumerate(limits, 1):
        part = carry / f"transplant-{index}"
        if part.exists():
            shutil.rmtree(part)
        part.mkdir()
        chunk = data[start : start + room]
        (part / "chunk.bin").write_bytes(chunk)
        start += len(chunk)
        piece = split_file(part / "chunk.bin", part, f"transplant.part{index}")
        (part / "chunk.bin").unlink()
        manifest["parts"].append(piece)
    if start < len(data):
        raise SystemExit("internal: the parts do not hold the whole transplant")
    import hashlib

    manifest["sha256"] = hashlib.sha256(data).hexdigest()
    for index in range(1, PARTS + 1):
        (carry / f"transplant-{index}" / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return {"scheme": scheme, "bytes": len(data), "rooms": limits,
            "parts": [folder_bytes(carry / f"transplant-{i}") for i in range(1, PARTS + 1)]}  # fmt: skip


def _keep_part(carry: Path, work: Path, report: Report) -> list[int]:
    """Copy this call's carried part(s) into ``work/adapt/parts`` (checked); which parts are there now."""
    parts = work / "adapt" / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    for index in range(1, PARTS + 1):
        folder = carry / f"transplant-{index}"
        if not folder.exists():
            continue
        manifest = json.loads((folder / "manifest.json").read_text())
        piece = manifest["parts"][index - 1]
        join_pieces(piece, folder, parts / f"part{index}.bin")  # checks every piece's sha256
        shutil.copyfile(folder / "manifest.json", parts / "manifest.json")
        report.append("kept_parts", index)
    return sorted(int(p.stem.removeprefix("part")) for p in parts.glob("part*.bin"))


def step_transplant_carry(out: Path, dry_run: bool, budget_s: float, carry: Path, work: Path) -> dict[str, Any]:
    report = Report(out, "transplant-carry")
    present = _keep_part(carry, work, report)
    report["parts_on_machine"] = present
    say(f"parts on this machine: {present} of {PARTS}")
    return report.data


def _rebuild(blob: dict[str, Any], folder: Path) -> Any:
    """The model folder from the blob (text files, weights float32) and the model itself."""

    folder.mkdir(parents=True, exist_ok=True)
    for name, data in blob["texts"].items():
        (folder / name).write_bytes(lzma.decompress(data))
    state = unpack_tensors(blob["body"])
    embedding = blob["embedding"]["q"].float() * blob["embedding"]["scale"].float().unsqueeze(1)
    state[EMBEDDING] = embedding.reshape(blob["embedding_shape"])
    from transformers import DiffusionGemmaConfig

    model = new_model(DiffusionGemmaConfig.from_pretrained(str(folder)))
    missing, unexpected = model.load_state_dict(state, strict=False)
    # Tied names (the encoder's twins of the decoder's layers, the head) are filled through their twin.
    own = model.state_dict()
    filled = {own[name].data_ptr() for name in state if name in own}
    missing = [m for m in missing if own[m].data_ptr() not in filled]
    if missing or unexpected:
        raise SystemExit(
            f"the carried weights do not fit the config: missing {missing[:5]}, unexpected {unexpected[:5]}"
        )
    model.tie_weights()
    return model.float()


def step_adapt(out: Path, dry_run: bool, budget_s: float, carry: Path, work: Path) -> dict[str, Any]:
    import torch

    from model.training.adapt import Recipe, run
    from model.training.data import read_sections, split_sections, tokenize_sections
    from runbook.wheels import library_versions

    report = Report(out, "adapt-transplant")
    report["versions"] = library_versions()
    present = _keep_part(carry, work, report)
    if present != list(range(1, PARTS + 1)):
        raise SystemExit(f"parts {present} of {PARTS} on this machine: run the transplant-carry calls first "
                         "(the machine must stay warm between them)")  # fmt: skip
    parts = work / "adapt" / "parts"
    manifest = json.loads((parts / "manifest.json").read_text())
    joined = work / "adapt" / "transplant.pt"
    with joined.open("wb") as f:
        for index in range(1, PARTS + 1):
            f.write((parts / f"part{index}.bin").read_bytes())
    import hashlib

    if hashlib.sha256(joined.read_bytes()).hexdigest() != manifest["sha256"]:
        raise SystemExit("the joined transplant does not match its manifest")
    blob = torch.load(joined, weights_only=False, map_location="cpu")
    model = _rebuild(blob, work / "adapt" / "model")
    report["scheme_carried"] = manifest["scheme"]
    report["parameters"] = sum(p.numel() for p in model.parameters())
    cuda = torch.cuda.is_available() and not dry_run
    device = "cuda" if cuda else "cpu"
    recipe = Recipe(**(GPU_RECIPE if cuda else TOY_RECIPE), seed=0)  # type: ignore[arg-type]
    if blob["resume"] is not None:
        recipe = Recipe(**blob["resume"]["recipe"])
    report["recipe"] = recipe.__dict__
    corpus = work / "adapt" / "corpus"
    if corpus.exists():
        shutil.rmtree(corpus)
    unpack_corpus(carry / "corpus-adapt", corpus)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(work / "adapt" / "model"))
    train_s, held_s = split_sections(read_sections(corpus), 0.02, 0)
    pools = {name: tokenize_sections([s for s in group if s.is_story == story], tokenizer)
             for name, group, story in (("ts", train_s, True), ("tb", train_s, False),
                                        ("hs", held_s, True), ("hb", held_s, False))}  # fmt: skip
    report["corpus_tokens"] = {k: int(v.lengths.sum()) for k, v in pools.items()}
    run_dir = work / "adapt" / "run"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    if blob["resume"] is not None:  # the last session's place: weights are the carried ones, fresh moments
        torch.save({**blob["resume"], "weights": {}, "optimizer": None}, run_dir / "checkpoint.pt")
    norms = pick_norms(model, [pools["ts"], pools["tb"]], recipe, device)
    report["norms_choice"] = norms
    recipe = replace(recipe, fused_norms=norms["fused_norms"])
    say(f"fused norms: {norms['fused_norms']} ({norms['own'].get('ms_per_step')} ms a step with the model's own, "
        f"{norms['fused'].get('ms_per_step', norms['fused'].get('error'))} fused)")
    attention = pick_attention(model, [pools["ts"], pools["tb"]], recipe, device)
    report["attention_choice"] = attention
    say(f"cuDNN attention: {attention['cudnn_attention']} ({attention['cudnn'].get('ms_per_step')} ms a step with "
        f"it, {attention['without_cudnn'].get('ms_per_step', attention['without_cudnn'].get('error'))} without)")
    choice = pick_batch_size(model, [pools["ts"], pools["tb"]], recipe, device, BATCH_GROWTH if cuda else (1, 2))
    report["batch_choice"] = choice
    recipe = replace(recipe, batch_size=choice["batch_size"])
    report["recipe"] = recipe.__dict__
    say(f"batch {recipe.batch_size}: " + ", ".join(f"{row['batch_size']}: {row.get('canvas_tokens_per_s', 'OOM')}"
                                                   for row in choice["tried"]))  # fmt: skip
    report["profile"] = profile_steps(model, [pools["ts"], pools["tb"]], recipe, device)
    say(f"a step: {report['profile']['ms_per_step']} ms")
    minutes = max(0.2, (budget_s - elapsed_s() - (60 if not dry_run else 5)) / 60)
    say(f"adapting {report['parameters'] / 1e6:.0f}M parameters on {device} for {minutes:.1f} min, from step "
        f"{blob['resume']['state']['step'] if blob['resume'] else 0}")  # fmt: skip
    started = time.monotonic()
    state = run(model, [pools["ts"], pools["tb"]], [pools["hs"], pools["hb"]], recipe, run_dir,
                eval_every=200 if cuda else 10, max_minutes=minutes, checkpoint_minutes=1e9, device=device,
                bf16=cuda, stop_at_step=None if cuda else (blob["resume"]["state"]["step"] if blob["resume"]
                                                          else 0) + 12)  # fmt: skip
    report["trained"] = {"steps": state.step, "tokens": state.tokens, "seconds": round(time.monotonic() - started),
                         "cudnn_attention": torch.backends.cuda.cudnn_sdp_enabled()}  # fmt: skip
    report["log"] = state.log
    checkpoint = torch.load(run_dir / "checkpoint.pt", weights_only=False, map_location="cpu")
    back = {k: v for k, v in checkpoint.items() if k not in ("weights", "optimizer")}
    room = BACK_PIECES * (PIECE_BYTES if not dry_run else 256 * 1024)
    for scheme in ("int8", "nf4"):
        back["weights"] = pack_tensors(checkpoint["weights"], scheme)
        if packed_bytes(back["weights"]) <= room - MIB // 4:
            break
    report["scheme_back"] = back["weights"]["scheme"]
    path = work / "adapt" / "back.pt"
    torch.save(back, path)
    report["back"] = split_file(path, out, "adapted", PIECE_BYTES if not dry_run else 256 * 1024)
    say(f"adapted to step {state.step}; back at {back['weights']['scheme']} in {len(report['back']['pieces'])} pieces")
    return report.data


def _throwaway_steps(model: Any, pools: list[Any], recipe: Any, device: str) -> Any:
    """Training steps on a throwaway copy of the model (the run's weights, sampler and noise stay untouched):
    call the result with a ``mark`` that ends each phase (batch, forward, backward, optimizer)."""
    import copy

    import torch

    from model.training.adapt import _on, mix_for, optimizer_for, train_step, trainable
    from model.training.data import ExampleSampler
    from model.training.lean_step import fuse_norms, silence_moe

    copied = copy.deepcopy(model).to(device).train()
    silence_moe(copied)  # as the run trains it
    if recipe.fused_norms:
        fuse_norms(copied)
    params = trainable(copied, recipe)
    optimizer = optimizer_for(params, recipe)
    mix = mix_for(recipe)
    # Every step the same shapes: the longest prefix the run draws (TRIAL_WARMUP's comment says why).
    longest = replace(mix, prefix_lengths=(max(mix.prefix_lengths),), prefix_weights=(1.0,))
    sampler = ExampleSampler(pools, [0.5, 0.5], recipe.canvas, recipe.batch_size, longest, seed=999)
    generator = torch.Generator().manual_seed(999)

    def step(mark: Any = lambda: None) -> dict[str, float]:
        # Made in line here, so the profile's batch phase says what a batch costs; the run makes each on a
        # thread while the step before trains (model.training.data.PrefetchedBatches).
        batch = _on(sampler.next_batch(), torch.device(device))
        mark()
        # At a step past any mask annealing: the engine's bidirectional canvas.
        return train_step(copied, batch, generator, recipe, 10**6, optimizer, params, bf16=device == "cuda",
                          mark=mark)  # fmt: skip

    return step


def _synchronize(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def _timed_steps(step: Any, device: str) -> tuple[float, dict[str, float]]:
    """Seconds a step of ``_throwaway_steps`` takes, ``TRIAL_TIMED`` timed after ``TRIAL_WARMUP`` (kernels
    compiled, attention planned, allocator warm), and what the first one's loss was made of (the untrained
    copy's, on the first batch and noise)."""
    first = step()
    for _ in range(TRIAL_WARMUP - 1):
        step()
    _synchronize(device)
    started = time.perf_counter()
    for _ in range(TRIAL_TIMED):
        step()
    _synchronize(device)
    return (time.perf_counter() - started) / TRIAL_TIMED, first


def _trial(model: Any, pools: list[Any], recipe: Any, device: str, fallible: bool) -> dict[str, Any]:
    """One variant's row: ms a step and the first batch's loss, or (if ``fallible``) the error it raised."""
    try:
        seconds, first = _timed_steps(_throwaway_steps(model, pools, recipe, device), device)
        return {"ms_per_step": round(seconds * 1000, 1), "loss": first["ce"]}
    except Exception as error:  # noqa: BLE001 - a candidate that fails in any way is simply not taken
        if not fallible:
            raise
        return {"error": f"{type(error).__name__}: {error}"[:300]}
    finally:
        _empty_cache(device)


def _takes(own: dict[str, Any], candidate: dict[str, Any], gain: float) -> bool:
    """A candidate is taken only if it ran, a step is ``gain`` times faster, and its first loss agrees with the
    baseline's within ``NORMS_LOSS_TOLERANCE`` (a kernel that computes something else is never taken)."""
    agrees = "loss" in candidate and abs(candidate["loss"] - own["loss"]) <= NORMS_LOSS_TOLERANCE * abs(own["loss"])
    return bool(agrees and "ms_per_step" in candidate and candidate["ms_per_step"] * gain <= own["ms_per_step"])


def pick_norms(model: Any, pools: list[Any], recipe: Any, device: str) -> dict[str, Any]:
    """Whether the run fuses its norms (``lean_step.fuse_norms``): only if ``_takes`` them at
    ``MIN_NORMS_GAIN``. An error in the fused path leaves the model's own norms."""
    own = _trial(model, pools, replace(recipe, fused_norms=False), device, fallible=False)
    fused = _trial(model, pools, replace(recipe, fused_norms=True), device, fallible=True)
    return {"own": own, "fused": fused, "fused_norms": _takes(own, fused, MIN_NORMS_GAIN)}


def pick_attention(model: Any, pools: list[Any], recipe: Any, device: str) -> dict[str, Any]:
    """Whether the run keeps cuDNN's attention kernel, PyTorch's first choice on a Hopper GPU, or leaves it
    (``torch.backends.cuda.enable_cudnn_sdp``, process-wide, so the run that follows trains as chosen): left
    only if ``_takes`` that at ``MIN_ATTENTION_GAIN``. On the CPU the flag changes nothing, so the dry run times
    the same kernel twice and proves the choosing, not the kernel."""
    import torch

    torch.backends.cuda.enable_cudnn_sdp(True)
    cudnn = _trial(model, pools, recipe, device, fallible=False)
    torch.backends.cuda.enable_cudnn_sdp(False)
    other = _trial(model, pools, recipe, device, fallible=True)
    keep = not _takes(cudnn, other, MIN_ATTENTION_GAIN)
    torch.backends.cuda.enable_cudnn_sdp(keep)
    return {"cudnn": cudnn, "without_cudnn": other, "cudnn_attention": keep}


def _empty_cache(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.empty_cache()


def pick_batch_size(model: Any, pools: list[Any], recipe: Any, device: str,
                    growth: tuple[int, ...] = BATCH_GROWTH) -> dict[str, Any]:  # fmt: skip
    """The batch (a multiple in ``growth`` of the recipe's) that trains the most canvas tokens a second here,
    each timed over two steps after one on a throwaway copy of the model; larger ones are tried while each
    pays ``MIN_BATCH_GAIN`` over the best so far, and one that runs out of memory ends the search."""
    import torch

    tried: list[dict[str, Any]] = []
    best: dict[str, Any] | None = None
    for factor in growth:
        trial = replace(recipe, batch_size=recipe.batch_size * factor)
        if factor > 1 and trial.batch_size > MAX_BATCH:
            break
        try:
            seconds, _ = _timed_steps(_throwaway_steps(model, pools, trial, device), device)
        except torch.cuda.OutOfMemoryError:
            tried.append({"batch_size": trial.batch_size, "oom": True})
            break
        finally:
            _empty_cache(device)  # the copy's memory back before the next size
        row = {"batch_size": trial.batch_size, "ms_per_step": round(seconds * 1000, 1),
               "canvas_tokens_per_s": round(trial.batch_size * trial.canvas / seconds)}  # fmt: skip
        tried.append(row)
        if best is not None and row["canvas_tokens_per_s"] < best["canvas_tokens_per_s"] * MIN_BATCH_GAIN:
            break
        best = row
    return {"tried": tried, "batch_size": best["batch_size"] if best is not None else recipe.batch_size}


def profile_steps(model: Any, pools: list[Any], recipe: Any, device: str, steps: int = 3) -> dict[str, Any]:
    """Where a training step's time goes, on a throwaway copy of the model (the run's weights, sampler and
    noise stay untouched): milliseconds per phase, then the operators that took the most time. The first lent
    H100 trained 2,048 canvas tokens in 0.51 s a step, about 15 times below the estimate; this says why."""
    import torch

    cuda = device == "cuda"
    step = _throwaway_steps(model, pools, recipe, device)

    def one_step(times: dict[str, float] | None) -> None:
        marks = [time.perf_counter()]

        def mark() -> None:
            _synchronize(device)
            marks.append(time.perf_counter())

        step(mark)
        if times is not None:
            phases = ("batch", "forward", "backward", "optimizer")
            for name, start, end in zip(phases, marks[:-1], marks[1:], strict=True):
                times[name] = times.get(name, 0.0) + (end - start) * 1000 / steps

    one_step(None)  # kernels compiled, allocator warm
    times: dict[str, float] = {}
    for _ in range(steps):
        one_step(times)
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
    with torch.profiler.profile(activities=activities) as profiler:
        one_step(None)
    sort = "self_cuda_time_total" if cuda else "self_cpu_time_total"
    table = profiler.key_averages().table(sort_by=sort, row_limit=20, max_name_column_width=60)
    return {"ms_per_step": {k: round(v, 1) for k, v in times.items()}, "sorted_by": sort,
            "top_operators": table.splitlines()}  # fmt: skip


def take_back_adapt(files_at: Path, carry: Path = CARRY, runs: Path = ROOT / "runs" / "gpu") -> Path:
    """The adapted weights merged into the carried transplant: ``runs/adapt/model`` (what ``model.load``
    reads; the Gemma terms and notice beside it) and ``runs/adapt/resume.pt`` (what the next session carries)."""
    import torch

    target_dir = runs / "adapt"
    target_dir.mkdir(parents=True, exist_ok=True)
    data = json.loads((files_at / "adapt-transplant.json").read_text())
    for name in ("adapt-transplant.json", "adapt-transplant.log"):
        if (files_at / name).exists():
            shutil.copyfile(files_at / name, target_dir / name)
    back = torch.load(join_pieces(data["back"], files_at, target_dir / "back.pt"), weights_only=False)
    blob = torch.load(carry / "transplant.pt", weights_only=False, map_location="cpu")
    model = _rebuild(blob, target_dir / "model")
    trained = unpack_tensors(back["weights"])
    names = dict(model.named_parameters())
    with torch.no_grad():
        for name, value in trained.items():
            names[name].copy_(value)
    model.save_pretrained(str(target_dir / "model"))
    torch.save({k: v for k, v in back.items() if k != "weights"}, target_dir / "resume.pt")
    (target_dir / "back.pt").unlink()
    return target_dir / "model"


def toy_transplant(folder: Path) -> Path:
    """The dry run's transplant: a small random Gemma 3 through the same bridges, with the shipped model's
    tokenizer (its pad/eos/bos ids are Gemma's), saved as transplant_build saves the real one."""
    import torch
    from transformers import AutoTokenizer, Gemma3ForCausalLM, Gemma3TextConfig

    from model.training.transplant import transplant
    from runbook.common import SHIPPED

    tokenizer = AutoTokenizer.from_pretrained(str(SHIPPED))
    torch.manual_seed(0)
    config = Gemma3TextConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=6, num_attention_heads=2,
        num_key_value_heads=1, head_dim=32, sliding_window=64, query_pre_attn_scalar=32, max_position_embeddings=512,
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
                         "full_attention": {"rope_type": "default", "rope_theta": 1_000_000.0}},
    )  # fmt: skip
    with MODEL_BUILDING:
        source = Gemma3ForCausalLM(config).eval()
    model = transplant(source)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    (folder / "transplant.json").write_text(json.dumps({"source": "a random toy Gemma 3 (dry run)"}))
    return folder
