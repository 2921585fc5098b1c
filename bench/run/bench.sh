#!/usr/bin/env bash
# Benchmark: `skarn run -- /bin/true` under the full default policy, against
# bare /bin/true and (when installed) bwrap, interleaved in the same run.
#   bench/run/bench.sh [RUNS]        (default 300 runs of each)
# SKARN_BASELINE=/path/to/older/skarn adds that binary's default-policy run
# to the same interleaved loop (before/after comparisons under equal load).
# Prints median / p90 wall time; peak RSS via /usr/bin/time when present.
# SKARN_BENCH_DIRS=N[,N...] adds, for each N, a (root file system) git
# workspace holding N empty directories (100 per parent) to the same loop,
# skarn and bwrap each (issue 30 goal 1: the start-up must not grow with the
# tree; 0 is the plain empty workspace, always measured).
# SKARN_BENCH_REAL=1 (the default; 0 leaves them out) adds small real
# commands, skarn and bwrap and bare each, in a git workspace of 1,000
# committed files: `python3 -c pass`, `git status`, `node -e 0` (issue 30
# goal 2: at most bwrap + 2 ms).
# Run it once as root and once as an unprivileged user (e.g.
#   setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp/h PATH=$PATH bench/run/bench.sh)
# after building: root uses a pids cgroup, other users a user namespace.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS="${1:-300}"
if [ "$(id -u)" = 0 ] && [ -z "${SKARN_NO_BUILD:-}" ]; then cargo build --release -q -p skarn; fi
SKARN="${SKARN:-$PWD/target/release/skarn}"
SCRATCH="$(mktemp -d /tmp/skarn-bench-XXXXXX)"     # on the root filesystem
SHM="$(mktemp -d /dev/shm/skarn-bench-XXXXXX)"      # on tmpfs
trap 'rm -rf "$SCRATCH" "$SHM"' EXIT
python3 - "$RUNS" "$SKARN" "$SCRATCH" "$SHM" "${SKARN_BASELINE:-}" "${SKARN_BENCH_DIRS:-0}" "${SKARN_BENCH_REAL:-1}" <<'PY'
import os, shutil, statistics, subprocess, sys, time
runs, skarn, scratch, shm, baseline = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
sizes = sorted({0} | {int(s) for s in sys.argv[6].split(",") if s.strip()})
real = sys.argv[7] != "0"

def git(ws, *args):
    subprocess.run(["git", "-C", ws, *args], check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b",
                            GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b"))

def workspace(name):
    ws = os.path.join(scratch, name)
    os.mkdir(ws)
    git(ws, "init", "-q")                 # typical workspaces: git repositories
    return ws

spaces = {}
for n in sizes:
    ws = spaces[n] = workspace("ws%d" % n)
    for i in range(n):
        os.makedirs(os.path.join(ws, "d%d" % (i // 100), "e%d" % (i % 100)))
git(shm, "init", "-q")
run = [skarn, "run", "--no-config"]
bwrap = shutil.which("bwrap")
def bw(ws, argv, chdir=()):
    return [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
            "--dev", "/dev", "--proc", "/proc", "--bind", ws, ws, *chdir, *argv]
ws = spaces[0]
tools = {
    "bare /bin/true": ["/bin/true"],
    "skarn run (default policy)": run + ["--workspace", ws, "--", "/bin/true"],
    "skarn run --no-protect-persistence": run + ["--no-protect-persistence", "--workspace", ws, "--", "/bin/true"],
    "skarn run (default, tmpfs workspace)": run + ["--workspace", shm, "--", "/bin/true"],
}
if baseline:
    tools["baseline skarn run (default policy)"] = [baseline, "run", "--no-config", "--workspace", ws, "--", "/bin/true"]
if bwrap:
    tools["bwrap --unshare-all ..."] = bw(ws, ["/bin/true"])
else:
    print("bwrap not installed: peer not measured")
for n in sizes[1:]:
    tools[f"skarn run, {n} dirs"] = run + ["--workspace", spaces[n], "--", "/bin/true"]
    if baseline:
        tools[f"baseline skarn run, {n} dirs"] = [baseline, "run", "--no-config", "--workspace", spaces[n], "--", "/bin/true"]
    if bwrap:
        tools[f"bwrap, {n} dirs"] = bw(spaces[n], ["/bin/true"])
cwd = {}
if real:
    repo = workspace("repo1000")
    for i in range(1000):
        d = os.path.join(repo, "src%d" % (i // 100))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%d.txt" % i), "w") as f:
            f.write("line %d\n" % i)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "files")
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else shutil.which("python3")
    node = shutil.which("node")
    cmds = {"python3 -c pass": [py, "-c", "pass"], "git status": [shutil.which("git"), "status", "--short"]}
    if node:
        cmds["node -e 0"] = [node, "-e", "0"]
    for label, argv in cmds.items():
        rows = {f"bare {label}": argv, f"skarn run -- {label}": run + ["--workspace", repo, "--", *argv]}
        if baseline:
            rows[f"baseline skarn run -- {label}"] = [baseline, "run", "--no-config", "--workspace", repo, "--", *argv]
        if bwrap:
            rows[f"bwrap -- {label}"] = bw(repo, argv, ["--chdir", repo])
        tools.update(rows)
        cwd.update({name: repo for name in rows})     # every row runs in the repository
load0 = os.getloadavg()[0]
times = {k: [] for k in tools}
null = os.open(os.devnull, os.O_RDWR)
here = os.getcwd()
for i in range(runs + 10):
    for name, argv in tools.items():            # interleaved: same load for everyone
        os.chdir(cwd.get(name, here))
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{name} failed: {status}")
        if i >= 10:
            times[name].append((time.perf_counter() - t0) * 1000)
os.chdir(here)
def peak(name, argv):
    if not os.path.exists("/usr/bin/time"):
        return "n/a"
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, capture_output=True, text=True, cwd=cwd.get(name))
    return f"{int(r.stderr.strip().splitlines()[-1]) / 1024:.1f}MiB"
print(f"{runs} runs each, workspaces of {', '.join(map(str, sizes))} directories, uid {os.getuid()}, "
      f"{os.cpu_count()} CPUs, kernel {os.uname().release}, load {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
print(f"{'':44} {'median':>9} {'p90':>9} {'peak RSS':>9}")
for name, argv in tools.items():
    t = sorted(times[name])
    print(f"{name:44} {statistics.median(t):7.2f}ms {t[int(len(t) * 0.9)]:7.2f}ms {peak(name, argv):>9}")
PY
