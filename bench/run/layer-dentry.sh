#!/bin/sh
# What a run sees of the host's changes made while it runs (ADR 0226):
# the host creates, edits, replaces by rename and removes files in the
# workspace after the command has looked some of them up; the command
# prints what it reads then.
#   bench/run/layer-dentry.sh SKARN WORKSPACE MODE   (MODE: cow or direct)
# WORKSPACE is removed and made again.
# usage: h23dentry.sh SKARN WS MODE
S=$1; WS=$2; M=$3
rm -rf "$WS"; mkdir -p "$WS/sub"; echo old > "$WS/edit.txt"; echo old > "$WS/swap.txt"; echo x > "$WS/gone.txt"
mkfifo "$WS.go"
( $S run --workspace-layer $M --workspace "$WS" -- sh -c '
  test -e neg.txt; test -e sub/neg.txt; cat edit.txt swap.txt >/dev/null; echo READY
  read x
  echo "a neg-lookup-then-host-create top: $(cat neg.txt 2>&1)"
  echo "b neg-lookup-then-host-create sub: $(cat sub/neg.txt 2>&1)"
  echo "c never-looked-up create: $(cat fresh.txt 2>&1)"
  echo "d in-place edit: $(cat edit.txt)"
  echo "e atomic replace (rename): $(cat swap.txt)"
  echo "f host delete: $(cat gone.txt 2>&1)"
  echo "g ls: $(ls | tr "\n" " ")"
' < "$WS.go" ) | { read r; echo "$r" >&2
   echo new > "$WS/neg.txt"; echo new > "$WS/sub/neg.txt"; echo new > "$WS/fresh.txt"
   echo new > "$WS/edit.txt"; echo new > "$WS/swap.tmp"; mv "$WS/swap.tmp" "$WS/swap.txt"; rm "$WS/gone.txt"
   cat; } &
exec 3>"$WS.go"; sleep 2; echo go >&3; exec 3>&-; wait; rm -f "$WS.go"
