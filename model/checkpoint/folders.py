"""Where a checkpoint lives and what its config says: the built-in model's folder, a local path or a hub
id from the local cache, config.json read as a DiffusionGemma config, and Redraft's sampler file
(``redraft_sampler.json``) read and checked, which the editor's Settings reads too, before torch has loaded.

Both :mod:`model.checkpoint.loading` (which loads the weights) and :mod:`model.checkpoint.doctor` (which
estimates whether they fit, from the config alone) stand on this module; it imports neither.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from model.edit.request import MAX_CANVAS_TOKENS, MAX_DENOISING_STEPS, MAX_POLISH_ROUNDS
from model.errors import ModelLoadError

if TYPE_CHECKING:  # transformers loads when a config is read: the editor finds its icons before that
    from transformers import DiffusionGemmaConfig

BUILTIN = "builtin"
BUILTIN_MODEL_NAME = "redraft-tiny"
INDEX_FILE = "model.safetensors.index.json"
# A folder's JSON files are read whole and parsed in Python: configs and indexes are a few KB to a few MB,
# so anything bigger is not one (a 200 MB config.json once took the loader's memory with it).
MAX_JSON_BYTES = 16 * 2**20
# The sizes a config may declare, checked before transformers builds anything from them: generous for any
# real DiffusionGemma (the 26B-A4B has 30 layers, 128 experts, 262,144 tokens), far below what would
# take minutes or gigabytes merely to build (``num_hidden_layers: 10**6`` took 27 s before failing).
SIZE_LIMITS = {
    "vocab_size": 2**22,
    "hidden_size": 2**16,
    "intermediate_size": 2**18,
    "moe_intermediate_size": 2**18,
    "num_hidden_layers": 512,
    "num_attention_heads": 1024,
    "num_key_value_heads": 1024,
    "num_global_key_value_heads": 1024,
    "head_dim": 8192,
    "global_head_dim": 8192,
    "num_experts": 4096,
    "top_k_experts": 4096,
    "sliding_window": 2**24,
    "max_position_embeddings": 2**24,
    "canvas_length": MAX_CANVAS_TOKENS,
    "patch_size": 4096,
    "position_embedding_size": 2**20,
}
SUB_CONFIGS = ("text_config", "vision_config")


# Sampler defaults beyond what transformers' DiffusionGemmaGenerationConfig accepts (it refuses unknown
# keys, so they cannot live in generation_config.json): Redraft's extensions, in a file of their own.
REDRAFT_SAMPLER_FILE = "redraft_sampler.json"
# confidence_threshold and max_denoising_steps here override generation_config.json's for Redraft's engine
# only, which is where they were tuned (with its left-to-right bias, polish rounds and bans). Its engine
# averages entropy over the free slots, while transformers and vLLM, which read generation_config.json,
# average over the whole canvas, pinned suffix and padding included, where a threshold tuned for free slots
# stops far too early; and their samplers, without those extensions, were never tuned to fewer passes.
# max_context_tokens caps the text before the span the engine reads (a request's context budget) where a model
# was trained on less and writes worse past it (the built-in model: prefixes of 128 tokens at most).
REDRAFT_SAMPLER_KEYS = (
    "left_to_right_bias", "polish_rounds", "confidence_threshold", "max_denoising_steps", "wide_entropy_bound",
    "max_context_tokens",
)
# The whole-number keys, with their bounds (a request's own, model.edit.request).
REDRAFT_SAMPLER_COUNTS: dict[str, tuple[int, int]] = {
    "polish_rounds": (0, MAX_POLISH_ROUNDS),
    "max_denoising_steps": (1, MAX_DENOISING_STEPS),
    "max_context_tokens": (1, 1 << 20),
}

def resources_dir() -> Path:
    """Where Redraft's bundled resources live: an override, a PyInstaller bundle, or the source tree."""
    override = os.environ.get("REDRAFT_RESOURCES")
    if override:
        return Path(override)
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parents[2] / "resources"


def builtin_model_folder() -> Path:
    return resources_dir() / "models" / BUILTIN_MODEL_NAME


