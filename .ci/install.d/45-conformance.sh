#!/usr/bin/env bash
# The official MCP conformance suite (npm `@modelcontextprotocol/conformance`,
# versions pinned in .ci/conformance/package.json: 0.1.16 for 2025-11-25 and
# the 0.2.0-alpha.12 prerelease, aliased `conformance-2026-07-28`, for the
# requirements of 2026-07-28), installed into
# .ci/conformance/node_modules for crates/skarn/tests/it/serve_conformance.rs.
# Idempotent: installs only when missing.
set -euo pipefail
dir="$(cd "$(dirname "$0")/../conformance" && pwd)"
if [ ! -x "$dir/node_modules/.bin/conformance" ] || [ ! -f "$dir/node_modules/conformance-2026-07-28/package.json" ]; then
    npm install --prefix "$dir" --no-audit --no-fund --no-package-lock --loglevel=error
fi
