#!/usr/bin/env bash
# The test command: installs dependencies, builds with warnings as errors, runs every test
# (unit, property, integration against the real OpenSM + ibsim) through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh -DLAAS_WERROR=ON
cd "${LAAS_BUILD_DIR:-build}"
ctest --output-on-failure --timeout 1200 -j2 "$@"
