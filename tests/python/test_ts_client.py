"""`skarn serve` driven by the MCP TypeScript SDK v2 client
(`@modelcontextprotocol/client`, version negotiation `auto`, hence
2026-07-28), over stdio and Streamable HTTP: tests/ts/client.mjs lists tools,
runs `execute`, calls a passthrough tool, reads a resource, hears a list
change through `subscriptions/listen` and answers elicitation rounds (during
a tool call and during a resource read).
.ci/install.d/40-gateway.sh installs the SDK into tests/ts/node_modules."""

import json
import subprocess
from pathlib import Path

from conftest import ROOT, SKARN, http_gateway
from test_modern import MODERN, config

# A server's question reaches the user named by its server (issue 25).
ASKED = '[MCP server "conformance" asks, through skarn] who are you?'

TS = ROOT / "tests/ts"


def run_client(*args: str) -> dict:
    sdk = TS / "node_modules/@modelcontextprotocol/client/package.json"
    assert sdk.exists(), f"{sdk} is missing: run .ci/install.d/40-gateway.sh"
    out = subprocess.run(
        ["node", str(TS / "client.mjs"), *args],
        cwd=TS,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, f"client.mjs failed ({out.returncode}):\n{out.stdout}\n{out.stderr}"
    return json.loads(out.stdout.strip().splitlines()[-1])


def check(seen: dict):
    assert seen["version"] == MODERN, seen
    assert {"search", "read_tool_docs", "execute", "example__echo"} <= set(seen["tools"]), seen["tools"]
    assert seen["execute"] == {"sum": 5}, seen
    assert seen["echo"] == "hi", seen
    assert seen["resource"].startswith("skarn-example"), seen
    assert seen["listChanged"] >= 1, seen
    assert seen["toolsAfter"], seen
    assert "action=accept" in seen["elicitation"] and "ada" in seen["elicitation"], seen
    assert seen["asked"] == [ASKED], seen  # named by server (issue 25)
    assert seen["resourceRound"] == "Resource with context: the ts client", seen


def test_ts_sdk_client_over_stdio(tmp_path: Path):
    check(run_client("stdio", SKARN, str(config(tmp_path))))


def test_ts_sdk_client_over_http(tmp_path: Path):
    with http_gateway(config(tmp_path)) as (url, token, _proc):
        check(run_client("http", url, token))
