"""Step bench26b: DiffusionGemma-26B-A4B (real text config, random weights) at 4 bit and bf16, the fused NF4
kernel checked against bitsandbytes' decoding, the 4-bit routed experts in host memory (streamed per layer or
computed on the CPU) under 12 and 16 GiB caps, and the README's 26B tables filled from what it measured.
"""

from __future__ import annotations

import functools
import json
import re
import time
import traceback
from pathlib import Path
from typing import Any

from runbook.common import Report, elapsed_s, say
from runbook.wheels import library_versions


def nf4_check(device: Any, hidden: int, inner: int, experts: int = 8) -> list[dict[str, Any]]:
    """The fused kernel on the device against bitsandbytes' decoding: the same experts multiplied through
    both expert kernels, and one expert's rows against ``bitsandbytes.functional.dequantize_4bit``."""
    import copy

    import torch

    from model.checkpoint import nf4_kernel
    from model.checkpoint.quantization import QuantizedExperts

    rows: list[dict[str, Any]] = []
    for double_quant in (False, True):
        for dtype in (torch.float32, torch.bfloat16):
            torch.manual_seed(0)
            module = QuantizedExperts(experts, hidden, inner, "gelu_pytorch_tanh", double_quant=double_quant,
                                      compute_dtype=dtype, device=device)  # fmt: skip
            module.load_projection("gate_up", torch.randn(experts, 2 * inner, hidden) * 0.05)
            module.load_projection("down", torch.randn(experts, hidden, inner) * 0.05)
            fused, unfused = module, copy.deepcopy(module)
            fused.kernel, unfused.kernel = "fused", "dequantize"
            if not fused.uses_fused_kernel():
                rows.append({"double_quant": double_quant, "dtype": str(dtype), "skipped": "no fused kernel here"})
                continue
            generator = torch.Generator().manual_seed(1)
            tokens = 300
            x = torch.randn(tokens, hidden, generator=generator).to(device)
            index = torch.randint(0, experts, (tokens, 2), generator=generator).to(device)
            weights = torch.rand(tokens, 2, generator=generator).to(device)
            with torch.no_grad():
                got, want = fused(x, index, weights).float(), unfused(x, index, weights).float()
                counts = [37, 0, 5, 64, 1, 0, 16, 3][:experts] + [0] * max(0, experts - 8)
                rows_in = torch.randn(sum(counts), hidden, generator=generator).to(device, dtype)
                direct = nf4_kernel.nf4_grouped_matmul(rows_in, counts, module.nf4_matrices("gate_up")).float()
                reference, start = [], 0
                for expert, count in enumerate(counts):
                    weight = module.dequantize("gate_up", expert, expert + 1, torch.float32)[0]
                    reference.append(rows_in[start : start + count].float() @ weight.T)
                    start += count
                reference_t = torch.cat(reference)
            scale = float(want.abs().max())
            error = float((got - want).abs().max()) / scale
            direct_error = float((direct - reference_t).abs().max()) / float(reference_t.abs().max())
            # Triton's float32 tl.dot runs in TF32 on CUDA (10-bit mantissas), the interpreter in full float32.
            tolerance = (1e-4 if torch.device(device).type == "cpu" else 1e-2) if dtype == torch.float32 else 3e-2
            rows.append({
                "double_quant": double_quant, "dtype": str(dtype).replace("torch.", ""),
                "max_error_vs_dequantize": error, "max_error_vs_bitsandbytes_decoding": direct_error,
                "tolerance": tolerance, "ok": error <= tolerance and direct_error <= tolerance,
            })  # fmt: skip
            say(f"NF4 check {rows[-1]}")
    return rows


