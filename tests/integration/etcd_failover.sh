#!/usr/bin/env bash
# etcd_failover.sh: two OpenSMs with the plugin on one ibsim fabric (the demo tree) sharing their
# tenant state through a three-member etcd (`state_store: etcd`) and nothing else: each SM has
# its own state directory. SM 1 (priority 15, SW_L2_0) master, SM 2 (8, SW_L2_1) standby.
#  1. Tenants a, b at the master; the standby lists them (from what its watch follows).
#  2. One etcd member down: tenant c is added as before.
#  3. kill -9 of the master: SM 2 takes over with a, b, c; the LFTs read back are identical.
#  4. No quorum (two members down): a change is refused busy (exit 75) within 30 s, status and
#     the metrics say so, OpenSM lives and the LFTs stay as they were (isolation holds).
#     `laasctl audit --from-switches --via-diags` says it cannot read etcd:/laas/allocations,
#     naming the member it asked (exit 69), before reading the fabric.
#  5. The quorum back: the same change succeeds without a restart.
#  6. SM 2 reaches etcd through member 3 only (its laas.yaml): member 3 down longer than its
#     lease (lease_ttl_s: 3), the leader key expires; member 3 back, SM 2 holds the key again by
#     itself (no write needed, logged) and changes go on.
#  7. `laasctl audit --from-switches --via-diags --config laas2.yaml`: the tables read back
#     from the switches, audited against the allocations and layout read from etcd: clean; a
#     leaf's entry rewritten behind the SMs' back (laas-lft-set): the violation is found (exit 1).
# Every part of the shared state is in etcd (the tenants last routed, the layout), none in an
# SM's own directory; the new master routes on the layout the old one recorded there.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ha.sh"
source "$(dirname "$0")/lib_etcd.sh"
laas_enter_namespace "$@"
command -v etcd >/dev/null || { echo "SKIP: no etcd"; exit 77; }
ha_setup "${1:-etcd_failover}"
# ha_teardown, then the etcd members (lib_ha's trap replaced by one that does both).
trap 'rc=$?; set +e; etcd_stop_cluster; (exit $rc); ha_teardown' EXIT
etcd_start_cluster "$WORK/etcd"
export HA_OWN_STATE_DIR=1
export LAAS_YAML_EXTRA="state_store: etcd
etcd: {endpoints: [127.0.0.1:23791, 127.0.0.1:23792, 127.0.0.1:23793], timeout_ms: 1000}"
export LAAS_YAML_EXTRA_2="state_store: etcd
etcd: {endpoints: [127.0.0.1:23793], timeout_ms: 1000, lease_ttl_s: 3}"
# shellcheck disable=SC2034 # read by start_sm
HA_NODES="SW_L2_0 SW_L2_1"
ha_pair_up
# audit_layout reads state/: the shared parts as etcd holds them.
audit_etcd() { etcd_export_state state && audit_layout "$1"; }
# The audit from the switches at SM 2 (its laas.yaml names its etcd).
audit_switches() {
  sim "$LAASCTL" -s "$WORK/sm2.sock" --timeout 60 audit --from-switches --via-diags \
    --config "$WORK/laas2.yaml" "$@"
}
etcd_doc() { ETCDCTL_API=3 etcdctl --endpoints "$(etcd_endpoints)" get --print-value-only /laas/state; }

# --- 1. -------------------------------------------------------------------------------------
ctl 1 tenant add a --hosts 8 >add.out 2>&1 || die "tenant add a failed: $(cat add.out)"
ctl 1 tenant add b --hosts 10 >add.out 2>&1 || die "tenant add b failed: $(cat add.out)"
[ "$(etcd_doc | jq -r '.tenants[].name' | sort | tr '\n' ' ')" = "a b " ] ||
  die "etcd's /laas/state holds '$(etcd_doc | head -c 300)'"
[ ! -e state1/state.json ] && [ ! -e state2/state.json ] || die "a state.json was written locally"
etcd_wait_routed "a b " || die "etcd's /laas/allocations names '$(etcd_routed_names)'"
[ -n "$(etcd_get /laas/layout)" ] || die "etcd holds no /laas/layout"
etcd_no_local_parts state1 state2
for _ in $(seq 50); do [ "$(tenant_names 2)" = "a b " ] && break; sleep 0.1; done
[ "$(tenant_names 2)" = "a b " ] || die "the standby lists '$(tenant_names 2)'"
log "1: a, b in etcd (term $(etcd_doc | jq .term)); the standby lists them"

