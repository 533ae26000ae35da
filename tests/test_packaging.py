"""The installers' sources (packaging/): what can be checked in seconds, without a multi-minute build.

The builds themselves are checked by ``bash packaging/check`` (build, install, self-test, remove).
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # icons render with Qt, no display needed
ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"


def load_script(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem + "_under_test", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


icons = load_script(PACKAGING / "icons.py")
windows_lock = load_script(PACKAGING / "windows" / "lock.py")
pe = load_script(PACKAGING / "windows" / "pe.py")
compile_startup = load_script(PACKAGING / "windows" / "compile_startup.py")


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            found[re.sub(r"[-_.]+", "-", name).lower()] = version
    return found


def test_ico_directory_points_at_each_png() -> None:
    images = [(16, b"\x89PNG-sixteen"), (256, b"\x89PNG-big")]
    data = icons.ico_bytes(images)
    assert struct.unpack("<HHH", data[:6]) == (0, 1, 2)
    for index, (size, png) in enumerate(images):
        width, height, _, _, planes, bits, length, offset = struct.unpack(
            "<BBBBHHII", data[6 + 16 * index : 22 + 16 * index]
        )
        assert (width, height) == (size % 256, size % 256)  # 256 is written as 0
        assert (planes, bits) == (1, 32)
        assert data[offset : offset + length] == png
    with pytest.raises(ValueError):
        icons.ico_bytes([(512, b"")])


def test_icons_render_for_both_platforms(tmp_path: Path, qapp: object) -> None:
    icons.main(tmp_path)
    for size in icons.THEME_SIZES:
        png = (tmp_path / "hicolor" / f"{size}x{size}" / "apps" / "redraft.png").read_bytes()
        assert png.startswith(b"\x89PNG") and struct.unpack(">II", png[16:24]) == (size, size)
    ico = (tmp_path / "redraft.ico").read_bytes()
    assert struct.unpack("<HHH", ico[:6]) == (0, 1, len(icons.ICO_SIZES))


def test_windows_constraints_drop_build_tags_and_linux_only_pins() -> None:
    lock = "# header\ntorch==2.13.0+cpu\ntriton==3.9.0\nnumpy==2.4.6\n"
    assert windows_lock.windows_constraints(lock) == ["torch==2.13.0", "numpy==2.4.6"]
    top = windows_lock.top_level((ROOT / "pyproject.toml").read_text())
    assert any(item.startswith("pyinstaller") for item in top) and "pip" in top


def test_windows_lock_ships_the_linux_releases() -> None:
    """A lock.txt regenerated without lock-windows.txt (packaging/windows/lock.py) fails here."""
    windows = pins(ROOT / "requirements" / "lock-windows.txt")
    linux = pins(ROOT / "requirements" / "lock.txt")
    shared = set(windows) & set(linux)
    assert {"torch", "transformers", "tokenizers", "pyside6-essentials", "pyinstaller"} <= shared
    differ = {name: (linux[name], windows[name]) for name in shared if linux[name].split("+")[0] != windows[name]}
    assert not differ
    assert "triton" not in windows and not any(name.startswith("nvidia-") for name in windows)


def test_desktop_entry_opens_text_markdown_and_the_documents_file_open_reads() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(PACKAGING / "linux" / "redraft.desktop")
    desktop = entry["Desktop Entry"]
    assert desktop["Exec"] == "redraft %F" and desktop["Icon"] == "redraft"
    opens = set(desktop["MimeType"].strip(";").split(";"))
    assert {"text/plain", "text/markdown", "application/msword", "application/rtf",
            "application/vnd.oasis.opendocument.text"} <= opens  # fmt: skip
    installed = re.search(r"^MimeType=(.*)$", (PACKAGING / "linux" / "install.sh").read_text(), re.M)
    assert installed is not None and set(installed[1].strip(";").split(";")) <= opens  # the tarball's says no more
    validate = shutil.which("desktop-file-validate")
    if validate:
        result = subprocess.run(
            [validate, str(PACKAGING / "linux" / "redraft.desktop")], capture_output=True, text=True
        )
        assert result.returncode == 0, result.stdout + result.stderr


def nsis_sections(text: str) -> tuple[str, str]:
    install, _, uninstall = text.partition('Section "Uninstall"')
    return install, uninstall


def test_installer_is_per_user_and_its_uninstaller_undoes_it() -> None:
    text = (PACKAGING / "windows" / "redraft.nsi").read_text()
    install, uninstall = nsis_sections(text)
    assert "RequestExecutionLevel user" in text and "HKLM" not in text
    assert 'InstallDir "$LOCALAPPDATA\\Programs\\${APP}"' in text
    # every registry key and shortcut the installer writes, the uninstaller removes
    for key, value in re.findall(r'WriteRegStr HKCU "([^"]+)" "([^"]*)"', install):
        if key.endswith("OpenWithProgids"):
            assert f'DeleteRegValue HKCU "{key}" "{value}"' in uninstall
        else:
            assert any(
                key == removed or key.startswith(removed + "\\")
                for removed in re.findall(r'DeleteRegKey HKCU "([^"]+)"', uninstall)
            ), key
    for link in re.findall(r'CreateShortCut "([^"]+)"', install):
        assert f'Delete "{link}"' in uninstall
    # never a recursive delete of the install folder itself: it may have been chosen by hand
    assert 'RMDir /r "$INSTDIR"' not in uninstall and 'RMDir "$INSTDIR"' in uninstall


@pytest.mark.skipif(shutil.which("makensis") is None, reason="makensis (Debian's nsis) is not installed")
def test_installer_script_compiles(tmp_path: Path, qapp: object) -> None:
    payload = tmp_path / "payload"
    payload.mkdir()
    icons.main(tmp_path / "icons")
    shutil.copy(tmp_path / "icons" / "redraft.ico", payload / "redraft.ico")
    (payload / "redraftw.exe").write_bytes(b"MZ stand-in")
    out = tmp_path / "setup.exe"
    result = subprocess.run(
        ["makensis", "-V2", "-DVERSION=0.1.0", f"-DPAYLOAD={payload}", f"-DOUTFILE={out}",
         str(PACKAGING / "windows" / "redraft.nsi")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert out.read_bytes()[:2] == b"MZ"


@pytest.mark.skipif(shutil.which("makensis") is None, reason="makensis (Debian's nsis) is not installed")
def test_path_test_installer_compiles(tmp_path: Path) -> None:
    """path.nsh builds into an installer and an uninstaller (its behaviour is checked under Wine by wine-check)."""
    out = tmp_path / "path-check.exe"
    result = subprocess.run(
        ["makensis", "-V2", f"-DOUTFILE={out}", str(PACKAGING / "windows" / "path-check.nsi")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert out.read_bytes()[:2] == b"MZ"


def test_path_is_added_by_a_default_component_and_removed_only_when_added() -> None:
    installer = (PACKAGING / "windows" / "redraft.nsi").read_text()
    path_nsh = (PACKAGING / "windows" / "path.nsh").read_text()
    install, uninstall = nsis_sections(installer)
    # a component ticked by default (silent installs get it too), and the uninstaller undoes it while the
    # installer's record of having added it is still there
    assert re.search(r'Section "[^"]*Path[^"]*" SecPath\s+Call RedraftAddToPath', install)
    assert uninstall.index("Call un.RedraftRemoveFromPath") < uninstall.index('DeleteRegKey HKCU "Software\\${APP}"')
    start = path_nsh.index("Function RedraftAddToPath")
    adding = path_nsh[start : path_nsh.index("FunctionEnd", start)]
    # the Path is written only after it was read whole and the folder fits beside it
    assert adding.index('$R1 == "long"') < adding.index("${REDRAFT_PATH_ROOM}") < adding.index("WriteRegExpandStr")
    assert 'WriteRegDWORD HKCU "Software\\${APP}" "AddedToPath" 1' in adding


def test_startup_modules_compile_beside_their_sources_as_unchecked_hash(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    (lib / "pkg").mkdir(parents=True)
    (lib / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (lib / "pkg" / "mod.py").write_text("def f() -> int:\n    return 2\n")
    (lib / "unused.py").write_text("x = 3\n")
    compiled = compile_startup.compile_into(lib, ["pkg", "pkg.mod", "json", "not_there"])
    tag = sys.implementation.cache_tag
    assert sorted(compiled) == sorted([lib / "pkg" / "__pycache__" / f"__init__.{tag}.pyc",
                                       lib / "pkg" / "__pycache__" / f"mod.{tag}.pyc"])  # fmt: skip
    assert not (lib / "__pycache__").exists()  # only what a run imports
    for pyc in compiled:
        flags = struct.unpack("<I", pyc.read_bytes()[4:8])[0]
        assert flags == 0b01  # hash-based, never checked against the source: no file time must survive
    # Python loads the compiled module even once the source's time and size no longer match it
    (lib / "pkg" / "mod.py").write_text("def f() -> int:\n    return 20000\n")
    result = subprocess.run([sys.executable, "-c", "import pkg.mod; print(pkg.mod.f())"], cwd=lib,
                            capture_output=True, text=True)  # fmt: skip
    assert result.stdout.strip() == "2", result.stderr


def test_build_scripts_parse() -> None:
    for script in ("linux/build", "windows/build", "windows/wine-chroot", "windows/wine-check", "check", "venv.sh"):
        result = subprocess.run(["bash", "-n", str(PACKAGING / script)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="the .deb is Linux's")
def test_deb_depends_name_the_qt_xcb_libraries() -> None:
    build = (PACKAGING / "linux" / "build").read_text()
    depends = re.search(r'depends="(.*?)"', build, re.S)
    assert depends
    names = {re.split(r"[ (]", item.strip())[0] for item in depends.group(1).replace("\\\n", "").split(",")}
    assert {"libxcb-cursor0", "libxkbcommon-x11-0", "libegl1", "libfontconfig1", "libdbus-1-3", "libglib2.0-0"} <= names


def make_pe(imports: dict[str, list[str]], exports: dict[str, bytes]) -> bytearray:
    """A minimal 64-bit PE file: one section (RVA 0x1000, file offset 0x200) holding the code of each
    export, its export table and its import table, laid out as a linker would."""
    body = bytearray()

    def put(data: bytes, align: int = 8) -> int:
        body.extend(b"\0" * (-len(body) % align))
        body.extend(data)
        return 0x1000 + len(body) - len(data)

    code = {name: put(data, 16) for name, data in exports.items()}
    export_rva = 0
    if exports:
        names = [put(name.encode() + b"\0", 1) for name in exports]
        functions = put(struct.pack(f"<{len(code)}I", *code.values()))
        name_table = put(struct.pack(f"<{len(names)}I", *names))
        ordinals = put(struct.pack(f"<{len(names)}H", *range(len(names))))
        export_rva = put(struct.pack("<IIHHIIIIIII", 0, 0, 0, 0, 0, 1, len(code), len(names), functions,
                                     name_table, ordinals))  # fmt: skip
    descriptors = []
    for dll, functions_imported in imports.items():
        hints = [put(b"\0\0" + name.encode() + b"\0", 2) for name in functions_imported]
        thunks = put(struct.pack(f"<{len(hints) + 1}Q", *hints, 0))
        descriptors.append(struct.pack("<IIIII", thunks, 0, 0, put(dll.encode() + b"\0", 1), thunks))
    import_rva = put(b"".join(descriptors) + bytes(20), 4) if imports else 0
    body.extend(b"\0" * (-len(body) % 0x200))
    optional = struct.pack("<H106xI", 0x20B, 16) + struct.pack("<4I", export_rva, 40, import_rva, 20) + bytes(112)
    header = b"MZ" + bytes(0x3A) + struct.pack("<I", 0x40) + b"PE\0\0"
    header += struct.pack("<HHIIIHH", 0x8664, 1, 0, 0, 0, len(optional), 0x2022) + optional
    header += struct.pack("<8sIIIIIIHHI", b".text", len(body), 0x1000, len(body), 0x200, 0, 0, 0, 0, 0)
    return bytearray(header + bytes(0x200 - len(header)) + body)


def test_pe_reads_imports_and_exports() -> None:
    data = make_pe({"MSVCP140.dll": ["?_Xlength_error@std@@YAXPEBD@Z"], "KERNEL32.dll": ["GetLastError", "Sleep"]},
                   {"crealf": b"\xc3", "creal": b"\xf2\x0f\x10\x01\xc3"})  # fmt: skip
    parsed = pe.PEFile(data)
    assert parsed.imports() == {
        "msvcp140.dll": ["?_Xlength_error@std@@YAXPEBD@Z"],
        "kernel32.dll": ["GetLastError", "Sleep"],
    }
    assert set(parsed.exports()) == {"crealf", "creal"}
    assert data[parsed.offset(parsed.exports()["creal"])] == 0xF2
    with pytest.raises(ValueError):
        pe.PEFile(b"\x7fELF" + bytes(100))


def test_pe_reads_a_real_windows_program() -> None:
    # pip carries distlib's 64-bit launcher: a PE file built by Microsoft's linker, not by make_pe
    launcher = Path(importlib.util.find_spec("pip").origin).parent / "_vendor" / "distlib" / "t64.exe"  # type: ignore[arg-type, union-attr]
    if not launcher.is_file():
        pytest.skip("this pip has no distlib launchers")
    imported = pe.PEFile(launcher.read_bytes()).imports()
    assert "kernel32.dll" in imported and "CreateProcessW" in imported["kernel32.dll"]


def test_vc_runtime_must_lie_beside_python(tmp_path: Path) -> None:
    # torch's DLLs import msvcp140.dll, which a fresh Windows lacks (Wine always has one): the build
    # puts the VC++ runtime beside python.exe and fails when a payload file imports one that is not there
    (tmp_path / "python").mkdir()
    (tmp_path / "python" / "vcruntime140.dll").write_bytes(make_pe({"KERNEL32.dll": ["Sleep"]}, {}))
    (tmp_path / "lib" / "torch" / "lib").mkdir(parents=True)
    c10 = make_pe(
        {"MSVCP140.dll": ["?_Xbad_alloc@std@@YAXXZ"], "VCRUNTIME140.dll": ["memcpy"], "KERNEL32.dll": ["Sleep"]}, {}
    )
    (tmp_path / "lib" / "torch" / "lib" / "c10.dll").write_bytes(c10)
    (tmp_path / "lib" / "readme.txt").write_text("not a DLL")
    (tmp_path / "lib" / "broken.pyd").write_bytes(b"MZ")  # skipped, not a crash
    assert pe.vc_runtime_missing(tmp_path) == {"msvcp140.dll": [str(Path("lib/torch/lib/c10.dll"))]}
    (tmp_path / "python" / "msvcp140.dll").write_bytes(make_pe({}, {}))
    assert pe.vc_runtime_missing(tmp_path) == {}


def test_wine_stub_patch_writes_the_accessor_once_and_refuses_real_code() -> None:
    stub = pe.WINE_STUB_START + bytes(17)  # Wine's stub: name in rcx, then a call that aborts
    data = make_pe({}, {"crealf": stub, "cimagf": stub, "creal": b"\xf2\x0f\x10\x01\xc3"})
    code = {name: pe.UCRT_ACCESSORS[name] for name in ("crealf", "cimagf")}
    assert pe.patch_wine_stubs(data, code) == ["crealf", "cimagf"]
    parsed = pe.PEFile(data)
    start = parsed.offset(parsed.exports()["crealf"])
    assert bytes(data[start : start + 5]) == bytes.fromhex("660f6ec1c3")  # movd xmm0, ecx; ret
    assert pe.patch_wine_stubs(data, code) == []  # already patched: nothing to do
    with pytest.raises(ValueError, match="creal is not a Wine stub"):
        pe.patch_wine_stubs(data, {"creal": "c3"})
