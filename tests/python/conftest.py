"""Shared helpers: drive `skarn serve` with the official MCP Python SDK.

Run by crates/skarn/tests/it/serve_python.rs (so `cargo test --workspace` runs
these), which passes the binaries in SKARN_BIN and SKARN_EXAMPLE_BIN.
"""

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
SKARN = os.environ.get("SKARN_BIN") or str(ROOT / "target/debug/skarn")
EXAMPLE = os.environ.get("SKARN_EXAMPLE_BIN") or str(ROOT / "target/debug/skarn-example-server")
EVERYTHING = shutil.which("mcp-server-everything")


def write_config(tmp_path: Path, extra: str = "") -> Path:
    assert Path(SKARN).exists(), f"skarn binary missing: {SKARN}"
    assert Path(EXAMPLE).exists(), f"example server missing: {EXAMPLE}"
    assert EVERYTHING, "mcp-server-everything not installed (.ci/install.d/40-gateway.sh installs it)"
    cfg = tmp_path / "skarn.toml"
    cfg.write_text(
        f"""
[gateway]
call_timeout = 20
start_timeout = 60

[gateway.limits]
timeout = "3s"

[servers.example]
command = "{EXAMPLE}"

[servers.everything]
command = "{EVERYTHING}"
args = ["stdio"]
{extra}
"""
    )
    return cfg


@contextlib.asynccontextmanager
async def stdio_session(cfg: Path):
    params = StdioServerParameters(command=SKARN, args=["serve", "--config", str(cfg)])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            yield s


@contextlib.contextmanager
def http_gateway(cfg: Path, token: str = "test-token-123"):
    env = dict(os.environ, SKARN_HTTP_TOKEN=token)
    proc = subprocess.Popen(
        [SKARN, "serve", "--config", str(cfg), "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        url = None
        deadline = time.time() + 30
        while time.time() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            m = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
            if m:
                url = m.group(1)
                break
        assert url, "skarn serve --http did not print its address"
        yield url, token, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.asynccontextmanager
async def http_session(url: str, token: str):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
        async with streamable_http_client(url, http_client=client) as (r, w, *_):
            async with ClientSession(r, w) as s:
                await s.initialize()
                yield s


@contextlib.asynccontextmanager
async def session_for(transport: str, cfg: Path):
    if transport == "stdio":
        async with stdio_session(cfg) as s:
            yield s
    else:
        with http_gateway(cfg) as (url, token, _proc):
            async with http_session(url, token) as s:
                yield s


async def wait_ready(s: ClientSession, timeout: float = 90.0):
    """Poll `search` until no server is still starting."""
    deadline = time.time() + timeout
    while True:
        r = await s.call_tool("search", {"query": "echo"})
        sc = r.structured_content or {}
        if not sc.get("servers_starting"):
            return sc
        assert time.time() < deadline, f"servers still starting: {sc}"
        await anyio.sleep(0.2)


async def engine_ready(s: ClientSession) -> bool:
    r = await s.call_tool("execute", {"code": "return 1"})
    text = r.content[0].text if r.content else ""
    return not (r.is_error and "not built yet" in text)


def text_of(r) -> str:
    return "\n".join(c.text for c in r.content if getattr(c, "type", "") == "text")


@pytest.fixture(params=["stdio", "http"])
def transport(request):
    return request.param


def run(coro_fn, *args):
    return anyio.run(coro_fn, *args)


print(f"using skarn={SKARN} example={EXAMPLE} everything={EVERYTHING}", file=sys.stderr)
