"""Loading checkpoints: the round trip, and each way a checkpoint can be broken."""

from __future__ import annotations

import json
import resource
import shutil
import threading
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from model import DenoiseOptions, EditRequest, Engine, ModelLoadError, load
from model.checkpoint.architecture import TextModelShape, build_config
from model.checkpoint.building import new_model
from model.checkpoint.tokenization import train_bpe_tokenizer


@pytest.fixture()
def checkpoint_copy(tiny_checkpoint: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(tiny_checkpoint, tmp_path / "copy"))


def test_save_pretrained_round_trip_gives_the_same_logits(tmp_path: Path) -> None:
    tokenizer = train_bpe_tokenizer(["a small text to train on, with some words"] * 3, 300)
    torch.manual_seed(0)
    original = new_model(build_config(TextModelShape(vocab_size=len(tokenizer)))).eval()
    original.save_pretrained(tmp_path / "m")
    tokenizer.save_pretrained(tmp_path / "m")
    assert (tmp_path / "m" / "model.safetensors").is_file()

    loaded = load(tmp_path / "m", device="cpu")
    assert loaded.precision == "fp32" and loaded.device.type == "cpu"
    prompt = torch.tensor([[2, 40, 41, 42]])
    canvas = torch.randint(0, len(tokenizer), (1, loaded.canvas_length))
    with torch.no_grad():
        expected = original(input_ids=prompt, decoder_input_ids=canvas).logits
        actual = loaded.model(input_ids=prompt, decoder_input_ids=canvas).logits
    torch.testing.assert_close(actual, expected)
    assert loaded.tokenizer.encode("a small text", add_special_tokens=False) == tokenizer.encode(
        "a small text", add_special_tokens=False
    )


def test_loads_in_several_threads_at_once_all_work_and_leave_transformers_as_it_was(tiny_checkpoint: Path) -> None:
    # Two windows loading at once (or a reload while a load still runs) once left transformers' tie_weights a
    # no-op for the whole process: every later model came out untied and every later load failed.
    from transformers import PreTrainedModel

    tie_weights = PreTrainedModel.tie_weights
    loaded, errors = [], []

    def load_one() -> None:
        try:
            loaded.append(load(tiny_checkpoint, device="cpu"))
        except Exception as error:  # noqa: BLE001  the test reports every thread's failure
            errors.append(error)

    built = []
    for _ in range(3):
        threads = [threading.Thread(target=load_one) for _ in range(3)]
        for thread in threads:
            thread.start()
        built.append(new_model(loaded[0].model.config if loaded else build_config(TextModelShape(vocab_size=300))))
        for thread in threads:
            thread.join()
    assert errors == [] and len(loaded) == 9
    assert PreTrainedModel.tie_weights is tie_weights
    for model in [one.model for one in loaded] + built:
        assert model.get_output_embeddings().weight is model.get_input_embeddings().weight
    prompt, canvas = torch.tensor([[2, 40, 41, 42]]), torch.randint(0, 300, (1, loaded[0].canvas_length))
    with torch.no_grad():
        first = loaded[0].model(input_ids=prompt, decoder_input_ids=canvas).logits
        for one in loaded[1:]:
            torch.testing.assert_close(one.model(input_ids=prompt, decoder_input_ids=canvas).logits, first)


def test_generation_config_supplies_sampler_defaults(checkpoint_copy: Path) -> None:
    (checkpoint_copy / "generation_config.json").write_text(json.dumps({
        "max_denoising_steps": 17, "t_min": 0.3, "t_max": 0.9,
        "sampler_config": {"entropy_bound": 0.25, "_cls_name": "EntropyBoundSamplerConfig"},
    }))
    loaded = load(checkpoint_copy, device="cpu")
    assert loaded.generation_defaults == {"max_denoising_steps": 17, "t_min": 0.3, "t_max": 0.9,
                                          "entropy_bound": 0.25}


def test_redraft_sampler_file_adds_the_left_to_right_bias(checkpoint_copy: Path) -> None:
    (checkpoint_copy / "generation_config.json").write_text(json.dumps({"max_denoising_steps": 17}))
    (checkpoint_copy / "redraft_sampler.json").write_text(json.dumps({"left_to_right_bias": 2}))
    loaded = load(checkpoint_copy, device="cpu")
    assert loaded.generation_defaults == {"max_denoising_steps": 17, "left_to_right_bias": 2.0}


