#!/usr/bin/env bash
# Egress proxy figures (not a timed test): 100 MiB through the proxy vs
# direct on loopback, time to first byte, 200 concurrent connections, and
# `skarn run --net allow:... -- /bin/true` vs `--net deny` start-up.
# Usage: bench/egress/run.sh            (uses target/release/skarn, built if missing)
#        SKARN=target/debug/skarn bench/egress/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${SKARN:-target/release/skarn}
[ -x "$bin" ] || cargo build --release -p skarn >&2
exec python3 bench/egress/bench.py "$bin"
