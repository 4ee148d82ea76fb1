#!/usr/bin/env bash
# Configures and builds into ./build (or $LAAS_BUILD_DIR). Extra arguments go to cmake;
# LAAS_BUILD_TARGETS (space-separated) builds only those targets.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${LAAS_BUILD_DIR:-build}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
# shellcheck disable=SC2086 # a list of target names
ninja -C "$build" ${LAAS_BUILD_TARGETS:-}
