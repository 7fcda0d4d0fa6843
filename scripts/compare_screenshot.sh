#!/usr/bin/env bash
# Takes a screenshot of a `clgrad compare` report.html in headless Chromium, to look at the charts
# without a desktop. Not a ctest: Chromium is no build or CI dependency.
#   scripts/compare_screenshot.sh REPORT.html OUT.png [WIDTH [HEIGHT]]
# (Debian: apt-get install chromium). The page loads nothing from the network.
set -euo pipefail
if [ $# -lt 2 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	echo "usage: $0 REPORT.html OUT.png [WIDTH [HEIGHT]]" >&2
	exit 2
fi
html=$(realpath "$1")
out=$(realpath -m "$2")
width=${3:-1280}
height=${4:-3200}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
	echo "compare_screenshot: no Chromium found (Debian: apt-get install chromium)" >&2
	exit 1
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# --no-sandbox: needed when running as root (containers); the page is our own local file
"$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars --user-data-dir="$profile" \
	--window-size="$width,$height" --screenshot="$out" "file://$html" >/dev/null 2>&1
[ -s "$out" ] || { echo "compare_screenshot: no screenshot written" >&2; exit 1; }
echo "compare_screenshot: $out (${width}x$height)"
