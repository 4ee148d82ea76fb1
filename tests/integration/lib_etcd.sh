# shellcheck shell=bash
# A three-member etcd cluster on 127.0.0.1 for the tests of `state_store: etcd`: started inside
# the test's own network namespace (laas_enter_namespace), data in the test's work directory,
# never the machine's own etcd. Members 1-3 listen on clients 127.0.0.1:2379N, peers 2380N.
# etcd_start_cluster DIR; etcd_stop_member N (kill -9); etcd_start_member N; etcd_endpoints;
# etcd_wait_healthy; etcd_stop_cluster.

ETCD_DIR=""
ETCD_CLUSTER="m1=http://127.0.0.1:23801,m2=http://127.0.0.1:23802,m3=http://127.0.0.1:23803"

etcd_endpoints() { echo "127.0.0.1:23791,127.0.0.1:23792,127.0.0.1:23793"; }

etcd_start_member() {
  local n=$1 state=${2:-existing}
  # Short timeouts: a loopback cluster elects in well under a second.
  etcd --name "m$n" --data-dir "$ETCD_DIR/m$n" \
    --listen-client-urls "http://127.0.0.1:2379$n" --advertise-client-urls "http://127.0.0.1:2379$n" \
    --listen-peer-urls "http://127.0.0.1:2380$n" --initial-advertise-peer-urls "http://127.0.0.1:2380$n" \
    --initial-cluster "$ETCD_CLUSTER" --initial-cluster-state "$state" \
    --initial-cluster-token laas-test --heartbeat-interval 50 --election-timeout 500 \
    --logger zap --log-outputs "$ETCD_DIR/m$n.log" &
  echo $! >"$ETCD_DIR/m$n.pid"  # a file: subshells stop and start members too
}

etcd_stop_member() {
  local n=$1 pid
  [ -s "$ETCD_DIR/m$n.pid" ] || return 0
  pid=$(cat "$ETCD_DIR/m$n.pid")
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # Gone, or a zombie of another shell of the test (dead: its ports are free).
  while [ -n "$(ps -o stat= -p "$pid" 2>/dev/null | grep -v '^Z')" ]; do sleep 0.05; done
  : >"$ETCD_DIR/m$n.pid"
}

# etcd_wait_healthy [SECONDS]: a quorum answers a linearizable read.
etcd_wait_healthy() {
  local until=$((SECONDS + ${1:-20}))
  while [ $SECONDS -lt $until ]; do
    if ETCDCTL_API=3 etcdctl --endpoints "$(etcd_endpoints)" --command-timeout=1s \
      get /laas-probe >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

etcd_start_cluster() {
  ETCD_DIR=$1
  mkdir -p "$ETCD_DIR"
  ip link set lo up 2>/dev/null || true
  local n
  for n in 1 2 3; do etcd_start_member "$n" new; done
  etcd_wait_healthy 30 || {
    tail -5 "$ETCD_DIR"/m*.log >&2
    echo "etcd cluster did not come up" >&2
    return 1
  }
}

etcd_stop_cluster() {
  local n
  for n in 1 2 3; do etcd_stop_member "$n"; done
}

# etcd_get KEY: its value ("" and exit 0 when absent), read from a quorum.
etcd_get() {
  ETCDCTL_API=3 etcdctl --endpoints "$(etcd_endpoints)" --command-timeout=2s get --print-value-only "$1"
}

# etcd_export_state DIR: the shared state's parts in etcd written into DIR as the state directory
# would hold them (allocations.json, layout.json, state.json), for laas-audit; each must be in
# etcd (`state_store: etcd` keeps no local copy of them).
etcd_export_state() {
  local dir=$1 key file
  rm -rf "$dir" && mkdir -p "$dir"
  for key in state:state.json allocations:allocations.json layout:layout.json; do
    file=${key#*:} key=/laas/${key%%:*}
    etcd_get "$key" >"$dir/$file" || die "etcdctl get $key failed"
    [ -s "$dir/$file" ] || die "etcd holds no $key"
  done
}

# etcd_routed_names: the tenants etcd's record of the tenants last routed names, sorted, one line.
etcd_routed_names() { etcd_get /laas/allocations | jq -r '.tenants[].name' 2>/dev/null | sort | tr '\n' ' '; }

# etcd_wait_routed NAMES [SECONDS]: until /laas/allocations names exactly NAMES ("a b "), as
# the master writes it after its routing run.
etcd_wait_routed() {
  local until=$((SECONDS + ${2:-10}))
  while [ $SECONDS -lt $until ]; do
    [ "$(etcd_routed_names)" = "$1" ] && return 0
    sleep 0.2
  done
  return 1
}

# etcd_no_local_parts DIR...: the shared parts are not written into an SM's own state directory.
etcd_no_local_parts() {
  local dir f
  for dir in "$@"; do
    for f in state.json allocations.json layout.json tenants.yaml.applied; do
      [ ! -e "$dir/$f" ] || die "$dir/$f was written locally (it belongs in etcd)"
    done
  done
}

# etcd_wait_member N [SECONDS]: member N answers a linearizable read (it rejoined the quorum).
etcd_wait_member() {
  local until=$((SECONDS + ${2:-20}))
  while [ $SECONDS -lt $until ]; do
    ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:2379$1" --command-timeout=1s get /laas-probe \
      >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}

# etcd_wait_sm N [SECONDS]: SM N's plugin sees etcd answering again (its keeper probes every
# second; until then it refuses changes at once, busy), after etcd_wait_healthy says a quorum
# answers etcdctl.
etcd_wait_sm() {
  local until=$((SECONDS + ${2:-10}))
  while [ $SECONDS -lt $until ]; do
    ctl "$1" --json status >sm_status.json 2>/dev/null &&
      jq -e 'has("state_store_not_answering") | not' sm_status.json >/dev/null && return 0
    sleep 0.2
  done
  return 1
}
