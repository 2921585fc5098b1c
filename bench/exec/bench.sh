#!/usr/bin/env bash
# `skarn exec --code 'return 1'` as a whole process, per isolation, next to
# `node -e 'console.log(1)'`, interleaved in one loop (each round runs every
# command once, so load from the rest of the machine falls on all alike;
# issue 15, issue 30 goal 4):
#   auto        with no --config: the process confines itself (self_confined)
#   worker      a cold confined worker process is started
#   in_process  no OS confinement (reference)
# Usage: bench/exec/bench.sh [RUNS]   (builds the release binary first;
# SKARN_NO_BUILD=1 SKARN=/path/to/skarn uses that binary instead;
# SKARN_BASELINE=/path/to/older/skarn adds its default run to the loop).
# Prints median, p90, min and CPU time (user+sys of the process tree) each.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-300}
if [ -z "${SKARN_NO_BUILD:-}" ]; then cargo build --release -p skarn >&2; fi
bin=${SKARN:-$PWD/target/release/skarn}
# Output to a pipe or /dev/null, not a regular file: a process whose output
# is a file cannot confine itself and uses a worker.
"$bin" exec --json --code 'return 1' | grep -q '"isolation":"self_confined"' \
  || echo "warning: auto did not pick self_confined on this host" >&2
python3 - "$runs" "$bin" "${SKARN_BASELINE:-}" <<'PY'
import os, shutil, statistics, sys, time
runs, skarn, baseline = int(sys.argv[1]), sys.argv[2], sys.argv[3]
code = ["--code", "return 1"]
tools = {
    "skarn exec (auto: self_confined)": [skarn, "exec", *code],
    "skarn exec --isolation worker": [skarn, "exec", "--isolation", "worker", *code],
    "skarn exec --isolation in_process": [skarn, "exec", "--isolation", "in_process", *code],
}
if baseline:
    tools["baseline skarn exec (auto)"] = [baseline, "exec", *code]
node = shutil.which("node")
if node:
    tools["node -e 'console.log(1)'"] = [node, "-e", "console.log(1)"]
wall = {k: [] for k in tools}
cpu = {k: [] for k in tools}
null = os.open(os.devnull, os.O_RDWR)
load0 = os.getloadavg()[0]
for i in range(runs + 20):
    for name, argv in tools.items():
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1),
                                                                  (os.POSIX_SPAWN_DUP2, null, 2)])
        _, status, ru = os.wait4(pid, 0)
        dt = (time.perf_counter() - t0) * 1000
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{name} failed: {status}")
        if i >= 20:
            wall[name].append(dt)
            cpu[name].append((ru.ru_utime + ru.ru_stime) * 1000)
print(f"{runs} interleaved runs each, uid {os.getuid()}, {os.cpu_count()} CPUs, "
      f"load {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
print(f"{'':36} {'median':>9} {'p90':>9} {'min':>9} {'CPU':>9}")
for name in tools:
    t = sorted(wall[name])
    print(f"{name:36} {statistics.median(t):7.2f}ms {t[int(len(t) * 0.9)]:7.2f}ms {t[0]:7.2f}ms "
          f"{statistics.median(cpu[name]):7.2f}ms")
PY
