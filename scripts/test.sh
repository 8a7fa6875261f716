#!/usr/bin/env bash
# Runs every test of the workspace, including the interop tests against
# zarr-python and tensorstore, on a fresh machine. This is the README's test
# command, and CI runs it (.ci/run).
#
# It creates a virtualenv with the pinned reference implementations
# (scripts/requirements.txt) at $ZARRKIT_VENV (default: <repo>/.venv),
# recreating it when the requirements or the Python version change, and
# points the tests at it with ZARRKIT_PYTHON. ZARRKIT_REQUIRE_INTEROP=1 makes
# an interop test fail rather than skip if that Python is missing.
#
# Extra arguments go to the test runner, e.g. `scripts/test.sh interop`.
#
# Environment: ZARRKIT_VENV (venv location), PYTHON (the interpreter that
# creates the venv; default python3).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

run() {
    printf '+ %s\n' "$*" >&2
    "$@"
}

# libclang for the `zfp` feature, which --all-features builds.
run bash "$repo/scripts/install-build-deps.sh"

venv="${ZARRKIT_VENV:-$repo/.venv}"
python="${PYTHON:-python3}"
requirements="$repo/scripts/requirements.txt"
stamp="$venv/.zarrkit-requirements.sha256"
want="$({ cat "$requirements"; "$python" --version 2>&1; } | sha256sum | cut -d' ' -f1)"

if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "setting up the interop virtualenv at $venv" >&2
    run "$python" -m venv --clear "$venv"
    run "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
        -r "$requirements"
    echo "$want" >"$stamp"
else
    echo "interop virtualenv at $venv is up to date" >&2
fi
run "$venv/bin/python" -c 'import zarr, tensorstore; print("zarr", zarr.__version__, "and tensorstore in", __import__("sys").prefix)'

export ZARRKIT_PYTHON="$venv/bin/python"
export ZARRKIT_REQUIRE_INTEROP=1
echo "+ export ZARRKIT_PYTHON=$ZARRKIT_PYTHON ZARRKIT_REQUIRE_INTEROP=1" >&2

if cargo nextest --version >/dev/null 2>&1; then
    run cargo nextest run --workspace --all-features --no-fail-fast "$@"
    # nextest does not run doctests.
    run cargo test --doc --workspace --all-features "$@"
else
    run cargo test --workspace --all-features --no-fail-fast "$@"
fi

# Each bench once, so benches keep compiling and running. `--bench '*'`
# selects the bench targets only: the unit tests already ran above.
run cargo bench -p zarrkit --bench '*' -- --test
