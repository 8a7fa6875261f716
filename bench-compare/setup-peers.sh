#!/usr/bin/env bash
# Creates (or updates) bench-compare's Python peers' virtualenv,
# bench-compare/.venv-peers, from requirements-peers.txt. A stamp (the
# requirements' and the interpreter's hash) skips the work when nothing
# changed. PYTHON picks the interpreter (default python3).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
venv="${1:-$here/.venv-peers}"
requirements="$here/requirements-peers.txt"
stamp="$venv/.bench-compare-requirements.sha256"
want="$({ cat "$requirements"; "$python" --version 2>&1; } | sha256sum | cut -d' ' -f1)"
if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "setting up the peers' virtualenv at $venv" >&2
    "$python" -m venv --clear "$venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
        -r "$requirements"
    echo "$want" >"$stamp"
else
    echo "the peers' virtualenv at $venv is up to date" >&2
fi
"$venv/bin/python" -c 'import zarr, zarrs, tensorstore, numcodecs, obstore; print("zarr", zarr.__version__, "zarrs", zarrs.__version__ if hasattr(zarrs, "__version__") else "?", "numcodecs", numcodecs.__version__, "in", __import__("sys").prefix)'
