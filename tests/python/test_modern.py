"""`skarn serve` driven by the MCP Python SDK 2.x high-level `Client` in its
default `auto` mode, which negotiates 2026-07-28 (`server/discover`, then
stateless requests), over stdio and Streamable HTTP. Issue 26: every result
must be valid for that revision, list changes must arrive through
`subscriptions/listen`, and a server that speaks only 2026-07-28 must work
behind the gateway."""

import contextlib
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPError

from conftest import EXAMPLE, SKARN, http_gateway, run, text_of

# A server's question reaches the user named by its server (issue 25).
ASKED = '[MCP server "conformance" asks, through skarn] who are you?'

MODERN = "2026-07-28"


CONFORMANCE = str(Path(EXAMPLE).with_name("skarn-conformance-server"))


def config(tmp_path: Path, modern_only: bool = False) -> Path:
    assert Path(SKARN).exists(), f"skarn binary missing: {SKARN}"
    assert Path(EXAMPLE).exists(), f"example server missing: {EXAMPLE}"
    assert Path(CONFORMANCE).exists(), f"conformance server missing: {CONFORMANCE}"
    args = '["--modern-only"]' if modern_only else "[]"
    cfg = tmp_path / "skarn.toml"
    cfg.write_text(
        f"""
[gateway]
passthrough = true
call_timeout = 20
start_timeout = 60
isolation = "in_process"

[servers.example]
command = "{EXAMPLE}"
args = {args}

[servers.conformance]
command = "{CONFORMANCE}"
"""
    )
    return cfg


@contextlib.asynccontextmanager
async def modern_client(transport: str, cfg: Path, mode: str = "auto", **kw):
    if transport == "stdio":
        params = StdioServerParameters(command=SKARN, args=["serve", "--config", str(cfg)])
        async with Client(params, mode=mode, read_timeout_seconds=60, **kw) as c:
            yield c
    else:
        with http_gateway(cfg) as (url, token, _proc):
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as h:
                async with Client(streamable_http_client(url, http_client=h), mode=mode, **kw) as c:
                    yield c


def negotiated(c: Client) -> str:
    return str(c.session.protocol_version)


@pytest.mark.parametrize("modern_only", [False, True], ids=["dual-era-downstream", "modern-only-downstream"])
def test_modern_client_gets_valid_results(tmp_path, transport, modern_only):
    cfg = config(tmp_path, modern_only)

    async def main():
        async with modern_client(transport, cfg) as c:
            assert negotiated(c) == MODERN
            tools = await c.list_tools()
            names = [t.name for t in tools.tools]
            assert {"search", "read_tool_docs", "execute", "example__echo"} <= set(names), names
            # A relayed result carries resultType (the SDK rejects it without).
            r = await c.call_tool("example__echo", {"text": "hi"})
            assert not r.is_error and text_of(r) == "hi"
            assert r.result_type == "complete"
            r = await c.call_tool("execute", {"code": 'return await skarn.callTool("example", "add", {a: 2, b: 3})'})
            assert not r.is_error, text_of(r)
            assert r.structured_content["value"] == {"sum": 5}
            res = await c.read_resource("example://readme")
            assert "skarn-example" in res.contents[0].text
            p = await c.get_prompt("example__greet", {"name": "Ada"})
            assert "Ada" in p.messages[0].content.text
            with pytest.raises(MCPError) as e:
                await c.read_resource("example://nope")
            assert (e.value.error.data or {}).get("uri") == "example://nope"

    run(main)


def test_modern_discover_is_truthful(tmp_path, transport):
    cfg = config(tmp_path)

    async def main():
        async with modern_client(transport, cfg) as c:
            d = await c.session.discover()
            caps = d.capabilities
            assert caps.logging is None, "logging is not advertised to 2026-07-28 clients"
            assert caps.tools and caps.tools.list_changed

    run(main)


def test_modern_client_hears_list_changes_through_listen(tmp_path, transport):
    cfg = config(tmp_path)

    async def main():
        async with modern_client(transport, cfg) as c:
            await c.list_tools()
            async with c.listen(tools_list_changed=True, prompts_list_changed=True) as sub:
                assert sub.honored.tools_list_changed
                r = await c.call_tool("example__add_tool", {"name": "fresh_tool"})
                assert not r.is_error, text_of(r)
                with anyio.fail_after(30):
                    async for event in sub:
                        if isinstance(event, ToolsListChanged):
                            break
            tools = await c.list_tools()
            assert "example__fresh_tool" in [t.name for t in tools.tools]

    run(main)


