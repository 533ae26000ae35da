"""The check that Qt can open a window, before the editor starts: missing libraries named, with the fix."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.command_line.platform_check import PACKAGES, XCB_PACKAGES_DEBIAN, check_platform, chosen_platform

ROOT = Path(__file__).resolve().parent.parent
ON_LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Qt's Linux platform plugins")


def _library(folder: Path, name: str, source: str, *link: str) -> Path:
    """A real shared library built with the C compiler (link: ``-l`` names found in ``folder``)."""
    (folder / f"{name}.c").write_text(source)
    out = folder / name
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-o", str(out), str(folder / f"{name}.c"), f"-Wl,-soname,{name}",
         f"-L{folder}", *link],
        check=True, capture_output=True,
    )  # fmt: skip
    return out


@ON_LINUX
def test_the_platform_qt_picks() -> None:
    assert chosen_platform({}) == "xcb"
    assert chosen_platform({"QT_QPA_PLATFORM": "offscreen"}) == "offscreen"
    assert chosen_platform({"QT_QPA_PLATFORM": "wayland;xcb"}) == "wayland"
    assert chosen_platform({"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}) == "wayland"


@ON_LINUX
def test_missing_libraries_are_named_with_the_lines_that_install_them() -> None:
    # Only the loader probes act out a bare machine; the plugin is PySide6's real xcb plugin.
    report = check_platform(
        {"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":0"},
        probe=lambda binary: ["libxcb-icccm.so.4", "libxkbcommon-x11.so.0"] if "qxcb" in binary.name else [],
        opens=lambda soname: False,
    )
    assert report is not None and not report.ok
    assert report.missing == ["libxcb-icccm.so.4", "libxkbcommon-x11.so.0", "libxcb-cursor.so.0"]
    message = report.message()
    for soname in report.missing:
        assert soname in message
    assert "sudo apt install libxcb-cursor0 libxcb-icccm4 libxkbcommon-x11-0" in message
    assert "sudo dnf install libxkbcommon-x11 xcb-util-cursor xcb-util-wm" in message


@ON_LINUX
@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("ldd") is None, reason="needs cc and ldd")
def test_a_plugin_folder_whose_plugin_cannot_load(tmp_path: Path) -> None:
    # A real plugin file that needs a library nowhere on the system: ldd finds it missing, as it would
    # libxcb-icccm on a bare Debian.
    needed = _library(tmp_path, "libredraft-absent.so.1", "int absent(void) { return 1; }")
    _library(tmp_path, "libqxcb.so", "int absent(void); int plugin(void) { return absent(); }",
             "-l:libredraft-absent.so.1")
    needed.unlink()
    report = check_platform({"QT_QPA_PLATFORM": "xcb", "QT_QPA_PLATFORM_PLUGIN_PATH": str(tmp_path),
                             "DISPLAY": ":0"})
    assert report is not None and not report.ok
    assert "libredraft-absent.so.1" in report.missing
    assert "apt-file search" in report.message() and "dnf provides" in report.message()


@ON_LINUX
def test_an_empty_plugin_folder(tmp_path: Path) -> None:
    report = check_platform({"QT_QPA_PLATFORM": "xcb", "QT_QPA_PLATFORM_PLUGIN_PATH": str(tmp_path)})
    assert report is not None and not report.plugin_found
    assert str(tmp_path) in report.message()


@ON_LINUX
def test_no_display_is_said_plainly() -> None:
    report = check_platform({"QT_QPA_PLATFORM": "xcb"}, probe=lambda binary: [], opens=lambda soname: True)
    assert report is not None and report.no_display == "DISPLAY"
    assert "DISPLAY is not set" in report.message()


@ON_LINUX
def test_offscreen_has_what_it_needs_here() -> None:
    # The GUI tests run offscreen on this machine, so the real probes must find nothing missing.
    report = check_platform({"QT_QPA_PLATFORM": "offscreen"})
    assert report is not None and report.ok, report.message()


def test_every_xcb_library_has_its_packages() -> None:
    debian = {packages[0] for packages in PACKAGES.values()}
    assert set(XCB_PACKAGES_DEBIAN) <= debian


@ON_LINUX
def test_the_editor_refuses_to_start_with_the_message_not_an_abort(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "QT_QPA_PLATFORM_PLUGIN_PATH": str(tmp_path), "DISPLAY": ":0"}
    done = subprocess.run([sys.executable, "-m", "app.cli"], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 1
    assert "platform plugin is not in" in done.stderr
    assert "Aborted" not in done.stderr and "core dumped" not in done.stderr


@ON_LINUX
def test_doctor_reports_the_display(tmp_path: Path) -> None:
    model = str(ROOT / "resources" / "models" / "redraft-tiny")
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "QT_QPA_PLATFORM_PLUGIN_PATH": str(tmp_path), "DISPLAY": ":0"}
    broken = subprocess.run([sys.executable, "-m", "app.cli", "doctor", "--model", model], capture_output=True,
                            text=True, env=env, cwd=ROOT, timeout=300)
    assert broken.returncode == 1
    assert "Display: Qt cannot open a window" in broken.stdout and str(tmp_path) in broken.stdout
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("QT_QPA_PLATFORM_PLUGIN_PATH", None)
    fine = subprocess.run([sys.executable, "-m", "app.cli", "doctor", "--model", model], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)
    assert fine.returncode == 0, fine.stdout + fine.stderr
    assert "Display: Qt's 'offscreen' platform plugin has every library it needs" in fine.stdout


@ON_LINUX
@pytest.mark.skipif(shutil.which("Xvfb") is None or shutil.which("xwininfo") is None,
                    reason="needs Debian's xvfb and x11-utils (.ci/run installs them)")
def test_the_real_window_starts_when_the_libraries_are_present(tmp_path: Path) -> None:
    report = check_platform({"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":0"})
    assert report is not None
    if report.missing:
        pytest.skip("this machine lacks Qt's X libraries: " + ", ".join(report.missing))
    display = f":{90 + os.getpid() % 100}"
    server = subprocess.Popen(["Xvfb", display, "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("QT_QPA_PLATFORM_PLUGIN_PATH", None)
    editor = None
    try:
        time.sleep(1)
        editor = subprocess.Popen([sys.executable, "-m", "app.cli"], env=env, cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline, windows = time.monotonic() + 60, ""
        while time.monotonic() < deadline and editor.poll() is None and "Redraft" not in windows:
            time.sleep(0.5)
            windows = subprocess.run(["xwininfo", "-root", "-tree"], env=env, capture_output=True,
                                     text=True).stdout
        assert editor.poll() is None, editor.communicate()[1]
        assert "Redraft" in windows
    finally:
        if editor is not None:
            editor.kill()
            editor.communicate()
        server.kill()
        server.wait()
