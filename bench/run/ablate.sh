#!/usr/bin/env bash
# What each part of `skarn run -- /bin/true` costs (issue 30: "name what each
# remaining millisecond buys"): the default policy next to runs with one
# part left out at a time, all in one interleaved loop with bwrap and bare
# /bin/true, in an empty git workspace. A row's difference to the default
# row is what that part costs (under the same load):
#   --workspace-layer direct   the copy-on-write layer (its mount, apply, vet)
#   --no-protect-persistence   reserved persistence paths, their binds and checks
#   --no-private-home          the private home (tmpfs, copied config)
#   HOME=<empty directory>     the scans of the caller's home (toolchains,
#                              home files naming the workspace, links)
#   PATH=<empty directory>     the scan of the PATH directories' scripts
#   --max-procs 0              the process limit (a pids cgroup as root)
#   all but the layer          the same with the copy-on-write layer kept
#   all of these               what is left: namespaces, mounts, Landlock,
#                              seccomp, the binary's start-up, the report
#   skarn --version            the binary's own start-up and exit
#   bench/run/ablate.sh [RUNS]   (SKARN=/path/to/skarn, default target/release/skarn)
# The workspace and the empty directory are made under $TMPDIR (/tmp by
# default): a busy /tmp changes under a run's feet, and the launcher list
# is worked out again whenever a directory its PATH resolves through
# changed (ADR 0339), so TMPDIR=<a quiet directory> measures a kept list.
# SKARN_BASELINE=/path/to/older/skarn adds that binary's default and
# all-left-out rows to the same loop (before/after).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS="${1:-100}"
SKARN="${SKARN:-$PWD/target/release/skarn}"
WS="$(mktemp -d "${TMPDIR:-/tmp}/skarn-ablate-XXXXXX")"
EMPTY="$(mktemp -d "${TMPDIR:-/tmp}/skarn-ablate-home-XXXXXX")"
trap 'rm -rf "$WS" "$EMPTY"' EXIT
git -C "$WS" init -q
python3 - "$RUNS" "$SKARN" "$WS" "$EMPTY" "${SKARN_BASELINE:-}" <<'PY'
import os, shutil, statistics, sys, time
runs, skarn, ws, empty, baseline = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
run = [skarn, "run", "--no-config", "--workspace", ws]
env = dict(os.environ)
rows = {
    "bare /bin/true": (["/bin/true"], env),
    "skarn --version": ([skarn, "--version"], env),
    "skarn run (default policy)": (run + ["--", "/bin/true"], env),
    "  --workspace-layer direct": (run + ["--workspace-layer", "direct", "--", "/bin/true"], env),
    "  --no-protect-persistence": (run + ["--no-protect-persistence", "--", "/bin/true"], env),
    "  --no-private-home": (run + ["--no-private-home", "--", "/bin/true"], env),
    "  HOME=<empty directory>": (run + ["--", "/bin/true"], dict(env, HOME=empty)),
    "  PATH=<empty directory>": (run + ["--", "/bin/true"], dict(env, PATH=empty)),
    "  --max-procs 0": (run + ["--max-procs", "0", "--", "/bin/true"], env),
    "  all of the above left out": (run + ["--workspace-layer", "direct", "--no-protect-persistence",
                                           "--no-private-home", "--max-procs", "0", "--", "/bin/true"],
                                    dict(env, HOME=empty, PATH=empty)),
    "  all but the layer left out": (run + ["--no-protect-persistence", "--no-private-home",
                                            "--max-procs", "0", "--", "/bin/true"],
                                     dict(env, HOME=empty, PATH=empty)),
}
if baseline:
    brun = [baseline, "run", "--no-config", "--workspace", ws]
    rows["baseline: skarn run (default)"] = (brun + ["--", "/bin/true"], env)
    rows["baseline: all left out"] = (brun + ["--workspace-layer", "direct", "--no-protect-persistence",
                                              "--no-private-home", "--max-procs", "0", "--", "/bin/true"],
                                      dict(env, HOME=empty, PATH=empty))
    rows["baseline: all but the layer left out"] = (brun + ["--no-protect-persistence", "--no-private-home",
                                                            "--max-procs", "0", "--", "/bin/true"],
                                                    dict(env, HOME=empty, PATH=empty))
bwrap = shutil.which("bwrap")
if bwrap:
    rows["bwrap --unshare-all ..."] = ([bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
                                         "--dev", "/dev", "--proc", "/proc", "--bind", ws, ws, "/bin/true"], env)
wall = {k: [] for k in rows}
cpu = {k: [] for k in rows}
null = os.open(os.devnull, os.O_RDWR)
load0 = os.getloadavg()[0]
for i in range(runs + 10):
    for name, (argv, e) in rows.items():
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, e, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
        _, status, ru = os.wait4(pid, 0)
        dt = (time.perf_counter() - t0) * 1000
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{name} failed: {status}")
        if i >= 10:
            wall[name].append(dt)
            cpu[name].append((ru.ru_utime + ru.ru_stime) * 1000)
print(f"{runs} interleaved runs each, uid {os.getuid()}, HOME {os.environ.get('HOME')}, "
      f"load {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
base = statistics.median(wall["skarn run (default policy)"])
print(f"{'':34} {'median':>9} {'p90':>9} {'CPU':>9} {'vs default':>11}")
for name in rows:
    t = sorted(wall[name])
    m = statistics.median(t)
    print(f"{name:34} {m:7.2f}ms {t[int(len(t) * 0.9)]:7.2f}ms {statistics.median(cpu[name]):7.2f}ms {m - base:+9.2f}ms")
PY
