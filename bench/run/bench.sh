#!/usr/bin/env bash
# Benchmark: `skarn run -- /bin/true` under the full default policy, against
# bare /bin/true and (when installed) bwrap, in the same run.
#   bench/run/bench.sh [RUNS]      (default 300 runs each, interleaved)
# Prints median / p90 wall time and the peak RSS of any process of the tree.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS="${1:-300}"
cargo build --release -q -p skarn
SKARN="$PWD/target/release/skarn"
WS="$(mktemp -d /tmp/skarn-bench-XXXXXX)"
trap 'rm -rf "$WS"' EXIT
git -C "$WS" init -q   # a typical workspace: a git repository
exec python3 - "$RUNS" "$SKARN" "$WS" <<'PY'
import os, shutil, statistics, sys, time
runs, skarn, ws = int(sys.argv[1]), sys.argv[2], sys.argv[3]
tools = {
    "bare /bin/true": ["/bin/true"],
    "skarn run (default policy)": [skarn, "run", "--no-config", "--workspace", ws, "--", "/bin/true"],
    "skarn run --no-protect-persistence": [skarn, "run", "--no-config", "--no-protect-persistence",
                                           "--workspace", ws, "--", "/bin/true"],
}
bwrap = shutil.which("bwrap")
if bwrap:
    tools["bwrap --unshare-all ..."] = [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
                                        "--dev", "/dev", "--proc", "/proc", "--bind", ws, ws, "/bin/true"]
else:
    print("bwrap not installed: peer not measured")
times = {k: [] for k in tools}
rss = {k: 0 for k in tools}
devnull = os.open(os.devnull, os.O_RDWR)
for i in range(runs + 10):
    for name, argv in tools.items():           # interleaved: same machine load for all
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ,
                             file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
        _, status, ru = os.wait4(pid, 0)
        dt = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{name} failed with {status}")
        if i >= 10:                              # warm-up discarded
            times[name].append(dt * 1000)
            rss[name] = max(rss[name], ru.ru_maxrss)
print(f"{runs} runs each, {os.cpu_count()} CPUs, kernel {os.uname().release}")
print(f"{'':38} {'median':>8} {'p90':>8} {'peak RSS':>10}")
for name in tools:
    t = sorted(times[name])
    print(f"{name:38} {statistics.median(t):7.2f}ms {t[int(len(t)*0.9)]:7.2f}ms {rss[name]/1024:8.1f}MiB")
PY
