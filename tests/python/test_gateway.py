"""`skarn serve` driven by the official MCP Python SDK client, over stdio
and Streamable HTTP, with the example server and the reference
`@modelcontextprotocol/server-everything` as downstreams."""

import subprocess

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError as McpError

from conftest import SKARN, engine_ready, run, session_for, text_of, wait_ready, write_config


def test_initialize_list_tools_and_instructions(tmp_path, transport):
    cfg = write_config(tmp_path)

    async def main():
        async with session_for(transport, cfg) as s:
            init = await s.initialize()
            assert init.server_info.name == "skarn"
            assert init.server_info.version
            assert init.instructions and len(init.instructions) < 3000
            tools = await s.list_tools()
            assert sorted(t.name for t in tools.tools) == ["execute", "read_tool_docs", "search"]

    run(main)


def test_search_and_read_tool_docs(tmp_path, transport):
    cfg = write_config(tmp_path)

    async def main():
        async with session_for(transport, cfg) as s:
            await wait_ready(s)
            r = await s.call_tool("search", {"query": "add two numbers", "limit": 5})
            assert not r.is_error
            names = [x["name"] for x in r.structured_content["results"]]
            assert names[0] == "example__add", names
            # The reference server's tools are in the catalogue too.
            r = await s.call_tool("search", {"query": "echo", "limit": 10})
            names = [x["name"] for x in r.structured_content["results"]]
            assert any(n.startswith("everything__") for n in names), names
            assert any(n == "example__echo" for n in names), names

            d = await s.call_tool("read_tool_docs", {"name": "example__add"})
            assert not d.is_error, text_of(d)
            assert 'skarn.callTool("example", "add"' in d.structured_content["signature"]
            assert "a: number" in d.structured_content["signature"]
            bad = await s.call_tool("read_tool_docs", {"name": "example__nope"})
            assert bad.is_error
            assert "no tool named" in text_of(bad)

    run(main)


def test_resources_and_prompts_are_aggregated(tmp_path, transport):
    cfg = write_config(tmp_path)

    async def main():
        async with session_for(transport, cfg) as s:
            await wait_ready(s)
            res = await s.list_resources()
            uris = [str(r.uri) for r in res.resources]
            assert "example://readme" in uris
            body = await s.read_resource("example://readme")
            assert "skarn-example-server" in body.contents[0].text
            prompts = await s.list_prompts()
            names = [p.name for p in prompts.prompts]
            assert "example__greet" in names
            g = await s.get_prompt("example__greet", {"name": "Ada"})
            assert "Ada" in g.messages[0].content.text

    run(main)


def test_unknown_upstream_tool_is_a_protocol_error_and_serving_goes_on(tmp_path, transport):
    cfg = write_config(tmp_path)

    async def main():
        async with session_for(transport, cfg) as s:
            try:
                r = await s.call_tool("no_such_tool", {})
                assert r.is_error, "unknown tool must fail"
            except McpError as e:
                assert "no_such_tool" in str(e)
            tools = await s.list_tools()
            assert len(tools.tools) == 3

    run(main)


def test_execute_with_and_without_downstream_calls(tmp_path, transport):
    cfg = write_config(tmp_path)

    async def main():
        async with session_for(transport, cfg) as s:
            await wait_ready(s)
            assert await engine_ready(s), "the Code Mode engine answers a plain script"
            r = await s.call_tool("execute", {"code": "return 1 + 1"})
            assert not r.is_error, text_of(r)
            sc = r.structured_content
            assert sc["value"] == 2
            assert sc["isolation"] in ("worker", "in_process")
            assert sc["tool_calls"] == 0
            assert isinstance(sc["elapsed_ms"], int)
            assert "2" in text_of(r)

            code = """
const s = await skarn.callTool("example", "add", {a: 2, b: 3});
const e = await skarn.callTool("everything", "echo", {message: "hi"});
skarn.log("sum", s.sum);
const readme = await skarn.readResource("example", "example://readme");
return {sum: s.sum, echoed: JSON.stringify(e).includes("hi"), readme: String(readme).slice(0, 21)};
"""
            r = await s.call_tool("execute", {"code": code})
            assert not r.is_error, text_of(r)
            sc = r.structured_content
            assert sc["value"]["sum"] == 5
            assert sc["value"]["echoed"] is True
            assert sc["value"]["readme"] == "skarn-example-server:"
            assert sc["tool_calls"] >= 3
            assert any("sum" in line and "5" in line for line in sc["logs"])

    run(main)


