#!/usr/bin/env bash
# Code Mode worker benchmark: `return 1` round trip in-process, through a
# warm worker pool, and with the pool disabled. Release build. Figures are
# recorded in docs/worker.md. SKARN_BENCH_RUNS sets the number of runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo test --release -p skarn --test it worker_bench:: -- --ignored --nocapture --test-threads=1 2>&1 \
    | grep -E "result of|median"
# Through the gateway (needs the release binary built above):
cargo build --release -p skarn
python3 bench/worker/gateway.py --skarn target/release/skarn
