#!/usr/bin/env bash
# The official MCP conformance suite (npm `@modelcontextprotocol/conformance`,
# version pinned in .ci/conformance/package.json), installed into
# .ci/conformance/node_modules for crates/skarn/tests/it/serve_conformance.rs.
# Idempotent: installs only when missing.
set -euo pipefail
dir="$(cd "$(dirname "$0")/../conformance" && pwd)"
if [ ! -x "$dir/node_modules/.bin/conformance" ]; then
    npm install --prefix "$dir" --no-audit --no-fund --no-package-lock --loglevel=error
fi