def test_script_failures_are_clean_and_serving_goes_on(tmp_path, transport):
    cfg = write_config(tmp_path)

    async def main():
        async with session_for(transport, cfg) as s:
            await wait_ready(s)
            assert await engine_ready(s), "the Code Mode engine answers a plain script"
            r = await s.call_tool("execute", {"code": "const x = 1;\nreturn x +;\n"})
            assert r.is_error
            assert "line 2" in text_of(r), text_of(r)

            r = await s.call_tool("execute", {"code": "while (true) {}"})
            assert r.is_error
            assert "deadline" in text_of(r).lower(), text_of(r)

            r = await s.call_tool(
                "execute", {"code": 'return await skarn.callTool("example", "nope", {});'}
            )
            assert r.is_error
            assert "nope" in text_of(r), text_of(r)

            r = await s.call_tool(
                "execute", {"code": 'return await skarn.callTool("ghost", "x", {});'}
            )
            assert r.is_error
            assert "ghost" in text_of(r), text_of(r)

            r = await s.call_tool("execute", {"code": "return 'still here'"})
            assert not r.is_error
            assert r.structured_content["value"] == "still here"

    run(main)


def test_twenty_concurrent_executes(tmp_path, transport):
    cfg = write_config(tmp_path)

    async def main():
        async with session_for(transport, cfg) as s:
            await wait_ready(s)
            assert await engine_ready(s), "the Code Mode engine answers a plain script"
            results = [None] * 20

            async def one(i):
                code = f'const r = await skarn.callTool("example", "add", {{a: {i}, b: 1}}); return r.sum;'
                results[i] = await s.call_tool("execute", {"code": code})

            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(one, i)
            for i, r in enumerate(results):
                assert not r.is_error, text_of(r)
                assert r.structured_content["value"] == i + 1

    run(main)


def test_http_needs_the_bearer_token(tmp_path):
    from conftest import http_gateway

    cfg = write_config(tmp_path)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with http_gateway(cfg, token="right-token") as (url, token, _proc):
        with httpx2.Client(timeout=10) as c:
            assert c.post(url, json=body, headers=headers).status_code == 401
            bad = dict(headers, Authorization="Bearer wrong-token")
            assert c.post(url, json=body, headers=bad).status_code == 401
            good = dict(headers, Authorization=f"Bearer {token}")
            assert c.post(url, json=body, headers=good).status_code == 200


def test_isolation_setting_is_honoured_and_reported(tmp_path, monkeypatch):
    cfg = write_config(tmp_path, extra="")
    text = cfg.read_text().replace("[gateway]\n", '[gateway]\nisolation = "in_process"\n', 1)
    cfg.write_text(text)
    # `in_process` drops execute's confined worker: only a configuration
    # the user trusted may ask for it (`skarn trust`, ADR 0065).
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    subprocess.run([SKARN, "trust", str(cfg)], check=True, capture_output=True)

    async def main():
        async with session_for("stdio", cfg) as s:
            await wait_ready(s)
            assert await engine_ready(s), "the Code Mode engine answers a plain script"
            r = await s.call_tool("execute", {"code": 'return (await skarn.callTool("example", "echo", {text: "x"}))'})
            assert not r.is_error, text_of(r)
            assert r.structured_content["isolation"] == "in_process"
            assert r.structured_content["value"] == "x"

    run(main)


def test_shell_tool_runs_confined(tmp_path, transport):
    """`[gateway] shell = true`: `run` executes under skarn run; a write
    outside the workspace does not happen (checked from outside)."""
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    for d in (tmp_path, ws, outside):
        d.chmod(0o777)
    # The run tool's workspace is the configuration's directory.
    cfg = ws / "skarn.toml"
    cfg.write_text("[gateway]\nshell = true\n")
    escape = outside / "escaped"

    async def main():
        async with session_for(transport, cfg) as s:
            tools = await s.list_tools()
            assert "run" in [t.name for t in tools.tools]
            r = await s.call_tool(
                "run",
                {"command": f"echo inside > made.txt; echo x > {escape}; cat made.txt", "cwd": str(ws)},
            )
            text = r.content[0].text
            assert text.startswith("exit "), text
            assert "inside" in text, text
            r = await s.call_tool("run", {"command": "exit 3", "cwd": str(ws)})
            assert r.is_error and r.structured_content["exit_code"] == 3

    run(main)
    assert (ws / "made.txt").read_text() == "inside\n"
    assert not escape.exists(), "the command wrote outside its workspace"
