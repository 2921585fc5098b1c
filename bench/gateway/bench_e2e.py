#!/usr/bin/env python3
"""End-to-end gateway benchmark (not a test): 16 downstream servers (the
example server serving the generated catalogue, 500 tools in all) behind
`skarn serve` over stdio, driven with raw JSON-RPC lines so the client adds
almost nothing to the timings.

Reports: time to the initialize answer and until every server is ready;
the size of tools/list + instructions against the passthrough listing of
the same 500 tools (bytes, and o200k_base tokens counted by
`skarn compress --stats`); search and
`execute {return 1}` round trips (median, p90); idle resident memory.

Usage: bench/gateway/bench_e2e.py [--skarn target/release/skarn]
       [--example target/release/skarn-example-server] [--runs 300]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


class Gateway:
    def __init__(self, skarn, cfg, extra=()):
        self.p = subprocess.Popen(
            [skarn, "serve", "--config", str(cfg), *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self.id = 0
        self.buf = b""

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())

    def recv(self):
        while b"\n" not in self.buf:
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                raise EOFError("gateway closed stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, method, params=None):
        self.id += 1
        msg = {"jsonrpc": "2.0", "id": self.id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        while True:
            m = self.recv()
            if m.get("id") == self.id:
                return m

    def initialize(self):
        r = self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def call(self, name, args):
        return self.request("tools/call", {"name": name, "arguments": args})

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=20)


def o200k_tokens(skarn, text, tmp):
    """Exact o200k_base count through `skarn compress --stats` (which counts
    the raw input with tiktoken's embedded vocabulary); None if unavailable."""
    import re

    f = tmp / "count.txt"
    f.write_text(text)
    env = dict(os.environ, SKARN_RECALL_DIR=str(tmp / "recall"))
    r = subprocess.run(
        [skarn, "compress", "--stats", "--input", str(f)],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL,
    )
    m = re.search(r"tokens (\d+) ->", r.stderr)
    return int(m.group(1)) if m else None


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * (len(xs) - 1)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skarn", default=str(ROOT / "target/release/skarn"))
    ap.add_argument("--example", default=str(ROOT / "target/release/skarn-example-server"))
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--isolation", default=None, help="pass --isolation to skarn serve")
    a = ap.parse_args()

    catalog = json.loads((HERE / "catalog.json").read_text())
    tmp = Path(tempfile.mkdtemp(prefix="skarn-bench-"))
    cfg_text = "[gateway]\nstart_timeout = 60\n\n"
    for server, tools in catalog.items():
        f = tmp / f"{server}.json"
        f.write_text(json.dumps(tools))
        cfg_text += (
            f"[servers.{server}]\ncommand = {json.dumps(a.example)}\n"
            f"args = [\"--no-builtin\", \"--name\", \"{server}\", \"--tools\", {json.dumps(str(f))}]\n\n"
        )
    cfg = tmp / "skarn.toml"
    cfg.write_text(cfg_text)
    n_tools = sum(len(t) for t in catalog.values())
    print(f"catalogue: {len(catalog)} servers, {n_tools} tools")

    # Constant surface.
    t0 = time.perf_counter()
    g = Gateway(a.skarn, cfg, ["--isolation", a.isolation] if a.isolation else [])
    init = g.initialize()
    t_init = (time.perf_counter() - t0) * 1e3
    while True:
        r = g.call("search", {"query": "x"})
        if not r["result"]["structuredContent"]["servers_starting"]:
            break
        time.sleep(0.005)
    t_ready = (time.perf_counter() - t0) * 1e3
    instructions = init["result"].get("instructions", "")
    listing = g.request("tools/list")["result"]
    surface_text = json.dumps(listing["tools"]) + instructions
    surface = len(surface_text)
    print(f"initialize answered after {t_init:.1f} ms; all 16 servers ready after {t_ready:.0f} ms")

    # Round trips.
    times = []
    for i in range(a.runs):
        t = time.perf_counter()
        g.call("search", {"query": "create an issue in a github repository"})
        times.append((time.perf_counter() - t) * 1e3)
    print(f"search round trip over stdio: median {statistics.median(times):.3f} ms, p90 {pct(times, 0.9):.3f} ms")
    probe = g.call("execute", {"code": "return 1"})["result"]
    engine = not (probe.get("isError") and "not built yet" in probe["content"][0]["text"])
    times = []
    for i in range(a.runs):
        t = time.perf_counter()
        g.call("execute", {"code": "return 1"})
        times.append((time.perf_counter() - t) * 1e3)
    note = "" if engine else " (engine placeholder: no script ran)"
    note += f" [isolation: {probe.get('structuredContent', {}).get('isolation')}]"
    print(f"execute `return 1` round trip over stdio: median {statistics.median(times):.3f} ms, p90 {pct(times, 0.9):.3f} ms{note}")
    if engine:
        times = []
        for i in range(min(a.runs, 100)):
            t = time.perf_counter()
            r = g.call("execute", {"code": 'const r = await skarn.callTool("github", "list_issue", {owner: "o"}); return 1;'})
            times.append((time.perf_counter() - t) * 1e3)
        print(f"execute with one downstream call: median {statistics.median(times):.3f} ms, p90 {pct(times, 0.9):.3f} ms")

    time.sleep(1.0)
    rss = 0
    for line in Path(f"/proc/{g.p.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    print(f"gateway idle RSS: {rss / 1024:.1f} MiB (16 downstream connections open)")
    g.close()

    # Passthrough listing of the same catalogue, for comparison.
    g = Gateway(a.skarn, cfg, ["--passthrough"])
    g.initialize()
    while True:
        full = g.request("tools/list")["result"]
        if len(full["tools"]) >= n_tools + 3:
            break
        time.sleep(0.01)
    passthrough_text = json.dumps(full["tools"]) + instructions
    passthrough = len(passthrough_text)
    g.close()
    t_surface = o200k_tokens(a.skarn, surface_text, tmp)
    t_pass = o200k_tokens(a.skarn, passthrough_text, tmp)
    print(
        f"tools/list + instructions: {surface} bytes, {t_surface} o200k tokens vs passthrough listing "
        f"{passthrough} bytes, {t_pass} o200k tokens ({len(full['tools'])} tools): "
        f"{passthrough / surface:.0f}x smaller"
    )
    print(f"instructions alone: {len(instructions)} bytes, {o200k_tokens(a.skarn, instructions, tmp)} o200k tokens")


if __name__ == "__main__":
    main()
