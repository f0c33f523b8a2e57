#!/usr/bin/env bash
# Gathers Devito 4.8.x and the dependencies a Python 3.12 host with numpy,
# sympy, scipy, psutil, py-cpuinfo, packaging and multidict lacks, as wheels
# in DEST (default .whl at the repository root). Needs network; the host that
# runs steps.py does not.
set -euo pipefail
DEST=${1:-$(git rev-parse --show-toplevel)/.whl}
PY=${PYTHON:-python3}
mkdir -p "$DEST"
dl() {
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$DEST" "$@"
}
dl 'devito==4.8.23' 'anytree==2.13.0' 'pytools==2026.1.1' 'siphash24==1.9' \
  'platformdirs==4.14.8' 'typing-extensions==4.16.0'
# cgen and codepy<2025 (Devito's pin) publish source only: build pure wheels.
SD=$(mktemp -d)
"$PY" -m pip download -q --no-deps --no-binary=:all: -d "$SD" 'codepy==2023.1' 'cgen==2025.1'
"$PY" -m pip wheel -q --no-deps -w "$DEST" "$SD"/*
rm -rf "$SD"
# The Devito wheel ships 30 MB of example notebooks; drop them (and their
# RECORD lines) so the set stays small. Nothing in devito/ imports them.
"$PY" - "$DEST" <<'PY'
import glob, sys, zipfile, os
for path in glob.glob(os.path.join(sys.argv[1], "devito-*.whl")):
    tmp = path + ".tmp"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if item.filename.endswith(".ipynb"):
                continue
            data = zin.read(item)
            if item.filename.endswith(".dist-info/RECORD"):
                lines = data.decode().splitlines(keepends=True)
                data = "".join(l for l in lines if not l.split(",")[0].endswith(".ipynb")).encode()
            zout.writestr(item, data)
    os.replace(tmp, path)
PY
du -ch "$DEST"/*.whl | tail -1