def resolve_folder(spec: str | Path | None, allow_download: bool = False) -> Path:
    """A checkpoint folder for ``spec``: 'builtin'/None, a local path, or a hub id in the local cache."""
    if spec is None or str(spec) == BUILTIN:
        folder = builtin_model_folder()
        if not folder.is_dir():
            raise ModelLoadError(
                f"the built-in model is not installed (expected it in {folder}); reinstall Redraft "
                "or choose a model folder in Settings"
            )
        return folder
    path = Path(spec).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelLoadError(f"{path} is a file; a model is a folder with config.json and *.safetensors")
        return path
    text = str(spec)
    looks_like_hub_id = text.count("/") == 1 and not text.startswith((".", "/", "~")) and " " not in text
    if not looks_like_hub_id:
        raise ModelLoadError(f"model folder {path} does not exist")
    return _hub_snapshot(text, allow_download)


def _hub_snapshot(repo_id: str, allow_download: bool) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return Path(
            snapshot_download(
                repo_id,
                local_files_only=not allow_download,
                allow_patterns=["*.json", "*.safetensors", "tokenizer*", "*.jinja", "*.model"],
            )
        )
    except LocalEntryNotFoundError as error:
        if allow_download:
            raise ModelLoadError(f"could not download {repo_id}: {error}") from error
        raise ModelLoadError(
            f"{repo_id} is not in the local Hugging Face cache, and downloads are off; allow downloads "
            "in Settings (or pass --allow-download), or point Redraft at a local folder"
        ) from error
    except (HfHubHTTPError, OSError, ValueError) as error:
        raise ModelLoadError(f"could not fetch {repo_id}: {error}") from error


def read_json(path: Path, limit: int = MAX_JSON_BYTES) -> Any:
    """``path`` parsed as JSON, or a ModelLoadError: too big to be what it claims, not JSON, nested absurdly."""

    try:
        size = path.stat().st_size
        if size > limit:
            raise ModelLoadError(
                f"{path} is {size / 2**20:,.0f} MiB, too big for a model's {path.suffix} file (at most "
                f"{limit / 2**20:.0f} MiB); it is not the file it should be"
            )
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ModelLoadError(f"{path} is not valid JSON: {error}") from error
    except RecursionError:
        raise ModelLoadError(f"{path} is nested too deeply to be a model's file") from None
    except OSError as error:
        raise ModelLoadError(f"cannot read {path}: {error.strerror or error}") from error


def read_json_object(path: Path, limit: int = MAX_JSON_BYTES) -> dict[str, Any]:
    raw = read_json(path, limit)
    if not isinstance(raw, dict):
        raise ModelLoadError(f"{path} must hold a JSON object, not {_json_type(raw)}")
    return raw


def redraft_sampler_settings(folder: Path) -> dict[str, Any]:
    """The settings the checkpoint's redraft_sampler.json itself sets (none if it has no such file), validated."""
    path = folder / REDRAFT_SAMPLER_FILE
    if not path.is_file():
        return {}
    raw = read_json_object(path)
    unknown = sorted(set(raw) - set(REDRAFT_SAMPLER_KEYS))
    if unknown:
        raise ModelLoadError(f"{path} has unknown keys {unknown}; known: {list(REDRAFT_SAMPLER_KEYS)}")
    settings: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise ModelLoadError(f"{path}: {key} must be a number >= 0, got {value!r}")
        if key in REDRAFT_SAMPLER_COUNTS:
            low, high = REDRAFT_SAMPLER_COUNTS[key]
            if not (float(value).is_integer() and low <= value <= high):
                raise ModelLoadError(f"{path}: {key} must be a whole number from {low} to {high}, got {value!r}")
        settings[key] = int(value) if key in REDRAFT_SAMPLER_COUNTS else float(value)
    return settings


