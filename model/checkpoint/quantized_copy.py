"""Quantize once: the first 4-bit (or 8-bit) load of a bf16 checkpoint saves the quantized weights.

Quantizing the 26B-A4B means reading ~50 GB of bf16 and running NF4 over 23B expert values on every
start. After the first load the quantized model is written, as safetensors, to a folder of its own
under Redraft's model folder (``<user data>/models/quantized/<name>-4bit-<key>``); later loads of the
same source at the same precision read that instead, which is what the quantized model is anyway.

A copy is a complete checkpoint folder: the quantized shards and their index, the source's
config.json (with a ``redraft_quantization`` field), tokenizer and generation files, and
``redraft_quantization.json`` saying what it is: the precision and its policy, the source (folder,
or hub repo and revision) and the source weights' fingerprint. A copy is used only if

* it was made from the same source (same folder, or same repo and revision) at the same precision,
  with the same storage format and policy, and
* the source's weights, where they are still there, have the same fingerprint: a source rewritten
  since the copy was made gets a fresh copy. Where the source's weights are gone (deleted to save
  ~50 GB once the copy exists), the copy stands in for them.

The fingerprint: a hub download's files are named by their content's sha256 in the cache (``blobs/``),
which is used as is; other files are hashed whole up to 64 MiB, beyond that by their size and
their first, middle and last MiB (hashing 50 GB would take minutes on every start). A change that
keeps a file's size and those samples is not seen; pass ``quantized_copies=False`` to ``load`` to
quantize afresh.

No Qt here: the default folder is found with platformdirs, as ``app.userdirs`` finds it
(``REDRAFT_HOME`` moves it too).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from model.checkpoint.quantization import QuantizedExperts, module_bytes, policy_for
from model.checkpoint.safetensors_io import ShardWriter, TensorPlan, plan_shards, shard_names, write_index

if TYPE_CHECKING:
    import bitsandbytes as bnb
else:  # imported on first use: model.checkpoint.lazy_bnb
    from model.checkpoint.lazy_bnb import bnb

logger = logging.getLogger(__name__)

MANIFEST = "redraft_quantization.json"
CONFIG_FIELD = "redraft_quantization"
# Bumped whenever the tensors a copy holds change meaning; an older copy is then made again.
FORMAT = 1
COPY_PRECISIONS = ("4bit", "8bit")
COPY_SHARD_BYTES = 2 * 2**30
WHOLE_HASH_BYTES = 64 * 2**20
SAMPLE_BYTES = 2**20
WEIGHT_SUFFIXES = (".safetensors", ".safetensors.index.json")
# Small files a checkpoint needs besides weights (tokenizer, chat template, generation defaults).
SIDE_FILE_LIMIT = 256 * 2**20
_HUB_BLOB = re.compile(r"^[0-9a-f]{64}$")


def default_copies_folder() -> Path:
    """``<Redraft's model folder>/quantized``: the models folder of ``app.userdirs`` (same rules)."""
    home = os.environ.get("REDRAFT_HOME")
    if home:
        return Path(home) / "models" / "quantized"
    import platformdirs

    return Path(platformdirs.user_data_dir("Redraft", appauthor=False)) / "models" / "quantized"


def source_identity(folder: Path) -> dict[str, str]:
    """Which checkpoint this is: a hub snapshot by repo and revision, anything else by its folder."""
    resolved = folder.resolve()
    hub = resolved.parent.parent.name
    if resolved.parent.name == "snapshots" and hub.startswith("models--"):
        return {"repo": hub[len("models--") :].replace("--", "/"), "revision": resolved.name}
    return {"folder": str(resolved)}


def slot_for(root: Path, folder: Path, precision: str) -> Path:
    """The copy's folder for ``folder`` at ``precision`` (one slot per source: a new copy replaces a stale one)."""
    identity = source_identity(folder)
    key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]
    label = identity.get("repo", folder.resolve().name).replace("/", "--")
    label = re.sub(r"[^A-Za-z0-9._-]", "_", label)[:80] or "model"
    return root / f"{label}-{precision}-{key}"