def step_bench26b(out: Path, dry_run: bool, budget_s: float) -> dict[str, Any]:
    import gc
    import logging

    import torch

    from model.checkpoint.architecture import TextModelShape, build_config, canvas_length_of, text_config_of
    from model.checkpoint.doctor import GIB, cuda_device_info, diffusiongemma_26b_a4b_config, preflight
    from model.checkpoint.quantization import QuantizedExperts, module_bytes

    # bitsandbytes logs on every int8 call that bf16 inputs are cast to fp16 (its own kernels' choice).
    logging.getLogger("bitsandbytes.autograd._functions").setLevel(logging.ERROR)
    report = Report(out, "bench26b")
    report["versions"] = library_versions()
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    if cuda:
        report["allocator"] = expandable_segments()
    if dry_run or not cuda:
        # Toy scale with the real structure (MoE beside dense MLP, k=v full layers); prefixes scaled down.
        config = build_config(TextModelShape(
            vocab_size=512, hidden_size=128, intermediate_size=128, num_hidden_layers=3, num_attention_heads=2,
            num_key_value_heads=1, head_dim=64, global_head_dim=128, num_global_key_value_heads=1, num_experts=8,
            top_k_experts=2, moe_intermediate_size=64, sliding_window=32, canvas_length=32, full_attention_every=2,
        ))  # fmt: skip
        prefixes, passes, real = (0, 16, 64), 2, False
    else:
        config, prefixes, passes, real = diffusiongemma_26b_a4b_config(), (0, 2048, 8192), 5, True
    text = text_config_of(config)
    report["device"] = cuda_device_info().describe() if cuda else "CPU"
    report["config"] = "DiffusionGemma-26B-A4B (real text config, random weights)" if real else "toy (dry run)"
    report["canvas"] = canvas_length_of(config)
    say(f"{report['device']}; {report['config']}")
    try:
        report["nf4_check"] = nf4_check(device, int(text.hidden_size), int(text.moe_intermediate_size or 0),
                                        8 if real else 4)  # fmt: skip
    except Exception as error:  # a kernel that does not build here is a finding; the timings still run
        report["nf4_check"] = [{"ok": False, "error": f"{type(error).__name__}: {error}"}]
        say(f"NF4 check failed: {report['nf4_check']}")

    from quant_memory import measure, random_quantized_model

    kernels = ["fused", "dequantize"] if cuda or dry_run else ["dequantize"]
    for precision in ("4bit", "bf16"):
        if elapsed_s() > budget_s * 0.75:
            report.append("skipped", f"{precision}: out of time")
            break
        if cuda and precision == "bf16" and not preflight(config, "bf16", cuda_device_info()).fits:
            report.append("skipped", "bf16: does not fit this GPU (preflight)")
            continue
        if not cuda and precision == "4bit" and not dry_run:
            continue
        start = time.perf_counter()
        try:
            model = random_quantized_model(config, precision, device)
        except Exception as error:  # bitsandbytes missing or broken: say so in the report, go on with bf16
            report.append("skipped", f"{precision}: could not build ({type(error).__name__}: {error})")
            continue
        weights = module_bytes(model)
        say(f"{precision}: weights {weights / GIB:.2f} GiB, built in {time.perf_counter() - start:.0f} s")
        experts = [m for m in model.modules() if isinstance(m, QuantizedExperts)]
        for kernel in kernels if experts else ["none"]:
            for module in experts:
                module.kernel = kernel
            for prefix in prefixes:
                if elapsed_s() > budget_s * 0.9:
                    report.append("skipped", f"{precision} {kernel} prefix {prefix}: out of time")
                    continue
                row: dict[str, Any]
                try:
                    row = dict(measure(model, config, prefix, passes, device))
                except torch.cuda.OutOfMemoryError:
                    row = {"prefix": prefix, "ms_per_pass": None, "peak_bytes": None, "error": "out of memory"}
                    torch.cuda.empty_cache()
                row = {"precision": precision, "placement": "device", "expert_kernel": kernel, "weights_bytes": weights,
                       **row}  # fmt: skip
                if row["ms_per_pass"]:
                    # Tokens a pass must settle for 1,500 tokens per second (the target).
                    row["tokens_per_pass_for_1500_tok_s"] = round(1500 * row["ms_per_pass"] / 1000, 1)
                say(f"  {json.dumps(row)}")
                report.append("rows", row)
        if precision == "4bit" and experts:
            try:
                host_placements(report, model, config, device, prefixes[:2], passes, budget_s, weights)
            except Exception as error:  # a placement that breaks is a finding; bf16 still runs
                report["host_error"] = f"{type(error).__name__}: {error}"
                say(f"host placements failed: {traceback.format_exc()}")
        del model, experts
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
    report["readme_rows"] = readme_rows(report.data)
    report["targets"] = targets_26b(report.data.get("rows", []), prefixes[1])
    return report.data


