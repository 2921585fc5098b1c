#!/usr/bin/env python3
"""Sandboxed downstream servers (issue 12): what the sandbox costs. Not a
test; figures go to docs/gateway.md.

- start-up: `skarn serve` with one example server, sandboxed and not
  (`[servers.x.sandbox] enabled = false`); time from the initialize answer
  until `search` finds the server's tools (polled every 0.5 ms), median of
  --starts runs each; the difference is the sandbox's start-up overhead;
- per call: passthrough `ex__add` round trips over stdio, median and p90,
  sandboxed and not;
- memory: with 8 sandboxed servers, the resident and proportional set
  (Pss, /proc/PID/smaps_rollup) of the processes the sandbox adds per
  server (helper and namespace init; the server itself excluded).

Usage: bench/gateway/bench_sandbox.py [--skarn target/release/skarn]
       [--example target/release/skarn-example-server] [--starts 30]
       [--calls 500]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class Gateway:
    def __init__(self, skarn, cfg, home):
        env = dict(os.environ, HOME=str(home))
        env.pop("XDG_STATE_HOME", None)
        self.p = subprocess.Popen(
            [skarn, "serve", "--config", str(cfg)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
            env=env,
        )
        self.id = 0
        self.buf = b""

    def request(self, method, params=None):
        self.id += 1
        msg = {"jsonrpc": "2.0", "id": self.id, "method": method}
        if params is not None:
            msg["params"] = params
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        while True:
            while b"\n" not in self.buf:
                chunk = os.read(self.p.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise EOFError("gateway closed stdout")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            m = json.loads(line)
            if m.get("id") == self.id:
                return m

    def initialize(self):
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def call(self, name, args):
        return self.request("tools/call", {"name": name, "arguments": args})

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def config(d, example, n, sandboxed):
    body = "[gateway]\npassthrough = true\n"
    for i in range(n):
        body += f'\n[servers.ex{i}]\ncommand = "{example}"\n'
        if not sandboxed:
            body += f"[servers.ex{i}.sandbox]\nenabled = false\n"
    p = Path(d) / f"skarn-{n}-{int(sandboxed)}.toml"
    p.write_text(body)
    return p


def ready_ms(skarn, cfg, home):
    g = Gateway(skarn, cfg, home)
    g.initialize()
    t0 = time.perf_counter()
    while True:
        r = g.call("search", {"query": "add two numbers", "limit": 1})
        if r["result"]["structuredContent"]["results"]:
            break
        time.sleep(0.0005)
    t = (time.perf_counter() - t0) * 1000
    g.close()
    return t


def call_times(skarn, cfg, home, n):
    g = Gateway(skarn, cfg, home)
    g.initialize()
    while not g.call("search", {"query": "add", "limit": 1})["result"]["structuredContent"]["results"]:
        time.sleep(0.01)
    for _ in range(20):
        g.call("ex0__add", {"a": 1, "b": 2})
    ts = []
    for i in range(n):
        t0 = time.perf_counter()
        r = g.call("ex0__add", {"a": i, "b": 1})
        ts.append((time.perf_counter() - t0) * 1000)
        assert "error" not in r, r
    g.close()
    ts.sort()
    return statistics.median(ts), ts[int(len(ts) * 0.9)]


def descendants(pid):
    kids = {}
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                stat = Path(f"/proc/{e}/stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(e))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for k in kids.get(p, []):
            out.append(k)
            todo.append(k)
    return out


def mem_kib(pid):
    rss = pss = 0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Rss:"):
            rss = int(line.split()[1])
        elif line.startswith("Pss:"):
            pss = int(line.split()[1])
    return rss, pss


def sandbox_memory(skarn, example, d, home, n=8):
    cfg = config(d, example, n, True)
    g = Gateway(skarn, cfg, home)
    g.initialize()
    while len(g.call("search", {"query": "add", "limit": 50})["result"]["structuredContent"]["results"]) < n:
        time.sleep(0.01)
    time.sleep(0.5)
    extra_rss = extra_pss = 0
    for p in descendants(g.p.pid):
        try:
            exe = os.readlink(f"/proc/{p}/exe")
            argv = Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if exe.endswith("skarn-example-server"):
            continue
        if b"__sandbox-helper" in argv or exe == os.path.realpath(skarn):
            rss, pss = mem_kib(p)
            extra_rss += rss
            extra_pss += pss
    g.close()
    return extra_rss / n, extra_pss / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skarn", default=str(ROOT / "target/release/skarn"))
    ap.add_argument("--example", default=str(ROOT / "target/release/skarn-example-server"))
    ap.add_argument("--starts", type=int, default=30)
    ap.add_argument("--calls", type=int, default=500)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        home = Path(d) / "home"
        home.mkdir()
        res = {}
        for sb in (False, True):
            cfg = config(d, a.example, 1, sb)
            starts = sorted(ready_ms(a.skarn, cfg, home) for _ in range(a.starts))
            med, p90 = call_times(a.skarn, cfg, home, a.calls)
            res[sb] = (statistics.median(starts), starts[int(len(starts) * 0.9)], med, p90)
            label = "sandboxed" if sb else "unsandboxed"
            print(
                f"{label:12} ready after initialize: median {res[sb][0]:.1f} ms, p90 {res[sb][1]:.1f} ms;"
                f" ex__add round trip: median {med:.3f} ms, p90 {p90:.3f} ms"
            )
        print(f"start-up overhead (median difference): {res[True][0] - res[False][0]:.1f} ms")
        print(f"per-call overhead (median difference): {(res[True][2] - res[False][2]) * 1000:.0f} us")
        rss, pss = sandbox_memory(a.skarn, a.example, d, home)
        print(f"memory the sandbox adds per server (helper + init): Rss {rss / 1024:.1f} MiB, Pss {pss / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
