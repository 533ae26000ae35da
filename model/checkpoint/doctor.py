"""Preflight: will this model, at this precision, fit this GPU? (``redraft doctor`` and ``load("auto")``)

The estimate is computed from the config alone (no weights are read): parameter counts per group times
the bytes each group gets under the precision policy of ``model.checkpoint.quantization``, plus the prefix KV cache
for a context length, plus activation and runtime overheads. Every term is listed in
:class:`Footprint` so the doctor can show where the memory goes.

The estimate's terms live in :mod:`model.checkpoint.footprint`; this module gives the verdict with its
advice, the choice of where a MoE model's routed experts live, and the command that prints them.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

from transformers import DiffusionGemmaConfig

from model.checkpoint.architecture import (
    ExpertSizes,
    TextModelShape,
    build_config,
    text_config_of,
)
from model.checkpoint.expert_placement import EXPERT_PLACEMENTS, HOST_PLACEMENTS, PLACEMENT_WORDS
from model.checkpoint.folders import read_config, resolve_folder
from model.checkpoint.footprint import (  # noqa: F401  re-exported: callers have imported these from here
    DEFAULT_CONTEXT,
    FRAGMENTATION,
    GIB,
    HOST_PRECISIONS,
    LOGIT_COPIES,
    RUNTIME_BYTES,
    DeviceInfo,
    Footprint,
    ParameterGroups,
    activation_bytes,
    all_devices,
    cpu_device_info,
    cuda_device_info,
    estimate_footprint,
    kv_cache_bytes,
    parameter_groups,
    weight_bytes,
)
from model.errors import ModelLoadError

REAL_MODEL_NAME = "diffusiongemma-26b-a4b"
REAL_MODEL_ALIASES = (REAL_MODEL_NAME, "google/diffusiongemma-26b-a4b-it", "26b-a4b", "26b")


def diffusiongemma_26b_a4b_config(canvas_length: int = 256, num_hidden_layers: int = 30) -> DiffusionGemmaConfig:
    """The released 26B-A4B's text architecture (from the published facts), with a minimal vision tower.

    ``num_hidden_layers`` below 30 keeps the first layers (the last is always full attention), for
    scaled-down checks of the full-size bench.

    Full-attention layers (every 6th) use head dim 512 with 2 KV heads and no ``v_proj``: keys double
    as values, which the library expresses by building ``v_proj=None`` in non-sliding layers.
    """
    return build_config(
        TextModelShape(
            vocab_size=262_144,
            hidden_size=2816,
            intermediate_size=2112,
            num_hidden_layers=num_hidden_layers,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=256,
            global_head_dim=512,
            num_global_key_value_heads=2,
            num_experts=128,
            top_k_experts=8,
            moe_intermediate_size=704,
            sliding_window=1024,
            canvas_length=canvas_length,
            full_attention_every=6,
            max_position_embeddings=131_072,
        )
    )


# --------------------------------------------------------------------------------------------------
# Preflight


@dataclass(frozen=True)
class FitReport:
    """The preflight's answer: the estimate, whether it fits the device, and what to do if not."""

    precision: str
    device: DeviceInfo
    footprint: Footprint
    fits: bool
    headroom_bytes: int
    advice: str

    def summary(self) -> str:
        # A model too large for this machine is an answer, not an error: it says what would make it run.
        needs = (
            f"{self.precision} needs about {self.footprint.total_bytes / GIB:.1f} GiB at "
            f"{self.footprint.context_tokens} tokens of context; {self.device.describe()}"
        )
        if self.footprint.experts_on_host:
            needs = (
                f"{self.precision} with the routed experts in host memory needs about "
                f"{self.footprint.total_bytes / GIB:.1f} GiB on the GPU and {self.footprint.host_bytes / GIB:.1f} GiB "
                f"of host memory at {self.footprint.context_tokens} tokens of context; {self.device.describe()}"
            )
        if self.fits and self.device.kind == "cpu":
            return f"YES, it fits in memory and runs on the CPU (no usable GPU): {needs}.\n{self.advice}"
        if self.fits and self.footprint.experts_on_host:
            return f"YES, with the routed experts in host memory: {needs}.\n{self.advice}"
        if self.fits:
            return f"YES, it fits: {needs}.\n{self.advice}"
        short = -self.headroom_bytes / GIB
        return f"Not on this machine as it is ({short:.1f} GiB short): {needs}.\nWhat to do: {self.advice}"