def test_redraft_sampler_file_overrides_the_step_cap_for_redrafts_engine(checkpoint_copy: Path) -> None:
    # generation_config.json keeps the published cap for transformers and vLLM; Redraft's tuned one wins here.
    (checkpoint_copy / "generation_config.json").write_text(json.dumps({"max_denoising_steps": 48}))
    (checkpoint_copy / "redraft_sampler.json").write_text(json.dumps({"max_denoising_steps": 32.0}))
    loaded = load(checkpoint_copy, device="cpu")
    assert loaded.generation_defaults == {"max_denoising_steps": 32}
    assert DenoiseOptions().resolved(loaded.generation_defaults).max_denoising_steps == 32


def test_redraft_sampler_file_sets_polish_rounds_as_a_count(checkpoint_copy: Path) -> None:
    (checkpoint_copy / "redraft_sampler.json").write_text(json.dumps({"polish_rounds": 6.0}))
    loaded = load(checkpoint_copy, device="cpu")
    assert loaded.generation_defaults == {"polish_rounds": 6}
    assert DenoiseOptions().resolved(loaded.generation_defaults).polish_rounds == 6


def test_redraft_sampler_file_sets_the_wide_canvas_bound(checkpoint_copy: Path) -> None:
    (checkpoint_copy / "redraft_sampler.json").write_text(json.dumps({"wide_entropy_bound": 8}))
    loaded = load(checkpoint_copy, device="cpu")
    assert loaded.generation_defaults == {"wide_entropy_bound": 8.0}
    assert DenoiseOptions().resolved(loaded.generation_defaults).wide_entropy_bound == 8.0
    # A request's own value wins, 0 (the published sampler) included.
    assert DenoiseOptions(wide_entropy_bound=0.0).resolved(loaded.generation_defaults).wide_entropy_bound == 0.0


def test_redraft_sampler_file_caps_the_context_the_engine_reads(checkpoint_copy: Path) -> None:
    # A model trained on short prefixes (the built-in one: 128 tokens) reads no more, whatever the budget.
    long_prefix = "The lamp burned low in the keeper's room while the storm went on. " * 40
    request = EditRequest(prefix=long_prefix, suffix=" the stairs.", mode="fill", max_new_tokens=4, seed=0,
                          context_budget=2048, options=DenoiseOptions(max_denoising_steps=2, polish_rounds=0))
    uncapped = Engine(load(checkpoint_copy, device="cpu")).run(request)
    (checkpoint_copy / "redraft_sampler.json").write_text(json.dumps({"max_context_tokens": 32.0}))
    loaded = load(checkpoint_copy, device="cpu")
    assert loaded.generation_defaults == {"max_context_tokens": 32}
    assert uncapped.prompt_tokens > 200
    assert Engine(loaded).run(request).prompt_tokens == 32  # the budget counts [bos] too
    # A smaller budget of the writer's still wins.
    assert Engine(loaded).run(replace(request, context_budget=8)).prompt_tokens == 8


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"max_context_tokens": 0}', "max_context_tokens must be a whole number from 1 to"),
        ('{"max_context_tokens": 64.5}', "max_context_tokens must be a whole number from 1 to"),
        ('{"left_to_right_bias": -1}', "must be a number >= 0"),
        ('{"wide_entropy_bound": -2}', "must be a number >= 0"),
        ('{"left_to_right_bias": "high"}', "must be a number >= 0"),
        ('{"left_to_right": 1.0}', "unknown keys"),
        ('{"polish_rounds": 1.5}', "polish_rounds must be a whole number from 0 to 64"),
        ('{"polish_rounds": 1e9}', "polish_rounds must be a whole number from 0 to 64"),
        ('{"max_denoising_steps": 0}', "max_denoising_steps must be a whole number from 1 to 1024"),
        ('{"max_denoising_steps": 12.5}', "max_denoising_steps must be a whole number from 1 to 1024"),
        ("[1.0]", "JSON object"),
        ("{left_to_right_bias: 1}", "not valid JSON"),
    ],
)
def test_bad_redraft_sampler_file_is_refused_clearly(checkpoint_copy: Path, content: str, message: str) -> None:
    (checkpoint_copy / "redraft_sampler.json").write_text(content)
    with pytest.raises(ModelLoadError, match=message):
        load(checkpoint_copy, device="cpu")


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="does not exist"):
        load(tmp_path / "nowhere")


