#!/usr/bin/env bash
# Independent MCP peers for the gateway tests (issue 4), from the registries:
# - the official MCP Python SDK (PyPI `mcp`) and pytest, driving `skarn serve`;
# - the official reference server `@modelcontextprotocol/server-everything`
#   (npm), used as a downstream next to the example server.
# Idempotent: installs only what is missing.
set -euo pipefail

PY=${PYTHON:-python3}
if ! "$PY" -c 'import mcp, pytest' >/dev/null 2>&1; then
    "$PY" -m pip install --quiet --disable-pip-version-check 'mcp>=1.10' 'pytest>=7'
fi

if ! command -v mcp-server-everything >/dev/null 2>&1; then
    npm install --global --no-audit --no-fund --loglevel=error @modelcontextprotocol/server-everything
fi