# Host memory left over beyond the experts for everything else on the machine (the app, the OS, the page
# cache the first load reads through).
HOST_RESERVE_BYTES = 2 * GIB


def preflight(
    config: DiffusionGemmaConfig,
    precision: str,
    device_info: DeviceInfo,
    *,
    context_tokens: int = DEFAULT_CONTEXT,
    experts_on_host: bool = False,
    host_info: DeviceInfo | None = None,
) -> FitReport:
    """Estimate ``config`` at ``precision`` ("4bit", "8bit", "bf16" or "auto") against ``device_info``.

    "auto" answers for bf16 when that fits, then for 4-bit experts, then on a GPU for 4-bit experts kept
    in host memory (what ``load`` will choose). ``experts_on_host`` sizes that placement: the GPU holds
    all but the routed experts, and ``host_info`` (default: this machine's RAM) must hold them.
    """
    if precision == "auto":
        bf16 = preflight(config, "bf16", device_info, context_tokens=context_tokens, host_info=host_info)
        if bf16.fits:
            return bf16
        four = preflight(config, "4bit", device_info, context_tokens=context_tokens, host_info=host_info)
        if four.fits or device_info.kind != "cuda":
            return four
        hosted = preflight(config, "4bit", device_info, context_tokens=context_tokens, experts_on_host=True,
                           host_info=host_info)  # fmt: skip
        return hosted if hosted.fits else four
    if experts_on_host and device_info.kind != "cuda":
        raise ValueError("routed experts in host memory is a placement for a GPU; on the CPU they are there already")
    footprint = estimate_footprint(config, precision, context_tokens, experts_on_host=experts_on_host)
    headroom = device_info.free_bytes - footprint.total_bytes
    if experts_on_host:
        host = host_info or cpu_device_info()
        headroom = min(headroom, host.free_bytes - HOST_RESERVE_BYTES - footprint.host_bytes)
    fits = headroom >= 0
    return FitReport(
        precision=precision,
        device=device_info,
        footprint=footprint,
        fits=fits,
        headroom_bytes=headroom,
        advice=_advice(config, precision, device_info, footprint, fits, context_tokens, host_info),
    )


