"""Loading a DiffusionGemma checkpoint: a local folder, a hub id from the local cache, or the built-in model.

Safetensors only (never pickle), never ``trust_remote_code``. Every way a checkpoint can be broken
gets its own specific :class:`ModelLoadError`, raised before any weights are read where possible.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import torch
from safetensors import SafetensorError
from torch import nn
from transformers import (
    AutoTokenizer,
    DiffusionGemmaConfig,
    DiffusionGemmaForBlockDiffusion,
    PreTrainedTokenizerBase,
)
from transformers.utils import logging as hf_logging

from model.checkpoint import doctor, quantized_copy
from model.checkpoint.architecture import canvas_length_of, text_config_of
from model.checkpoint.building import MODEL_BUILDING
from model.checkpoint.expert_placement import EXPERT_PLACEMENTS, HOST_PLACEMENTS, PLACEMENT_WORDS, place_experts
from model.checkpoint.folders import (  # noqa: F401  re-exported: callers have imported these from here
    BUILTIN,
    BUILTIN_MODEL_NAME,
    MAX_JSON_BYTES,
    REDRAFT_SAMPLER_COUNTS,
    REDRAFT_SAMPLER_FILE,
    REDRAFT_SAMPLER_KEYS,
    builtin_model_folder,
    check_safetensors,
    index_shards,
    read_config,
    read_json_object,
    redraft_sampler_settings,
    resolve_folder,
    resources_dir,
    weight_files,
)
from model.errors import ModelLoadError

Precision = Literal["auto", "4bit", "8bit", "bf16", "fp32"]
PRECISIONS: tuple[str, ...] = ("auto", "4bit", "8bit", "bf16", "fp32")
ProgressCallback = Callable[[str, float], None]

GENERATION_KEYS = (
    "max_denoising_steps",
    "t_min",
    "t_max",
    "stability_threshold",
    "confidence_threshold",
)
# The tokenizer's small JSON files, which transformers parses in Python (a list there raised AttributeError).
TOKENIZER_JSON_OBJECTS = ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")
# tokenizer.json is parsed by the tokenizers library (Rust, depth-limited); Gemma's is about 33 MB.
MAX_TOKENIZER_BYTES = 128 * 2**20


@dataclass
class LoadedModel:
    """A model ready for the engine: weights on their device, the tokenizer, the sampler defaults."""

    model: DiffusionGemmaForBlockDiffusion
    tokenizer: PreTrainedTokenizerBase
    device: torch.device
    name: str
    folder: Path
    precision: str
    generation_defaults: dict[str, Any] = field(default_factory=dict)
    # Where the routed experts are: "device", or in host memory, "host-stream" / "host-compute"
    # (model/checkpoint/expert_placement.py); with a host placement, how many layers' experts the GPU kept.
    experts: str = "device"
    resident_layers: int = 0

    @property
    def config(self) -> DiffusionGemmaConfig:
        return self.model.config

    @property
    def canvas_length(self) -> int:
        return int(canvas_length_of(self.config))

    @property
    def vocab_size(self) -> int:
        return int(text_config_of(self.config).vocab_size)

    @property
    def follows_instructions(self) -> bool:
        """Instruction-tuned checkpoints ship a chat template; only they can take ``instruct`` requests."""
        return bool(getattr(self.tokenizer, "chat_template", None))

    def describe_device(self) -> str:
        if self.device.type == "cuda":
            return f"CUDA ({torch.cuda.get_device_name(self.device)})"
        return "CPU"


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ModelLoadError("CUDA was asked for, but no CUDA GPU is available to PyTorch; choose CPU")
    if device not in ("cpu", "cuda"):
        raise ModelLoadError(f"unknown device {device!r}; use auto, cpu or cuda")
    return torch.device(device)



# How many more parameters a config may describe than its weights hold (pre-packed low-bit tensors hold
# fewer values than the parameters they stand for), plus a fixed allowance for small untied extras.
CONFIG_OVER_WEIGHTS = 4
CONFIG_OVER_WEIGHTS_SLACK = 2**20


def check_sizes_match(config: DiffusionGemmaConfig, values: int, folder: Path) -> None:
    """Refuse a config describing a far bigger model than its weights before building it: a config whose
    vision tower fell back to transformers' default (hundreds of millions of parameters) for a few-million
    parameter checkpoint took 670 MB only to find the weights missing."""
    try:
        described = doctor.parameter_groups(config).total
    except (TypeError, ValueError, RuntimeError) as error:
        raise ModelLoadError(f"{folder}/config.json describes no model Redraft can size: {error}") from error
    if described > CONFIG_OVER_WEIGHTS * values + CONFIG_OVER_WEIGHTS_SLACK:
        raise ModelLoadError(
            f"{folder}: config.json describes a model of about {described:,} parameters, but its weights hold "
            f"{values:,} values; the config and the weights do not belong together"
        )


def load_tokenizer(folder: Path, config: DiffusionGemmaConfig) -> PreTrainedTokenizerBase:
    if not any((folder / name).is_file() for name in ("tokenizer.json", "tokenizer.model")):
        # Without this check transformers would quietly build an empty tokenizer from the config.
        raise ModelLoadError(f"{folder} has no tokenizer (tokenizer.json or tokenizer.model)")
    for name in TOKENIZER_JSON_OBJECTS:
        if (folder / name).is_file():
            read_json_object(folder / name)
    for name in ("tokenizer.json", "tokenizer.model"):
        path = folder / name
        if path.is_file() and path.stat().st_size > MAX_TOKENIZER_BYTES:
            raise ModelLoadError(
                f"{path} is {path.stat().st_size / 2**20:,.0f} MiB, too big for a tokenizer (at most "
                f"{MAX_TOKENIZER_BYTES / 2**20:.0f} MiB); it is not the file it should be"
            )
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
    except Exception as error:  # noqa: BLE001  tokenizers' Rust parser raises plain Exception on bad files
        said = " ".join(str(error).split())[:300] or type(error).__name__
        raise ModelLoadError(f"{folder} has no usable tokenizer: {said}") from error
    if not isinstance(tokenizer, PreTrainedTokenizerBase):
        raise ModelLoadError(f"{folder} has no usable tokenizer: transformers built a {type(tokenizer).__name__}")
    vocab_size = int(config.get_text_config().vocab_size)
    highest_id = max(tokenizer.get_vocab().values(), default=-1)
    if highest_id >= vocab_size:
        raise ModelLoadError(
            f"the tokenizer does not match the model: it has token ids up to {highest_id}, the model's "
            f"vocabulary has {vocab_size} entries"
        )
    if tokenizer.pad_token_id is None or tokenizer.eos_token_id is None:
        raise ModelLoadError("the tokenizer defines no pad or end-of-text token, which the sampler needs")
    return tokenizer


def generation_defaults(folder: Path) -> dict[str, Any]:
    """Sampler defaults from the checkpoint's generation_config.json and redraft_sampler.json (whose values win).

    Missing keys stay unset (the request or the published defaults decide).
    """
    defaults: dict[str, Any] = {}
    path = folder / "generation_config.json"
    if path.is_file():
        raw = read_json_object(path)
        defaults = {key: raw[key] for key in GENERATION_KEYS if raw.get(key) is not None}
        sampler = raw.get("sampler_config")
        if isinstance(sampler, dict) and sampler.get("entropy_bound") is not None:
            defaults["entropy_bound"] = sampler["entropy_bound"]
    return {**defaults, **redraft_sampler_settings(folder)}


def resolve_precision(precision: str, device: torch.device, config: DiffusionGemmaConfig) -> str:
    if precision not in PRECISIONS:
        raise ModelLoadError(f"unknown precision {precision!r}; use one of {', '.join(PRECISIONS)}")
    if precision in ("4bit", "8bit") and device.type != "cuda":
        # bitsandbytes runs k-bit kernels on CPU too, but slower than plain float32 for small models.
        return precision
    if precision != "auto":
        return precision
    if device.type != "cuda":
        # fp32 is the fast CPU path for small models; a model too big for that in RAM but not at 4 bit
        # (the 26B-A4B) goes to 4 bit, as on a GPU, rather than failing the preflight.
        info = doctor.cpu_device_info()
        bf16 = doctor.preflight(config, "bf16", info).footprint
        if bf16.total_bytes + bf16.weights_bytes > info.free_bytes and doctor.preflight(config, "4bit", info).fits:
            return "4bit"
        return "fp32"
    report = doctor.preflight(config, "bf16", doctor.cuda_device_info(device))
    return "bf16" if report.fits else "4bit"


def load(
    spec: str | Path | None = BUILTIN,
    *,
    precision: str = "auto",
    device: str | torch.device = "auto",
    allow_download: bool = False,
    progress: ProgressCallback | None = None,
    check_fit: bool = True,
    quantized_copies: Path | bool = True,
    experts: str = "auto",
) -> LoadedModel:
    """Load a DiffusionGemma checkpoint for the engine. Raises :class:`ModelLoadError` with the reason.

    With ``check_fit`` the preflight (:mod:`model.checkpoint.doctor`) runs first, so a model too big for the device
    gets a plain explanation and advice instead of an out-of-memory crash halfway through loading.

    At 4 or 8 bit the quantized weights are saved the first time and read back afterwards
    (:mod:`model.checkpoint.quantized_copy`): ``quantized_copies`` is the folder for them (True: Redraft's
    model folder, False: quantize on every load). A folder that is itself such a copy loads at its precision.

    ``experts`` places a 4/8-bit model's routed experts (``expert_placement.EXPERT_PLACEMENTS``): "auto" keeps
    them in host memory only when the whole model does not fit the GPU and it fits that way; "device",
    "host-stream" or "host-compute" as asked (on a CPU the host placements run too, host and device being one).
    """

    def report(stage: str, fraction: float) -> None:
        if progress is not None:
            progress(stage, fraction)

    hf_logging.disable_progress_bar()  # progress goes through ``progress``, not tqdm on stderr
    report("finding the model", 0.0)
    folder = resolve_folder(spec, allow_download)
    target = resolve_device(device)
    report("reading the config", 0.05)
    config = read_config(folder)
    defaults = generation_defaults(folder)  # before the weights: transformers reads generation_config.json too
    chosen, stored = _precision_and_copy(folder, precision, target, config, quantized_copies, experts)
    weights_folder = stored or folder
    files = weight_files(weights_folder)
    check_sizes_match(config, sum(check_safetensors(file) for file in files), weights_folder)
    report("loading the tokenizer", 0.1)
    tokenizer = load_tokenizer(folder, config)
    plan = resolve_placement(experts, chosen, target, config)
    placement = plan.placement
    if check_fit:
        ensure_fits(config, chosen, target, placement)
    experts_device = torch.device("cpu") if placement in HOST_PLACEMENTS else None
    where = f", {PLACEMENT_WORDS[placement]}" if placement in HOST_PLACEMENTS else ""
    if stored is not None:
        report(f"loading weights ({chosen}, quantized before{where})", 0.2)
        model = _load_stored(stored, config, chosen, target, experts_device)
    else:
        report(f"loading weights ({chosen}{where})", 0.2)
        model = _load_weights(folder, config, chosen, target, experts_device)
        if chosen in quantized_copy.COPY_PRECISIONS and quantized_copies is not False:
            report("saving the quantized weights for next time", 0.9)
            root = quantized_copy.default_copies_folder() if quantized_copies is True else Path(quantized_copies)
            started = time.perf_counter()
            if quantized_copy.write_copy(model, root, folder, chosen, files) is not None:
                model.redraft_copy_write_seconds = round(time.perf_counter() - started, 1)  # type: ignore[assignment]
    model.redraft_weights_folder = weights_folder  # type: ignore[assignment]
    if placement in HOST_PLACEMENTS:
        report("placing the routed experts in host memory", 0.95)
        placement = place_experts(model, placement, target, resident=plan.resident_layers).placement
    model.eval()
    report("ready", 1.0)
    name = BUILTIN_MODEL_NAME if folder == builtin_model_folder() else str(spec)
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        device=target,
        name=name,
        folder=folder,
        precision=chosen,
        generation_defaults=defaults,
        experts=placement,
        resident_layers=plan.resident_layers if placement in HOST_PLACEMENTS else 0,
    )


def _precision_and_copy(
    folder: Path,
    precision: str,
    device: torch.device,
    config: DiffusionGemmaConfig,
    copies: Path | bool,
    experts: str = "auto",
) -> tuple[str, Path | None]:
    """The precision to load at, and the quantized copy to read the weights from (None: the folder's own)."""
    manifest = quantized_copy.read_manifest(folder)
    if manifest is not None:  # the folder is a copy: its precision is the only one it has
        stored = str(manifest.get("precision"))
        if stored not in quantized_copy.COPY_PRECISIONS or precision not in ("auto", stored):
            raise ModelLoadError(
                f"{folder} holds weights quantized to {stored}; load it with precision 'auto' or '{stored}', "
                "or load the original checkpoint for another precision"
            )
        return stored, folder
    # Experts kept in host memory are quantized ones: asked for with "auto" precision (the editor's), that is 4 bit.
    chosen = (
        "4bit" if experts in HOST_PLACEMENTS and precision == "auto" else resolve_precision(precision, device, config)
    )
    if chosen not in quantized_copy.COPY_PRECISIONS or copies is False:
        return chosen, None
    root = quantized_copy.default_copies_folder() if copies is True else Path(copies)
    return chosen, quantized_copy.find_copy(root, folder, chosen)


def resolve_placement(
    experts: str, precision: str, device: torch.device, config: DiffusionGemmaConfig
) -> doctor.ExpertsPlan:
    """The experts placement to load with (see ``load``); a host placement asked of bf16 weights is refused."""
    if experts not in EXPERT_PLACEMENTS:
        raise ModelLoadError(f"unknown experts placement {experts!r}; use one of {', '.join(EXPERT_PLACEMENTS)}")
    if experts in HOST_PLACEMENTS and precision not in doctor.HOST_PRECISIONS:
        raise ModelLoadError(
            f"the routed experts can live in host memory only at 4 or 8 bit, not {precision}: choose precision "
            "4bit (or experts 'device')"
        )
    if device.type != "cuda":  # one memory: a host placement runs as asked, with nothing kept apart
        return doctor.ExpertsPlan("device" if experts == "auto" else experts)
    return doctor.choose_placement(config, precision, doctor.cuda_device_info(device), experts)


def _load_stored(
    folder: Path,
    config: DiffusionGemmaConfig,
    precision: str,
    device: torch.device,
    experts_device: torch.device | None = None,
) -> DiffusionGemmaForBlockDiffusion:
    from model.checkpoint.streaming import load_quantized_copy

    manifest = quantized_copy.read_manifest(folder) or {}
    double_quant = bool(manifest.get("policy", {}).get("double_quant", True))
    try:
        return load_quantized_copy(
            folder, config, precision, device, double_quant=double_quant, experts_device=experts_device
        )
    except (OSError, ValueError, RuntimeError, KeyError, SafetensorError) as error:
        raise ModelLoadError(
            f"could not load the quantized copy in {folder}: {error}; delete that folder to quantize again"
        ) from error


def ensure_fits(config: DiffusionGemmaConfig, precision: str, device: torch.device, placement: str = "device") -> None:
    # Looked up on the module at call time, so tests can stand in a smaller machine.
    info = doctor.cuda_device_info(device) if device.type == "cuda" else doctor.cpu_device_info()
    if placement in HOST_PLACEMENTS and device.type == "cuda":
        hosted = doctor.preflight(config, precision, info, experts_on_host=True)
        if not hosted.fits:
            raise ModelLoadError(hosted.summary().replace("\nWhat to do: ", " What to do: "))
        return
    # The preflight's policies stop at bf16; full precision doubles the weights.
    report = doctor.preflight(config, "bf16" if precision == "fp32" else precision, info)
    needed = report.footprint.total_bytes + (report.footprint.weights_bytes if precision == "fp32" else 0)
    if needed > info.free_bytes:
        raise ModelLoadError(
            f"this model needs about {needed / doctor.GIB:.1f} GiB in {precision}, and {info.describe()}. "
            f"{report.advice if precision != 'fp32' else 'Use a CUDA GPU, or the built-in model.'}"
        )


def _unbuildable(folder: Path, error: Exception) -> ModelLoadError:
    """A config that passed our checks but that transformers cannot build a model from (a field the model
    code reads is missing or of another shape, e.g. ``rope_parameters`` without an entry per layer type)."""
    return ModelLoadError(
        f"{folder / 'config.json'} does not describe a model this transformers can build "
        f"({type(error).__name__}: {error}); the file may be damaged or from another model family"
    )


def _load_weights(
    folder: Path,
    config: DiffusionGemmaConfig,
    precision: str,
    device: torch.device,
    experts_device: torch.device | None = None,
) -> DiffusionGemmaForBlockDiffusion:
    if precision in ("4bit", "8bit"):
        from model.checkpoint.streaming import load_streaming

        try:
            return load_streaming(folder, config, precision, device, experts_device=experts_device)
        except (OSError, ValueError, RuntimeError, SafetensorError) as error:
            raise ModelLoadError(f"could not load the weights in {folder}: {error}") from error
        except (KeyError, TypeError, AttributeError, IndexError) as error:
            raise _unbuildable(folder, error) from error
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    try:
        with MODEL_BUILDING:
            model = DiffusionGemmaForBlockDiffusion.from_pretrained(
                folder,
                config=config,
                dtype=dtype,
                use_safetensors=True,
                local_files_only=True,
                trust_remote_code=False,
            )
    except (OSError, ValueError, RuntimeError, SafetensorError) as error:
        raise ModelLoadError(f"could not load the weights in {folder}: {error}") from error
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        raise _unbuildable(folder, error) from error
    # transformers decorates PreTrainedModel.to with functools.wraps, which typeshed types as a callable that
    # wants ``self`` passed again; the cast only changes how mypy sees this same call.
    cast(nn.Module, model).to(device)
    return model
