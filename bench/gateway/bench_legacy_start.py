#!/usr/bin/env python3
"""Issue 26 benchmark (not a test): how long a downstream server takes to
start behind `skarn serve`, by its era and how it treats `server/discover`.

The time is from spawning the gateway to the answer of the first `search`
(sent right after initialize; it waits for the starts), median of --runs:
- a 2025-11-25 stdio server that answers nothing to `server/discover`
  (as some ignore unknown methods), with the default `discover_timeout`
  (1 s: `initialize` is then sent as well, ADR 0106) and with
  `discover_timeout = "30s"` (rmcp's own 10 s probe decides: the behaviour
  before ADR 0106);
- server-everything (2025-11-25, answers discover with -32601 at once),
  when installed;
- the example server (2026-07-28 through discover).

Usage: bench/gateway/bench_legacy_start.py [--skarn target/release/skarn]
       [--example target/release/skarn-example-server] [--runs 3]
"""

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SILENT = r'''
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    method, mid = m.get("method"), m.get("id")
    if method == "initialize":
        r = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
             "serverInfo": {"name": "silent", "version": "1"}}
    elif method == "tools/list":
        r = {"tools": [{"name": "hello", "inputSchema": {"type": "object"}}]}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": r}), flush=True)
'''


def first_search(skarn, cfg):
    t = time.perf_counter()
    p = subprocess.Popen(
        [skarn, "serve", "--config", str(cfg)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "hello"}}},
    ]
    p.stdin.write("".join(json.dumps(m) + "\n" for m in msgs))
    p.stdin.flush()
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == 2:
            elapsed = time.perf_counter() - t
            sc = m["result"].get("structuredContent") or {}
            ok = not sc.get("servers_unavailable") and not sc.get("servers_starting")
            break
    p.stdin.close()
    p.wait(timeout=10)
    return elapsed, ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skarn", default=str(ROOT / "target/release/skarn"))
    ap.add_argument("--example", default=str(ROOT / "target/release/skarn-example-server"))
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    silent = f'command = "python3"\nargs = ["-c", {json.dumps(SILENT)}]\n'
    cases = [
        ("silent legacy, discover_timeout 1 s (default)", "", silent),
        ("silent legacy, rmcp's 10 s probe (before)", 'discover_timeout = "30s"\n', silent),
        ("example server, 2026-07-28", "", f'command = "{a.example}"\n'),
    ]
    everything = shutil.which("mcp-server-everything")
    if everything:
        cases.append(("server-everything, answers -32601", "", f'command = "{everything}"\nargs = ["stdio"]\n'))
    with tempfile.TemporaryDirectory() as d:
        cfg = Path(d) / "skarn.toml"
        for name, gateway, server in cases:
            cfg.write_text(f"[gateway]\n{gateway}\n[servers.s]\n{server}")
            times = []
            for _ in range(a.runs):
                elapsed, ok = first_search(a.skarn, cfg)
                if not ok:
                    print(f"{name}: server not ready at the first search")
                times.append(elapsed)
            print(f"{name}: first search answered after {statistics.median(times):.2f} s (median of {a.runs})")


if __name__ == "__main__":
    main()