def index_shards(folder: Path) -> list[Path] | None:
    """The shard files ``model.safetensors.index.json`` names (``None`` without an index), each checked to
    be a safetensors file name inside ``folder``: an index is not allowed to point elsewhere on the disk."""
    index = folder / INDEX_FILE
    if not index.is_file():
        return None
    weight_map = read_json_object(index).get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise ModelLoadError(
            f"{index} is not a valid safetensors index: its weight_map must be an object of tensor names "
            f"to shard files, not {_json_type(weight_map)}"
        )
    names = set()
    for tensor, name in weight_map.items():
        if not isinstance(name, str):
            raise ModelLoadError(
                f"{index} is not a valid safetensors index: {str(tensor)[:80]!r} maps to {_json_type(name)}, "
                "not a shard file name"
            )
        names.add(name)
    inside = folder.resolve()
    for name in sorted(names):
        target = (folder / name).resolve()
        if Path(name).is_absolute() or ".." in Path(name).parts or not target.is_relative_to(inside):
            raise ModelLoadError(
                f"{index} names a shard outside the model folder ({name[:120]!r}); a checkpoint's weights "
                "must lie in its own folder"
            )
        if not name.endswith(".safetensors"):
            raise ModelLoadError(f"{index} names {name[:120]!r} as a shard; shards are .safetensors files")
    return [folder / name for name in sorted(names)]


def check_config_sizes(raw: dict[str, Any], path: Path) -> None:
    """Refuse sub-configs that are not objects and sizes that are not whole numbers in a sane range, in words,
    before transformers builds (or takes minutes building) anything from them."""
    scopes: list[tuple[str, dict[str, Any]]] = [("", raw)]
    for key in SUB_CONFIGS:
        sub = raw.get(key)
        if sub is None:
            continue
        if not isinstance(sub, dict):
            raise ModelLoadError(f"{path}: {key} must be a JSON object, not {_json_type(sub)}")
        scopes.append((key + ".", sub))
    for prefix, scope in scopes:
        for field, limit in SIZE_LIMITS.items():
            value = scope.get(field)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise ModelLoadError(f"{path}: {prefix}{field} must be a whole number, not {_shown(value)}")
            if not 1 <= value <= limit:
                raise ModelLoadError(
                    f"{path}: {prefix}{field} is {value:,}, outside what a DiffusionGemma can be (1 to {limit:,})"
                )


def read_config(folder: Path) -> DiffusionGemmaConfig:
    from transformers import DiffusionGemmaConfig

    config_path = folder / "config.json"
    if not config_path.is_file():
        raise ModelLoadError(f"{folder} has no config.json; is it a model folder?")
    raw = read_json_object(config_path)
    model_type = raw.get("model_type")
    if model_type != DiffusionGemmaConfig.model_type:
        shown = model_type if isinstance(model_type, str) and model_type else "unknown"
        raise ModelLoadError(
            f"{folder} holds a{'n' if shown[:1] in 'aeiou' else ''} {shown[:80]} model; Redraft runs DiffusionGemma "
            f"checkpoints (model_type '{DiffusionGemmaConfig.model_type}')"
        )
    check_config_sizes(raw, config_path)
    refused: tuple[type[BaseException], ...] = (
        *_config_errors(), ValueError, TypeError, KeyError, AttributeError, OSError, RecursionError
    )
    try:
        config = DiffusionGemmaConfig.from_pretrained(folder, local_files_only=True)
    except refused as error:
        # transformers checks fields through huggingface_hub's strict dataclasses, whose errors are not
        # ValueErrors; the first line says which field and why.
        said = str(error).strip().splitlines()
        reason = " ".join(line.strip() for line in said[:2])[:300] or type(error).__name__
        raise ModelLoadError(f"{config_path} is not a valid DiffusionGemma config: {reason}") from error
    _check_runnable(config, config_path)
    return config


def _check_runnable(config: DiffusionGemmaConfig, path: Path) -> None:
    """What the engine and the doctor take for granted (transformers accepts a config without them, e.g.
    ``text_config: null`` gives a dense default with no experts): said here, not as a ValueError later."""
    from model.checkpoint.architecture import (
        ExpertSizes,
        canvas_length_of,
        layer_types_of,
        text_config_of,
        vision_config_of,
    )

    try:
        text = text_config_of(config)
        vision_config_of(config)
        canvas_length_of(config)
        layer_types_of(text)
        ExpertSizes.of(text)
    except (TypeError, ValueError) as error:
        raise ModelLoadError(f"{path} is not a DiffusionGemma config Redraft can run: {error}") from error