def test_a_file_instead_of_a_folder(tmp_path: Path) -> None:
    (tmp_path / "model.txt").write_text("hi")
    with pytest.raises(ModelLoadError, match="is a file"):
        load(tmp_path / "model.txt")


def test_folder_without_config(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="no config.json"):
        load(tmp_path)


def test_folder_without_weights(checkpoint_copy: Path) -> None:
    (checkpoint_copy / "model.safetensors").unlink()
    with pytest.raises(ModelLoadError, match="has no weights"):
        load(checkpoint_copy)


def test_pickle_weights_are_refused(checkpoint_copy: Path) -> None:
    (checkpoint_copy / "model.safetensors").rename(checkpoint_copy / "pytorch_model.bin")
    with pytest.raises(ModelLoadError, match="safetensors only"):
        load(checkpoint_copy)


def test_truncated_safetensors(checkpoint_copy: Path) -> None:
    weights = checkpoint_copy / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) - 1000])
    with pytest.raises(ModelLoadError, match="truncated"):
        load(checkpoint_copy)


def test_corrupt_safetensors_header(checkpoint_copy: Path) -> None:
    weights = checkpoint_copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[8:20] = b"not json at!"
    weights.write_bytes(bytes(data))
    with pytest.raises(ModelLoadError, match="not a valid safetensors file"):
        load(checkpoint_copy)


def test_missing_shard_of_an_index(checkpoint_copy: Path) -> None:
    (checkpoint_copy / "model.safetensors").unlink()
    (checkpoint_copy / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": {"lm_head.weight": "model-00001-of-00002.safetensors"}}
    ))
    with pytest.raises(ModelLoadError, match="missing weight shards: model-00001-of-00002"):
        load(checkpoint_copy)


def test_config_of_another_model_type(checkpoint_copy: Path) -> None:
    config = json.loads((checkpoint_copy / "config.json").read_text())
    config["model_type"] = "llama"
    (checkpoint_copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match="holds a llama model"):
        load(checkpoint_copy)


def test_config_that_is_not_json(checkpoint_copy: Path) -> None:
    (checkpoint_copy / "config.json").write_text("{ broken")
    with pytest.raises(ModelLoadError, match="not valid JSON"):
        load(checkpoint_copy)


def test_tokenizer_that_does_not_match_the_vocabulary(checkpoint_copy: Path) -> None:
    bigger = train_bpe_tokenizer([" ".join(f"word{i} thing{i * 7}" for i in range(3000))], 1000)
    assert len(bigger) > 500
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (checkpoint_copy / name).unlink(missing_ok=True)
    bigger.save_pretrained(checkpoint_copy)
    with pytest.raises(ModelLoadError, match="tokenizer does not match the model"):
        load(checkpoint_copy)


def test_missing_tokenizer(checkpoint_copy: Path) -> None:
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (checkpoint_copy / name).unlink(missing_ok=True)
    with pytest.raises(ModelLoadError, match="has no tokenizer"):
        load(checkpoint_copy)


def test_hub_id_not_in_cache_and_downloads_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelLoadError, match="not in the local Hugging Face cache, and downloads are off"):
        load("google/diffusiongemma-26B-A4B-it")


