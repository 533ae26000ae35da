# Sourced by packaging/linux/build and packaging/windows/build: the build environment build/venv,
# made from requirements/lock.txt (the CPU build of torch, PyInstaller from the `bundle` extra) and
# remade only when the lock or pyproject.toml changed. Never the developer's .venv.
build_venv="$root/build/venv"
build_python="$build_venv/bin/python"
ensure_build_venv() {
    local stamp="$build_venv/.redraft-bundle" wanted torch_pin
    wanted="$(cat "$root/requirements/lock.txt" "$root/pyproject.toml" | sha256sum | cut -d' ' -f1)"
    [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ] && return 0
    [ -f "$root/requirements/lock.txt" ] || { echo "requirements/lock.txt is missing (bash scripts/lock)" >&2; return 1; }
    torch_pin="$(grep -i '^torch==' "$root/requirements/lock.txt" | sed 's/+.*//')"
    [ -x "$build_python" ] || "${PYTHON:-python3}" -m venv "$build_venv"
    # torch named with its release only: the lock's +cpu build is what pip's constraint then picks
    # from a clean copy of the sources: setuptools would walk all of build/ looking for package data
    local src="$root/build/redraft-src"
    rm -rf "$src" && mkdir -p "$src" && cp -r "$root/pyproject.toml" "$root/README.md" "$root/app" "$root/model" "$src/"
    "$build_python" -m pip install --quiet -c "$root/requirements/lock.txt" "$torch_pin" "$src[bundle]"
    # tools of the Windows build (resolving and unpacking Windows wheels), outside the app itself
    "$build_python" -m pip install --quiet "uv>=0.5" wheel
    echo "$wanted" > "$stamp"
}
