#!/usr/bin/env bash
# What carrying the workspace's writes costs on a real test suite (issue 23
# item 5, ADR 0226): wall time of one project's own tests, bare (no
# sandbox) vs `skarn run --workspace-layer direct` vs `skarn run` (the
# copy-on-write layer, the default), interleaved in one run (each round
# runs the three in a rotated order, each on a fresh copy of the project,
# so load drift hits all three alike).
#   bench/run/layer-suite.sh [ROUNDS]        (default 5)
# The suites:
#  - cargo: `cargo test --offline -q` of a small crate copied from cargo's
#    registry cache ($CRATE, default the newest semver-*; its benches and
#    dev-dependencies removed so it builds offline; the whole target/ is
#    written into the workspace);
#  - pytest: `python3 -m pytest -q -p no:cacheprovider` of $PYPROJECT (a
#    directory holding a Python project and its tests), when set, with
#    $PYTEST_ARGS (e.g. an --ignore= of a test file that needs the network).
# SKARN=/path/to/skarn picks the binary (default target/debug/skarn).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS="${1:-5}"
SKARN="${SKARN:-$PWD/target/debug/skarn}"
python3 - "$ROUNDS" "$SKARN" <<'PY'
import glob, os, re, shutil, statistics, subprocess, sys, tempfile, time
rounds, skarn = int(sys.argv[1]), sys.argv[2]
home = os.path.expanduser("~")
cargo_home = os.environ.get("CARGO_HOME", os.path.join(home, ".cargo"))

def crate_src():
    if os.environ.get("CRATE"):
        return os.environ["CRATE"]
    found = sorted(glob.glob(os.path.join(cargo_home, "registry/src/*/semver-1.*")))
    if not found:
        sys.exit("no semver-1.* in cargo's registry cache: set CRATE=/path/to/a/crate")
    return found[-1]

def strip_offline(toml):
    # Drop [[bench]] and every dev-dependencies table (criterion and
    # friends are not in the cache).
    out, skip = [], False
    for line in toml.splitlines():
        if line.startswith("["):
            skip = line.startswith("[[bench]]") or "dev-dependencies" in line
        if not skip:
            out.append(line)
    return "\n".join(out) + "\n"

def cargo_copy():
    ws = tempfile.mkdtemp(prefix="skarn-suite-")
    dst = os.path.join(ws, "p")
    shutil.copytree(crate_src(), dst, ignore=shutil.ignore_patterns("benches", "target"))
    p = os.path.join(dst, "Cargo.toml")
    toml = strip_offline(open(p).read())
    open(p, "w").write(toml)
    lock = os.path.join(dst, "Cargo.lock")
    if os.path.exists(lock):
        os.remove(lock)
    subprocess.run(["git", "init", "-q", dst], check=True)
    return ws, dst

def py_copy():
    ws = tempfile.mkdtemp(prefix="skarn-suite-")
    dst = os.path.join(ws, "p")
    shutil.copytree(os.environ["PYPROJECT"], dst,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    subprocess.run(["git", "init", "-q", dst], check=True)
    return ws, dst

suites = [("cargo test", cargo_copy, ["cargo", "test", "--offline", "-q"])]
if os.environ.get("PYPROJECT"):
    suites.append(("pytest", py_copy, ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
                   + os.environ.get("PYTEST_ARGS", "").split()))

# The toolchains the command needs, named as the developer's shell has them.
env = dict(os.environ, CARGO_HOME=cargo_home,
           RUSTUP_HOME=os.environ.get("RUSTUP_HOME", os.path.join(home, ".rustup")))
modes = ["bare", "direct", "cow"]

def once(mode, make, argv):
    ws, dst = make()
    try:
        if mode == "bare":
            cmd = argv
        else:
            cmd = [skarn, "run", "--no-config", "--workspace", dst]
            if mode == "direct":
                cmd += ["--workspace-layer", "direct"]
            cmd += ["--read", env["CARGO_HOME"], "--read", env["RUSTUP_HOME"], "--"] + argv
        a = time.monotonic()
        p = subprocess.run(cmd, cwd=dst, env=env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        t = time.monotonic() - a
        if p.returncode != 0:
            sys.exit("failed (%s): %s\n%s%s" % (mode, " ".join(cmd), p.stdout[-2000:], p.stderr[-4000:]))
        return t
    finally:
        shutil.rmtree(ws)

for name, make, argv in suites:
    times = {m: [] for m in modes}
    for r in range(rounds):
        order = modes[r % 3:] + modes[:r % 3]
        for m in order:
            times[m].append(once(m, make, argv))
        print("  round %d: %s" % (r + 1, "  ".join("%s %.2f s" % (m, times[m][-1]) for m in modes)),
              flush=True)
    print("%s (%s), %d interleaved rounds:" % (name, " ".join(argv), rounds))
    for m in modes:
        v = times[m]
        print("  %-6s median %.2f s  min %.2f s  max %.2f s  (+%.0f%% vs bare, median)" % (
            m, statistics.median(v), min(v), max(v),
            100 * (statistics.median(v) / statistics.median(times["bare"]) - 1)))
with open("/proc/loadavg") as f:
    print("load average at the end: %s" % " ".join(f.read().split()[:3]))
PY
