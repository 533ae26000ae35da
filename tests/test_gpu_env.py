"""The GPU-torch environment of installed copies (app/model_sources/gpu_env.py), the user folders and the self-test's
failure path."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from app import cli
from app.command_line import selftest
from app.model_sources import gpu_env
from app.userdirs import user_dirs


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path))
    monkeypatch.delenv(gpu_env.DISABLE_VARIABLE, raising=False)
    return tmp_path


def fake_pip(target: Path, requirements: list[str], index_url: str) -> None:
    (target / "torch" / "lib").mkdir(parents=True)
    (target / "torch" / "__init__.py").write_text(f"# {requirements} from {index_url}\n")
    (target / "torch" / "lib" / "libtorch_cuda.so").write_bytes(b"")


def test_user_dirs_follow_redraft_home(home: Path) -> None:
    dirs = user_dirs()
    assert {path.parent for _, path in dirs.as_rows()} == {home}
    assert gpu_env.gpu_env_dir() == home / "data" / "gpu-torch"


def test_user_dirs_are_the_platform_places(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDRAFT_HOME", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", "/x/config")
    monkeypatch.setenv("XDG_DATA_HOME", "/x/data")
    monkeypatch.setenv("XDG_STATE_HOME", "/x/state")
    if sys.platform != "linux":
        pytest.skip("XDG folders are Linux's")
    dirs = user_dirs()
    assert dirs.settings == Path("/x/config/Redraft")  # where QSettings' INI file lives too
    assert dirs.models == Path("/x/data/Redraft/models")
    assert dirs.recovery == Path("/x/state/Redraft/recovery")


def test_gpu_requirements_drop_the_build_tag() -> None:
    assert gpu_env.gpu_requirements("2.13.0+cpu", "0.50.2") == ["torch==2.13.0", "bitsandbytes==0.50.2"]
    assert gpu_env.gpu_requirements("2.13.0", None) == ["torch==2.13.0"]


def test_enable_installs_then_activate_puts_it_first(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[list[str], str]] = []

    def pip(target: Path, requirements: list[str], index_url: str) -> None:
        seen.append((requirements, index_url))
        fake_pip(target, requirements, index_url)

    folder = gpu_env.enable("cu126", installer=pip, versions=("2.13.0+cpu", "0.50.2"))
    assert seen == [(["torch==2.13.0", "bitsandbytes==0.50.2"], "https://download.pytorch.org/whl/cu126")]
    assert json.loads((folder / gpu_env.MARKER).read_text())["cuda"] == "cu126"
    assert not folder.with_name("gpu-torch.partial").exists()

    monkeypatch.delitem(sys.modules, "torch", raising=False)  # as at the start of a fresh process
    path = ["/bundle"]
    assert gpu_env.activate(path, environ={}) == folder
    assert path == [str(folder), "/bundle"]
    assert gpu_env.activate(path, environ={}) == folder and path.count(str(folder)) == 1


def test_activate_skips_when_disabled_foreign_or_too_late(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = gpu_env.enable(installer=fake_pip, versions=("2.13.0", None))
    path: list[str] = []
    assert gpu_env.activate(path, environ={}) is None, "torch is already imported in this test process"
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert gpu_env.activate(path, environ={gpu_env.DISABLE_VARIABLE: "1"}) is None
    marker = json.loads((folder / gpu_env.MARKER).read_text())
    (folder / gpu_env.MARKER).write_text(json.dumps({**marker, "python": "2.7"}))
    assert gpu_env.activate(path, environ={}) is None
    assert path == []


def test_a_failed_install_keeps_the_previous_one(home: Path) -> None:
    folder = gpu_env.enable("cu126", installer=fake_pip, versions=("2.13.0", None))

    def broken(target: Path, requirements: list[str], index_url: str) -> None:
        (target / "nvidia").mkdir(parents=True)  # half a download, then the network goes
        raise RuntimeError("pip stopped with exit status 1")

    with pytest.raises(RuntimeError):
        gpu_env.enable("cu128", installer=broken, versions=("2.13.0", None))
    assert json.loads((folder / gpu_env.MARKER).read_text())["cuda"] == "cu126"
    assert not folder.with_name("gpu-torch.partial").exists()

    with pytest.raises(RuntimeError, match="no torch package"):
        gpu_env.enable("cu128", installer=lambda target, *_: target.mkdir(parents=True), versions=("2.13.0", None))

    def cpu_only(target: Path, requirements: list[str], index_url: str) -> None:
        fake_pip(target, requirements, index_url)
        (target / "torch" / "lib" / "libtorch_cuda.so").unlink()  # what pip finds when the CUDA index is down

    with pytest.raises(RuntimeError, match="without CUDA"):
        gpu_env.enable("cu128", installer=cpu_only, versions=("2.13.0", None))
    assert (folder / "torch" / "__init__.py").is_file()
    assert json.loads((folder / gpu_env.MARKER).read_text())["cuda"] == "cu126"


def test_disable_removes_it_and_the_cli_reports(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = gpu_env.enable(installer=fake_pip, versions=("2.13.0", None))
    assert cli.main(["disable-gpu"]) == 0
    assert not folder.exists()
    assert "removed" in capsys.readouterr().out
    assert cli.main(["disable-gpu"]) == 0
    assert "Nothing to remove" in capsys.readouterr().out


def test_enable_gpu_failure_changes_nothing(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def offline(target: Path, requirements: list[str], index_url: str) -> None:
        (target / "torch").mkdir(parents=True)
        raise RuntimeError("pip stopped with exit status 1")

    monkeypatch.setattr(gpu_env, "pip_install", offline)
    assert cli.main(["enable-gpu", "--cuda", "cu126"]) == 1
    assert "nothing was changed" in capsys.readouterr().err
    assert not gpu_env.gpu_env_dir().exists()
    assert not gpu_env.gpu_env_dir().with_name("gpu-torch.partial").exists()


def test_doctor_names_the_torch_build(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("model.checkpoint.doctor.doctor_main", lambda argv: 0)
    assert cli.main(["doctor"]) == 0
    assert re.match(r"PyTorch \d+\.\S+ \((CPU|CUDA \S+) build, ", capsys.readouterr().out)


def test_self_test_names_the_failing_step(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_model(*args: object, **kwargs: object) -> None:
        raise OSError("model.safetensors is missing")

    monkeypatch.setattr("model.load", no_model)
    out = io.StringIO()
    assert selftest.self_test(out) == 1
    assert "FAILED at 'load the built-in model': OSError: model.safetensors is missing" in out.getvalue()


def test_a_windowless_start_writes_to_the_log_folder(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app import userdirs

    assert userdirs.log_when_windowless() is None, "pytest's streams lead somewhere"
    monkeypatch.setattr(sys, "stderr", None)
    monkeypatch.setattr(sys, "stdout", None)
    log = userdirs.log_when_windowless()
    assert log == home / "logs" / "redraft.log"
    print("warning: something", file=sys.stderr)
    sys.stderr.flush()
    assert "warning: something" in log.read_text()
    sys.stderr.close()
