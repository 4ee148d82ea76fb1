#!/usr/bin/env bash
# No function over 100 lines outside tests, benchmarks and fuzz targets (issue 44's measure,
# universal-ctags' line ranges: scripts/long-functions.sh). service/ joins the list once its
# state_store.cc parse_state (124 lines) is split. Skipped (77) without universal-ctags.
set -euo pipefail
command -v ctags-universal >/dev/null || { echo "long_functions: no universal-ctags, skipped"; exit 77; }
root="$(cd "$(dirname "$0")/../.." && pwd)"
exec bash "$root/scripts/long-functions.sh" 100 allocation allocator check export laasctl \
  opensm_plugin routing sim tools topology util
