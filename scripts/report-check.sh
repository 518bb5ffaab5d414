#!/usr/bin/env bash
# make report-check: the HTML reports (`--html`) as a browser shows them. Builds a small
# synthetic index, runs a short `bench --html` and `bench --writes --html`, loads each
# page in headless Chromium, saves a screenshot, the DOM Chromium built and a printed PDF
# (the print stylesheet), and fails if a page is missing a section or a chart, a chart is
# not well-formed XML, the page loads anything, or the browser logged a console error.
# Not part of `make test` (CI has no browser).
#
# Chromium: found on PATH (chromium, chromium-browser, google-chrome) or named by
# CHROMIUM=/path; otherwise installed from Debian (`apt-get install chromium`) when this
# runs as root or with password-less sudo, and the script says how to install it if not.
# REPORT_CHECK_PROFILE=debug uses debug binaries (no release build; slower figures).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${REPORT_CHECK_DIR:-results/report-check}
PROFILE=${REPORT_CHECK_PROFILE:-release}
TARGET=${CARGO_TARGET_DIR:-target}

say() { echo "report-check: $*"; }
fail() {
    echo "report-check: FAILED: $*" >&2
    exit 1
}

find_chromium() {
    for c in "${CHROMIUM:-}" chromium chromium-browser google-chrome; do
        if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then
            command -v "$c"
            return 0
        fi
    done
    return 1
}
if ! BROWSER=$(find_chromium); then
    if [ "$(id -u)" = 0 ]; then
        say "installing chromium from Debian (apt-get install chromium)"
        apt-get install -y --no-install-recommends chromium
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        say "installing chromium from Debian (sudo apt-get install chromium)"
        sudo apt-get install -y --no-install-recommends chromium
    else
        fail "no Chromium. Install it (Debian/Ubuntu: sudo apt-get install chromium) or name one: CHROMIUM=/path/to/chrome make report-check"
    fi
    BROWSER=$(find_chromium) || fail "chromium was installed but is not on PATH"
fi
say "browser: $BROWSER ($("$BROWSER" --version 2>/dev/null || echo 'version unknown'))"

if [ "$PROFILE" = release ]; then
    cargo build --release -p heddle-eval -p heddle-corpus
else
    cargo build -p heddle-eval -p heddle-corpus
fi
BIN="$TARGET/$PROFILE"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

if [ ! -f "$OUT/corpus/corpus.jsonl" ]; then
    "$BIN/heddle-corpus" synth --docs 2000 --out "$OUT/corpus" --seed 7
fi
"$BIN/heddle-eval" index --corpus "$OUT/corpus" --index "$OUT/index" --force >/dev/null

say "bench --html (3 rungs of 1,000 requests)"
"$BIN/heddle-eval" bench --index "$OUT/index" --queries "$OUT/corpus/queries.jsonl" \
    --rates 100,200,400 --samples 1000 --min-duration 0 --warmup 200 \
    --label "report-check <synthetic & small>" \
    --svg "$OUT/bench.svg" --html "$OUT/bench.html" >"$OUT/bench.txt" 2>"$OUT/bench.log"
say "bench --writes --html (one trial, three commits)"
"$BIN/heddle-eval" bench --writes --index "$OUT/index" --queries "$OUT/corpus/queries.jsonl" \
    --rate 200 --samples 2000 --min-duration 0 --warmup 200 --write-docs 500 \
    --commit-every 3 --commit-threads 1 --scratch "$OUT/scratch" \
    --svg "$OUT/writes.svg" --html "$OUT/writes.html" >"$OUT/writes.txt" 2>"$OUT/writes.log"

# Well-formed XML: every standalone SVG, and every SVG inline in a page.
check_xml() {
    python3 - "$@" <<'EOF'
import re, sys, xml.dom.minidom
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    svgs = re.findall(r"<svg\b.*?</svg>", text, re.S) if path.endswith(".html") else [text]
    if not svgs:
        sys.exit(f"{path}: no <svg>")
    for i, svg in enumerate(svgs):
        try:
            xml.dom.minidom.parseString(svg.encode("utf-8"))
        except Exception as e:
            sys.exit(f"{path}: svg {i + 1} is not well-formed: {e}")
    print(f"report-check: {path}: {len(svgs)} svg, well-formed")
EOF
}
if command -v python3 >/dev/null 2>&1; then
    check_xml "$OUT/bench.svg" "$OUT/writes.svg" "$OUT/bench.html" "$OUT/writes.html" ||
        fail "an SVG is not well-formed"
elif command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$OUT/bench.svg" "$OUT/writes.svg" || fail "an SVG is not well-formed"
else
    say "neither python3 nor xmllint: SVG well-formedness not checked"
fi

# name, then the sections and the svg count its DOM must have.
render() {
    local name=$1 svgs=$2
    shift 2
    local page="$OUT/$name.html"
    local flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
        --disable-extensions --disable-background-networking --enable-logging=stderr --v=0)
    "$BROWSER" "${flags[@]}" --window-size=1200,3000 --screenshot="$OUT/$name.png" \
        "file://$page" 2>"$OUT/$name.chromium.log" >/dev/null ||
        fail "$name: chromium could not render $page (see $OUT/$name.chromium.log)"
    "$BROWSER" "${flags[@]}" --dump-dom "file://$page" >"$OUT/$name.dom.html" \
        2>>"$OUT/$name.chromium.log" || fail "$name: chromium could not load $page"
    [ -s "$OUT/$name.png" ] || fail "$name: no screenshot"
    # Printed with the print stylesheet: a PDF that exists and is not empty.
    "$BROWSER" "${flags[@]}" --no-pdf-header-footer --print-to-pdf="$OUT/$name.pdf" \
        "file://$page" 2>>"$OUT/$name.chromium.log" >/dev/null ||
        fail "$name: chromium could not print $page"
    [ "$(wc -c <"$OUT/$name.pdf")" -gt 10000 ] || fail "$name: the printed PDF is empty"
    local dom="$OUT/$name.dom.html"
    grep -q 'data-report="heddle"' "$dom" || fail "$name: the page did not load (no report body)"
    for id in "$@"; do
        grep -q "<section id=\"$id\">" "$dom" || fail "$name: no section \"$id\" in the DOM"
    done
    local open close
    open=$(grep -o '<svg' "$dom" | wc -l)
    close=$(grep -o '</svg>' "$dom" | wc -l)
    [ "$open" -eq "$svgs" ] || fail "$name: $open <svg> elements in the DOM, expected $svgs"
    [ "$close" -eq "$svgs" ] || fail "$name: $close </svg> in the DOM, expected $svgs"
    if grep -q '<parsererror' "$dom"; then fail "$name: the browser reported a parse error"; fi
    if grep -Eq '<(img|script|link|iframe|object|embed)\b' "$dom"; then
        fail "$name: the page loads something (img, script, link…): it must be self-contained"
    fi
    if grep -E 'CONSOLE|Uncaught|SyntaxError' "$OUT/$name.chromium.log" | grep -qiv 'dbus'; then
        fail "$name: console errors (see $OUT/$name.chromium.log)"
    fi
    say "$name: $page → $OUT/$name.png ($(wc -c <"$OUT/$name.png") bytes), $open svg, sections: $*"
}
render bench 1 environment ladder plot table
render writes 1 environment summary plot report
say "OK: look at $OUT/bench.png and $OUT/writes.png"
