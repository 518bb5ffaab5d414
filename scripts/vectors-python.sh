#!/usr/bin/env bash
# faiss-cpu and hnswlib from PyPI, in a virtualenv, on the files make vectors-compare
# measured (not part of make test): each set's rows go to OUT/SET/python.json and
# OUT/SET/python.txt, beside heddle-bench's report. VECTORS_PY_VENV reuses an environment.
# Usage: bash scripts/vectors-python.sh [SET ...]  (default: every set with a report)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${VECTORS_OUT:-results/vectors}
VENV=${VECTORS_PY_VENV:-target/vectors-python-venv}
test -x "$VENV/bin/python" || python3 -m venv "$VENV"
"$VENV/bin/pip" install --disable-pip-version-check -q -r scripts/vectors-python-requirements.txt
sets=("$@")
if [ ${#sets[@]} -eq 0 ]; then
  for r in "$OUT"/*/report.json; do [ -f "$r" ] && sets+=("$(basename "$(dirname "$r")")"); done
fi
for s in "${sets[@]}"; do
  read -r base queries < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["set"]["base"], r["set"]["query_vectors"])' "$OUT/$s/report.json")
  echo "== $s"
  nice -n 10 "$VENV/bin/python" scripts/vectors-python.py --base "$base" --queries "$queries" \
    --out "$OUT/$s/python.json" | tee "$OUT/$s/python.txt"
done
