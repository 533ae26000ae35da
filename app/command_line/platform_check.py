"""Can Qt open a window on this machine? Asked before anything imports Qt's GUI modules.

Qt needs system libraries that PySide6's wheels do not carry. Without them it aborts with a message
that names one plugin and none of the packages ("From 6.5.0, xcb-cursor0 or libxcb-cursor0 is needed
to load the Qt xcb platform plugin"), and once that one is installed it stops at the next. Here the
platform plugin Qt will pick, and Qt's GUI and widget modules, are checked with ``ldd`` (every missing
library at once) plus the libraries Qt opens itself at run time, and the writer gets one message with
the libraries and the line that installs them on Debian/Ubuntu and on Fedora.

No Qt import happens here: a missing library could make that very import fail.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# soname -> (Debian/Ubuntu package, Fedora package) for the libraries Qt's Linux platform plugins use.
PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-glx.so.0": ("libxcb-glx0", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xinerama.so.0": ("libxcb-xinerama0", "libxcb"),
    "libxcb-xinput.so.0": ("libxcb-xinput0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libSM.so.6": ("libsm6", "libSM"),
    "libICE.so.6": ("libice6", "libICE"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libwayland-client.so.0": ("libwayland-client0", "libwayland-client"),
    "libwayland-cursor.so.0": ("libwayland-cursor0", "libwayland-cursor"),
    "libwayland-egl.so.1": ("libwayland-egl1", "libwayland-egl"),
}

# Libraries a plugin opens with dlopen at run time, which ldd cannot see: Qt 6.5+ refuses to start its
# xcb plugin without libxcb-cursor.
OPENED_AT_RUN_TIME: dict[str, tuple[str, ...]] = {"xcb": ("libxcb-cursor.so.0",)}

# Every X library the xcb plugin needs on a minimal Debian/Ubuntu system (the packaging's Depends).
XCB_PACKAGES_DEBIAN = (
    "libxcb-cursor0", "libxcb-icccm4", "libxcb-image0", "libxcb-keysyms1", "libxcb-render-util0",
    "libxkbcommon-x11-0", "libxcb-shape0", "libxcb-xkb1", "libx11-xcb1", "libegl1", "libgl1",
    "libfontconfig1", "libdbus-1-3", "libglib2.0-0",
)  # fmt: skip

# The variable that names the display each on-screen platform connects to.
DISPLAY_VARIABLE = {"xcb": "DISPLAY", "wayland": "WAYLAND_DISPLAY"}

NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)
CANNOT_OPEN = re.compile(r"(\S+\.so[.\d]*): cannot open shared object file")


@dataclass
class PlatformReport:
    """What the check found: nothing missing means Qt can start its platform plugin."""

    platform: str
    plugin: Path | None
    plugin_found: bool = True
    missing: list[str] = field(default_factory=list)
    no_display: str = ""  # the environment variable naming the display, when it is unset

    @property
    def ok(self) -> bool:
        return self.plugin_found and not self.missing and not self.no_display

    def install_lines(self) -> tuple[str, str]:
        """The apt and dnf lines that install the missing libraries."""
        debian = sorted({PACKAGES[name][0] for name in self.missing if name in PACKAGES})
        fedora = sorted({PACKAGES[name][1] for name in self.missing if name in PACKAGES})
        return "sudo apt install " + " ".join(debian), "sudo dnf install " + " ".join(fedora)

    def message(self) -> str:
        """The writer's explanation and what to do; empty when all is well."""
        if self.ok:
            return ""
        if self.plugin_found and not self.missing:
            return (
                f"Qt cannot open a window: there is no display ({self.no_display} is not set).\n"
                "Start Redraft from a desktop session, under xvfb-run, or with QT_QPA_PLATFORM=offscreen "
                "for a window nobody sees."
            )
        if not self.plugin_found:
            return (
                f"Qt cannot open a window: its {self.platform!r} platform plugin is not in {self.plugin}.\n"
                "Reinstall Redraft (or PySide6), or pick another platform with QT_QPA_PLATFORM "
                "(xcb, wayland, offscreen)."
            )
        lines = [
            f"Qt cannot open a window: its {self.platform!r} platform plugin needs system libraries "
            "this machine lacks:",
            "  " + ", ".join(self.missing),
        ]
        unknown = [name for name in self.missing if name not in PACKAGES]
        if len(unknown) < len(self.missing):
            apt, dnf = self.install_lines()
            lines += ["Install them with:", f"  Debian/Ubuntu: {apt}", f"  Fedora:        {dnf}"]
        if unknown:
            lines.append(
                "Your distribution's package search finds what provides " + ", ".join(unknown)
                + " (Debian/Ubuntu: apt-file search NAME; Fedora: dnf provides NAME)."
            )
        lines.append("Then start Redraft again.")
        return "\n".join(lines)


