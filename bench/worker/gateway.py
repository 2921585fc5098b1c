#!/usr/bin/env python3
"""Code Mode worker benchmark through the gateway (not a test): the
`execute {return 1}` round trip of `skarn serve` over stdio, driven with raw
JSON-RPC lines, for isolation = worker with a warm pool, worker with the
pool disabled (`worker_pool = 0`), and in_process (reference). Each execute
is spaced by --gap-ms, as model turns space them; the "burst" row sends them
back to back. Figures go to docs/worker.md.

Usage: bench/worker/gateway.py [--skarn target/release/skarn] [--runs 300]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "gateway"))
from bench_e2e import Gateway as _RawGateway  # noqa: E402  (one raw JSON-RPC client for both benches)


class Gateway(_RawGateway):
    def __init__(self, skarn, cfg, isolation):
        super().__init__(skarn, cfg, ["--isolation", isolation])

    def execute(self, code):
        return self.call("execute", {"code": code})


def row(name, times):
    times = sorted(times)
    q = lambda p: times[min(len(times) - 1, int(p * (len(times) - 1)))]
    print(f"{name:<46} n={len(times):<4} median {statistics.median(times):7.3f} ms   p10 {q(0.1):7.3f}   p90 {q(0.9):7.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skarn", default=str(ROOT / "target/release/skarn"))
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--gap-ms", type=float, default=20.0)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="skarn-worker-bench-"))
    for name, isolation, pool in [
        ("worker, warm pool (2)", "worker", 2),
        ("worker, pool disabled (cold spawn per run)", "worker", 0),
        ("in_process (reference)", "in_process", 2),
    ]:
        cfg = tmp / f"{isolation}-{pool}.toml"
        cfg.write_text(f"[gateway]\nworker_pool = {pool}\n")
        g = Gateway(a.skarn, cfg, isolation)
        g.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
        g.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        first = g.execute("return 1")["result"]
        used = first.get("structuredContent", {}).get("isolation")
        assert used == isolation, first
        time.sleep(0.5)
        times = []
        for _ in range(a.runs):
            time.sleep(a.gap_ms / 1000)
            t = time.perf_counter()
            r = g.execute("return 1")["result"]
            times.append((time.perf_counter() - t) * 1e3)
            assert not r.get("isError"), r
        row(f"{name}, isolation={used}", times)
        if pool and isolation == "worker":
            times = []
            for _ in range(min(a.runs, 100)):
                t = time.perf_counter()
                g.execute("return 1")
                times.append((time.perf_counter() - t) * 1e3)
            row(f"{name}, back-to-back burst", times)
        g.close()


if __name__ == "__main__":
    main()