# Each placement with every routed expert in host memory, and host-stream as Redraft loads it on such a card:
# the layers the cap leaves room for kept on the GPU, the rest streamed between them.
# With every expert hosted the cap changes nothing but whether it fits (the GPU holds the same either way), so
# those run under the tighter cap only: the minutes go to the variant the cap does change.
HOST_VARIANTS = (("host-stream", False, (12,)), ("host-stream", True, (12, 16)), ("host-compute", False, (12,)))
# A host-compute pass multiplies every routed row on the CPU (seconds for the 26B): one timed pass each.
HOST_PASSES = {"host-stream": 3, "host-compute": 1}
OOM_UNDER_CAP = "out of memory under the cap"
CAP_NOT_ON_CPU = "cap not applicable on CPU"


def probe_ms(module: Any, tokens: int, device: Any) -> float:
    """ms for one call of an experts module (as placed) on ``tokens`` rows routed at random, after a warm-up."""
    import torch

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(tokens, module.hidden_dim, generator=generator).to(device, torch.bfloat16)
    top_k = min(8, module.num_experts)  # the 26B-A4B routes each token to 8
    routes = torch.randint(0, module.num_experts, (tokens, top_k), generator=generator).to(device)
    weights = torch.rand(tokens, top_k, generator=generator).to(device)
    times = []
    for _ in range(2):
        start = time.perf_counter()
        with torch.no_grad():
            module(x, routes, weights)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1000)
    return times[-1]


def placement_counters(placed: Any) -> dict[str, int]:
    """A placement's running totals (copies, prefetch_hits, bytes_copied, cpu_calls) as a plain dict."""
    import dataclasses

    return dataclasses.asdict(placed.stats)


