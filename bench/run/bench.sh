#!/usr/bin/env bash
# Benchmark: `skarn run -- /bin/true` under the full default policy, against
# bare /bin/true and (when installed) bwrap, interleaved in the same run.
#   bench/run/bench.sh [RUNS]        (default 300 runs of each)
# SKARN_BASELINE=/path/to/older/skarn adds that binary's default-policy run
# to the same interleaved loop (before/after comparisons under equal load).
# Prints median / p90 wall time; peak RSS via /usr/bin/time when present.
# SKARN_BENCH_DIRS=N fills the (root file system) workspace with N empty
# directories, 100 per parent, before the loop (issue 30 goal 1: the start-up
# must not grow with the tree).
# Run it once as root and once as an unprivileged user (e.g.
#   setpriv --reuid=65534 --regid=65534 --clear-groups bench/run/bench.sh)
# after building: root uses a pids cgroup, other users a user namespace.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS="${1:-300}"
if [ "$(id -u)" = 0 ] && [ -z "${SKARN_NO_BUILD:-}" ]; then cargo build --release -q -p skarn; fi
SKARN="${SKARN:-$PWD/target/release/skarn}"
WS="$(mktemp -d /tmp/skarn-bench-XXXXXX)"          # on the root filesystem
SHM="$(mktemp -d /dev/shm/skarn-bench-XXXXXX)"      # on tmpfs
trap 'rm -rf "$WS" "$SHM"' EXIT
git -C "$WS" init -q && git -C "$SHM" init -q        # typical workspaces: git repositories
if [ -n "${SKARN_BENCH_DIRS:-}" ]; then
  python3 -c 'import os,sys
n, ws = int(sys.argv[1]), sys.argv[2]
for i in range(n):
    os.makedirs(os.path.join(ws, "d%d" % (i // 100), "e%d" % (i % 100)))' "$SKARN_BENCH_DIRS" "$WS"
fi
python3 - "$RUNS" "$SKARN" "$WS" "$SHM" "${SKARN_BASELINE:-}" <<'PY'
import os, shutil, statistics, subprocess, sys, time
runs, skarn, ws, shm, baseline = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
run = [skarn, "run", "--no-config"]
tools = {
    "bare /bin/true": ["/bin/true"],
    "skarn run (default policy)": run + ["--workspace", ws, "--", "/bin/true"],
    "skarn run --no-protect-persistence": run + ["--no-protect-persistence", "--workspace", ws, "--", "/bin/true"],
    "skarn run (default, tmpfs workspace)": run + ["--workspace", shm, "--", "/bin/true"],
}
if baseline:
    tools["baseline skarn run (default policy)"] = [baseline, "run", "--no-config", "--workspace", ws, "--", "/bin/true"]
bwrap = shutil.which("bwrap")
if bwrap:
    tools["bwrap --unshare-all ..."] = [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
                                        "--dev", "/dev", "--proc", "/proc", "--bind", ws, ws, "/bin/true"]
else:
    print("bwrap not installed: peer not measured")
times = {k: [] for k in tools}
null = os.open(os.devnull, os.O_RDWR)
for i in range(runs + 10):
    for name, argv in tools.items():            # interleaved: same load for everyone
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{name} failed: {status}")
        if i >= 10:
            times[name].append((time.perf_counter() - t0) * 1000)
def peak(argv):
    if not os.path.exists("/usr/bin/time"):
        return "n/a"
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, capture_output=True, text=True)
    return f"{int(r.stderr.strip().splitlines()[-1]) / 1024:.1f}MiB"
print(f"{runs} runs each, {os.environ.get('SKARN_BENCH_DIRS') or 0} directories in the workspace, uid {os.getuid()}, {os.cpu_count()} CPUs, kernel {os.uname().release}, "
      f"load {os.getloadavg()[0]:.1f}")
print(f"{'':40} {'median':>9} {'p90':>9} {'peak RSS':>9}")
for name, argv in tools.items():
    t = sorted(times[name])
    print(f"{name:40} {statistics.median(t):7.2f}ms {t[int(len(t) * 0.9)]:7.2f}ms {peak(argv):>9}")
PY
