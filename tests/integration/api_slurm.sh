#!/usr/bin/env bash
# api_slurm.sh: a tenant the cloud adds through laas-api appears in Slurm by itself. The plugin in
# a real OpenSM on the demo fabric, laas-api in front of its socket (certificates made here with
# openssl), Debian's slurmctld (lib_slurm.sh) and laas-slurm following the socket's change
# events; no step by hand after the start:
#  1. POST /v1/tenants (curl, writer certificate) of a tenant of 4 hosts with a Slurm account:
#     from the moment the request is sent, within 10 s (measured in ms, asserted) slurmctld has
#     partition laas-NAME on exactly the hosts of the 201 answer, AllowAccounts the account, and
#     `scontrol show topology` has each host under the leaf switch the answer names;
#  2. DELETE /v1/tenants/NAME: within 10 s the partition is gone;
#  3. laas-api, laas-slurm, slurmctld and munged stopped: none of their processes is left (the
#     test runs in a PID namespace of its own: whatever ends it, nothing outlives it).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_slurm.sh"
source "$(dirname "$0")/lib_api.sh"
laas_enter_namespace "$@"
laas_setup "${1:-api_slurm}"
slurm_prepare
[ -x "${LAAS_SLURM:-}" ] || die "LAAS_SLURM is not set to the laas-slurm binary"
[ -n "${LAAS_API:-}" ] || die "LAAS_API (the laas-api binary) is not set"
make_api_certs
start_demo
hosts=$(sed -n 's/^Hca[[:space:]].*"\([^" ]*\)[^"]*".*/\1/p' fabric.net | sort -V | uniq)

slurm_start_munge
slurm_write_conf "$hosts" "Include $SD/slurm/laas-partitions.conf"
"$LAAS_SLURM" -s "$WORK/laas.sock" --topology slurm/topology.conf \
  --partitions slurm/laas-partitions.conf --timeout 30 --once --reconfigure "" ||
  die "laas-slurm --once failed"
slurm_start_ctld
"$LAAS_SLURM" -s "$WORK/laas.sock" --topology slurm/topology.conf \
  --partitions slurm/laas-partitions.conf --timeout 30 >follower.log 2>&1 &
FOLLOWER_PID=$!
# shellcheck disable=SC2034 # read by laas_teardown
LAAS_EXTRA_PIDS="$FOLLOWER_PID"
start_api
log "slurmctld up ($(slurmctld -V)), laas-slurm following, laas-api at $API_URL"

now_ms() { date +%s%3N; }
api() { # METHOD PATH [BODY]: the HTTP status; the body in out.json
  local data=()
  [ -z "${3:-}" ] || data=(-H 'Content-Type: application/json' --data-binary "$3")
  curl -s --cacert ca.crt --cert ops.crt --key ops.key -X "$1" "${data[@]}" -o out.json \
    -w '%{http_code}' --max-time 60 "$API_URL$2" || true
}
# until_ms LIMIT_MS CONDITION...: polls CONDITION every 50 ms until it holds; fails past LIMIT_MS
# from $t0 (or when the follower exited); prints the ms from $t0.
until_ms() {
  local limit=$1
  shift
  until "$@"; do
    [ $(($(now_ms) - t0)) -le "$limit" ] || return 1
    kill -0 "$FOLLOWER_PID" 2>/dev/null || die "laas-slurm exited: $(tail -5 follower.log)"
    sleep 0.05
  done
  echo $(($(now_ms) - t0))
}

# 1. Added through the API.
t0=$(now_ms)
got=$(api POST /v1/tenants '{"name": "cloud1", "hosts": 4, "slurm_accounts": ["acct_cloud"]}')
[ "$got" = 201 ] || die "POST /v1/tenants: HTTP $got: $(head -c 300 out.json)"
answered=$(($(now_ms) - t0))
cp out.json show.cloud1.json
[ "$(tenant_hosts cloud1 | wc -l)" = 4 ] || die "the 201 answer has not 4 hosts: $(cat out.json)"
partition_and_topology() { has_partition cloud1 && in_topology cloud1; }
took=$(until_ms 10000 partition_and_topology) ||
  die "cloud1 not in slurmctld's partitions and topology 10 s after the POST: partition '$(partition_hosts laas-cloud1 | tr '\n' ' ')'; follower: $(tail -5 follower.log)"
scontrol -o show partition laas-cloud1 | grep >/dev/null 'AllowAccounts=acct_cloud' ||
  die "laas-cloud1 lacks AllowAccounts=acct_cloud: $(scontrol -o show partition laas-cloud1)"
log "POST answered 201 in ${answered} ms; partition laas-cloud1 on $(tenant_hosts cloud1 | tr '\n' ' ')and its hosts under their leaves in scontrol show topology ${took} ms after the POST was sent (limit 10000)"

# 2. Removed through the API.
t0=$(now_ms)
got=$(api DELETE /v1/tenants/cloud1)
[ "$got" = 200 ] || die "DELETE /v1/tenants/cloud1: HTTP $got: $(head -c 300 out.json)"
took=$(until_ms 10000 no_partition cloud1) ||
  die "partition laas-cloud1 still there 10 s after the DELETE; follower: $(tail -5 follower.log)"
log "DELETE: partition laas-cloud1 gone ${took} ms after the request was sent (limit 10000)"
reconfigures=$(grep -c 'scontrol reconfigure: slurmctld re-read' follower.log || true)
log "the follower: $reconfigures reconfigures"

# 3. Everything stopped: nothing left.
kill -TERM "$FOLLOWER_PID" "$API_PID"
wait "$FOLLOWER_PID" "$API_PID" 2>/dev/null || true
stop_slurm
slurm_no_leftovers
log "PASS api_slurm"
