#!/usr/bin/env bash
# The demo: installs the Debian packages it needs, builds, then runs the paper appendix's
# walkthrough with laasctl against OpenSM + libosmlaas.so on a simulated fat-tree (ibsim).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
exec bash scripts/demo-fabric.sh
