#!/usr/bin/env python3
"""Issue 26 benchmark (not a test): `execute {return 1}` through the warm
pool, two `skarn` builds compared in ONE interleaved run (ADR 0107: the
used worker ended off the request path, its threads made before `ready`).

Four `skarn serve` processes over stdio (build A and build B, each for a
2025-11-25 and a 2026-07-28 client); rounds of `--batch` calls go to each in
turn, so load from the rest of the machine falls on all four alike. After
each call the client sleeps `--gap-ms`, so the pool has refilled and each
call is a warm-pool call (back-to-back calls drain a pool of 2: a refill
takes longer than a call).

Usage: bench/gateway/bench_answer_path.py --before OLD/skarn --after NEW/skarn
       --example target-rel/release/skarn-example-server [--runs 600] [--batch 1] [--gap-ms 5]
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_eras import Stdio, execute_params, meta  # noqa: E402


def start(skarn, cfg, modern):
    g = Stdio(skarn, cfg)
    if modern:
        g.request("server/discover", {"_meta": meta()})
    else:
        g.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
        g.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    return g


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--example", required=True)
    ap.add_argument("--runs", type=int, default=600)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--gap-ms", type=float, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        cfg = Path(d) / "skarn.toml"
        cfg.write_text(f'[servers.example]\ncommand = "{a.example}"\n')
        runs = {}
        for build, skarn in (("before", a.before), ("after", a.after)):
            for era, modern in (("2025-11-25", False), ("2026-07-28", True)):
                runs[(build, era)] = (start(skarn, cfg, modern), modern, [])
        time.sleep(2)  # pools filled
        for g, modern, _ in runs.values():
            for _ in range(20):
                g.request("tools/call", execute_params(modern))
                time.sleep(a.gap_ms / 1000)
        done = 0
        while done < a.runs:
            for g, modern, ms in runs.values():
                for _ in range(a.batch):
                    t = time.perf_counter()
                    r = g.request("tools/call", execute_params(modern))
                    ms.append((time.perf_counter() - t) * 1000)
                    assert not r.get("isError"), r
                    time.sleep(a.gap_ms / 1000)
            done += a.batch
        for (build, era), (g, _, ms) in runs.items():
            ms.sort()
            p50, p90 = statistics.median(ms), ms[int(len(ms) * 0.9)]
            print(f"{build:6} {era}: execute {{return 1}} p50 {p50:.2f} ms, p90 {p90:.2f} ms ({len(ms)} calls)")
            g.close()


if __name__ == "__main__":
    main()
