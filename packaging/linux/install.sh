#!/usr/bin/env bash
# Install Redraft for the current user on Linux: a private virtual environment under
# ~/.local/share/redraft, the `redraft` command in ~/.local/bin, and a desktop menu entry.
#
#   bash packaging/linux/install.sh                              # pip's default PyTorch build
#   REDRAFT_TORCH="torch==2.13.0+cpu" bash packaging/linux/install.sh  # a PyTorch build of your choice
#   bash packaging/linux/install.sh --uninstall
set -euo pipefail
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
data_home="${XDG_DATA_HOME:-$HOME/.local/share}"
prefix="$data_home/redraft"
bin_dir="$HOME/.local/bin"
desktop_file="$data_home/applications/redraft.desktop"

if [ "${1:-}" = "--uninstall" ]; then
    rm -rf "$prefix" "$bin_dir/redraft" "$desktop_file"
    echo "Redraft removed (your documents and settings are untouched)."
    exit 0
fi

python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "Redraft needs Python 3.11 or newer; $("$python" --version 2>&1) found" >&2
    exit 1
fi

echo "Installing Redraft into $prefix ..."
"$python" -m venv "$prefix/venv"
"$prefix/venv/bin/python" -m pip install --quiet --upgrade pip
if [ -n "${REDRAFT_TORCH:-}" ]; then
    # A CPU-only laptop can pick a CPU build here and skip several GB of CUDA libraries.
    "$prefix/venv/bin/python" -m pip install --quiet "$REDRAFT_TORCH"
fi
"$prefix/venv/bin/python" -m pip install --quiet "$source_dir"
# The built-in model and icons are data, not Python modules: keep a copy beside the environment.
rm -rf "$prefix/resources"
cp -r "$source_dir/resources" "$prefix/resources"

mkdir -p "$bin_dir" "$(dirname "$desktop_file")"
cat > "$bin_dir/redraft" <<LAUNCHER
#!/usr/bin/env bash
export REDRAFT_RESOURCES="$prefix/resources"
exec "$prefix/venv/bin/redraft" "\$@"
LAUNCHER
chmod +x "$bin_dir/redraft"

icon="$prefix/resources/icons/redraft.svg"
cat > "$desktop_file" <<DESKTOP
[Desktop Entry]
Type=Application
Name=Redraft
Comment=Rewrite text in place with a diffusion language model
Exec=$bin_dir/redraft %F
Icon=$icon
Terminal=false
Categories=Office;TextEditor;
MimeType=text/plain;text/markdown;application/vnd.openxmlformats-officedocument.wordprocessingml.document;application/msword;application/vnd.oasis.opendocument.text;application/rtf;text/rtf;
DESKTOP

echo "Done. Start Redraft from your applications menu, or run: $bin_dir/redraft"
