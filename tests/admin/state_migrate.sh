#!/usr/bin/env bash
# state_migrate.sh LAASCTL: moving an installation's shared state from its state directory to
# etcd and back (docs/ha.md, "Moving to etcd and back"), against a one-member etcd on loopback
# in this test's own network namespace. state.json with two tenants goes to /laas/state as it
# is, the shared parts beside it (allocations.json, layout.json) to /laas/allocations and
# /laas/layout; run again, it says the same state is there (exit 0); a different state in etcd is never
# written over (exit 1); --to dir brings back the same document into an empty directory and
# never over an existing state.json, with the parts etcd holds (a stale part etcd lacks is
# removed); no quorum (etcd down) is a clear refusal.
set -euo pipefail
laasctl=$1
if [ -z "${LAAS_IN_NS:-}" ]; then
  if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then LAAS_IN_NS=1 exec unshare -n "$0" "$@"; fi
  if unshare -rn true 2>/dev/null; then LAAS_IN_NS=1 exec unshare -rn "$0" "$@"; fi
  echo "SKIP: no network namespace"
  exit 77
fi
command -v etcd >/dev/null && command -v etcdctl >/dev/null || { echo "SKIP: no etcd"; exit 77; }
work=$(mktemp -d)
etcd_pid=""
trap '[ -z "$etcd_pid" ] || kill -9 "$etcd_pid" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ip link set lo up
etcd --name m1 --data-dir "$work/etcd" --listen-client-urls http://127.0.0.1:23790 \
  --advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
  --initial-advertise-peer-urls http://127.0.0.1:23800 --initial-cluster m1=http://127.0.0.1:23800 \
  --logger zap --log-outputs "$work/etcd.log" &
etcd_pid=$!
get() { ETCDCTL_API=3 etcdctl --endpoints 127.0.0.1:23790 --command-timeout=1s get --print-value-only "$1"; }
for _ in $(seq 100); do get /x >/dev/null 2>&1 && break; sleep 0.1; done
mkdir "$work/state"
cat >"$work/state/state.json" <<'JSON'
{"format": "laas-state", "version": 2, "topology": "xgft(2;4,8;1,4)", "generation": 7, "term": 3,
 "master": "0x0000000000200000 'SW_L2_0' LID 1", "sm_ports": ["0x0000000000200000"],
 "tenants": [
  {"name": "a", "requested": 1, "shape": "1 host", "pkey": 1,
   "hosts": [{"leaf": "0x0000000000100000", "port": 1, "guid": "0x0000000000100001"}], "links": []},
  {"name": "b", "requested": 1, "shape": "1 host", "pkey": 2,
   "hosts": [{"leaf": "0x0000000000100000", "port": 2, "guid": "0x0000000000100002"}], "links": []}]}
JSON
echo '{"format": "laas-allocations", "tenants": [{"name": "a"}, {"name": "b"}]}' >"$work/state/allocations.json"
echo '{"format": "laas-layout", "spec": "xgft(2;4,8;1,4)"}' >"$work/state/layout.json"
cat >"$work/laas.yaml" <<EOF2
state_dir: $work/state
state_store: dir
etcd: {endpoints: [127.0.0.1:23790], timeout_ms: 1000}
EOF2
"$laasctl" state migrate --to etcd --config "$work/laas.yaml" >"$work/out" 2>&1 || fail "to etcd: $(cat "$work/out")"
cat "$work/out"
grep -q "copied 2 tenant(s), term 3, generation 7 from $work/state/state.json to etcd:/laas/state" "$work/out" ||
  fail "it does not say what it copied"
[ "$(get /laas/state | jq -S -c '.tenants, .term, .generation, .master')" = \
  "$(jq -S -c '.tenants, .term, .generation, .master' "$work/state/state.json")" ] ||
  fail "etcd holds $(get /laas/state | head -c 300)"
for part in allocations layout; do
  [ "$(get /laas/$part)" = "$(cat "$work/state/$part.json")" ] || fail "etcd's /laas/$part is '$(get /laas/$part)'"
done
grep -q 'with the shared parts: allocations, layout' "$work/out" || fail "it does not name the parts: $(cat "$work/out")"
"$laasctl" state migrate --to etcd --config "$work/laas.yaml" >"$work/out" 2>&1 || fail "again: $(cat "$work/out")"
grep -q 'holds the same state already' "$work/out" || fail "again: $(cat "$work/out")"
# Another state in etcd is never written over.
ETCDCTL_API=3 etcdctl --endpoints 127.0.0.1:23790 put /laas/state "$(get /laas/state | jq -c '.generation = 9')" >/dev/null
rc=0
"$laasctl" state migrate --to etcd --config "$work/laas.yaml" >"$work/out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q 'holds another state (term 3, generation 9' "$work/out" || fail "over another state: exit $rc: $(cat "$work/out")"
[ "$(get /laas/state | jq .generation)" = 9 ] || fail "etcd's state was written over"
# Back: never over an existing state.json, then into an empty directory.
rc=0
"$laasctl" state migrate --to dir --config "$work/laas.yaml" >"$work/out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "state.json holds another state" "$work/out" || fail "over state.json: exit $rc: $(cat "$work/out")"
mv "$work/state/state.json" "$work/state.json.old"
rm "$work/state/layout.json"
echo '{"tenants": ["stale"]}' >"$work/state/tenants.yaml.applied"
"$laasctl" state migrate --to dir --config "$work/laas.yaml" >"$work/out" 2>&1 || fail "to dir: $(cat "$work/out")"
[ "$(jq -S -c . "$work/state/state.json")" = "$(get /laas/state | jq -S -c .)" ] || fail "state.json differs from etcd's"
for part in allocations layout; do
  [ "$(cat "$work/state/$part.json")" = "$(get /laas/$part)" ] || fail "$part.json differs from etcd's /laas/$part"
done
[ ! -e "$work/state/tenants.yaml.applied" ] || fail "the stale tenants.yaml.applied etcd lacks was kept"
[ "$(stat -c %a "$work/state/state.json")" = 640 ] || fail "state.json mode $(stat -c %a "$work/state/state.json")"
# No etcd: a clear refusal within the deadline, nothing written.
kill -9 "$etcd_pid"
wait "$etcd_pid" 2>/dev/null || true
etcd_pid=""
rm "$work/state/state.json"
rc=0
"$laasctl" state migrate --to dir --config "$work/laas.yaml" >"$work/out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q 'etcd did not answer' "$work/out" || fail "without etcd: exit $rc: $(cat "$work/out")"
[ ! -e "$work/state/state.json" ] || fail "state.json written without etcd"
# laas.yaml without etcd: named.
printf 'state_dir: %s/state\n' "$work" >"$work/noetcd.yaml"
rc=0
"$laasctl" state migrate --to etcd --config "$work/noetcd.yaml" >"$work/out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "has no 'etcd: {endpoints" "$work/out" || fail "without etcd: in laas.yaml: exit $rc: $(cat "$work/out")"
echo "PASS state_migrate"
