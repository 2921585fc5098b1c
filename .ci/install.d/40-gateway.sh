#!/usr/bin/env bash
# Independent MCP peers for the gateway tests (issue 4), from the registries:
# - the official MCP Python SDK (PyPI `mcp`) and pytest, driving `skarn serve`;
# - the official reference server `@modelcontextprotocol/server-everything`
#   (npm), used as a downstream next to the example server.
# Idempotent: installs only what is missing.
set -euo pipefail

PY=${PYTHON:-python3}
if ! "$PY" -c 'import mcp, pytest' >/dev/null 2>&1; then
    "$PY" -m pip install --quiet --disable-pip-version-check 'mcp>=2.3,<3' 'pytest>=7'
fi

# Issue 26: the MCP TypeScript SDK v2 client (version pinned in
# tests/ts/package.json) for tests/python/test_ts_client.py.
TS_DIR="$(cd "$(dirname "$0")/../../tests/ts" && pwd)"
if [ ! -f "$TS_DIR/node_modules/@modelcontextprotocol/client/package.json" ]; then
    npm install --prefix "$TS_DIR" --no-audit --no-fund --no-package-lock --loglevel=error
fi

if ! command -v mcp-server-everything >/dev/null 2>&1; then
    npm install --global --no-audit --no-fund --loglevel=error @modelcontextprotocol/server-everything
fi

# Issue 12: real servers run sandboxed in crates/skarn/tests/it/serve_sandbox.rs
# (skipped when absent): two more reference servers, and a Python server in
# its own venv.
for pkg in server-memory server-filesystem; do
    if ! command -v "mcp-$pkg" >/dev/null 2>&1; then
        npm install --global --no-audit --no-fund --loglevel=error "@modelcontextprotocol/$pkg"
    fi
done
VENV=/usr/local/lib/skarn-ci/mcp-time-venv
if [ ! -x "$VENV/bin/mcp-server-time" ]; then
    mkdir -p "$(dirname "$VENV")"
    # The system Python when there is one: every user (tests run as uid
    # 65534 too) can run it.
    PYSYS=$(command -v /usr/bin/python3 || command -v "$PY")
    "$PYSYS" -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check mcp-server-time
fi
