#!/usr/bin/env bash
# slurm_follow.sh: laas-slurm, the Slurm follower, against the plugin in a real OpenSM on ibsim
# and Debian's slurmctld (lib_slurm.sh). No manual step after the start:
#  1. tenant T1 added with laasctl: within 10 s slurmctld has partition laas-T1 on exactly T1's
#     hosts (`scontrol show partition`), and `scontrol show topology` has each of T1's hosts
#     under the leaf switch its record names (topology.conf rewritten by the follower);
#  2. T1 removed: within 10 s the partition is gone;
#  3. OpenSM (and the service in it) restarted: the follower waits, resumes, and T2 added after
#     the restart appears within 10 s; `laasctl events` (and --follow) showed T1's add and
#     remove in order;
#  4. `laasctl export k8s-labels` of the live fabric passes tests/export/k8s_labels_check.py.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_slurm.sh"
laas_enter_namespace "$@"
laas_setup "${1:-slurm_follow}"
export SIM_HOST=SW_L2_0
slurm_prepare
[ -x "${LAAS_SLURM:-}" ] || die "LAAS_SLURM is not set to the laas-slurm binary"
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
: >state/tenants.yaml
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
FOLLOWER_PID=""

start_fabric fabric.net
start_opensm
wait_log 'SUBNET UP' 1 45
hosts=$(sed -n 's/^Hca[[:space:]].*"\([^" ]*\)[^"]*".*/\1/p' fabric.net | sort -V | uniq)

# slurm.conf includes the follower's partitions file; both its files exist before slurmctld
# starts (--once, no reconfigure), as an administrator's first run makes them.
slurm_start_munge
slurm_write_conf "$hosts" "Include $SD/slurm/laas-partitions.conf"
follow() { "$LAAS_SLURM" -s "$WORK/laas.sock" --topology slurm/topology.conf \
  --partitions slurm/laas-partitions.conf --timeout 30 "$@"; }
follow --once --reconfigure "" || die "laas-slurm --once failed"
slurm_start_ctld
log "slurmctld up ($(slurmctld -V)); topology.conf and laas-partitions.conf from laas-slurm --once"
# Started directly, not through the function: $! is then the process teardown must stop.
"$LAAS_SLURM" -s "$WORK/laas.sock" --topology slurm/topology.conf \
  --partitions slurm/laas-partitions.conf --timeout 30 >follower.log 2>&1 &
FOLLOWER_PID=$!
LAAS_EXTRA_PIDS="$FOLLOWER_PID"
since=$(ctl --json events | jq -r .next)
# An operator's view of the same changes: laasctl events --follow, one JSON object a line
# (from the position taken above: without --since it would start whenever it connects).
"$LAASCTL" -s "$WORK/laas.sock" --timeout 30 --json events --follow --since "$since" \
  >follow.out 2>follow.err &
LAAS_EXTRA_PIDS="$LAAS_EXTRA_PIDS $!"

# 1. Added: partition and topology within 10 s.
ctl tenant add T1 --hosts 4 --slurm-account acct_1 >add.T1 2>&1 || die "tenant add T1: $(cat add.T1)"
ctl --json tenant show T1 >show.T1.json
took=$(wait_for "partition laas-T1" has_partition T1)
in_topology T1 || die "T1's hosts are not under their leaves in scontrol show topology"
scontrol -o show partition laas-T1 | grep >/dev/null 'AllowAccounts=acct_1' || die "laas-T1 lacks AllowAccounts=acct_1"
log "T1 added: partition laas-T1 on $(tenant_hosts T1 | tr '\n' ' ')within ${took} s, in scontrol show topology"

# 2. Removed: gone within 10 s.
ctl tenant remove T1 >/dev/null || die "tenant remove T1 failed"
took=$(wait_for "partition laas-T1 removed" no_partition T1)
log "T1 removed: partition laas-T1 gone within ${took} s"
ctl --json events --since "$since" >events.json
jq -r '.events[] | select(.tenant == "T1") | .type' events.json | tr '\n' ' ' >events.T1
[ "$(cat events.T1)" = "tenant.added tenant.removed " ] || die "events for T1: $(cat events.T1)"
for _ in $(seq 1 50); do [ "$(jq -r 'select(.tenant == "T1") | .type' follow.out | wc -l)" -ge 2 ] && break; sleep 0.1; done
[ "$(jq -r 'select(.tenant == "T1") | .type' follow.out | tr '\n' ' ')" = "tenant.added tenant.removed " ] ||
  die "laasctl events --follow showed: $(cat follow.out follow.err)"
log "events: $(jq -c '.events[] | {seq, type, tenant}' events.json | tr '\n' ' ')(--follow alike)"

# 3. The service restarts under the follower (OpenSM killed and started again).
applied=$(count_log 'laas: forwarding tables applied')
kill -KILL "$OSM_PID"
wait "$OSM_PID" 2>/dev/null || true
sleep 2 # the follower finds no socket and waits
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
ctl tenant add T2 --hosts 6 >add.T2 2>&1 || die "tenant add T2 after the restart: $(cat add.T2)"
ctl --json tenant show T2 >show.T2.json
took=$(wait_for "partition laas-T2 after the restart" has_partition T2)
kill -0 "$FOLLOWER_PID" || die "laas-slurm exited"

# 4. Kubernetes labels of the live fabric pass Kubernetes' rules; T2's servers carry its name.
ctl export k8s-labels -o labels.json || die "export k8s-labels failed"
python3 "$(dirname "$0")/../export/k8s_labels_check.py" labels.json || die "labels.json breaks Kubernetes' rules"
labelled=$(jq -r '.items[] | select(.metadata.labels["laas.io/tenant"] == "T2") | .metadata.name' labels.json | sort -V)
[ "$labelled" = "$(tenant_hosts T2)" ] || die "laas.io/tenant=T2 on $(tr '\n' ' ' <<<"$labelled")"
log "k8s-labels: $(jq '.items | length' labels.json) node patches pass the checker, T2 on $(wc -w <<<"$labelled") nodes"
reconfigures=$(grep -c 'scontrol reconfigure: slurmctld re-read' follower.log || true)
log "after OpenSM's restart: T2 in partition laas-T2 within ${took} s; the follower: $(grep -c 'laas-slurm' follower.log) log lines, $reconfigures reconfigures"
grep -E 'lost|connect|closed|answer' follower.log | head -3 || true
log "PASS slurm_follow"
