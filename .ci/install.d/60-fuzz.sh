#!/usr/bin/env bash
# cargo-fuzz (libFuzzer) for .ci/fuzz. Idempotent: installs only when
# missing. Pinned so CI does not change under us.
set -euo pipefail
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --version 0.13.2 --locked
fi