# --- 2. -------------------------------------------------------------------------------------
etcd_stop_member 3
etcd_wait_healthy 10 || die "etcd has no quorum with member 3 down" # an election if it led
etcd_wait_sm 1 || die "SM 1 does not see etcd answering with member 3 down"
ctl 1 tenant add c --hosts 5 >add.out 2>&1 || die "tenant add c with one member down failed: $(cat add.out)"
ctl 1 --json status | jq -e 'has("state_store_not_answering") | not' >/dev/null ||
  die "status says etcd is not answering with one member down"
etcd_start_member 3
etcd_wait_member 3 || die "member 3 did not rejoin"
log "2: one member down: c added, status clean"

# --- 3. -------------------------------------------------------------------------------------
etcd_wait_routed "a b c " || die "etcd's /laas/allocations names '$(etcd_routed_names)'"
audit_etcd before
from2=$(log_lines 2)
kill_sm 1
wait_master 2 60 "$from2"
wait_sm_log 2 'laas: routed' 1 30 "$MASTER_LINE"
took=$(tail -n +"$MASTER_LINE" osm2.log | grep -m1 'laas: took over as master' || true)
grep -q ' 3 tenant(s) from etcd:/laas/state' <<<"$took" || die "SM 2 took over: '$took'"
etcd_wait_routed "a b c " || die "after the failover etcd's /laas/allocations names '$(etcd_routed_names)'"
# The layout SM 1 recorded in etcd is SM 2's: none recorded anew, nothing written locally.
if tail -n +"$MASTER_LINE" osm2.log | grep 'recorded the intended tree' >recorded.out; then
  die "SM 2 did not route on the layout in etcd: $(cat recorded.out)"
fi
etcd_no_local_parts state1 state2
sleep 1
audit_etcd after
cmp -s lfts.before lfts.after || die "the LFTs differ after the failover: $(diff lfts.before lfts.after | head -5)"
[ "$(tenant_names 2)" = "a b c " ] || die "SM 2 lists '$(tenant_names 2)'"
[ "$(etcd_doc | jq -r .master)" != "$(ETCDCTL_API=3 etcdctl --endpoints "$(etcd_endpoints)" get --print-value-only /laas/leader)" ] &&
  die "the leader key does not name the state's master"
log "3: kill -9 -> SM 2 master after $(elapsed "$KILL_AT" "$(log_time 2 "$MASTER_LINE")") s, tables applied after" \
  "$(elapsed "$KILL_AT" "$(log_time 2 "$APPLIED_LINE")") s; $(grep -c '^0x' lfts.after) LFT entries identical"

# --- 4. -------------------------------------------------------------------------------------
etcd_stop_member 1
etcd_stop_member 2
t0=$(date +%s.%N)
rc=0
ctl 2 tenant add d --hosts 2 >refused.out 2>refused.err || rc=$?
took_s=$(elapsed "$t0" "$(date +%s.%N)")
[ $rc -eq 75 ] || die "tenant add without a quorum: exit $rc, expected 75: $(cat refused.out refused.err)"
awk -v t="$took_s" 'BEGIN { exit !(t < 30) }' || die "the refusal took $took_s s"
grep -q 'etcd' refused.err || die "the refusal does not name etcd: $(cat refused.err)"
ctl 2 status >status.out || die "status failed without a quorum"
grep -q '^STATE STORE: etcd not answering' status.out || die "status: $(cat status.out)"
ctl 2 metrics | grep -Eq '^laas_state_store_not_answering_seconds [1-9.]' ||
  ctl 2 metrics | grep >/dev/null '^laas_state_store_not_answering_seconds 0\.[0-9]*[1-9]' ||
  die "metric: $(ctl 2 metrics | grep not_answering)"
rc=0
ctl 2 tenant remove a >refused2.out 2>refused2.err || rc=$?
[ $rc -eq 75 ] || die "tenant remove without a quorum: exit $rc: $(cat refused2.err)"
kill -0 "$(sm_pid 2)" || die "OpenSM died without a quorum"
# A heavy sweep meanwhile: routing keeps the tenants (tables as last sent).
from2=$(log_lines 2)
kill -HUP "$(sm_pid 2)"
wait_sm_log 2 'laas: forwarding tables applied' 1 30 "$from2"
audit_layout noquorum # state/ as exported before the loss
cmp -s lfts.after lfts.noquorum || die "the LFTs changed without a quorum: $(diff lfts.after lfts.noquorum | head -5)"
# The audit from the switches reads what was routed from etcd first: no quorum, no audit.
rc=0
audit_switches >noquorum.audit.json 2>noquorum.audit.err || rc=$?
[ $rc -eq 69 ] || die "audit --from-switches without a quorum: exit $rc, expected 69: $(head -3 noquorum.audit.err)"
grep -q 'etcd:/laas/allocations' noquorum.audit.err && grep -q '127.0.0.1:23793' noquorum.audit.err ||
  die "the audit's refusal names neither the key nor the member: $(cat noquorum.audit.err)"
