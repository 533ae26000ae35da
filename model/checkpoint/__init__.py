"""A checkpoint from folder to a model in memory: where it lives, what it is, whether it fits, how it loads.

:mod:`folders` (the built-in model's folder, a local path or a hub id from the cache, config.json read) →
:mod:`doctor` (will it fit this device at this precision? the verdict behind ``redraft doctor``, from
:mod:`footprint`'s estimate) →
:mod:`loading` (``load``: safetensors only, every broken folder its own error) → for a quantized load
:mod:`streaming` (shard by shard, quantized as it goes) with :mod:`quantization` (the precision policy),
:mod:`quantized_experts` (NF4/int8 experts, only the routed ones computed) and :mod:`nf4_kernel` (the fused
Triton matmul on CUDA); :mod:`expert_placement` keeps those experts in host memory when the GPU is too small
for the whole model (streamed to it layer by layer, or computed on the CPU); :mod:`quantized_copy` keeps a
quantized model on disk so that the next load quantizes nothing, and :mod:`safetensors_io` writes and reads
shards a tensor at a time. Before any of it, :mod:`hub` plans a download from the hub and names its failures,
:mod:`hub_transfer` fetches it (resumable, checked) and :mod:`manager` lists, validates and removes installed
ones. :mod:`architecture` builds and reads DiffusionGemma configs, :mod:`building` lets one thread at a time
build or load a transformers model (the build swaps process-wide attributes), :mod:`tokenization` holds the
tokenizer conventions, and :mod:`tiny` writes small random checkpoints for tests, benchmarks and demos.

Modules outside ``model/`` use the ones named in ``__all__`` (the kernel for the GPU bench's check against
bitsandbytes); the experts module is installed by ``quantization`` and reached only through it.
"""

__all__ = [
    "architecture",
    "building",
    "doctor",
    "expert_placement",
    "folders",
    "hub",
    "hub_transfer",
    "loading",
    "manager",
    "nf4_kernel",
    "quantization",
    "safetensors_io",
    "streaming",
    "tiny",
    "tokenization",
]