def host_placements(report: Report, model: Any, config: Any, device: Any, prefixes: tuple[int, ...], passes: int,
                    budget_s: float, weights: int) -> None:  # fmt: skip
    """The routed experts in (pinned) host memory, streamed per layer or computed on the CPU, each under
    memory caps of 12 and 16 GiB on CUDA (none on CPU); first each placement's logits against the experts
    on the device (on CPU they must be identical: host and device are the same memory and kernel)."""
    import gc

    import torch
    from quant_memory import measure, one_forward_logits

    from model.checkpoint.architecture import canvas_length_of
    from model.checkpoint.doctor import GIB, DeviceInfo, resident_layers_that_fit
    from model.checkpoint.expert_placement import place_experts, quantized_experts_in_order

    cuda = device.type == "cuda"
    canvas = canvas_length_of(config)
    experts = quantized_experts_in_order(model)
    # "auto", as Redraft loads them: dequantize, on the GPU and on host-compute's CPU side alike.
    for module in experts:
        module.kernel = "auto"
    place_experts(model, "device", device)
    reference = one_forward_logits(model, config, device)
    diffs: dict[str, float] = {}
    # The reference's own largest logit, so that a difference on CUDA reads against the logits' scale; and the
    # noise floor: the same experts on the device through the fused kernel, whose decoding agrees with the
    # dequantized one to ~1e-3 a layer. Random weights route by near ties, so rounding alone can send a row
    # to other experts and a pass's logits far apart; a placement no further off than this is not wrong.
    floor: float | None = None
    for module in experts:
        module.kernel = "fused"
    try:
        if experts[0].uses_fused_kernel(device):
            floor = float((one_forward_logits(model, config, device) - reference).abs().max())
    except RuntimeError:  # no fused kernel here (no Triton): no floor, the differences stand alone
        pass
    for module in experts:
        module.kernel = "auto"
    report["host_logits"] = {"against": "the experts on the device, one pass after 8 tokens",
                             "must_be_identical": not cuda, "max_abs_diff": diffs,
                             "max_abs_reference": float(reference.abs().max()),
                             "noise_floor_fused_vs_dequantize": floor}  # fmt: skip
    total = torch.cuda.get_device_properties(device).total_memory if cuda else 0
    layers = len(experts)
    for placement, use_room, variant_caps in HOST_VARIANTS:
        caps: tuple[int | None, ...] = variant_caps if cuda else (None,)
        if elapsed_s() > budget_s * 0.9:
            report.append("skipped", f"{placement}: out of time")
            continue
        if not use_room:  # (the layers that fit are placed under each cap below)
            placed = place_experts(model, placement, device)
            diffs[placement] = float((one_forward_logits(model, config, device) - reference).abs().max())
            report["host_logits"] = {**report["host_logits"], "identical": all(d == 0 for d in diffs.values())}
            say(f"{placement}: {placed.modules} expert modules, {placed.host_bytes / GIB:.2f} GiB in host memory; "
                f"max |logits - device logits| {diffs[placement]:.3g}")  # fmt: skip
        compute_device = torch.device("cpu") if placement == "host-compute" else device
        kernel = "fused" if experts[0].uses_fused_kernel(compute_device) else "dequantize"
        host_passes = min(passes, HOST_PASSES[placement])
        # The first measurement's time is guessed from one layer's experts on a canvas of rows, so that a slow
        # placement (host-compute dequantizes every expert on the CPU) is skipped before it overruns the call.
        last_ms: float | None = probe_ms(experts[-1], canvas, device) * layers if not use_room else None
        for cap in caps:
            try:
                if cuda and cap is not None:
                    gc.collect()
                    torch.cuda.empty_cache()  # cached blocks would count against the cap
                    report.append("reserved_before_cap", {"placement": placement, "cap_gib": cap,
                                                          "allocated_bytes": torch.cuda.memory_allocated(device),
                                                          "reserved_bytes": torch.cuda.memory_reserved(device)})
                    # No device argument: it refuses an index-less torch.device("cuda"); the current one is it.
                    torch.cuda.set_per_process_memory_fraction(min(1.0, cap * GIB / total))
                    torch.cuda.reset_peak_memory_stats(device)
                if use_room:
                    # What Redraft does on such a card: the layers the doctor finds room for stay on the GPU
                    # (on CPU, one of the toy's three, so the dry run streams between a resident layer).
                    resident = 1 if cap is None else resident_layers_that_fit(
                        config, "4bit", DeviceInfo("cuda", f"{cap} GiB cap", cap * GIB, cap * GIB))
                    placed = place_experts(model, placement, device, resident=min(resident, layers - 1))
                for prefix in prefixes:
                    # The prefix's encoder pass runs ~prefix/canvas passes' worth of rows through the experts.
                    forwards = host_passes + 1 + max(1.0, prefix / canvas)
                    expected_s = (last_ms or 0) / 1000 * forwards
                    if elapsed_s() + expected_s > budget_s * 0.9:
                        report.append("skipped", f"4bit {placement} cap {cap} prefix {prefix}: out of time")
                        continue
                    row: dict[str, Any] = {"precision": "4bit", "placement": placement, "cap_gib": cap,
                                           "expert_kernel": kernel, "weights_bytes": weights,
                                           "resident_layers": placed.resident, "layers": layers}  # fmt: skip
                    if cap is None:
                        row["cap"] = CAP_NOT_ON_CPU
                    try:
                        row.update(measure(model, config, prefix, host_passes, device,
                                           counters=functools.partial(placement_counters, placed)))  # fmt: skip
                        last_ms = row["ms_per_pass"]
                    except torch.cuda.OutOfMemoryError as error:
                        row.update({"prefix": prefix, "ms_per_pass": None, "peak_bytes": None, "error": OOM_UNDER_CAP,
                                    **oom_details(error, device)})  # fmt: skip
                        gc.collect()
                        torch.cuda.empty_cache()
                    row.update({"host_bytes": placed.host_bytes, "slot_bytes": placed.slot_bytes,
                                "bytes_copied_per_pass": row.get("per_pass", {}).get("bytes_copied")})  # fmt: skip
                    say(f"  {json.dumps(row)}")
                    report.append("rows", row)
            except torch.cuda.OutOfMemoryError as error:  # the resident layers did not fit under the cap
                report.append("rows", {"precision": "4bit", "placement": placement, "cap_gib": cap,
                                       "prefix": prefixes[0], "resident_layers": "spare room", "ms_per_pass": None,
                                       "peak_bytes": None, "error": OOM_UNDER_CAP,
                                       **oom_details(error, device)})  # fmt: skip
                gc.collect()
                torch.cuda.empty_cache()
            finally:
                if cuda:
                    torch.cuda.set_per_process_memory_fraction(1.0)
    # Not moved back: the caller drops the model next, and moving ~11 GiB onto the GPU would cost seconds.