def test_hub_id_found_in_the_local_cache(tiny_checkpoint: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Lay the tiny checkpoint out as the hub cache does (refs/main -> snapshots/<commit>/files).
    repo = tmp_path / "cache" / "models--redraft--tiny"
    commit = "0" * 40
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    shutil.copytree(tiny_checkpoint, repo / "snapshots" / commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    loaded = load("redraft/tiny", device="cpu")
    assert loaded.folder == repo / "snapshots" / commit


def test_unknown_precision(tiny_checkpoint: Path) -> None:
    with pytest.raises(ModelLoadError, match="unknown precision"):
        load(tiny_checkpoint, precision="3bit")


def test_builtin_model_missing_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDRAFT_RESOURCES", str(tmp_path))
    with pytest.raises(ModelLoadError, match="built-in model is not installed"):
        load()


def test_progress_is_reported_in_order(tiny_checkpoint: Path) -> None:
    stages: list[tuple[str, float]] = []
    load(tiny_checkpoint, device="cpu", progress=lambda stage, fraction: stages.append((stage, fraction)))
    fractions = [fraction for _, fraction in stages]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0


def test_a_model_too_big_for_the_device_is_refused_before_loading(
    tiny_checkpoint: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from model.checkpoint.doctor import DeviceInfo

    little = DeviceInfo(kind="cpu", name="host memory", total_bytes=64 * 2**20, free_bytes=2**20)
    monkeypatch.setattr("model.checkpoint.doctor.cpu_device_info", lambda: little)
    with pytest.raises(ModelLoadError, match="needs about .* GiB in fp32, and cpu host memory: 0.0 GiB free"):
        load(tiny_checkpoint, device="cpu")
    assert load(tiny_checkpoint, device="cpu", check_fit=False).precision == "fp32"


def test_the_builtin_model_loads_and_fills() -> None:
    from model import EditRequest, Engine

    loaded = load(device="cpu")
    assert loaded.name == "redraft-tiny" and not loaded.follows_instructions
    assert loaded.generation_defaults["max_denoising_steps"] > 0
    result = Engine(loaded).run(EditRequest(prefix="Once upon a time, Lily", suffix=" in the park.",
                                            mode="fill", max_new_tokens=8, seed=0))
    assert result.text.strip()  # the trained model writes something, and stops within the slots


# -- hostile folders (issue #40 item 7): each gets its own ModelLoadError in words, nothing else -------------


def _set_config(folder: Path, text: dict[str, object] | None = None, **top: object) -> None:
    config = json.loads((folder / "config.json").read_text())
    config.update(top)
    if text:
        config["text_config"].update(text)
    (folder / "config.json").write_text(json.dumps(config))


def _safetensors_with_header(folder: Path, header: bytes) -> None:
    (folder / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 64)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (b"[]", "its header is list, not an object"),
        (b"null", "its header is NoneType, not an object"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"w": {"dtype": "F32", "shape": [1], "data_offsets": ["0", "4"]}}', "'w' has no valid data offsets"),
        (b'{"w": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}}', "'w' has no valid data offsets"),
        (b'{"w": [0, 4]}', "'w' has no valid data offsets"),
    ],
)
def test_hostile_safetensors_header(checkpoint_copy: Path, header: bytes, message: str) -> None:
    _safetensors_with_header(checkpoint_copy, header)
    with pytest.raises(ModelLoadError, match=message):
        load(checkpoint_copy, device="cpu")


def test_a_safetensors_header_claiming_gigabytes_is_not_read(checkpoint_copy: Path) -> None:
    weights = checkpoint_copy / "model.safetensors"
    with weights.open("wb") as handle:  # a sparse file: 2 GB on paper, nothing on the disk
        handle.write((2**30).to_bytes(8, "little"))
        handle.truncate(2**31)
    with pytest.raises(ModelLoadError, match="its header claims 1,073,741,824 bytes"):
        load(checkpoint_copy, device="cpu")


@pytest.mark.parametrize(
    ("weight_map", "message"),
    [
        ({"lm_head.weight": 3}, "'lm_head.weight' maps to a number, not a shard file name"),
        (["model.safetensors"], "weight_map must be an object of tensor names to shard files, not a list"),
        ({"lm_head.weight": "../../etc/hostname"}, "names a shard outside the model folder"),
        ({"lm_head.weight": "/etc/hostname"}, "names a shard outside the model folder"),
        ({"lm_head.weight": "config.json"}, "shards are .safetensors files"),
        ({}, "weight_map must be an object"),
    ],
)
def test_hostile_index(checkpoint_copy: Path, weight_map: object, message: str) -> None:
    (checkpoint_copy / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    with pytest.raises(ModelLoadError, match=message):
        load(checkpoint_copy, device="cpu")


def test_streaming_checks_the_index_as_loading_does(checkpoint_copy: Path) -> None:
    from model.checkpoint.streaming import shard_files

    (checkpoint_copy / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"x": "../x.safetensors"}}))
    with pytest.raises(ModelLoadError, match="outside the model folder"):
        shard_files(checkpoint_copy)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("tokenizer_config.json", "[]", "tokenizer_config.json must hold a JSON object, not a list"),
        ("special_tokens_map.json", "null", "special_tokens_map.json must hold a JSON object, not null"),
        ("tokenizer_config.json", "[" * 50_000, "nested too deeply"),
        ("tokenizer.json", "[]", "has no usable tokenizer"),
        ("tokenizer.json", '{"model": {"type": "BPE", "vocab": 7}}', "has no usable tokenizer"),
    ],
)
def test_hostile_tokenizer_files(checkpoint_copy: Path, name: str, content: str, message: str) -> None:
    (checkpoint_copy / name).write_text(content)
    with pytest.raises(ModelLoadError, match=message):
        load(checkpoint_copy, device="cpu")


