#!/usr/bin/env bash
# Builds the Python package in a fresh virtual environment and runs its tests:
#   python/test.sh            (from anywhere in the repository)
# PYTHON selects the interpreter (default python3); FDLAB_PYENV the venv (default target/pyenv).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
py="${PYTHON:-python3}"
venv="${FDLAB_PYENV:-$root/target/pyenv}"
start=$(date +%s)

echo "python/test.sh: fresh venv at $venv ($("$py" --version))"
rm -rf "$venv"
"$py" -m venv "$venv"
vpy="$venv/bin/python"
"$vpy" -m pip install --quiet --upgrade pip

echo "python/test.sh: pip install numpy pytest"
"$vpy" -m pip install --quiet numpy pytest

# The extension is built by maturin (fetched by pip's build isolation) into the shared Cargo
# target directory, so a rebuild after a Rust build reuses the compiled dependencies.
echo "python/test.sh: pip install . (builds the fdlab-py extension with maturin)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
"$vpy" -m pip install --quiet "$root"

echo "python/test.sh: pytest python/tests"
# Run from outside the source tree so that the installed package, not python/fdlab, is tested.
(cd "$venv" && "$vpy" -m pytest -q "$root/python/tests")
echo "python/test.sh: done in $(( $(date +%s) - start )) s"
