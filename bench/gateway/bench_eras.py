#!/usr/bin/env python3
"""Issue 26 benchmark (not a test): `execute {return 1}` through the warm
pool for a 2026-07-28 client and a 2025-11-25 client in the same run (two
`skarn serve` processes over stdio, driven with raw JSON-RPC lines so the
client adds almost nothing), and requests per second of 2026-07-28
`execute {return 1}` over Streamable HTTP through one instance and through
two (the client's connections alternate between them, as a round-robin
balancer would send them).

Usage: bench/gateway/bench_eras.py [--skarn target/release/skarn]
       [--example target/release/skarn-example-server] [--runs 300]
       [--http-seconds 5] [--http-workers 8]
"""

import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"


def meta():
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


class Stdio:
    def __init__(self, skarn, cfg):
        self.p = subprocess.Popen(
            [skarn, "serve", "--config", str(cfg)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self.id = 0
        self.buf = b""

    def request(self, method, params):
        self.id += 1
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}) + "\n").encode())
        while True:
            while b"\n" not in self.buf:
                chunk = os.read(self.p.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise EOFError("gateway closed stdout")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            m = json.loads(line)
            if m.get("id") == self.id:
                if "error" in m:
                    raise RuntimeError(m["error"])
                return m["result"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def execute_params(modern):
    p = {"name": "execute", "arguments": {"code": "return 1"}}
    if modern:
        p["_meta"] = meta()
    return p


def timed(g, modern, runs):
    for _ in range(20):
        g.request("tools/call", execute_params(modern))
    ms = []
    for _ in range(runs):
        t = time.perf_counter()
        r = g.request("tools/call", execute_params(modern))
        ms.append((time.perf_counter() - t) * 1000)
        assert not r.get("isError"), r
    ms.sort()
    return statistics.median(ms), ms[int(len(ms) * 0.9)]


def http_gateway(skarn, cfg, token):
    p = subprocess.Popen(
        [skarn, "serve", "--config", str(cfg), "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ, SKARN_HTTP_TOKEN=token),
        text=True,
    )
    for line in p.stderr:
        m = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
        if m:
            threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
            return p, int(m.group(1))
    raise RuntimeError("no address")


def http_rate(ports, token, seconds, workers):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": execute_params(True)})
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "execute",
    }
    done = [0] * workers
    errors = [0] * workers
    stop = time.perf_counter() + seconds

    def work(w):
        n = w
        while time.perf_counter() < stop:
            port = ports[n % len(ports)]
            n += 1
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                c.request("POST", "/mcp", body, headers)
                r = c.getresponse()
                data = r.read()
                if r.status == 200 and b'"result"' in data and b'"isError":true' not in data.replace(b" ", b""):
                    done[w] += 1
                else:
                    errors[w] += 1
            finally:
                c.close()

    ts = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(done) / seconds, sum(errors)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skarn", default=str(ROOT / "target/release/skarn"))
    ap.add_argument("--example", default=str(ROOT / "target/release/skarn-example-server"))
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--http-seconds", type=float, default=5)
    ap.add_argument("--http-workers", type=int, default=8)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        cfg = Path(d) / "skarn.toml"
        cfg.write_text(f'[servers.example]\ncommand = "{a.example}"\n')
        legacy, modern = Stdio(a.skarn, cfg), Stdio(a.skarn, cfg)
        legacy.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
        legacy.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        modern.request("server/discover", {"_meta": meta()})
        for name, g, is_modern in (("2025-11-25", legacy, False), ("2026-07-28", modern, True)):
            p50, p90 = timed(g, is_modern, a.runs)
            print(f"execute {{return 1}} over stdio, {name}: p50 {p50:.2f} ms, p90 {p90:.2f} ms ({a.runs} runs)")
        legacy.close()
        modern.close()
        token = "bench-token-0123456789"
        p1, port1 = http_gateway(a.skarn, cfg, token)
        p2, port2 = http_gateway(a.skarn, cfg, token)
        try:
            time.sleep(1)
            http_rate([port1, port2], token, 1, a.http_workers)  # warm both
            one, e1 = http_rate([port1], token, a.http_seconds, a.http_workers)
            two, e2 = http_rate([port1, port2], token, a.http_seconds, a.http_workers)
            print(f"2026-07-28 execute over HTTP, {a.http_workers} clients: one instance {one:.0f} req/s ({e1} errors), two instances {two:.0f} req/s ({e2} errors), {os.cpu_count()} CPUs")
        finally:
            for p in (p1, p2):
                p.terminate()
                p.wait(timeout=10)


if __name__ == "__main__":
    main()
