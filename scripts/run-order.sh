#!/usr/bin/env bash
# Regenerate crates/skarn/link/run-order.txt (ADR 0352): the functions a
# `skarn run` executes, which a release build on x86-64 lays out together.
# Counts every function's calls with uprobes (root; the tracing file system
# at /sys/kernel/tracing) on a copy of a release binary, over a few runs: the
# default policy in a git workspace as root and as uid 65534, an empty HOME,
# standard input relayed, a failing command, `--version`. Slow: ~38,000
# probes are registered one by one (4 minutes here) and turning them off
# waits for an RCU grace period each (over 30 minutes here). A stale list
# costs memory, never correctness: a name the binary no longer has is
# skipped by the linker.
# Then (by hand, 7 Dec 2026): build with `cargo rustc --release -p skarn
# --bin skarn -- -C save-temps --print link-args`, relink with the list,
# trace `perf record -e page-faults -d` of a run and add the function that
# first faulted in each 64 KiB window outside the block; repeat until none.
#   scripts/run-order.sh [RELEASE_BINARY]   (default target/release/skarn)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-$PWD/target/release/skarn}"
OUT="$PWD/crates/skarn/link/run-order.txt"
T=/sys/kernel/tracing
TMP="$(mktemp -d)"
GROUP="skarnorder$$"
cleanup() {
  echo 0 > "$T/events/$GROUP/enable" 2>/dev/null || true
  # (Only this script's probes, one by one: others' are left alone.)
  grep "^p:$GROUP/" "$T/uprobe_events" 2>/dev/null | while read -r p _; do
    echo "-:${p#p:}" >> "$T/uprobe_events"
  done || true
  rm -rf "$TMP"
}
trap cleanup EXIT
cp "$BIN" "$TMP/skarn"
chmod 755 "$TMP"
python3 - "$TMP" "$GROUP" "$T" "$OUT" <<'PY'
import os, re, subprocess, sys
tmp, group, tr, out = sys.argv[1:5]
exe = f"{tmp}/skarn"
# The executable segment: file offset = address - (its address - its offset).
seg = [l.split() for l in subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True,
                                          check=True).stdout.splitlines() if "LOAD" in l and "R E" in l][0]
off, va, size = int(seg[1], 16), int(seg[2], 16), int(seg[5], 16)
syms = {}
for l in subprocess.run(["nm", "-S", "--defined-only", exe], capture_output=True, text=True,
                        check=True).stdout.splitlines():
    p = l.split(None, 3)
    if len(p) == 4 and p[2] in "tTwW" and int(p[1], 16) and va <= int(p[0], 16) < va + size:
        syms.setdefault(int(p[0], 16), p[3])
addrs = sorted(syms)
with open(f"{tr}/uprobe_events", "a") as f:
    for i, a in enumerate(addrs):
        f.write(f"p:{group}/f{i} {exe}:0x{a - va + off:x}\n")
        f.flush()
with open(f"{tr}/events/{group}/enable", "w") as f:
    f.write("1")
ws, home = f"{tmp}/ws", f"{tmp}/home"
os.makedirs(home)
subprocess.run(["git", "init", "-q", ws], check=True)
subprocess.run(["chown", "-R", "65534:65534", ws, home], check=True)
env = dict(os.environ, HOME=home)
nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
runs = [([exe, "run", "--", "/bin/true"], os.environ, None),
        (nobody + [exe, "run", "--", "/bin/true"], env, None),
        (nobody + [exe, "run", "--", "/bin/true"], env, None),
        ([exe, "run", "--", "/bin/true"], env, None),
        ([exe, "run", "--", "cat"], os.environ, b"hi\n"),
        ([exe, "run", "--", "sh", "-c", "exit 3"], os.environ, None),
        ([exe, "--version"], os.environ, None)]
for argv, e, stdin in runs:
    subprocess.run(argv, env=e, cwd=ws, input=stdin, stdout=subprocess.DEVNULL)
hit = set()
for l in open(f"{tr}/uprobe_profile"):
    p = l.split()
    if len(p) == 3 and p[1].startswith("f") and int(p[2]) > 0:
        hit.add(addrs[int(p[1][1:])])
with open(out, "w") as f:
    f.write("".join(syms[a] + "\n" for a in sorted(hit)))
print(f"{len(hit)} functions written to {out}")
PY
