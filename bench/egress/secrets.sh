#!/usr/bin/env bash
# Issue 27 figures (not a timed test): the TLS-terminating path vs a plain
# CONNECT tunnel vs direct (100 MiB down and up, in one repeated byte, JSON
# text and random bytes; 1,000 small requests; first byte; one
# interleaved run, `cargo bench -p skarn-egress --bench secrets`), then the
# start-up of `skarn run -- /bin/true` with one secret vs none.
# Usage: bench/egress/secrets.sh        (SKARN=path/to/skarn, default target/release/skarn)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -p skarn-egress --bench secrets
bin=${SKARN:-target/release/skarn}
[ -x "$bin" ] || cargo build --release -p skarn >&2
exec python3 bench/egress/secrets_startup.py "$bin"