def chosen_platform(environ: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    """The platform plugin Qt will try first on Linux; None elsewhere (Windows and macOS ship theirs)."""
    if not sys.platform.startswith("linux"):
        return None
    asked = environ.get("QT_QPA_PLATFORM", "")
    if asked:
        # "wayland;xcb" means try in order; the first is the one that must load. "xcb:opt=..." has options.
        return re.split(r"[;:]", asked, maxsplit=1)[0].strip() or "xcb"
    if environ.get("XDG_SESSION_TYPE") == "wayland" and environ.get("WAYLAND_DISPLAY"):
        return "wayland"
    return "xcb"


def qt_folder() -> Path | None:
    """PySide6's bundled Qt (``PySide6/Qt``), found without importing PySide6."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "Qt"


def platform_plugin(platform: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> Path | None:
    """Where Qt will look for the platform plugin (``QT_QPA_PLATFORM_PLUGIN_PATH`` wins, as in Qt)."""
    folder = environ.get("QT_QPA_PLATFORM_PLUGIN_PATH")
    if folder:
        return Path(folder) / f"libq{platform}.so"
    qt = qt_folder()
    return None if qt is None else qt / "plugins" / "platforms" / f"libq{platform}.so"


def unresolved_libraries(binary: Path) -> list[str]:
    """The shared libraries ``binary`` needs (directly or through others) that the loader cannot find."""
    ldd = shutil.which("ldd")
    if ldd is not None:
        done = subprocess.run([ldd, str(binary)], capture_output=True, text=True, timeout=60)
        return list(dict.fromkeys(NOT_FOUND.findall(done.stdout)))
    # No ldd (rare): load it in a child process, which names the first missing library only.
    done = subprocess.run(
        [sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", str(binary)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return CANNOT_OPEN.findall(done.stderr)[:1]


def loadable(soname: str) -> bool:
    """Whether the dynamic loader finds ``soname`` (as Qt's own dlopen would)."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def check_platform(
    environ: dict[str, str] | os._Environ[str] = os.environ,
    probe: Callable[[Path], list[str]] = unresolved_libraries,
    opens: Callable[[str], bool] = loadable,
) -> PlatformReport | None:
    """Check the platform plugin Qt will load, and Qt's GUI modules; None where there is nothing to check.

    ``probe`` and ``opens`` are the loader probes (ldd and dlopen); tests replace them to act out a
    machine without the libraries.
    """
    platform = chosen_platform(environ)
    plugin = None if platform is None else platform_plugin(platform, environ)
    if platform is None or plugin is None:
        return None
    report = PlatformReport(platform, plugin)
    if not plugin.is_file():
        report.plugin_found = False
        report.plugin = plugin.parent
        return report
    binaries = [plugin]
    qt = qt_folder()
    if qt is not None:
        # Qt's own GUI and widget libraries: importing QtWidgets fails first if they cannot load.
        binaries += sorted((qt / "lib").glob("libQt6Widgets.so*"))[:1]
    missing: list[str] = []
    for binary in binaries:
        missing += probe(binary)
    missing += [name for name in OPENED_AT_RUN_TIME.get(platform, ()) if not opens(name)]
    report.missing = list(dict.fromkeys(missing))
    display = DISPLAY_VARIABLE.get(platform)
    if display and not environ.get(display):
        report.no_display = display
    return report