def file_fingerprint(path: Path) -> str:
    """``sha256:<hex>`` of the content where it is known or cheap, else ``sampled:<hex>`` (see the module doc)."""
    target = path.resolve()
    if path.is_symlink() and target.parent.name == "blobs" and _HUB_BLOB.match(target.name):
        return f"sha256:{target.name}"
    size = target.stat().st_size
    digest = hashlib.sha256()
    with target.open("rb") as handle:
        if size <= WHOLE_HASH_BYTES:
            for block in iter(lambda: handle.read(2**20), b""):
                digest.update(block)
            return f"sha256:{digest.hexdigest()}"
        digest.update(size.to_bytes(8, "little"))
        for offset in (0, size // 2, size - SAMPLE_BYTES):
            handle.seek(offset)
            digest.update(handle.read(SAMPLE_BYTES))
    return f"sampled:{digest.hexdigest()}"


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def weights_fingerprint(files: list[Path]) -> dict[str, str]:
    return {file.name: file_fingerprint(file) for file in files}


def source_weights(folder: Path) -> list[Path] | None:
    """The source's safetensors files, or None where any of them is gone."""
    from model.checkpoint.folders import weight_files
    from model.errors import ModelLoadError

    try:
        return weight_files(folder)
    except ModelLoadError:
        return None


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """``folder``'s quantization manifest when it is a quantized copy, else None."""
    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) else None


def expected_policy(precision: str) -> dict[str, Any]:
    policy = policy_for(precision)
    return {
        "experts": policy.experts,
        "linears": policy.linears,
        "double_quant": policy.experts == "nf4",
        "compute_dtype": str(policy.compute_dtype).removeprefix("torch."),
    }


def find_copy(root: Path, folder: Path, precision: str) -> Path | None:
    """The usable copy of ``folder`` at ``precision`` under ``root``, or None (see the module doc)."""
    if precision not in COPY_PRECISIONS:
        return None
    slot = slot_for(root, folder, precision)
    manifest = read_manifest(slot)
    if manifest is None:
        return None
    if (
        manifest.get("format") != FORMAT
        or manifest.get("precision") != precision
        or manifest.get("policy") != expected_policy(precision)
        or manifest.get("source", {}).get("identity") != source_identity(folder)
        or source_weights(slot) is None
    ):
        return None
    if manifest["source"].get("config_sha256") != _sha256_file(folder / "config.json"):
        return None
    present = source_weights(folder)
    if present is not None and weights_fingerprint(present) != manifest["source"].get("fingerprint"):
        logger.info("the quantized copy in %s was made from other weights; quantizing again", slot)
        return None
    return slot


def stored_tensors(model: nn.Module) -> list[tuple[str, torch.Tensor]]:
    """Every tensor of a quantized model once: a tied or shared one under its decoder name, as
    save_pretrained names a checkpoint's ties."""
    named: dict[int, tuple[str, torch.Tensor]] = {}

    def add(name: str, tensor: torch.Tensor | None) -> None:
        if tensor is None:
            return
        held = named.get(id(tensor))
        if held is None or (name.startswith("model.decoder.") and not held[0].startswith("model.decoder.")):
            named[id(tensor)] = (name, tensor.data if isinstance(tensor, nn.Parameter) else tensor)

    for path, module in model.named_modules(remove_duplicate=False):
        if isinstance(module, QuantizedExperts):
            for name, tensor in module.stored_tensors().items():
                add(f"{path}.{name}", tensor)
        elif isinstance(module, bnb.nn.Linear4bit):
            raise ValueError(f"{path}: NF4 linears are not part of any precision policy and are not saved")
        elif isinstance(module, bnb.nn.Linear8bitLt):
            weight = module.weight
            # bitsandbytes moves the row scales from the weight into the module's state on the first forward.
            scales = getattr(weight, "SCB", None)
            add(f"{path}.weight", weight)
            add(f"{path}.SCB", scales if scales is not None else module.state.SCB)
        elif not any(isinstance(parent, QuantizedExperts) for parent in _parents(model, path)):
            for name, param in module.named_parameters(recurse=False):
                add(f"{path}.{name}", param)
            for name, buffer in module.named_buffers(recurse=False):
                if name not in module._non_persistent_buffers_set:
                    add(f"{path}.{name}", buffer)
    return list(named.values())


