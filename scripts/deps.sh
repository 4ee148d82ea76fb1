#!/usr/bin/env bash
# Installs what building, testing and the demo need on Debian 12. Safe to run again.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
packages=(
  build-essential cmake ninja-build pkg-config clang-format
  clang libclang-rt-14-dev
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopensm-dev libibumad-dev libibmad-dev
  opensm ibsim-utils infiniband-diags
  etcd-server etcd-client libcurl4-openssl-dev
  python3-fusepy
  slurmctld slurm-client munge python3-openstackclient jq iproute2
  prometheus librsvg2-bin systemd
  gnuplot-nox glpk-utils universal-ctags
  debhelper dpkg-dev fakeroot lintian
  libcpp-httplib-dev libssl-dev openssl curl
  openapi-specification python3-jsonschema
)
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
echo "deps: installed ${#packages[@]} Debian packages"