def expandable_segments() -> str:
    """Let the caching allocator hand freed pages back inside a segment, before the first allocation. The
    2026-11-28 H200 run ran out under the 12 GiB cap holding 3.7 GiB allocated and 15.5 GiB reserved after
    ``empty_cache``: the experts moved to the host left holes in segments the GPU-resident weights still
    share, which only page-wise release gives back. Redraft's own loads place the experts as they read them,
    so only this bench, which moves a model already on the GPU, needs it."""
    import torch

    try:
        torch.cuda.memory._set_allocator_settings("expandable_segments:True")
    except (AttributeError, RuntimeError) as error:  # a PyTorch without the setting: the report says so
        return f"default (expandable segments refused: {error})"
    return "expandable_segments:True"


def oom_details(error: BaseException, device: Any) -> dict[str, Any]:
    """What the allocator held when a cap was hit (2026-11-26's H100 ran out at once under 12 GiB with no
    layer resident, where ~5 GiB was expected): allocated against reserved tells a leak from fragmentation."""
    import torch

    return {"oom_message": str(error).splitlines()[0][:300],
            "allocated_bytes": torch.cuda.memory_allocated(device),
            "reserved_bytes": torch.cuda.memory_reserved(device)}  # fmt: skip


def targets_26b(rows: list[dict[str, Any]], context: int) -> dict[str, Any]:
    """The issue's targets at 4 bit: at most 16 GiB peak at 2k context, and the tokens each pass must settle
    for 1,500 tokens per second with the faster kernel (the sampler's tokens per pass need a real checkpoint)."""
    from model.checkpoint.doctor import GIB

    at = [r for r in rows if r["precision"] == "4bit" and r.get("placement", "device") == "device"
          and r["prefix"] == context and r.get("ms_per_pass")]  # fmt: skip
    if not at:
        return {"measured": False}
    best = min(at, key=lambda r: r["ms_per_pass"])
    return {
        "measured": True, "context": context, "kernel": best["expert_kernel"],
        "peak_gib": round(best["peak_bytes"] / GIB, 2), "peak_at_most_16_gib": best["peak_bytes"] <= 16 * GIB,
        "ms_per_pass": round(best["ms_per_pass"], 1), "tokens_per_pass_for_1500_tok_s": round(
            1500 * best["ms_per_pass"] / 1000, 1),
    }  # fmt: skip


def readme_rows(data: dict[str, Any]) -> list[str]:
    """The README's rows from bench26b.json: the 26B table's (4bit, bf16), then the host-placement table's."""
    return precision_rows(data) + host_rows(data)


def precision_rows(data: dict[str, Any]) -> list[str]:
    """The 26B table's rows (4bit, bf16): every layer on the device."""
    from model.checkpoint.doctor import GIB

    rows = [r for r in data.get("rows", []) if r.get("placement", "device") == "device"]
    lines = []
    for precision, label in (("4bit", "4bit (NF4 experts, int8 linears)"), ("bf16", "bf16")):
        mine = [r for r in rows if r["precision"] == precision and r.get("ms_per_pass")]
        if not mine:
            continue
        prefixes = sorted({r["prefix"] for r in mine})
        weights = mine[0]["weights_bytes"] / GIB
        kernels = sorted({r["expert_kernel"] for r in mine}, key=lambda k: k != "fused")

        def cell(kernel: str, key: str, prefixes: list[int] = prefixes, mine: list[dict] = mine) -> str:
            values = [next((r[key] for r in mine if r["prefix"] == p and r["expert_kernel"] == kernel), None)
                      for p in prefixes]  # fmt: skip
            if key == "peak_bytes":
                return " / ".join(f"{v / GIB:.1f}" if v else "—" for v in values) + " GiB"
            return " / ".join(f"{v:.0f}" if v else "—" for v in values) + " ms"

        peak = cell(kernels[0], "peak_bytes")
        speed = "; ".join(f"{cell(k, 'ms_per_pass')} ({k})" for k in kernels if k != "none") or cell(
            kernels[0], "ms_per_pass"
        )
        lines.append(f"| {label} | {weights:.1f} GiB | measured | {peak} | {speed} |")
    return lines


