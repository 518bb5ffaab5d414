#!/usr/bin/env bash
# make clients-check: the official Python clients (elasticsearch 9.x and opensearch-py,
# from PyPI, in a virtualenv under target/) against `heddle-eval serve` on a small index
# made here; fails on any difference from what the clients expect
# (scripts/clients_check.py says which calls). Not in `make test`: it needs PyPI.
# CLIENTS_VENV reuses an environment elsewhere; CLIENTS_CHECK_PROFILE=release builds and
# runs the release binary (default: debug, the one `cargo build` makes).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${CLIENTS_VENV:-target/clients-venv}
PROFILE=${CLIENTS_CHECK_PROFILE:-debug}
CARGO=${CARGO:-cargo}

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
# python -m pip, not bin/pip: a virtualenv moved or copied keeps working (pip's shebang
# names the folder it was made in).
"$VENV/bin/python" -m pip install --disable-pip-version-check -q -r scripts/clients-check-requirements.txt

if [ "$PROFILE" = release ]; then
  $CARGO build --release -p heddle-eval
else
  $CARGO build -p heddle-eval
fi
BIN="target/$PROFILE/heddle-eval"

WORK=$(mktemp -d)
SERVER=
cleanup() {
  if [ -n "$SERVER" ]; then
    kill -TERM "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# The corpus the checks expect: d0..d19 about covid, and one document about bats.
mkdir -p "$WORK/corpus"
{
  for i in $(seq 0 19); do
    printf '{"_id": "d%d", "title": "title %d", "text": "covid transmission masks number %d"}\n' "$i" "$i" "$i"
  done
  printf '{"_id": "bats", "title": "Bats", "text": "bats host coronaviruses"}\n'
} > "$WORK/corpus/corpus.jsonl"
"$BIN" index --corpus "$WORK/corpus" --index "$WORK/idx" --per-field > /dev/null

"$BIN" serve --index "$WORK/idx" --addr 127.0.0.1:0 --reload-ms 0 > "$WORK/serve.out" 2> "$WORK/serve.err" &
SERVER=$!
URL=
for _ in $(seq 1 100); do
  URL=$(grep -o 'http://[^ ]*' "$WORK/serve.out" 2>/dev/null | head -n 1 || true)
  [ -n "$URL" ] && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/serve.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$URL" ] || { echo "clients-check: the server printed no URL" >&2; exit 1; }
echo "clients-check: $URL"
# The URL is http://ADDR/INDEX: the clients take the address and the index apart.
"$VENV/bin/python" scripts/clients_check.py "${URL%/*}" "${URL##*/}"
