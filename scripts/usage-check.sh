#!/usr/bin/env bash
# make usage-check: runs the README's Usage block exactly as written (after `make demo`),
# so that a newcomer's first commands cannot drift from what the binaries accept.
set -euo pipefail
cd "$(dirname "$0")/.."
test -d demo-data/corpus || { echo "usage-check: run make demo first" >&2; exit 1; }
block=$(awk '/^## Usage/{p=1} p&&/^```sh/{c++; if(c==1){q=1;next}} q&&/^```/{exit} q' README.md)
test -n "$block" || { echo "usage-check: no sh block under README's ## Usage" >&2; exit 1; }
echo "usage-check: running $(printf '%s\n' "$block" | grep -c '^[a-z]') commands of README's Usage"
bash -euo pipefail -c "$block"
echo "usage-check: every command of README's Usage ran"
