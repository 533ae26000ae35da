"""The models installed here: the built-in one, DiffusionGemma checkpoints in the shared Hugging Face hub
cache (whoever downloaded them) and folders in Redraft's own model folder; what each weighs, its precision,
where it lives; a checkpoint validated before it can be chosen; a model removed with the copies made of it.

A copy (the 4-bit one the quantize-once step writes, say) is a folder in Redraft's model folder holding
``redraft-copy.json`` = ``{"copy_of": NAME, "precision": "4bit"}``; removing NAME removes it too.
"""

from __future__ import annotations

import json
import shutil
import struct
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from model.checkpoint.folders import builtin_model_folder, index_shards, read_json_object
from model.checkpoint.hub import LOCK_NAME, check_repo_id, format_bytes, hub_cache_dir
from model.errors import ModelLoadError

COPY_MARKER = "redraft-copy.json"
BUILTIN_NAME = "builtin"
# safetensors dtypes as a writer reads them; the one holding most bytes names the model's precision.
DTYPES = {"BF16": "bf16", "F16": "fp16", "F32": "fp32", "F64": "fp64", "F8_E4M3": "fp8", "F8_E5M2": "fp8",
          "U8": "8-bit", "I8": "int8"}  # fmt: skip
MAX_HEADER_BYTES = 100 * 2**20


@dataclass(frozen=True)
class InstalledModel:
    name: str  # what --model and Settings take: "builtin", a hub id, or a folder
    where: str  # "built in", "hub cache", "Redraft's models"
    path: Path
    size: int
    precision: str
    usable: bool = True
    note: str = ""  # why it cannot be chosen yet (a download to finish, a damaged folder)

    def row(self) -> str:
        text = f"{self.name}  {format_bytes(self.size)}  {self.precision}  {self.where}: {self.path}"
        return text + (f"\n    {self.note}" if self.note else "")


def validate_checkpoint(folder: Path) -> str:
    """Raise ModelLoadError unless ``folder`` is a DiffusionGemma checkpoint Redraft can load (config, every
    safetensors shard readable, a tokenizer); its precision in words."""
    from model.checkpoint.folders import read_config

    read_config(folder)
    precision = check_weights(folder)
    tokenizer = folder / "tokenizer.json"
    if tokenizer.is_file():
        from tokenizers import Tokenizer

        try:
            Tokenizer.from_file(str(tokenizer))
        except Exception as error:  # the tokenizers library raises its own Exception subclass
            raise ModelLoadError(f"{tokenizer} is not a tokenizer Redraft can read: {str(error)[:200]}") from error
    elif not (folder / "tokenizer.model").is_file():
        raise ModelLoadError(f"{folder} has no tokenizer (tokenizer.json or tokenizer.model)")
    return precision


def check_weights(folder: Path) -> str:
    """Every shard present with a readable safetensors header; the precision that holds most bytes."""
    shards = index_shards(folder)
    if shards is None:
        shards = sorted(folder.glob("*.safetensors"))
    if not shards:
        raise ModelLoadError(f"{folder} has no *.safetensors weights")
    weight: Counter[str] = Counter()
    for shard in shards:
        if not shard.is_file():
            raise ModelLoadError(f"{folder} lacks {shard.name}, which its index names; the download is not complete")
        for dtype, count in _header_dtypes(shard).items():
            weight[dtype] += count
    precision = DTYPES.get(weight.most_common(1)[0][0], weight.most_common(1)[0][0].lower()) if weight else "?"
    config = folder / "config.json"
    if config.is_file():
        quantization = read_json_object(config).get("quantization_config")
        if isinstance(quantization, dict):
            bits = "4-bit" if quantization.get("load_in_4bit") else "8-bit" if quantization.get("load_in_8bit") else ""
            method = str(quantization.get("quant_method", "quantized"))
            precision = f"{bits} {method}".strip()
    return precision


def _header_dtypes(shard: Path) -> Counter[str]:
    try:
        with shard.open("rb") as handle:
            head = handle.read(8)
            if len(head) < 8:
                raise ModelLoadError(f"{shard} is too short to be a safetensors file")
            (length,) = struct.unpack("<Q", head)
            if length > MAX_HEADER_BYTES or length > shard.stat().st_size:
                raise ModelLoadError(f"{shard} is not a safetensors file (its header length is {length:,})")
            header = json.loads(handle.read(length))
    except (ValueError, UnicodeDecodeError) as error:
        raise ModelLoadError(f"{shard} is not a safetensors file: {error}") from error
    except OSError as error:
        raise ModelLoadError(f"cannot read {shard}: {error.strerror or error}") from error
    if not isinstance(header, dict):
        raise ModelLoadError(f"{shard} is not a safetensors file (its header is not an object)")
    weights: Counter[str] = Counter()
    for name, tensor in header.items():
        if name == "__metadata__":
            continue
        try:
            start, end = tensor["data_offsets"]
            weights[str(tensor["dtype"])] += int(end) - int(start)
        except (TypeError, KeyError, ValueError):
            raise ModelLoadError(f"{shard} is not a safetensors file ({str(name)[:80]} has no dtype/offsets)") from None
    return weights


def _light_check(folder: Path) -> tuple[str, str]:
    """(precision, "") for a folder that looks loadable, else ("?", why): no transformers import, for lists."""
    try:
        config = read_json_object(folder / "config.json") if (folder / "config.json").is_file() else None
        if config is None:
            return "?", "no config.json: the download is not complete"
        precision = check_weights(folder)
        if not ((folder / "tokenizer.json").is_file() or (folder / "tokenizer.model").is_file()):
            return precision, "no tokenizer: the download is not complete"
        return precision, ""
    except ModelLoadError as error:
        return "?", str(error)