def _advice(
    config: DiffusionGemmaConfig,
    precision: str,
    device: DeviceInfo,
    footprint: Footprint,
    fits: bool,
    context_tokens: int,
    host_info: DeviceInfo | None = None,
) -> str:
    if fits and footprint.experts_on_host:
        spare = (device.free_bytes - footprint.total_bytes) / GIB
        return (
            f"{spare:.1f} GiB of the GPU to spare. Redraft keeps the routed experts in host memory by itself when "
            "the whole model does not fit the GPU (or choose it in Settings ▸ Model ▸ Routed experts, "
            "`--experts host-stream`); each pass then copies them to the GPU layer by layer, so passes are slower "
            "than with everything on a bigger card."
        )
    if fits:
        spare = (device.free_bytes - footprint.total_bytes) / GIB
        advice = f"{spare:.1f} GiB to spare. Load it with precision={precision!r}."
        if device.kind == "cpu" and precision == "4bit":
            estimate = cpu_rewrite_estimate(config)
            advice += (
                f" No GPU: on this machine's {estimate.cores} CPU cores a denoising pass takes about "
                f"{estimate.ms_per_pass / 1000:.1f} s, so a rewrite of up to {estimate.canvas} tokens takes up to "
                f"{estimate.seconds_per_rewrite / 60:.0f} min ({estimate.passes} passes at most; fewer when the "
                f"model settles early). From {CPU_PASS_FIGURE.source}, scaled to {estimate.cores} cores. "
                "A CUDA GPU makes it interactive (`redraft enable-gpu`)."
            )
        return advice
    steps: list[str] = []
    for smaller in ("8bit", "4bit"):
        if PRECISION_ORDER.index(smaller) > PRECISION_ORDER.index(precision):
            other = estimate_footprint(config, smaller, context_tokens)
            if other.total_bytes <= device.free_bytes:
                steps.append(f"Use precision={smaller!r} (about {other.total_bytes / GIB:.1f} GiB).")
                break
    else:
        if context_tokens > 1024:
            shorter = estimate_footprint(config, precision, 1024)
            if shorter.total_bytes <= device.free_bytes:
                steps.append("Keep less text around the edit (1k tokens of context fits).")
        hosted_fits = False
        if device.kind == "cuda" and precision in HOST_PRECISIONS and not footprint.experts_on_host:
            hosted = preflight(config, precision, device, context_tokens=context_tokens, experts_on_host=True,
                               host_info=host_info)  # fmt: skip
            hosted_fits = hosted.fits
            if hosted_fits:
                steps.insert(0, (
                    "Keep the routed experts in host memory (Settings ▸ Model ▸ Routed experts, `--experts "
                    f"host-stream`; `load` chooses it by itself): about {hosted.footprint.total_bytes / GIB:.1f} GiB "
                    f"on the GPU and {hosted.footprint.host_bytes / GIB:.1f} GiB of host memory, slower per pass."
                ))  # fmt: skip
        if footprint.experts_on_host and device.free_bytes >= footprint.total_bytes:
            steps.append(
                f"Free host memory: the routed experts need {footprint.host_bytes / GIB:.1f} GiB of it, and "
                f"{HOST_RESERVE_BYTES / GIB:.0f} GiB more for the rest of the machine."
            )
        memory = "the GPU" if device.kind == "cuda" else "memory"
        steps.append(f"Close other programs using {memory} (the free figure counts them).")
        if device.kind == "cuda" and device.total_bytes < footprint.total_bytes and not hosted_fits:
            steps.append("This GPU is too small for this model: use the built-in model, or a 24 GB card.")
    if device.kind != "cuda":
        steps.append(
            "No CUDA GPU here: run this model on a machine with an NVIDIA card (`redraft enable-gpu`), and write "
            "with the built-in model here, which runs on the CPU (plain `redraft doctor` sizes it)."
        )
    return " ".join(steps)


PRECISION_ORDER = ("bf16", "8bit", "4bit")


@dataclass(frozen=True)
class ExpertsPlan:
    """Where a model's routed experts go: the placement, and how many layers' experts stay on the GPU."""

    placement: str
    resident_layers: int = 0


# Device memory left free beyond the estimate when resident expert layers fill a GPU's spare room.
RESIDENT_MARGIN_BYTES = 512 * 2**20


