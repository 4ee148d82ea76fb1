#!/usr/bin/env bash
# Lists the functions longer than LIMIT lines (default 100), longest first, from universal-ctags'
# line ranges (line: to end:), outside tests, benchmarks and fuzz targets. Exits 1 when any is
# found, so that it can gate a check. Usage: scripts/long-functions.sh [LIMIT] [DIR...]
# (default: every source directory of the project).
set -euo pipefail
cd "$(dirname "$0")/.."
limit="${1:-100}"
shift || true
if [ "$#" -eq 0 ]; then
  set -- allocation allocator check export laasctl opensm_plugin routing service sim \
    tools topology util
fi
command -v ctags-universal >/dev/null || { echo "long-functions: needs universal-ctags" >&2; exit 2; }
# A lambda is listed on its own (as "lambda in F") and is also part of F's lines.
ctags-universal --languages=C++ --kinds-C++=f --fields=+ne -o - -R "$@" |
  awk -F'\t' -v limit="$limit" '
    $2 ~ /(^|\/)tests?\// || $2 ~ /_test\.cc$/ || $2 ~ /(^|\/)(bench|fuzz)\// { next }
    {
      start = 0; end = 0; scope = ""
      for (i = 4; i <= NF; i++) {
        if ($i ~ /^line:/) start = substr($i, 6)
        else if ($i ~ /^end:/) end = substr($i, 5)
        else if ($i ~ /^(class|struct|namespace|function):/) scope = substr($i, index($i, ":") + 1)
      }
      if (!end) next
      n = end - start + 1
      if (n > limit) {
        name = $1
        gsub(/__anon[0-9a-f]+(::)?/, "", scope); sub(/^laas::/, "", scope); sub(/::$/, "", scope)
        if (name ~ /^__anon/) name = "lambda in " scope
        else if (scope != "") name = scope "::" name
        printf "%5d %s:%d %s\n", n, $2, start, name
      }
    }' | sort -rn | awk '{ print } END { printf "%d function(s) over '"$limit"' lines\n", NR; exit NR > 0 }'
