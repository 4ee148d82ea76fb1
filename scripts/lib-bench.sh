# lib-bench.sh, sourced by the failover benchmarks (bench-failover.sh, bench-etcd-chaos.sh):
# the build they need, checked before minutes of fabric start, and the environment in which
# tests/integration/failover_chaos.sh runs a pair of OpenSMs with the plugin (qos TRUE).
# Expects ROOT (the checkout); sets BUILD (LAAS_BUILD_DIR, default build/).
BUILD=${LAAS_BUILD_DIR:-$ROOT/build}

# bench_chaos_env NAME: exits 2, naming the file, when the build lacks one the run needs; else
# makes the work directory /tmp/laas-NAME.XXXXXX, sets `out` to it and exports the variables.
bench_chaos_env() {
  local name=$1 f
  for f in opensm_plugin/libosmlaas.so laasctl/laasctl tools/laas-audit tools/laas-sl2vl-dump; do
    [ -e "$BUILD/$f" ] || {
      echo "$name: $BUILD/$f is missing: build first (scripts/build.sh)" >&2
      exit 2
    }
  done
  out=$(mktemp -d "/tmp/laas-$name.XXXXXX")
  export LAASCTL=$BUILD/laasctl/laasctl LAAS_PLUGIN_DIR=$BUILD/opensm_plugin
  export LAAS_AUDIT=$BUILD/tools/laas-audit LAAS_SL2VL_DUMP=$BUILD/tools/laas-sl2vl-dump
  export LAAS_TOPOGEN=$BUILD/topology/laas-topogen LAAS_WORK=$out QOS=1
}
