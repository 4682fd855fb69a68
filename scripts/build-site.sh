#!/usr/bin/env bash
# Builds the page as a self-contained static site: copy the output directory
# to any static host (or serve it locally) and it works, offline too once
# loaded.
#
#   scripts/build-site.sh [OUT]        # default OUT: site/
#
# Layout (every path relative, so the site works under any URL prefix):
#   OUT/index.html           the page, pointing at the versioned assets
#   OUT/sw.js                a small service worker caching the assets
#   OUT/<version>/www/…      main.js and its modules, worker.js, style.css, examples/
#   OUT/<version>/pkg/…      fabricscope.js and fabricscope_bg.wasm
# <version> is a hash of the assets' contents, so a new build never mixes with
# files a browser cached from an older one.
#
# Needs pkg/ built (scripts/build-wasm.sh; `make site` runs it).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/site}"
cd "$ROOT"

PAGE_FILES=(main.js dom.js pictures.js share.js worker.js style.css favicon.svg)
PKG_FILES=(fabricscope.js fabricscope_bg.wasm)
for f in "${PKG_FILES[@]}"; do
  [[ -f "pkg/$f" ]] || { echo "pkg/$f is missing: run scripts/build-wasm.sh" >&2; exit 1; }
done

examples=(www/examples/*.txt)
version="$(cat "${PAGE_FILES[@]/#/www/}" www/index.html www/sw.js "${examples[@]}" "${PKG_FILES[@]/#/pkg/}" |
  sha256sum | cut -c1-12)"

rm -rf "$OUT"
mkdir -p "$OUT/$version/www/examples" "$OUT/$version/pkg"
cp "${PAGE_FILES[@]/#/www/}" "$OUT/$version/www/"
cp "${examples[@]}" "$OUT/$version/www/examples/"
cp "${PKG_FILES[@]/#/pkg/}" "$OUT/$version/pkg/"

# The page: asset paths into the versioned directory, and the service worker named.
sed -e "s#href=\"style.css\"#href=\"$version/www/style.css\"#" \
    -e "s#href=\"favicon.svg\"#href=\"$version/www/favicon.svg\"#" \
    -e "s#src=\"main.js\"#src=\"$version/www/main.js\"#" \
    -e "s#<meta name=\"color-scheme\"#<meta name=\"fabricscope-service-worker\" content=\"sw.js\">\n  &#" \
    www/index.html > "$OUT/index.html"
for asset in "$version/www/style.css" "$version/www/main.js" "$version/www/favicon.svg"; do
  grep -q "\"$asset\"" "$OUT/index.html" || { echo "index.html does not reference $asset" >&2; exit 1; }
done

# The service worker: its version and the list of assets to cache.
assets="$(cd "$OUT" && find "$version" -type f | sort | sed 's/.*/  "&",/')"
{
  sed -n '1,/^const VERSION/p' www/sw.js | sed "s/__VERSION__/$version/"
  printf 'const ASSETS = [\n%s\n];\n' "$assets"
  sed -n '/^const CACHE/,$p' www/sw.js
} > "$OUT/sw.js"

bytes="$(du -sb "$OUT" | cut -f1)"
printf 'site: %s (version %s, %d files, %d bytes)\n' "$OUT" "$version" "$(find "$OUT" -type f | wc -l)" "$bytes"
