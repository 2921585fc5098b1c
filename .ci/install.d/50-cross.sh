#!/usr/bin/env bash
# Cross-checks for macOS and Windows (issue 14), run by .ci/cross/check:
# the two Rust targets, a C compiler for them (zig, from the `ziglang`
# Python package, for rquickjs-sys) and the MinGW dlltool the windows-gnu
# standard library wants. Idempotent: installs only what is missing.
set -euo pipefail
targets=(aarch64-apple-darwin x86_64-pc-windows-gnu)
installed=$(rustup target list --installed 2>/dev/null || true)
for t in "${targets[@]}"; do
    grep -qx "$t" <<<"$installed" || rustup target add "$t" >/dev/null
done
PY=${PYTHON:-python3}
if ! "$PY" -m ziglang version >/dev/null 2>&1; then
    "$PY" -m pip install --quiet --disable-pip-version-check ziglang 2>/dev/null \
        || "$PY" -m pip install --quiet --disable-pip-version-check --break-system-packages ziglang
fi
if ! command -v x86_64-w64-mingw32-dlltool >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq binutils-mingw-w64-x86-64 >/dev/null
fi
