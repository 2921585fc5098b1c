#!/usr/bin/env bash
# Peak resident memory of `skarn run -- /bin/true` (issue 30, goal 2: under
# 10 MiB) beside bwrap's, in one interleaved loop in an empty git
# workspace: the `ru_maxrss` of `wait4` (the largest of the processes the
# command waited for, itself included), median and largest over RUNS, as
# GNU time's %M reports it (a process started by a large one, the Python
# here, would count that one's pages until its exec).
#   bench/run/memory.sh [RUNS]   (SKARN=/path/to/skarn, default target/release/skarn)
# SKARN_BASELINE=/path/to/older/skarn adds that binary's rows (before/after).
# Rows: the default policy; with an empty HOME (no toolchain listings kept
# to read); with every optional part left out (as ablate.sh); skarn
# --version (the binary's own start-up); bwrap; bare /bin/true.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x /usr/bin/time ] || { echo "memory.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
RUNS="${1:-20}"
SKARN="${SKARN:-$PWD/target/release/skarn}"
WS="$(mktemp -d "${TMPDIR:-/tmp}/skarn-memory-XXXXXX")"
EMPTY="$(mktemp -d "${TMPDIR:-/tmp}/skarn-memory-home-XXXXXX")"
trap 'rm -rf "$WS" "$EMPTY"' EXIT
git -C "$WS" init -q
python3 - "$RUNS" "$SKARN" "$WS" "$EMPTY" "${SKARN_BASELINE:-}" <<'PY'
import os, shutil, statistics, sys, tempfile
runs, skarn, ws, empty, baseline = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
env = dict(os.environ)
def rows_of(label, binary):
    run = [binary, "run", "--no-config", "--workspace", ws]
    return {
        f"{label}skarn run (default policy)": (run + ["--", "/bin/true"], env),
        f"{label}  HOME=<empty directory>": (run + ["--", "/bin/true"], dict(env, HOME=empty)),
        f"{label}  all optional parts left out": (
            run + ["--workspace-layer", "direct", "--no-protect-persistence", "--no-private-home",
                   "--max-procs", "0", "--", "/bin/true"], dict(env, HOME=empty, PATH=empty)),
        f"{label}skarn --version": ([binary, "--version"], env),
    }
rows = rows_of("", skarn)
if baseline:
    rows.update(rows_of("baseline: ", baseline))
bwrap = shutil.which("bwrap")
if bwrap:
    rows["bwrap --unshare-all ..."] = ([bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
                                         "--dev", "/dev", "--proc", "/proc", "--bind", ws, ws, "/bin/true"], env)
rows["bare /bin/true"] = (["/bin/true"], env)
peak = {k: [] for k in rows}
null = os.open(os.devnull, os.O_RDWR)
fd, out = tempfile.mkstemp()
os.close(fd)
for i in range(runs + 2):
    for name, (argv, e) in rows.items():
        argv = ["/usr/bin/time", "-f", "%M", "-o", out] + argv
        pid = os.posix_spawn(argv[0], argv, e, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
        _, status, _ = os.wait4(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{name} failed: {status}")
        if i >= 2:
            with open(out) as f:
                peak[name].append(int(f.read().split()[-1]) / 1024)
os.unlink(out)
print(f"peak RSS (MiB, ru_maxrss), {runs} interleaved runs, uid {os.getuid()}, {skarn}")
print(f"{'':40} {'median':>8} {'max':>8}")
for name, v in peak.items():
    print(f"{name:40} {statistics.median(v):8.1f} {max(v):8.1f}")
PY
