#!/usr/bin/env bash
# The fuzz smoke run (README "Fuzzing"), which CI runs (.ci/run): builds
# every target in fuzz/ with the stable toolchain and runs each for a few
# seconds on its committed corpus (fuzz/corpus/<target>/), so that a
# regression on a known input, or one found quickly, fails CI.
#
# Stable Rust only: cargo-fuzz asks cargo for `-Z` flags, which
# RUSTC_BOOTSTRAP=1 allows, and `-s none` turns the sanitizers off (they
# need nightly). cargo-fuzz is installed with `cargo install --locked` if
# it is missing (CI may keep ~/.cargo/bin between runs).
#
# Environment: FUZZ_SECONDS (per target, default 4); FUZZ_TARGETS (a
# space-separated subset, default all). Extra arguments go to libFuzzer.
# New inputs the run finds go to a temporary directory, never into the
# committed corpus; a crash leaves its input under fuzz/artifacts/<target>/.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo/fuzz"

run() {
    printf '+ %s\n' "$*" >&2
    "$@"
}

if ! cargo fuzz --version >/dev/null 2>&1; then
    run cargo install cargo-fuzz --locked
fi

export RUSTC_BOOTSTRAP=1
# Release with debug assertions and overflow checks: an overflow is a bug.
flags=(--sanitizer none --release --debug-assertions)
start=$SECONDS
run cargo fuzz build "${flags[@]}"
echo "fuzz-smoke: built in $((SECONDS - start))s" >&2

seconds="${FUZZ_SECONDS:-4}"
read -r -a targets <<<"${FUZZ_TARGETS:-$(cargo fuzz list | tr '\n' ' ')}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for target in "${targets[@]}"; do
    mkdir -p "$scratch/$target"
    # The first corpus directory receives new inputs; the committed one is
    # only read.
    run cargo fuzz run "${flags[@]}" "$target" "$scratch/$target" "corpus/$target" -- \
        -dict=json.dict -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -timeout=10 -print_final_stats=1 "$@"
done
echo "fuzz-smoke: ${#targets[@]} targets passed in $((SECONDS - start))s" >&2
