#!/usr/bin/env bash
# The etcd client and the etcd state store (service/etcd_client.h, service/etcd_state.h)
# against a real three-member etcd in this test's network namespace: the EtcdLive unit tests,
# given the endpoints and a way to stop and start members (LAAS_ETCD_CTL).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/lib_etcd.sh"
laas_enter_namespace "$@"
command -v etcd >/dev/null || { echo "SKIP: no etcd"; exit 77; }
WORK="${LAAS_WORK:-/tmp/laas-it}/etcd_client"
rm -rf "$WORK" && mkdir -p "$WORK"
trap etcd_stop_cluster EXIT
etcd_start_cluster "$WORK/etcd"
# The tests stop and start members through a FIFO this shell serves (etcd's children are ours).
mkfifo "$WORK/ctl" "$WORK/ctl-done"
(
  while read -r verb n <"$WORK/ctl"; do
    case $verb in
      stop) etcd_stop_member "$n" ;;
      start) etcd_start_member "$n" ;;
      healthy) etcd_wait_healthy 30 || true ;;
    esac
    echo "done" >"$WORK/ctl-done"
  done
) &
ctl_pid=$!
LAAS_ETCD_ENDPOINTS=$(etcd_endpoints) LAAS_ETCD_CTL="$WORK/ctl" \
  "$LAAS_UNIT_TESTS" --gtest_filter='EtcdLive.*' || rc=$?
kill "$ctl_pid" 2>/dev/null || true
exit "${rc:-0}"
