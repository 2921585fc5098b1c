#!/usr/bin/env bash
# Whole-process cost of `skarn exec --code 'return 1'`, measured with
# hyperfine next to a reference in the same run: `node -e` printing 1 (a
# JavaScript process start), when node is installed.
# Usage: bench/codemode/exec.sh   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v hyperfine >/dev/null || { apt-get install -y hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 1; }; }
cargo build --release -p skarn >&2
bin=target/release/skarn
cmds=("$bin exec --code 'return 1'" "$bin exec --code 'const r = await Promise.all([1,2,3].map(async (x: number) => x * 2)); return r'")
if command -v node >/dev/null; then cmds+=("node -e 'console.log(1)'"); fi
out=$(mktemp -d)
hyperfine -N --warmup 20 --runs 300 --export-json "$out/b.json" "${cmds[@]}" >&2
python3 - "$out/b.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"median {r['median']*1000:7.2f} ms  mean {r['mean']*1000:7.2f} ms  min {r['min']*1000:7.2f} ms  {r['command']}")
PY
rm -rf "$out"