log "4: no quorum: add refused (exit 75) in $took_s s: $(head -c 160 refused.err)"
log "   audit --from-switches --via-diags: exit 69, $(head -c 200 noquorum.audit.err)"
log "   status: $(grep '^STATE STORE' status.out | head -c 160); OpenSM up, LFTs unchanged after a heavy sweep"

# --- 5. -------------------------------------------------------------------------------------
etcd_start_member 1
etcd_start_member 2
etcd_wait_healthy 30 || die "etcd did not come back"
t0=$(date +%s.%N)
ok=0
for _ in $(seq 30); do
  if ctl 2 tenant add d --hosts 2 >add.out 2>&1; then ok=1; break; fi
  sleep 0.5
done
[ $ok = 1 ] || die "tenant add d after the quorum came back: $(cat add.out)"
[ "$(tenant_names 2)" = "a b c d " ] || die "SM 2 lists '$(tenant_names 2)'"
[ "$(etcd_doc | jq -r '.tenants[].name' | sort | tr '\n' ' ')" = "a b c d " ] || die "etcd does not hold d"
log "5: quorum back: d added $(elapsed "$t0" "$(date +%s.%N)") s after etcd answered, no restart"

# --- 6. -------------------------------------------------------------------------------------
master_name=$(etcd_get /laas/state | jq -r .master)
[ "$(etcd_get /laas/leader)" = "$master_name" ] || die "the leader key is '$(etcd_get /laas/leader)'"
from2=$(log_lines 2)
etcd_stop_member 3
t0=$(date +%s.%N)
for _ in $(seq 100); do [ -z "$(etcd_get /laas/leader)" ] && break; sleep 0.2; done
[ -z "$(etcd_get /laas/leader)" ] || die "the leader key did not expire with SM 2 cut off"
expired=$(elapsed "$t0" "$(date +%s.%N)")
etcd_start_member 3
t0=$(date +%s.%N)
wait_sm_log 2 'holds it again, nobody took the state over' 1 30 "$from2"
back=$(elapsed "$t0" "$(date +%s.%N)")
[ "$(etcd_get /laas/leader)" = "$master_name" ] || die "the leader key is '$(etcd_get /laas/leader)' after SM 2 took it back"
ctl 2 tenant add e --hosts 1 >add.out 2>&1 || die "tenant add e after the lease came back: $(cat add.out)"
[ "$(etcd_doc | jq -r '.tenants[].name' | sort | tr '\n' ' ')" = "a b c d e " ] || die "etcd does not hold e"
log "6: SM 2 cut off from etcd: its leader key expired after $expired s; etcd back, SM 2 held it again $back s later (no write), e added"

# --- 7. -------------------------------------------------------------------------------------
audit_switches >switches.clean.json 2>switches.clean.err ||
  die "audit --from-switches with the state in etcd failed: $(head -3 switches.clean.err)"
[ "$(jq -r .source switches.clean.json)" = switches ] && [ "$(jq .violations switches.clean.json)" = 0 ] &&
  [ "$(jq .traces switches.clean.json)" -gt 0 ] ||
  die "audit --from-switches: $(jq -c '{source, violations, traces}' switches.clean.json)"
sim ibnetdiscover >disc.tamper 2>disc.tamper.err || die "ibnetdiscover failed: $(head -3 disc.tamper.err)"
tamper_free_route disc.tamper ctl 2
rc=0
audit_switches >switches.tampered.json 2>switches.tampered.err || rc=$?
[ $rc -eq 1 ] || die "audit --from-switches of a tampered table exited $rc: $(head -3 switches.tampered.err)"
jq -e --arg f "$FREE" '[.findings[] | select(.violation and (.destination | contains($f)))] | length > 0' \
  switches.tampered.json >/dev/null || die "no finding names $FREE: $(jq -c '.findings[:3]' switches.tampered.json)"
dumps=$(jq -r .dumps switches.tampered.json)
[ "$(cat "$dumps/allocations.json")" = "$(etcd_get /laas/allocations)" ] ||
  die "the audit did not read the allocations etcd holds ($dumps/allocations.json)"
log "7: audit --from-switches --via-diags, state in etcd: clean ($(jq .traces switches.clean.json) paths);" \
  "tampered: $(jq -r '[.findings[] | select(.violation)][0] | "\(.kind): \(.source) -> \(.destination)"' switches.tampered.json)"
rm -rf "$dumps"
log "PASS etcd_failover"
