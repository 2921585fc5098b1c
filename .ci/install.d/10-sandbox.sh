#!/usr/bin/env bash
# skarn-sandbox (issue 2): tools the sandbox tests and the benchmark use.
# Idempotent: installs only what is missing.
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
command -v curl >/dev/null || need+=(curl)                 # --net allow tests (a real HTTP client)
command -v python3 >/dev/null || need+=(python3)
[ -x /usr/bin/python3 ] || need+=(python3)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v bwrap >/dev/null || need+=(bubblewrap)   # benchmark peer (bench/run)
[ -x /usr/bin/time ] || need+=(time)                  # benchmark peak RSS
command -v go >/dev/null || need+=(golang-go)          # the go preset (run_go_preset)
command -v zsh >/dev/null || need+=(zsh)               # the installed hook line under each
command -v fish >/dev/null || need+=(fish)             # user shell (agent_boundary)
command -v git-lfs >/dev/null || need+=(git-lfs)       # LFS objects put back (run_b22a)
command -v git-crypt >/dev/null || need+=(git-crypt)   # git-crypt keys refused (run_b22a)
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${need[@]}" >/dev/null
fi
# pytest for the Python-ecosystem test (skarn run -- pytest).
if ! command -v pytest >/dev/null 2>&1; then
    python3 -m pip install --quiet pytest 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages pytest
fi
# pnpm 10 (run_b22d: a project pnpm 10 installed is still a workspace).
if ! command -v pnpm >/dev/null 2>&1 || ! pnpm --version 2>/dev/null | grep -q '^10\.'; then
    npm install --global --no-audit --no-fund --loglevel=error pnpm@10
fi