def resident_layers_that_fit(
    config: DiffusionGemmaConfig, precision: str, device_info: DeviceInfo, *, context_tokens: int = DEFAULT_CONTEXT
) -> int:
    """How many layers' experts the GPU holds beside everything else when the rest live in host memory."""
    base = estimate_footprint(config, precision, context_tokens, experts_on_host=True)
    layers = text_config_of(config).num_hidden_layers
    per_layer = base.host_bytes / layers * (1 + FRAGMENTATION)
    spare = device_info.free_bytes - base.total_bytes - RESIDENT_MARGIN_BYTES
    return max(0, min(layers, int(spare // per_layer))) if per_layer else 0


def choose_placement(
    config: DiffusionGemmaConfig,
    precision: str,
    device_info: DeviceInfo,
    experts: str = "auto",
    *,
    context_tokens: int = DEFAULT_CONTEXT,
    host_info: DeviceInfo | None = None,
) -> ExpertsPlan:
    """Where the routed experts go: what was asked for, or for "auto" the host only when the whole model does
    not fit the GPU at ``precision`` and it fits with the experts in host memory (streamed, the GPU computing).
    In host memory on a GPU, as many layers' experts as the GPU has room for stay on it."""
    if experts not in EXPERT_PLACEMENTS:
        raise ValueError(f"unknown experts placement {experts!r}; use one of {', '.join(EXPERT_PLACEMENTS)}")
    if experts != "auto" and experts != "device" and precision not in HOST_PRECISIONS:
        raise ValueError(f"routed experts live in host memory only at {' or '.join(HOST_PRECISIONS)}, not {precision}")
    if experts == "device" or device_info.kind != "cuda" or precision not in HOST_PRECISIONS:
        return ExpertsPlan("device" if experts == "auto" else experts)
    if experts == "auto":
        if preflight(config, precision, device_info, context_tokens=context_tokens, host_info=host_info).fits:
            return ExpertsPlan("device")
        hosted = preflight(config, precision, device_info, context_tokens=context_tokens, experts_on_host=True,
                           host_info=host_info)  # fmt: skip
        if not hosted.fits:
            return ExpertsPlan("device")
        experts = "host-stream"
    resident = resident_layers_that_fit(config, precision, device_info, context_tokens=context_tokens)
    # At least one layer stays in host memory: the writer (or the lack of room) asked for the placement.
    return ExpertsPlan(experts, min(resident, text_config_of(config).num_hidden_layers - 1))


# --------------------------------------------------------------------------------------------------
# Seconds per rewrite on a CPU


@dataclass(frozen=True)
class CpuPassFigure:
    """ms per denoising pass of the 4-bit 26B-A4B on a CPU, by canvas length (bench/full_size.py)."""

    source: str
    cores: int
    context_tokens: int
    ms_by_canvas: tuple[tuple[int, float], ...]


# Measured by ``bench/full_size.py`` (all 30 layers, random weights, the real loader and engine, 2 threads,
# the machine shared with other work): a steady 32-token pass after 259 tokens of context took 105.9 s.
# The 256-token point is that pass times 1.21, the measured ratio of one layer's NF4 experts (the bulk
# of a CPU pass) at 256 against 32 tokens (5.40 s against 4.45 s).
CPU_PASS_FIGURE = CpuPassFigure(
    source="bench/full_size.py on a busy 2-core x86-64 with 24 GiB",
    cores=2,
    context_tokens=256,
    ms_by_canvas=((32, 105_861.0), (256, 128_100.0)),
)
# The published sampler's ceiling on passes per canvas (``max_denoising_steps``); confident models stop sooner.
PASSES_PER_CANVAS = 48


@dataclass(frozen=True)
class CpuRewriteEstimate:
    cores: int
    canvas: int
    ms_per_pass: float
    passes: int

    @property
    def seconds_per_rewrite(self) -> float:
        return self.ms_per_pass * self.passes / 1000


def cpu_rewrite_estimate(config: DiffusionGemmaConfig, cores: int | None = None) -> CpuRewriteEstimate:
    """Seconds per rewrite of one canvas at 4 bit on ``cores`` CPU cores, from the bench's figures.

    The pass time is interpolated linearly in the canvas between the two measured canvases, scaled by
    the parameters a token passes through (shared weights plus its top-k experts) against the 26B-A4B's,
    and by cores (both threads were busy in the bench; more cores help less than in proportion once
    memory bandwidth binds, so this errs fast for many-core machines).
    """
    cores = max(1, cores if cores is not None else (os.cpu_count() or 1))
    canvas = config.canvas_length or 256
    (small, small_ms), (large, large_ms) = CPU_PASS_FIGURE.ms_by_canvas
    ms = small_ms + (large_ms - small_ms) * (canvas - small) / (large - small)
    ms *= active_parameters(config) / active_parameters(diffusiongemma_26b_a4b_config())
    ms *= CPU_PASS_FIGURE.cores / cores
    return CpuRewriteEstimate(cores=cores, canvas=canvas, ms_per_pass=max(ms, 0.0), passes=PASSES_PER_CANVAS)


def active_parameters(config: DiffusionGemmaConfig) -> int:
    """Parameters one canvas token passes through: all but the experts, its top-k experts, the LM head."""
    groups = parameter_groups(config)
    sizes = ExpertSizes.of(text_config_of(config))
    experts = sum(e * r * c for e, r, c in groups.experts) * sizes.top_k_experts // sizes.num_experts
    return experts + sum(o * i for o, i in groups.linears) + groups.router + groups.embedding


def config_for_spec(spec: str | None) -> DiffusionGemmaConfig:
    """The config of a model spec: the 26B-A4B by name, else whatever ``load`` would open (None or "builtin":
    the built-in model, a local folder, or a hub id in the local cache); only config.json is read."""
    if spec is not None and spec.lower() in REAL_MODEL_ALIASES:
        return diffusiongemma_26b_a4b_config()
    try:
        return read_config(resolve_folder(spec))
    except ModelLoadError as error:
        raise ValueError(str(error)) from error


def doctor_main(argv: list[str]) -> int:
    """``redraft doctor``: list GPUs, estimate the model, answer whether it fits. Exit 0 if it fits."""
    parser = argparse.ArgumentParser(prog="redraft doctor", description="Will this model fit this machine?")
    parser.add_argument(
        "--model",
        default=None,
        help=f"model folder or hub id (default: the built-in model; {REAL_MODEL_NAME!r} sizes the 26B-A4B)",
    )
    parser.add_argument("--precision", default="auto", choices=("auto", *PRECISION_ORDER))
    parser.add_argument("--context", type=int, default=DEFAULT_CONTEXT, help="tokens of text around the edit")
    parser.add_argument(
        "--experts",
        default="auto",
        choices=EXPERT_PLACEMENTS,
        help="where a 4/8-bit model's routed experts live: auto (host memory only when the GPU is too small), "
        "device, host-stream (copied to the GPU layer by layer) or host-compute (computed on the CPU)",
    )
    parser.add_argument("--device", type=int, default=None, help="CUDA device index (default: the current one)")
    args = parser.parse_args(argv)
    try:
        config = config_for_spec(args.model)
    except (OSError, ValueError) as error:
        print(f"redraft doctor: {error}")
        return 2
    devices = all_devices()
    print("GPUs:")
    if not devices:
        print("  none visible to PyTorch (no CUDA build, no driver, or no NVIDIA GPU)")
    for device in devices:
        print(f"  {device.describe()}")
    groups = parameter_groups(config)
    print(f"\nModel: {args.model or 'the built-in model'} ({groups.total / 1e9:.2f}B parameters)")
    for precision in PRECISION_ORDER:
        footprint = estimate_footprint(config, precision, args.context)
        size = footprint.total_bytes / GIB
        print(f"  {precision:>5}: about {size:5.1f} GiB at {args.context} tokens of context")
    hosted = estimate_footprint(config, "4bit", args.context, experts_on_host=True)
    print(
        f"  4bit with the routed experts in host memory: about {hosted.total_bytes / GIB:.1f} GiB on the GPU "
        f"and {hosted.host_bytes / GIB:.1f} GiB of host memory"
    )
    target = cpu_device_info()
    if devices:
        target = devices[0] if args.device is None else cuda_device_info(args.device)
    if args.experts in HOST_PLACEMENTS and target.kind != "cuda":
        print(f"redraft doctor: --experts {args.experts} needs a CUDA GPU; on the CPU the experts are in host memory")
        return 2
    if args.experts in HOST_PLACEMENTS and args.precision == "bf16":
        print(
            f"redraft doctor: --experts {args.experts} needs precision 4bit or 8bit (bf16 experts are not kept apart)"
        )
        return 2
    # As in ``load``: experts kept apart are quantized ones, so "auto" precision with a host placement is 4 bit.
    asked = "4bit" if args.experts in HOST_PLACEMENTS and args.precision == "auto" else args.precision
    report = preflight(config, asked, target, context_tokens=args.context)
    precision = report.precision
    plan = choose_placement(config, precision, target, args.experts, context_tokens=args.context)
    if plan.placement in HOST_PLACEMENTS:
        report = preflight(config, precision, target, context_tokens=args.context, experts_on_host=True)
        layers = text_config_of(config).num_hidden_layers
        print(
            f"\nExperts: {PLACEMENT_WORDS[plan.placement]}; {plan.resident_layers} of the {layers} layers' experts "
            "stay on the GPU, in the room the rest leaves."
        )
    print(f"\nEstimate for {report.precision}:\n{report.footprint.table()}\n")
    print(report.summary())
    return 0 if report.fits else 1