def _folder_size(folder: Path) -> int:
    seen: set[Path] = set()
    total = 0
    for item in folder.rglob("*"):
        try:
            real = item.resolve()
            if real in seen or not real.is_file():
                continue
            seen.add(real)
            total += real.stat().st_size
        except OSError:
            continue
    return total


def _is_diffusion_gemma(folder: Path) -> bool:
    try:
        return read_json_object(folder / "config.json").get("model_type") == "diffusion_gemma"
    except ModelLoadError:
        return False


def list_installed(cache_dir: Path | None = None, models_dir: Path | None = None,
                   include_builtin: bool = True) -> tuple[list[InstalledModel], int]:  # fmt: skip
    """The models Redraft can be pointed at, and how many other (non-DiffusionGemma) models the cache holds."""
    found: list[InstalledModel] = []
    if include_builtin:
        builtin = builtin_model_folder()
        if builtin.is_dir():
            precision, note = _light_check(builtin)
            found.append(InstalledModel(BUILTIN_NAME, "built in", builtin, _folder_size(builtin), precision,
                                        not note, note))  # fmt: skip
    others = 0
    cache = cache_dir or hub_cache_dir()
    for repo in sorted(cache.glob("models--*")) if cache.is_dir() else []:
        repo_id = repo.name.removeprefix("models--").replace("--", "/", 1)
        partial = sum(max(p.stat().st_size, 0) for p in (repo / "blobs").glob("*.incomplete"))
        ref = repo / "refs" / "main"
        commit = ref.read_text().strip() if ref.is_file() else ""
        snapshot = repo / "snapshots" / commit if commit else None
        if snapshot is not None and snapshot.is_dir():
            if not _is_diffusion_gemma(snapshot):
                others += 1
                continue
            precision, note = _light_check(snapshot)
            if partial:
                note = (note + "; " if note else "") + f"a newer download is under way ({format_bytes(partial)} so far)"
            found.append(InstalledModel(repo_id, "hub cache", snapshot, _folder_size(snapshot), precision,
                                        not _light_check(snapshot)[1], note))  # fmt: skip
        elif partial or (repo / "blobs").is_dir():
            done = sum(p.stat().st_size for p in (repo / "blobs").iterdir() if p.suffix != ".incomplete")
            found.append(InstalledModel(
                repo_id, "hub cache", repo, done + partial, "?", False,
                f"download not finished ({format_bytes(done + partial)} so far): `redraft model download {repo_id}` "
                "resumes it, `redraft model remove` deletes it",
            ))  # fmt: skip
    folder = models_dir
    for sub in sorted(folder.iterdir()) if folder is not None and folder.is_dir() else []:
        if not sub.is_dir() or not (sub / "config.json").is_file():
            continue
        precision, note = _light_check(sub)
        copy_of = copy_source(sub)
        if copy_of:
            note = (note + "; " if note else "") + f"a copy of {copy_of}"
        found.append(InstalledModel(str(sub), "Redraft's models", sub, _folder_size(sub), precision,
                                    not _light_check(sub)[1], note))  # fmt: skip
    return found, others


def copy_source(folder: Path) -> str | None:
    marker = folder / COPY_MARKER
    if not marker.is_file():
        return None
    try:
        value = read_json_object(marker).get("copy_of")
    except ModelLoadError:
        return None
    return value if isinstance(value, str) else None


def remove_model(name: str, cache_dir: Path | None = None, models_dir: Path | None = None) -> list[tuple[Path, int]]:
    """Delete the installed model ``name`` and the copies recorded as made of it; (folder, bytes) removed."""
    from huggingface_hub.utils import WeakFileLock

    name = name.strip()
    if name in (BUILTIN_NAME, "", str(builtin_model_folder())):
        raise ModelLoadError("the built-in model is part of Redraft and cannot be removed")
    cache = cache_dir or hub_cache_dir()
    removed: list[tuple[Path, int]] = []
    target: Path | None = None
    if models_dir is not None:
        candidate = (models_dir / name) if not Path(name).is_absolute() else Path(name)
        if candidate.is_dir() and candidate.resolve().parent == models_dir.resolve():
            target = candidate
    if target is None and "/" in name and not Path(name).is_absolute():
        try:
            check_repo_id(name)
        except ModelLoadError:
            pass
        else:
            repo = cache / ("models--" + name.replace("/", "--"))
            if repo.is_dir():
                lock = cache / ".locks" / repo.name
                try:
                    lock.mkdir(parents=True, exist_ok=True)
                    with WeakFileLock(lock / LOCK_NAME, timeout=1):
                        removed.append((repo, _folder_size(repo)))
                        shutil.rmtree(repo)
                except TimeoutError:
                    raise ModelLoadError(f"{name} is being downloaded right now; cancel that first") from None
                except OSError as error:
                    raise ModelLoadError(f"could not remove {repo}: {error.strerror or error}") from error
                shutil.rmtree(lock, ignore_errors=True)
    if target is not None:
        removed.append((target, _folder_size(target)))
        try:
            shutil.rmtree(target)
        except OSError as error:
            raise ModelLoadError(f"could not remove {target}: {error.strerror or error}") from error
    if not removed:
        raise ModelLoadError(
            f"no installed model is called {name[:120]!r}; `redraft model list` shows their names (Redraft removes "
            "only models in the hub cache and in its own model folder, never a folder of yours elsewhere)"
        )
    source_names = {name, str(target)} if target is not None else {name}
    for sub in sorted(models_dir.iterdir()) if models_dir is not None and models_dir.is_dir() else []:
        if sub.is_dir() and copy_source(sub) in source_names | ({target.name} if target is not None else set()):
            removed.append((sub, _folder_size(sub)))
            shutil.rmtree(sub, ignore_errors=True)
    return removed
