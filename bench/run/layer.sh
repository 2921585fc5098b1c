#!/usr/bin/env bash
# Benchmark of the workspace layer (ADR 0130), both modes in one run:
#  1. `skarn run -- /bin/true` in a git workspace of 0 and N directories
#     (default 100000), --workspace-layer direct vs cow;
#  2. a `cargo build`-like output: the command writes F files (default
#     10000, 4 KiB each, 100 per directory) under target/; wall time of the
#     whole run in each mode, and bare (no sandbox) for scale.
#   bench/run/layer.sh [RUNS] [DIRS] [FILES]     (default 5 100000 10000)
# SKARN=/path/to/skarn picks the binary (default target/release/skarn).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS="${1:-5}"; DIRS="${2:-100000}"; FILES="${3:-10000}"
SKARN="${SKARN:-$PWD/target/release/skarn}"
python3 - "$RUNS" "$SKARN" "$DIRS" "$FILES" <<'PY'
import os, shutil, statistics, subprocess, sys, tempfile, time
runs, skarn, dirs, files = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def tree(n):
    ws = tempfile.mkdtemp(prefix="skarn-layer-")
    subprocess.run(["git", "-C", ws, "init", "-q"], check=True)
    for i in range(n // 100):
        for j in range(100):
            os.makedirs(os.path.join(ws, "d%d" % i, "e%d" % j))
    return ws
def run(ws, mode, argv):
    a = time.monotonic()
    cmd = [skarn, "run", "--no-config", "--workspace", ws, "--workspace-layer", mode, "--"] + argv
    p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (cmd, p.stderr))
    return time.monotonic() - a
def med(f):
    return statistics.median(f() for _ in range(runs))
print("skarn run -- /bin/true (median of %d):" % runs)
for n in (0, dirs):
    ws = tree(n)
    try:
        for mode in ("direct", "cow"):
            print("  %7d directories, %-6s %.3f s" % (n, mode, med(lambda: run(ws, mode, ["/bin/true"]))))
    finally:
        shutil.rmtree(ws)
gen = ("import os\nfor i in range(%d):\n d='target/debug/deps/g%%d'%%(i//100)\n"
       " os.makedirs(d,exist_ok=True)\n open(d+'/f%%d.o'%%i,'wb').write(b'x'*4096)\n" % files)
print("a build writing %d files of 4 KiB under target/ (median of %d):" % (files, runs))
for mode in ("bare", "direct", "cow"):
    def once():
        ws = tree(0)
        try:
            if mode == "bare":
                a = time.monotonic()
                subprocess.run(["python3", "-c", gen], cwd=ws, check=True)
                return time.monotonic() - a
            return run(ws, mode, ["python3", "-c", gen])
        finally:
            shutil.rmtree(ws)
    print("  %-6s %.3f s" % (mode, med(once)))
PY