def test_modern_client_answers_elicitation_and_sampling_rounds(tmp_path, transport):
    """A downstream's elicitation and sampling reach a 2026-07-28 client as
    `input_required` rounds (the capabilities come from each request's
    `_meta`), for a passthrough call and during `execute`."""
    cfg = config(tmp_path)
    asked = []

    async def on_elicit(_ctx, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.org"})

    async def on_sample(_ctx, params):
        return types.CreateMessageResult(
            role="assistant", model="test", content=types.TextContent(type="text", text="forty-two")
        )

    async def main():
        async with modern_client(transport, cfg, elicitation_callback=on_elicit, sampling_callback=on_sample) as c:
            assert negotiated(c) == MODERN
            r = await c.call_tool("conformance__test_elicitation", {"message": "who are you?"})
            assert not r.is_error, text_of(r)
            assert "action=accept" in text_of(r) and "ada" in text_of(r), text_of(r)
            assert asked == [ASKED], asked  # named by server (issue 25)
            r = await c.call_tool("conformance__test_sampling", {"prompt": "the answer?"})
            assert not r.is_error, text_of(r)
            assert "forty-two" in text_of(r), text_of(r)
            code = 'return await skarn.callTool("conformance", "test_elicitation", {message: "in a script"})'
            r = await c.call_tool("execute", {"code": code})
            assert not r.is_error, text_of(r)
            assert "ada" in text_of(r), text_of(r)
            assert asked[-1] == ASKED.replace("who are you?", "in a script"), asked

    run(main)


def test_modern_client_without_elicitation_gets_an_error_not_an_answer(tmp_path, transport):
    cfg = config(tmp_path)

    async def main():
        async with modern_client(transport, cfg) as c:
            r = await c.call_tool("conformance__test_elicitation", {"message": "who?"})
            assert r.is_error
            assert "did not declare the elicitation capability" in text_of(r), text_of(r)

    run(main)


class RoundRobin:
    """A plain TCP load balancer on loopback: each new connection goes to the
    next backend in turn (what a Kubernetes Service or any L4 balancer does).
    The client below opens one connection per request, so its requests
    alternate between the gateway instances."""

    def __init__(self, backends):
        self.backends = backends
        self.next = 0
        self.served = [0] * len(backends)

    async def handle(self, client):
        i = self.next % len(self.backends)
        self.next += 1
        self.served[i] += 1
        host, port = self.backends[i]
        async with client, await anyio.connect_tcp(host, port) as upstream:
            async with anyio.create_task_group() as tg:

                async def pipe(src, dst):
                    try:
                        async for chunk in src:
                            await dst.send(chunk)
                    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        pass
                    finally:
                        with contextlib.suppress(Exception):
                            await dst.send_eof()

                tg.start_soon(pipe, client, upstream)
                tg.start_soon(pipe, upstream, client)


def test_two_instances_behind_a_round_robin_balancer_serve_one_client(tmp_path):
    """Issue 26, scale-out: over 2026-07-28 no request depends on which
    instance answers, so a stateless client's calls alternate between two
    `skarn serve --http` instances (same configuration and token, own state
    directories) without an error."""
    cfg = config(tmp_path)
    token = "test-token-123"

    async def main():
        with http_gateway(cfg, token) as (url1, _t, _p1), http_gateway(cfg, token) as (url2, _t2, _p2):
            backends = []
            for u in (url1, url2):
                hostport = u.split("//")[1].split("/")[0]
                host, port = hostport.rsplit(":", 1)
                backends.append((host, int(port)))
            lb = RoundRobin(backends)
            listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
            port = listener.extra(anyio.abc.SocketAttribute.local_port)
            async with anyio.create_task_group() as tg:
                tg.start_soon(listener.serve, lb.handle)
                # No keep-alive: every request is a new connection, so the
                # balancer alternates request by request.
                limits = httpx2.Limits(max_keepalive_connections=0)
                headers = {"Authorization": f"Bearer {token}"}
                async with httpx2.AsyncClient(headers=headers, timeout=60, limits=limits) as h:
                    url = f"http://127.0.0.1:{port}/mcp"
                    async with Client(streamable_http_client(url, http_client=h), mode="auto", cache=None) as c:
                        assert negotiated(c) == MODERN
                        for i in range(6):
                            tools = await c.list_tools()
                            assert "example__echo" in [t.name for t in tools.tools]
                            r = await c.call_tool("example__echo", {"text": f"hi {i}"})
                            assert not r.is_error and text_of(r) == f"hi {i}", text_of(r)
                            r = await c.call_tool("execute", {"code": f"return {i} + 1"})
                            assert not r.is_error and r.structured_content["value"] == i + 1, text_of(r)
                            res = await c.read_resource("example://readme")
                            assert "skarn-example" in res.contents[0].text
                tg.cancel_scope.cancel()
            await listener.aclose()
            assert min(lb.served) >= 6, f"requests per instance: {lb.served}"

    run(main)


def test_mcp_apps_tool_ui_passes_through(tmp_path, transport):
    """MCP Apps: a tool's `_meta.ui` reaches a modern client in passthrough
    and `read_tool_docs` names the page."""
    tools = tmp_path / "tools.json"
    tools.write_text(
        '[{"name": "dashboard", "description": "Shows a dashboard", '
        '"inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "ui://example/dashboard"}}}]'
    )
    cfg = config(tmp_path)
    cfg.write_text(cfg.read_text().replace("args = []", f'args = ["--tools", "{tools}"]', 1))

    async def main():
        async with modern_client(transport, cfg) as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            meta = listed["example__dashboard"].meta or {}
            assert meta.get("ui", {}).get("resourceUri") == "ui://example/dashboard", meta
            d = await c.call_tool("read_tool_docs", {"name": "example__dashboard"})
            assert "ui://example/dashboard" in text_of(d), text_of(d)
            assert d.structured_content["ui"] == "ui://example/dashboard"

    run(main)


def test_modern_client_answers_a_prompt_round(tmp_path, transport):
    """`prompts/get` of a 2026-07-28 downstream that asks first: the question
    reaches the modern client as an `input_required` round too."""
    cfg = config(tmp_path)

    async def on_elicit(_ctx, params):
        return types.ElicitResult(action="accept", content={"context": "the tests"})

    async def main():
        async with modern_client(transport, cfg, elicitation_callback=on_elicit) as c:
            p = await c.get_prompt("conformance__test_input_required_result_prompt")
            assert "Prompt with context: the tests" in p.messages[0].content.text

    run(main)


def test_a_balancer_host_name_is_accepted_only_when_listed(tmp_path):
    """Behind a load balancer requests name the balancer in `Host`; the
    gateway accepts such a name only when `gateway.http_allowed_hosts` lists
    it (DNS rebinding stays refused)."""
    cfg = config(tmp_path)
    cfg.write_text(cfg.read_text().replace("[gateway]\n", '[gateway]\nhttp_allowed_hosts = ["skarn-gateway:8080"]\n', 1))
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }}}
    with http_gateway(cfg) as (url, token, _proc):
        def post(host):
            headers = {
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": MODERN,
                "Mcp-Method": "server/discover",
                "Host": host,
            }
            return httpx2.post(url, json=body, headers=headers, timeout=30)

        ok = post("skarn-gateway:8080")
        assert ok.status_code == 200, (ok.status_code, ok.text)
        assert "supportedVersions" in ok.text
        refused = post("evil.example:8080")
        assert refused.status_code in (400, 403), (refused.status_code, refused.text)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_client_answers_a_resource_read_round(tmp_path, transport, mode):
    """`resources/read` whose owning server asks during the read: the
    question reaches a 2026-07-28 client as an `input_required` round and a
    2025-11-25 client as an elicitation request, and the read completes with
    the answer."""
    cfg = config(tmp_path)
    asked = []

    async def on_elicit(_ctx, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"context": "the tests"})

    async def main():
        async with modern_client(transport, cfg, elicitation_callback=on_elicit, mode=mode) as c:
            assert (negotiated(c) == MODERN) == (mode == "auto"), negotiated(c)
            res = await c.read_resource("test://input-required-resource")
            assert res.contents[0].text == "Resource with context: the tests", res
            assert asked == ['[MCP server "conformance" asks, through skarn] Please provide context'], asked

    run(main)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_task_only_tool_runs_through_the_gateway(tmp_path, transport, mode):
    """server-everything's `simulate-research-query` runs only as a task
    (2025-11-25 `execution.taskSupport: "required"`): the gateway calls it
    task-augmented and waits for its result, in passthrough and from
    `execute`, and the question the task asks midway reaches the client."""
    from conftest import EVERYTHING

    assert EVERYTHING, "mcp-server-everything not installed (.ci/install.d/40-gateway.sh installs it)"
    cfg = tmp_path / "skarn.toml"
    cfg.write_text(
        f"""
[gateway]
passthrough = true
call_timeout = 60
start_timeout = 60
isolation = "in_process"

[servers.everything]
command = "{EVERYTHING}"
args = ["stdio"]
"""
    )
    asked = []

    async def on_elicit(_ctx, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"interpretation": "programming"})

    async def main():
        async with modern_client(transport, cfg, elicitation_callback=on_elicit, mode=mode) as c:
            name = "everything__simulate-research-query"
            tools = {t.name for t in (await c.list_tools()).tools}
            assert name in tools, tools
            r = await c.call_tool(name, {"topic": "python", "ambiguous": True})
            assert not r.is_error, text_of(r)
            assert "# Research Report: python (programming)" in text_of(r), text_of(r)
            assert len(asked) == 1 and "multiple interpretations" in asked[0], asked
            code = 'const r = await skarn.callTool("everything", "simulate-research-query", {topic: "rust"}); return JSON.stringify(r)'
            r = await c.call_tool("execute", {"code": code})
            assert not r.is_error, text_of(r)
            assert "Research Report: rust" in text_of(r), text_of(r)

    run(main)