def _parents(model: nn.Module, path: str) -> list[nn.Module]:
    parts = path.split(".")
    return [model.get_submodule(".".join(parts[:end])) for end in range(1, len(parts))]


def write_copy(
    model: nn.Module, root: Path, folder: Path, precision: str, source_files: list[Path]
) -> Path | None:
    """Save ``model`` (just loaded from ``folder`` at ``precision``) as its quantized copy under ``root``.

    Returns the copy's folder, or None when it could not be written (no room, no permission): the
    model loaded all the same, and the next load quantizes again.
    """
    slot = slot_for(root, folder, precision)
    partial = slot.with_name(f".{slot.name}.partial-{os.getpid()}")
    try:
        root.mkdir(parents=True, exist_ok=True)
        needed = module_bytes(model) + 2**30
        free = shutil.disk_usage(root).free
        if free < needed:
            logger.warning(
                "not saving the %s copy of %s: it needs %.1f GiB and %s has %.1f GiB free",
                precision, folder, needed / 2**30, root, free / 2**30,
            )  # fmt: skip
            return None
        fingerprint = weights_fingerprint(source_files)
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        tensors = stored_tensors(model)
        plans = [TensorPlan.of(name, tensor) for name, tensor in tensors]
        shards = plan_shards(plans, COPY_SHARD_BYTES)
        names = shard_names(len(shards))
        position = 0
        for shard, name in zip(shards, names, strict=True):
            with ShardWriter(partial / name, shard, {"redraft_quantization": precision}) as writer:
                for plan in shard:
                    writer.write(plan.name, tensors[position][1])
                    position += 1
        if len(shards) > 1:
            write_index(partial, shards, names)
        identity = source_identity(folder)
        _copy_side_files(folder, partial, precision, identity, fingerprint)
        manifest = {
            "format": FORMAT,
            "precision": precision,
            "policy": expected_policy(precision),
            "source": {
                "identity": identity,
                "fingerprint": fingerprint,
                "config_sha256": _sha256_file(folder / "config.json"),
            },
            "bitsandbytes": bnb.__version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "bytes": sum(plan.nbytes for plan in plans),
        }
        # Written last: a folder without it is never taken for a copy.
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        stale = slot.with_name(f".{slot.name}.stale-{os.getpid()}")
        if slot.exists():
            slot.rename(stale)
        partial.rename(slot)
        shutil.rmtree(stale, ignore_errors=True)
        return slot
    except OSError as error:
        logger.warning("could not save the %s copy of %s in %s: %s", precision, folder, root, error)
        shutil.rmtree(partial, ignore_errors=True)
        return None


def _copy_side_files(
    folder: Path, target: Path, precision: str, identity: dict[str, str], fingerprint: dict[str, str]
) -> None:
    """config.json (marked as quantized) and the tokenizer and generation files, so the copy is whole."""
    for path in folder.iterdir():
        name = path.name
        if (
            name == "config.json" or name == MANIFEST or name.endswith(WEIGHT_SUFFIXES)
            or not path.is_file() or path.stat().st_size > SIDE_FILE_LIMIT
        ):  # fmt: skip
            continue
        shutil.copyfile(path, target / name)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()
    config[CONFIG_FIELD] = {"precision": precision, **identity, "source_weights_sha256": digest}
    (target / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
