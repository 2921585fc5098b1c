#!/usr/bin/env bash
# The egress relay alone, in-process on loopback: 100 MiB, 50 parallel
# transfers and time to first byte, direct vs through the proxy (zero-copy
# and copying paths), interleaved. Usage: bench/egress/relay.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q -p skarn-egress --example relay_throughput
exec target/release/examples/relay_throughput "${1:-7}"