@pytest.mark.parametrize(
    ("text", "top", "message"),
    [
        ({"hidden_size": "big"}, {}, 'text_config.hidden_size must be a whole number, not "big"'),
        ({"num_experts": True}, {}, "text_config.num_experts must be a whole number, not true"),
        ({"vocab_size": 4.5}, {}, "text_config.vocab_size must be a whole number, not 4.5"),
        ({"vocab_size": [1]}, {}, "text_config.vocab_size must be a whole number, not a list"),
        ({"num_hidden_layers": 10**6}, {}, "text_config.num_hidden_layers is 1,000,000, outside what a"),
        ({"hidden_size": -8}, {}, "text_config.hidden_size is -8, outside"),
        ({}, {"canvas_length": 3_000_000}, "canvas_length is 3,000,000, outside"),
        ({}, {"text_config": "nope"}, "text_config must be a JSON object, not a string"),
        ({}, {"vision_config": [1]}, "vision_config must be a JSON object, not a list"),
        # Fields Redraft does not check itself: transformers' strict dataclass refuses them, in words.
        ({"layer_types": "all"}, {}, "not a valid DiffusionGemma config: .*layer_types"),
        ({"rms_norm_eps": "tiny"}, {}, "not a valid DiffusionGemma config: .*rms_norm_eps"),
        ({}, {"model_type": ["diffusion_gemma"]}, "holds an unknown model"),
        # Valid to the dataclass, but the model code finds no rope entry for its layer types (found by fuzzing).
        ({"rope_parameters": {}}, {}, "does not describe a model this transformers can build"),
    ],
)
def test_hostile_config_fields(checkpoint_copy: Path, text: dict[str, object], top: dict[str, object],
                               message: str) -> None:
    _set_config(checkpoint_copy, text, **top)
    started = time.monotonic()
    with pytest.raises(ModelLoadError, match=message):
        load(checkpoint_copy, device="cpu")
    assert time.monotonic() - started < 10  # refused from the file, before anything is built


@pytest.mark.parametrize("content", ["[]", "null", '"diffusion_gemma"', "[" * 100_000])
def test_a_config_that_is_not_an_object(checkpoint_copy: Path, content: str) -> None:
    (checkpoint_copy / "config.json").write_text(content)
    with pytest.raises(ModelLoadError, match="must hold a JSON object|nested too deeply"):
        load(checkpoint_copy, device="cpu")


@pytest.mark.parametrize("name", ["config.json", "generation_config.json", "model.safetensors.index.json",
                                  "redraft_sampler.json", "tokenizer_config.json"])
def test_a_huge_json_file_is_refused_unread(checkpoint_copy: Path, name: str) -> None:
    with (checkpoint_copy / name).open("w") as handle:  # sparse: 200 MB on paper
        handle.write('{"model_type": "diffusion_gemma", "pad": "')
        handle.truncate(200 * 2**20)
    tracemalloc.start()
    try:
        with pytest.raises(ModelLoadError, match=f"{name} is 200 MiB, too big for a model's .json file"):
            load(checkpoint_copy, device="cpu")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20  # the tiny model's own loading, not the 200 MB file


def test_a_config_without_experts_is_refused_in_words(checkpoint_copy: Path) -> None:
    _set_config(checkpoint_copy, text_config=None)  # transformers' dense default: no experts (found by fuzzing)
    with pytest.raises(ModelLoadError, match="not a DiffusionGemma config Redraft can run: .*num_experts"):
        load(checkpoint_copy, device="cpu")


def test_a_config_far_bigger_than_its_weights_is_refused_before_building(checkpoint_copy: Path) -> None:
    # A vision_config of unknown keys falls back to transformers' default tower (found by fuzzing: 670 MB built).
    _set_config(checkpoint_copy, vision_config={"model_type": "gemma4_vision", "colour": 1})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ModelLoadError, match="config and the weights do not belong together"):
        load(checkpoint_copy, device="cpu")
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024 < 100 * 2**20
