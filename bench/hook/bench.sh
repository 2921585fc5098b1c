#!/bin/sh
# skarn hook claude-code: time per call against `cat` (the floor: a process
# that reads stdin and writes it out), interleaved in the same run.
# Usage: bench/hook/bench.sh [SKARN_BINARY] [RUNS]  (SKARN_BENCH_LOOP=1: medians from a Python loop even with hyperfine)
set -eu
SKARN=${1:-target/release/skarn}
RUNS=${2:-300}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
HOME=$TMP; export HOME
printf '%s' '{"session_id":"s","transcript_path":"/x","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"cargo test --workspace 2>&1 | tail -n 20","description":"run the tests","timeout":120000}}' >"$TMP/in.json"
if [ -z "${SKARN_BENCH_LOOP:-}" ] && command -v hyperfine >/dev/null 2>&1; then
    if hyperfine --help | grep -q -- '--input'; then
        hyperfine -N --warmup 20 --runs "$RUNS" --input "$TMP/in.json" \
            "cat" "$SKARN hook claude-code"
    else
        # Older hyperfine: through a shell (its start-up cost is subtracted).
        hyperfine --warmup 20 --runs "$RUNS" \
            "cat <$TMP/in.json" "$SKARN hook claude-code <$TMP/in.json"
    fi
    exit
fi
# No hyperfine: a loop of RUNS calls each, interleaved; per-call mean.
python3 - "$SKARN" "$RUNS" "$TMP/in.json" <<'PY'
import resource, statistics, subprocess, sys, time
skarn, runs, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(path, "rb").read()
cmds = {"cat": ["cat"], "skarn hook claude-code": [skarn, "hook", "claude-code"]}
t = {k: [] for k in cmds}
cpu = {k: [] for k in cmds}
def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
for _ in range(runs):
    for k, argv in cmds.items():
        c, s = child_cpu(), time.perf_counter()
        r = subprocess.run(argv, input=data, stdout=subprocess.DEVNULL)
        t[k].append((time.perf_counter() - s) * 1000)
        cpu[k].append((child_cpu() - c) * 1000)
        assert r.returncode == 0, k
# Wall time depends on the machine's load; CPU time (user + system of the
# child) much less so.
for k, v in t.items():
    v.sort()
    print(f"{k:24} wall median {statistics.median(v):6.2f} ms  p90 {v[int(len(v) * .9)]:6.2f} ms  "
          f"min {v[0]:6.2f} ms | cpu median {statistics.median(cpu[k]):5.2f} ms")
PY
