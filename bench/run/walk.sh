#!/usr/bin/env bash
# Benchmark: `skarn run -- /bin/true` in a workspace of N directories (the
# walks of the writable grants before and after the run), against an empty
# workspace, for N in 10000 and 100000 (or the sizes given).
#   bench/run/walk.sh [RUNS] [SIZES...]      (default 5 runs; 10000 100000)
# SKARN=/path/to/skarn picks the binary (default target/release/skarn).
# Prints the median wall time and whether the report says a walk stopped.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS="${1:-5}"; shift || true
SIZES=("${@:-10000 100000}"); read -r -a SIZES <<< "${SIZES[*]}"
SKARN="${SKARN:-$PWD/target/release/skarn}"
python3 - "$RUNS" "$SKARN" "${SIZES[@]}" <<'PY'
import os, shutil, statistics, subprocess, sys, tempfile, time
runs, skarn, sizes = int(sys.argv[1]), sys.argv[2], [int(s) for s in sys.argv[3:]]
def tree(n):
    ws = tempfile.mkdtemp(prefix="skarn-walk-")
    subprocess.run(["git", "-C", ws, "init", "-q"], check=True)
    per = 100
    for i in range(n // per):
        for j in range(per):
            os.makedirs(os.path.join(ws, "d%d" % i, "e%d" % j))
    return ws
def time_run(ws):
    t = []
    rep = ""
    for _ in range(runs):
        a = time.monotonic()
        p = subprocess.run([skarn, "run", "--no-config", "--report", "--workspace", ws, "--", "/bin/true"],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        t.append(time.monotonic() - a)
        rep = p.stderr
    stopped = "walk of the writable grants stopped" in rep or "check after the run stopped" in rep
    return statistics.median(t), stopped
for n in [0] + sizes:
    ws = tree(n)
    try:
        m, stopped = time_run(ws)
        print("%7d directories: median %.3f s%s" % (n, m, " (a walk stopped at its bound)" if stopped else ""))
    finally:
        shutil.rmtree(ws)
PY
