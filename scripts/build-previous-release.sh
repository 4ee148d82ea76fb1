#!/usr/bin/env bash
# Builds the previous release's OpenSM plugin and laasctl from this clone's history, for the
# upgrade test (tests/integration/upgrade.sh): an HA pair moved from that release to this one,
# one SM at a time, and back.
#
# Usage: scripts/build-previous-release.sh [OUT]   (OUT default: build/previous-release)
# Writes OUT/src (the release's sources, from `git archive`), OUT/build (its build tree), and
# OUT/env, which names what was built:
#   PREVIOUS_RELEASE=<commit>  PREVIOUS_PLUGIN_DIR=<dir of libosmlaas.so>  PREVIOUS_LAASCTL=<path>
# A second run with the same release is a no-op. Exit 77 when the commit is not in this clone (a
# shallow clone): the caller skips, saying why.
#
# The previous release is the last commit that landed (passed CI) before etcd, laas-api and
# laas-sdn: installations in the field run it, with the state directory shared by the HA pair.
# LAAS_PREVIOUS_RELEASE names another commit.
set -euo pipefail
cd "$(dirname "$0")/.."
release=${LAAS_PREVIOUS_RELEASE:-cfe41b937bb357cf938fb2e3384924d24c069f8d}
out=$(realpath -m "${1:-${LAAS_BUILD_DIR:-build}/previous-release}")

if ! git rev-parse -q --verify "$release^{commit}" >/dev/null 2>&1; then
  echo "build-previous-release: commit $release is not in this clone (shallow?): fetch the history (git fetch --unshallow)" >&2
  exit 77
fi
release=$(git rev-parse "$release^{commit}")
if [ -f "$out/env" ] && grep -qx "PREVIOUS_RELEASE=$release" "$out/env"; then
  echo "build-previous-release: $release already built in $out" >&2
  exit 0
fi

rm -rf "$out"
mkdir -p "$out/src"
git archive "$release" | tar -x -C "$out/src"
started=$SECONDS
# Only what the upgrade test runs (no tests or benchmarks of the old release), at -O0: it is
# compiled in every CI run, and the test needs no speed from it (-O1 141 s, -O0 133 s on the
# 2-core machine). Not as a unity build: that release's files repeat names at file scope.
launcher=()
if command -v ccache >/dev/null && [ -n "${CCACHE_DIR:-}" ]; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$out/src" -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG" -DLAAS_BUILD_TESTS=OFF -DLAAS_BUILD_BENCH=OFF "${launcher[@]}" >"$out/cmake.log" 2>&1 || {
  tail -20 "$out/cmake.log" >&2
  echo "build-previous-release: configuring $release failed ($out/cmake.log)" >&2
  exit 1
}
ninja -C "$out/build" osmlaas laasctl >"$out/ninja.log" 2>&1 || {
  tail -20 "$out/ninja.log" >&2
  echo "build-previous-release: building $release failed ($out/ninja.log)" >&2
  exit 1
}
plugin=$(find "$out/build" -name libosmlaas.so -print -quit)
laasctl=$(find "$out/build" -type f -name laasctl -perm -u+x -print -quit)
[ -n "$plugin" ] && [ -n "$laasctl" ] || {
  echo "build-previous-release: no libosmlaas.so or laasctl in $out/build" >&2
  exit 1
}
{
  echo "PREVIOUS_RELEASE=$release"
  echo "PREVIOUS_PLUGIN_DIR=$(dirname "$plugin")"
  echo "PREVIOUS_LAASCTL=$laasctl"
} >"$out/env"
echo "build-previous-release: $release built in $((SECONDS - started)) s into $out/build" >&2
