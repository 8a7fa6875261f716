#!/usr/bin/env bash
# Installs what `cargo build --all-features` needs beyond Rust and a C
# compiler: libclang, for the `zfp` feature (zfp-sys-cc compiles zfp with
# the C compiler and generates its bindings with bindgen, which loads
# libclang and needs clang's own headers such as stddef.h).
#
# Does nothing when libclang is already there. Otherwise installs the
# Debian packages `libclang1-14` and `libclang-common-14-dev` (about 60 MB,
# without the static libraries `libclang-dev` would pull in); that needs
# root and apt. scripts/test.sh and .ci/run call this before building.
set -euo pipefail

have_libclang() {
    # bindgen (clang-sys) finds libclang.so* or libclang-N.so* on the
    # library path or in an LLVM install; the clang headers come with
    # libclang-common-N-dev.
    ldconfig -p 2>/dev/null | grep -Eq 'libclang(-[0-9.]+)?\.so' &&
        compgen -G '/usr/lib/llvm-*/lib/clang/*/include/stddef.h' >/dev/null
}

if [[ -n "${LIBCLANG_PATH:-}" ]] || have_libclang; then
    exit 0
fi

if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
    echo "error: the zfp feature needs libclang; install libclang (Debian:" \
        "libclang1-14 libclang-common-14-dev) or set LIBCLANG_PATH" >&2
    exit 1
fi

echo "installing libclang for the zfp feature" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The small pair where this Debian release has LLVM 14 (bookworm); the
# distribution's default libclang otherwise.
if ! apt-get install -y -qq --no-install-recommends libclang1-14 libclang-common-14-dev >/dev/null; then
    apt-get install -y -qq --no-install-recommends libclang-dev >/dev/null
fi