def host_label(placement: str, cap_gib: int | None, use_room: bool = False) -> str:
    if placement == "device":
        return "all on the GPU"
    label = f"{placement}, {cap_gib} GiB cap" if cap_gib is not None else f"{placement}, no cap (CPU)"
    return label + ", layers that fit kept on the GPU" if use_room else label


def host_rows(data: dict[str, Any]) -> list[str]:
    """The host-placement table's rows at the first two prefixes (0 and 2k): each placement and cap that ran
    (a cap it did not fit reads "out of memory under the cap"), and the 4-bit model all on the GPU with the
    kernel the streamed experts used, for comparison."""
    from model.checkpoint.doctor import GIB

    rows = [r for r in data.get("rows", []) if r["precision"] == "4bit"]
    hosted = [r for r in rows if r.get("placement", "device") != "device"]
    if not hosted:
        return []
    prefixes = sorted({r["prefix"] for r in hosted})[:2]
    stream_kernels = [r["expert_kernel"] for r in hosted if r["placement"] == "host-stream"]
    on_device = [r for r in rows if r.get("placement", "device") == "device"]
    kernel = next((k for k in [*stream_kernels, "fused"] if any(r["expert_kernel"] == k for r in on_device)),
                  on_device[0]["expert_kernel"] if on_device else None)  # fmt: skip
    groups: dict[tuple[str, int | None, bool], list[dict[str, Any]]] = {}
    if kernel is not None:
        groups[("device", None, False)] = [r for r in on_device if r["expert_kernel"] == kernel]
    for row in hosted:
        groups.setdefault((row["placement"], row.get("cap_gib"), bool(row.get("resident_layers"))), []).append(row)
    lines = []
    for (placement, cap, use_room), mine in groups.items():
        at = [next((r for r in mine if r["prefix"] == p), None) for p in prefixes]
        if not any(r and (r.get("ms_per_pass") or r.get("error")) for r in at):
            continue
        if all(r is not None and r.get("error") == OOM_UNDER_CAP for r in at):
            peak = speed = OOM_UNDER_CAP
        else:

            def values(key: str, scale: float, at: list[dict[str, Any] | None] = at) -> str:
                return " / ".join(f"{r[key] / scale:.{1 if scale == GIB else 0}f}" if r and r.get(key) else
                                  "OOM" if r and r.get("error") == OOM_UNDER_CAP else "—" for r in at)  # fmt: skip

            peak = values("peak_bytes", GIB) + " GiB"
            speed = values("ms_per_pass", 1) + f" ms ({mine[0]['expert_kernel']})"
        host = next((r["host_bytes"] for r in mine if r.get("host_bytes")), 0)
        memory = f"{host / GIB:.1f} GiB" if host else "none"
        kept = next((r for r in mine if isinstance(r.get("resident_layers"), int) and r["resident_layers"]), None)
        if kept is not None:
            memory += f" ({kept['resident_layers']} of {kept['layers']} layers' experts on the GPU)"
        lines.append(f"| {host_label(placement, cap, use_room)} | {peak} | {speed} | {memory} |")
    return lines


README_TABLE_HEAD = (
    "| precision | weights | estimated total at 2k context | peak VRAM at 0 / 2k / 8k | ms per pass at 0 / 2k / 8k |"
)
HOST_TABLE_HEAD = "| routed experts | peak VRAM at 0 / 2k | ms per pass at 0 / 2k | host memory used |"
MEASURED = "Measured with `bench/gpu_runbook.py bench26b`"
HOST_MEASURED = "Host placements measured with `bench/gpu_runbook.py bench26b`"


