"""Where a checkpoint lives and what its config says: the built-in model's folder, a local path or a hub
id from the local cache, and config.json read as a DiffusionGemma config.

Both :mod:`model.checkpoint.loading` (which loads the weights) and :mod:`model.checkpoint.doctor` (which
estimates whether they fit, from the config alone) stand on this module; it imports neither.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from model.errors import ModelLoadError

if TYPE_CHECKING:  # transformers loads when a config is read: the editor finds its icons before that
    from transformers import DiffusionGemmaConfig

BUILTIN = "builtin"
BUILTIN_MODEL_NAME = "redraft-tiny"


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


def read_config(folder: Path) -> DiffusionGemmaConfig:
    from transformers import DiffusionGemmaConfig

    config_path = folder / "config.json"
    if not config_path.is_file():
        raise ModelLoadError(f"{folder} has no config.json; is it a model folder?")
    try:
        raw = json.loads(config_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ModelLoadError(f"{config_path} is not valid JSON: {error}") from error
    model_type = raw.get("model_type") if isinstance(raw, dict) else None
    if model_type != DiffusionGemmaConfig.model_type:
        raise ModelLoadError(
            f"{folder} holds a {model_type or 'unknown'!s} model; Redraft runs DiffusionGemma "
            f"checkpoints (model_type '{DiffusionGemmaConfig.model_type}')"
        )
    try:
        return DiffusionGemmaConfig.from_pretrained(folder, local_files_only=True)
    except (ValueError, TypeError, OSError) as error:
        raise ModelLoadError(f"{config_path} is not a valid DiffusionGemma config: {error}") from error
