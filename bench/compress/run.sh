#!/usr/bin/env bash
# Compression throughput: 1 MiB of real output per profile, best of 20.
# Goal (issue 6): under 20 ms per MiB. Release build; run on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo run --quiet --release -p skarn-compress --example bench
