"""What a Windows payload's DLLs import, read from their PE headers (stdlib only; runs on Linux).

    python packaging/windows/pe.py vc-runtime PAYLOAD    the VC++ runtime DLLs imported but not in PAYLOAD\\python
    python packaging/windows/pe.py imports FILE DLL      the names FILE imports from DLL, one a line
    python packaging/windows/pe.py patch-wine-ucrtbase UCRTBASE   (Wine-only; see below)

The build uses the first: Windows has no msvcp140.dll unless some installer put the Visual C++
redistributable there, and torch's DLLs import it (Wine always has its own copy, so only this check
sees that). packaging/check uses the others to work around gaps of Wine 10.0 itself, never in what ships.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Iterator
from pathlib import Path

# Microsoft's C/C++ runtime beyond the UCRT (which Windows 10+ has): the "Visual C++ Redistributable"
VC_RUNTIME = frozenset(
    {
        "concrt140.dll",
        "msvcp140.dll",
        "msvcp140_1.dll",
        "msvcp140_2.dll",
        "msvcp140_atomic_wait.dll",
        "msvcp140_codecvt_ids.dll",
        "vcomp140.dll",
        "vcruntime140.dll",
        "vcruntime140_1.dll",
    }
)
PE_SUFFIXES = (".dll", ".pyd", ".exe")


class PEFile:
    """The sections and data directories of one PE32+ (64-bit) file, enough to walk imports and exports."""

    def __init__(self, data: bytes | bytearray) -> None:
        self.data = data
        if data[:2] != b"MZ":
            raise ValueError("not a PE file (no MZ header)")
        pe = struct.unpack_from("<I", data, 0x3C)[0]
        if data[pe : pe + 4] != b"PE\0\0":
            raise ValueError("not a PE file (no PE signature)")
        sections, optional_size = struct.unpack_from("<H12xH", data, pe + 6)
        self.optional = pe + 24
        if struct.unpack_from("<H", data, self.optional)[0] != 0x20B:
            raise ValueError("not a 64-bit (PE32+) file")
        table = self.optional + optional_size
        self.sections = [struct.unpack_from("<8xIIII", data, table + 40 * i) for i in range(sections)]

    def offset(self, rva: int) -> int:
        for virtual_size, address, raw_size, raw in self.sections:
            if address <= rva < address + max(virtual_size, raw_size):
                return rva - address + raw
        raise ValueError(f"RVA {rva:#x} lies in no section")

    def directory(self, index: int) -> int:
        """The RVA of data directory ``index`` (0 exports, 1 imports, 13 delay-load imports); 0 if absent."""
        count = struct.unpack_from("<I", self.data, self.optional + 108)[0]
        return struct.unpack_from("<I", self.data, self.optional + 112 + 8 * index)[0] if index < count else 0

    def string(self, rva: int) -> str:
        start = self.offset(rva)
        return bytes(self.data[start : self.data.index(b"\0", start)]).decode("ascii", "replace")

    def imports(self) -> dict[str, list[str]]:
        """DLL name (lower case) -> the names imported from it (ordinals as '#n'), delay-loaded ones too."""
        found: dict[str, list[str]] = {}
        # (directory, descriptor size, offset of the DLL's name, of the name table (then of the address table))
        for index, size, name_field, thunk_fields in ((1, 20, 12, (0, 16)), (13, 32, 4, (16,))):
            rva = self.directory(index)
            while rva:
                entry = struct.unpack_from(f"<{size // 4}I", self.data, self.offset(rva))
                if not entry[name_field // 4]:
                    break
                names = found.setdefault(self.string(entry[name_field // 4]).lower(), [])
                thunk = next((entry[field // 4] for field in thunk_fields if entry[field // 4]), 0)
                while thunk:
                    value = struct.unpack_from("<Q", self.data, self.offset(thunk))[0]
                    if not value:
                        break
                    names.append(f"#{value & 0xFFFF}" if value >> 63 else self.string((value & 0x7FFFFFFF) + 2))
                    thunk += 8
                rva += size
        return found

    def exports(self) -> dict[str, int]:
        """Exported name -> its RVA."""
        rva = self.directory(0)
        if not rva:
            return {}
        names_count, functions, names, ordinals = struct.unpack_from("<4xIIII", self.data, self.offset(rva) + 20)
        found = {}
        for i in range(names_count):
            ordinal = struct.unpack_from("<H", self.data, self.offset(ordinals) + 2 * i)[0]
            name = self.string(struct.unpack_from("<I", self.data, self.offset(names) + 4 * i)[0])
            found[name] = struct.unpack_from("<I", self.data, self.offset(functions) + 4 * ordinal)[0]
        return found


def pe_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() in PE_SUFFIXES and path.is_file():
            yield path


def vc_runtime_missing(payload: Path) -> dict[str, list[str]]:
    """VC++ runtime DLLs some file in ``payload`` imports that ``payload/python`` (beside python.exe, the
    folder Windows searches for every DLL the process loads) does not hold -> the files importing it."""
    present = {path.name.lower() for path in (payload / "python").glob("*")}
    missing: dict[str, list[str]] = {}
    for path in pe_files(payload):
        try:
            imported = PEFile(path.read_bytes()).imports()
        except (ValueError, struct.error):
            continue  # a 32-bit helper or a damaged file: not what the 64-bit app loads
        for dll in imported.keys() & VC_RUNTIME - present:
            missing.setdefault(dll, []).append(str(path.relative_to(payload)))
    return missing


# Wine 10.0's ucrtbase.dll exports these as stubs that abort the process when called ("Unimplemented
# function ucrtbase.dll.crealf"); numpy calls crealf while it imports. Each is one or two instructions
# (x64: an _Fcomplex travels by value in rcx, a _Dcomplex/_Lcomplex by address), written over the stub in
# the check's own Wine, never anything that ships.
UCRT_ACCESSORS = {
    "crealf": "66 0f 6e c1 c3",  # movd xmm0, ecx; ret
    "cimagf": "48 89 c8 48 c1 e8 20 66 0f 6e c0 c3",  # mov rax, rcx; shr rax, 32; movd xmm0, eax; ret
    "creall": "f2 0f 10 01 c3",  # movsd xmm0, [rcx]; ret
    "cimag": "f2 0f 10 41 08 c3",  # movsd xmm0, [rcx+8]; ret
    "cimagl": "f2 0f 10 41 08 c3",
}
WINE_STUB_START = bytes.fromhex("4883ec28488d0d")  # sub rsp, 0x28; lea rcx, [the function's name] ...


def patch_wine_stubs(data: bytearray, code: dict[str, str]) -> list[str]:
    """Write ``code`` over the Wine stubs of those exports; returns the names patched (already-patched
    ones are skipped, so this can run on every check). Refuses an export that is neither."""
    pe = PEFile(data)
    exports = pe.exports()
    patched = []
    for name, hex_code in code.items():
        start, body = pe.offset(exports[name]), bytes.fromhex(hex_code)
        if data[start : start + len(body)] == body:
            continue
        if data[start : start + len(WINE_STUB_START)] != WINE_STUB_START:
            raise ValueError(f"{name} is not a Wine stub: this Wine implements it, drop the patch")
        data[start : start + len(body)] = body
        patched.append(name)
    return patched


def main(argv: list[str]) -> int:
    if argv[:1] == ["vc-runtime"] and len(argv) == 2:
        missing = vc_runtime_missing(Path(argv[1]))
        for dll, users in sorted(missing.items()):
            print(f"{dll} (imported by {len(users)} files, e.g. {users[0]}) is not in python\\", file=sys.stderr)
        return 1 if missing else 0
    if argv[:1] == ["imports"] and len(argv) == 3:
        print("\n".join(PEFile(Path(argv[1]).read_bytes()).imports().get(argv[2].lower(), [])))
        return 0
    if argv[:1] == ["patch-wine-ucrtbase"] and len(argv) == 2:
        path = Path(argv[1])
        data = bytearray(path.read_bytes())
        patched = patch_wine_stubs(data, UCRT_ACCESSORS)
        if patched:
            path.write_bytes(data)
        print(f"ucrtbase.dll: {', '.join(patched) or 'nothing'} patched")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