def _config_errors() -> tuple[type[Exception], ...]:
    try:
        from huggingface_hub.errors import StrictDataclassError
    except ImportError:  # an older huggingface_hub: transformers raises ValueError or TypeError there
        return ()
    return (StrictDataclassError,)


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", int: "a number",
             float: "a number", type(None): "null"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


def _shown(value: object) -> str:
    text = json.dumps(value) if isinstance(value, str | int | float | bool) or value is None else _json_type(value)
    return text if len(text) <= 40 else text[:40] + "…"


def weight_files(folder: Path) -> list[Path]:
    """The safetensors files of a checkpoint, checked for presence; pickle-only folders are refused."""
    shards = index_shards(folder)
    if shards is not None:
        missing = [shard.name for shard in shards if not shard.is_file()]
        if missing:
            raise ModelLoadError(f"{folder} is missing weight shards: {', '.join(missing[:8])}")
        return shards
    single = folder / "model.safetensors"
    if single.is_file():
        return [single]
    if any(folder.glob("*.bin")) or any(folder.glob("*.pt")) or any(folder.glob("*.pth")):
        raise ModelLoadError(
            f"{folder} has only PyTorch pickle weights; Redraft loads safetensors only, because pickle "
            "files can run code when opened"
        )
    raise ModelLoadError(f"{folder} has no weights (model.safetensors or model.safetensors.index.json)")


def check_safetensors(path: Path) -> int:
    """Refuse a truncated or corrupt safetensors file before loading anything from it; the number of
    values its tensors hold.

    The header is read and checked here (at most ``MAX_JSON_BYTES``, an object of tensors, each with two
    byte offsets) so that a header that is a list, ``null`` or nested a thousand deep is named, not raised.
    """
    from safetensors import SafetensorError, safe_open  # the Rust reader alone, no torch

    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            header_len = int.from_bytes(handle.read(8), "little")
            if size < 8 or header_len <= 0 or 8 + header_len > size:
                raise ModelLoadError(f"{path.name} is truncated or not a safetensors file (bad header)")
            if header_len > MAX_JSON_BYTES:
                raise ModelLoadError(
                    f"{path.name} is not a valid safetensors file: its header claims {header_len:,} bytes "
                    f"(at most {MAX_JSON_BYTES:,} are accepted)"
                )
            header = json.loads(handle.read(header_len))
        if not isinstance(header, dict):
            raise ModelLoadError(
                f"{path.name} is not a valid safetensors file: its header is {type(header).__name__}, not an object"
            )
        data_end = values = 0
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
            shape = entry.get("shape") if isinstance(entry, dict) else None
            if (
                not isinstance(offsets, list)
                or len(offsets) != 2
                or not all(type(value) is int and value >= 0 for value in offsets)
                or offsets[0] > offsets[1]
                or not isinstance(shape, list)
                or not all(type(size) is int and size >= 0 for size in shape)
            ):
                raise ModelLoadError(
                    f"{path.name} is not a valid safetensors file: tensor {name[:80]!r} has no valid data offsets "
                    "or shape"
                )
            data_end = max(data_end, offsets[1])
            values += math.prod(shape)
        if 8 + header_len + data_end > size:
            raise ModelLoadError(
                f"{path.name} is truncated: it holds {size:,} bytes, its header promises "
                f"{8 + header_len + data_end:,}; download or copy it again"
            )
        with safe_open(str(path), framework="pt") as opened:
            opened.keys()
        return values
    except ModelLoadError:
        raise
    except RecursionError:
        raise ModelLoadError(f"{path.name} is not a valid safetensors file: its header is nested too deeply") from None
    except (SafetensorError, json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as error:
        raise ModelLoadError(f"{path.name} is not a valid safetensors file: {error}") from error
    except OSError as error:
        raise ModelLoadError(f"cannot read {path}: {error.strerror or error}") from error
