#!/usr/bin/env bash
# The Rust toolchain is preinstalled; make sure the lint components are present.
set -euo pipefail
rustup component add rustfmt clippy >/dev/null 2>&1 || true
