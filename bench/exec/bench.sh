#!/usr/bin/env bash
# `skarn exec --code 'return 1'` as a whole process, per isolation, next to
# `node -e 'console.log(1)'` in the same hyperfine run (issue 15):
#   auto        with no --config: the process confines itself (self_confined)
#   worker      a cold confined worker process is started
#   in_process  no OS confinement (reference)
# Usage: bench/exec/bench.sh [RUNS]   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-300}
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 1; }
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --release -p skarn >&2
bin=$CARGO_TARGET_DIR/release/skarn
# Output to a pipe or /dev/null (hyperfine's default), not a regular file:
# a process whose output is a file cannot confine itself and uses a worker.
"$bin" exec --json --code 'return 1' | grep -q '"isolation":"self_confined"' \
  || echo "warning: auto did not pick self_confined on this host" >&2
cmds=(
  "$bin exec --code 'return 1'"
  "$bin exec --isolation worker --code 'return 1'"
  "$bin exec --isolation in_process --code 'return 1'"
)
if command -v node >/dev/null; then cmds+=("node -e 'console.log(1)'"); fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
hyperfine -N --warmup 20 --runs "$runs" --export-json "$out/b.json" "${cmds[@]}" >&2
python3 - "$out/b.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    user, system = r["user"] * 1000, r["system"] * 1000
    print(f"median {r['median']*1000:6.2f} ms  mean {r['mean']*1000:6.2f} ms  "
          f"min {r['min']*1000:6.2f} ms  cpu {user + system:6.2f} ms  {r['command']}")
PY