def fill_table(text: str, head: str, lines: list[str], kept: int) -> tuple[str, list[str]]:
    """Replace the rows of the table under ``head`` that ``lines`` name (by their first cell), keeping each
    row's first ``kept`` cells as the README has them; rows no line names stay as they are. Also returns
    the first cells of the rows left with figures of an earlier run (not only "not measured")."""
    if head not in text:
        raise SystemExit(f"README has no table headed {head!r} (its header changed?)")
    start = text.index(head)
    end = text.find("\n\n", start)
    end = len(text) if end < 0 else end
    table = text[start:end]
    replaced: set[str] = set()
    for line in lines:
        cells = line.split("|")[1:-1]
        match = re.search(rf"^\| {re.escape(cells[0].strip())} \|[^\n]*$", table, flags=re.M)
        if match is None:
            continue
        replaced.add(cells[0].strip())
        old = match.group(0).split("|")[1:-1]
        table = table[: match.start()] + "|" + "|".join(old[:kept] + cells[kept:]) + "|" + table[match.end() :]
    earlier = []
    for row in table.splitlines()[2:]:
        cells = [c.strip() for c in row.split("|")[1:-1]]
        if cells and cells[0] not in replaced and any(c not in ("not measured", "—") for c in cells[kept:]):
            earlier.append(cells[0])
    return text[:start] + table + text[end:], earlier


def note_after(text: str, head: str, note: str) -> str:
    end = text.index("\n\n", text.index(head)) + 2  # right after the table
    return text[:end] + note + "\n\n" + text[end:]


def earlier_runs(text: str, note: str, rows: list[str]) -> str:
    """The clause that says which of ``rows`` a run did not measure and on which device they were: read from
    the note the README had under the table (a row an even earlier run measured keeps that run's device)."""
    if not rows:
        return ""
    found = re.search(rf"^{re.escape(note)} on (.+?) \((?:random weights)[^\n]*$", text, flags=re.M)
    if found is None:
        return f"; not measured in this run, from an earlier one: {', '.join(rows)}"
    line, device = found.group(0), found.group(1)
    devices = dict(re.findall(r"the (.+?) row from an earlier run on (.+?)(?=; the |\)\.?$)", line))
    return "".join(f"; the {row} row from an earlier run on {devices.get(row, device)}" for row in rows)


def write_readme_table(data: dict[str, Any], readme: Path) -> str:
    """Replace the measured cells of the README's 26B table (each precision's row keeps its estimate) and of
    its host-placement table (rows with no measurement keep "not measured"). A row this run did not measure
    keeps its figures, and the note under the table says which earlier run's device they came from."""
    from model.checkpoint.doctor import GIB

    text = readme.read_text(encoding="utf-8")
    text, earlier = fill_table(text, README_TABLE_HEAD, precision_rows(data), kept=3)
    measured_before = earlier_runs(text, MEASURED, earlier)
    hosted = host_rows(data)
    text, earlier_hosted = fill_table(text, HOST_TABLE_HEAD, hosted, kept=1)
    hosted_before = earlier_runs(text, HOST_MEASURED, earlier_hosted)
    device = data.get("device", "?")
    # A run without host rows leaves the host table's note as it was.
    notes = [MEASURED, HOST_MEASURED] if hosted else [MEASURED]
    text = re.sub(rf"^(?:{'|'.join(map(re.escape, notes))})[^\n]*\n\n", "", text, flags=re.M)
    text = note_after(text, README_TABLE_HEAD, f"{MEASURED} on {device} (random weights, canvas {data.get('canvas')}"
                      f"{measured_before}).")  # fmt: skip
    if hosted:
        copied = [r["bytes_copied_per_pass"] for r in data.get("rows", [])
                  if r.get("placement") == "host-stream" and r.get("bytes_copied_per_pass")]  # fmt: skip
        streamed = f"; host-stream copied {max(copied) / GIB:.1f} GiB a pass" if copied else ""
        text = note_after(text, HOST_TABLE_HEAD, f"{HOST_MEASURED} on {device} (random weights, canvas "
                          f"{data.get('canvas')}; the cap limits PyTorch's allocations, the CUDA context comes on top"
                          f"{streamed}{hosted_before}).")  # fmt: skip
    readme.write_text(text, encoding="utf-8")
    return text
