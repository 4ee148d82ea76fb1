#!/usr/bin/env bash
# The demo: installs the Debian packages it needs, builds, then runs the paper appendix's
# walkthrough with laasctl against OpenSM + libosmlaas.so on a simulated fat-tree (ibsim).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# Only what the demo runs: the plugin, laasctl, the fabric generator and the offline audit (the
# test command builds the rest: tests, benchmarks, the simulator).
LAAS_BUILD_TARGETS="osmlaas laasctl laas-topogen laas-audit" bash scripts/build.sh
exec bash scripts/demo-fabric.sh
