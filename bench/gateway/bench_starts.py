#!/usr/bin/env python3
"""Start-up and scale benchmark (not a test): N stdio downstream servers on
the official Python SDK (py_server.py, about half a second of CPU each to
start), 32 tools each, behind `skarn serve` over stdio.

For N = 16 and 64 it reports:
- the time from spawning the gateway to the answer of the first `search`
  (sent right after initialize; it waits for the starts), which must see
  every server ready, checked by counting the catalogue with
  `skarn.listTools()` (N x 32 tools);
- the CPU floor: the servers' summed start CPU (one server measured alone)
  divided by the cores, i.e. the best any schedule could do;
- at 64 servers (2,048 tools): search round trips over stdio (p50, p90) and
  recall@1 of the description-phrased queries (bench/gateway/
  queries_description.json, with the team word that tells the four copies
  of each product apart), and `execute {return 1}` through the warm worker
  pool (p50, p90).

The catalogue: the 16 products of catalog.json, each trimmed or padded to
32 tools, copied for up to four teams ("<product>_<team>", descriptions
prefixed with the team).

Usage: bench/gateway/bench_starts.py [--skarn target/release/skarn]
       [--sizes 16,64] [--runs 200]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TEAMS = ["payments", "mobile", "infra", "growth"]
PER_SERVER = 32


class Gateway:
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
            if m.get("id") == self.id and "method" not in m:
                return m

    def call(self, name, args):
        return self.request("tools/call", {"name": name, "arguments": args})

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def servers(n):
    catalog = json.loads((HERE / "catalog.json").read_text())
    out = {}
    for team in TEAMS[: max(1, n // len(catalog))]:
        for base, tools in catalog.items():
            tools = [dict(t) for t in tools[:PER_SERVER]]
            i = 0
            while len(tools) < PER_SERVER:
                i += 1
                tools.append({
                    "name": f"admin_task_{i}",
                    "description": f"Administrative task number {i} of this account.",
                    "inputSchema": {"type": "object", "properties": {}},
                })
            for t in tools:
                t["description"] = f"{team.capitalize()} team: {t['description']}"
            out[f"{base}_{team}"] = tools
    return dict(list(out.items())[:n])


def one_start_cpu(tools_file):
    """CPU seconds one server needs to start and list (measured alone)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.Popen(["python3", str(HERE / "py_server.py"), str(tools_file)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for m in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]:
        p.stdin.write((json.dumps(m) + "\n").encode())
    p.stdin.flush()
    p.stdout.readline()
    p.stdout.readline()
    p.stdin.close()
    p.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def run(skarn, n, runs, tmp):
    cat = servers(n)
    body = "[gateway]\nstart_timeout = 30\n"
    for alias, tools in cat.items():
        f = tmp / f"{alias}.json"
        f.write_text(json.dumps(tools))
        body += f'[servers.{alias}]\ncommand = "python3"\nargs = ["{HERE / "py_server.py"}", "{f}"]\n'
    cfg = tmp / f"skarn-{n}.toml"
    cfg.write_text(body)
    cpu = statistics.median(one_start_cpu(tmp / f"{next(iter(cat))}.json") for _ in range(3))
    cores = os.cpu_count() or 1
    t0 = time.perf_counter()
    gw = Gateway(skarn, cfg)
    gw.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "0"}})
    gw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    r = gw.call("search", {"query": "create issue"})
    first = time.perf_counter() - t0
    sc = r["result"]["structuredContent"]
    count = gw.call("execute", {"code": "return (await skarn.listTools()).length"})
    seen = count["result"]["structuredContent"].get("value")
    out = {
        "servers": n,
        "tools": n * PER_SERVER,
        "first_search_s": round(first, 2),
        "tools_seen": seen,
        "starting": sc["servers_starting"],
        "unavailable": sc["servers_unavailable"],
        "one_start_cpu_s": round(cpu, 3),
        "cpu_floor_s": round(n * cpu / cores, 2),
        "cores": cores,
    }
    if n >= 64:
        queries = json.loads((HERE / "queries_description.json").read_text())
        kept = {(a, t["name"]) for a, ts in cat.items() for t in ts}
        lat, hits, total = [], 0, 0
        for team in TEAMS:
            for q in queries:
                base, tool = q["expect"].split("__", 1)
                alias = f"{base}_{team}"
                if (alias, tool) not in kept:
                    continue
                s = time.perf_counter()
                r = gw.call("search", {"query": f"{q['query']} {team}", "limit": 1})
                lat.append((time.perf_counter() - s) * 1000)
                res = r["result"]["structuredContent"]["results"]
                total += 1
                hits += bool(res) and res[0]["name"] == f"{alias}__{tool}"
        out.update({
            "search_queries": total,
            "search_recall_at_1": round(100 * hits / total, 1),
            "search_p50_ms": round(pct(lat, 0.5), 3),
            "search_p90_ms": round(pct(lat, 0.9), 3),
        })
        ex = []
        for _ in range(runs):
            s = time.perf_counter()
            gw.call("execute", {"code": "return 1"})
            ex.append((time.perf_counter() - s) * 1000)
        out.update({"execute_p50_ms": round(pct(ex, 0.5), 2),
                    "execute_p90_ms": round(pct(ex, 0.9), 2)})
    gw.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skarn", default=str(ROOT / "target/release/skarn"))
    ap.add_argument("--sizes", default="16,64")
    ap.add_argument("--runs", type=int, default=200)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        for n in [int(x) for x in a.sizes.split(",")]:
            print(json.dumps(run(a.skarn, n, a.runs, Path(d))), flush=True)


if __name__ == "__main__":
    main()
