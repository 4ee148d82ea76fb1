#!/usr/bin/env bash
# rogue_master.sh: a tenant's root runs an OpenSM that OUTRANKS ours in OpenSM's election (the
# same SM_Key -- OpenSM's default -- and priority 15), with the real OpenSM (qos TRUE), ibsim and
# infiniband-diags. The lab tree pgft(2;8,4;1,4;1,2), the administrator's OpenSM with the plugin
# on comp-1, tenants a (8) and b (10); root on one of a's hosts starts its own OpenSM. OpenSM
# hands the fabric over to it; within one sweep of that, and without any routing run of ours:
# `laasctl sm list --json` names it with role master and trusted false, `laasctl status` says
# the master is not trusted, laas_master_trusted is 0 and the log says so. Once it is gone, ours
# is master again, laas_master_trusted is 1, and the tables read back are the ones it had
# before and pass the offline audit.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup rogue_master
export SIM_HOST=comp-1 QOS=1
"$LAAS_TOPOGEN" "pgft(2;8,4;1,4;1,2)" -o fabric.net
# A standby that notices its master's death in 2-3 s (OpenSM's default is 40-50 s).
start_fabric_console fabric.net
start_opensm "sminfo_polling_timeout 1000" "polling_retry_number 2"
wait_log 'laas: forwarding tables applied' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
ctl tenant add a --hosts 8 >/dev/null || die "tenant add a failed"
ctl tenant add b --hosts 10 >/dev/null || die "tenant add b failed"
audit_layout good
sort lfts.good | grep -E '^0x' >entries.good
ctl --json tenant show a >show.a
ROGUE_HOST=$(jq -r '.hosts[2].name' show.a)
ROGUE_GUID=$(jq -r '.hosts[2].guid' show.a)
[ -n "$ROGUE_HOST" ] && [ "$ROGUE_HOST" != null ] || die "tenant a has no third host"
# metric NAME: its value in `laasctl metrics`.
metric() { ctl metrics | sed -n "s/^$1 //p"; }
# The watcher's first look may have come while OpenSM was still discovering (no master yet).
deadline=$((SECONDS + 5))
while [ "$(metric laas_master_trusted)" != 1 ]; do
  [ $SECONDS -lt $deadline ] || die "laas_master_trusted is not 1 5 s after our SM became master"
  sleep 0.2
done

start_tenant_sm rogue "$ROGUE_HOST" "sm_priority 15"
ROGUE_PID=$TENANT_SM_PID
log "root on $ROGUE_HOST ($ROGUE_GUID) started an OpenSM at priority 15, the same SM_Key"
# Our master meets it at its next sweep (sweep_interval 0 here: a SIGHUP stands for it) and
# hands over; our SM is then a standby of the tenant's.
handed=""
for i in $(seq 1 30); do
  kill -HUP "$OSM_PID"
  sleep 1
  if grep -q "ENTERING STANDBY STATE\|Entering STANDBY state\|STANDBY" osm.log &&
    [ "$(ctl --json status | jq -r '.sm.role')" = standby ]; then
    handed=$(date +%s.%N)
    break
  fi
done
[ -n "$handed" ] || die "OpenSM never handed the fabric to the tenant's SM: $(tail -3 osm.log)"
log "our SM is standby: the tenant's SM is master"
# Reported within one sweep of the handover (the watcher looks every second).
deadline=$((SECONDS + 5))
while [ "$(metric laas_master_trusted)" != 0 ]; do
  [ $SECONDS -lt $deadline ] || die "laas_master_trusted is not 0 5 s after the handover"
  sleep 0.2
done
reported=$(date +%s.%N)
log "laas_master_trusted 0 $(awk -v a="$handed" -v b="$reported" 'BEGIN{printf "%.1f", b-a}') s after the handover was seen"
ctl --json sm list >sm.list || die "sm list failed"
jq -e --arg g "$ROGUE_GUID" '.[] | select(.guid == $g and .role == "master" and .trusted == false)' \
  sm.list >/dev/null || die "sm list does not name $ROGUE_GUID master and untrusted: $(jq -c . sm.list)"
jq -e '.[] | select(.state == "this" and .role == "standby" and .trusted == true)' sm.list \
  >/dev/null || die "sm list does not show this SM standby and trusted: $(jq -c . sm.list)"
ctl --json status >status.rogue
[ "$(jq -r '.sm.master_trusted' status.rogue)" = false ] || die "status: $(jq -c .sm status.rogue)"
[ "$(jq -r '.sm.master.guid' status.rogue)" = "$ROGUE_GUID" ] ||
  die "status does not name the master $ROGUE_GUID: $(jq -c .sm status.rogue)"
ctl status >status.text
grep -q "^UNTRUSTED MASTER: $ROGUE_GUID" status.text || die "laasctl status: $(head -3 status.text)"
[ "$(metric laas_unaccepted_subnet_managers)" -ge 1 ] || die "the SM is not counted unaccepted"
grep -q "NOBODY TRUSTS" osm.log || die "the log does not say the master is untrusted"
# Changes are refused at a standby and name the master.
rc=0
ctl tenant add c --hosts 2 >add.out 2>&1 || rc=$?
[ $rc -ne 0 ] && grep -q "$ROGUE_GUID" add.out || die "tenant add at the standby: rc $rc, $(cat add.out)"
log "sm list (role master, trusted false), status, laas_master_trusted 0 and the log name $ROGUE_GUID"

# The tenant's master programs the switches with its own tables (minhop, its own LIDs). Or,
# when our master handed over while the tenant's SM was still discovering, it entered STANDBY
# too and ignored the handover: then NO SM is master (OpenSM's race, seen here once in three
# runs) and our standby keeps polling it -- still no trusted master, and still reported so.
for _ in $(seq 1 50); do grep -q 'SUBNET UP' rogue.log && break; sleep 0.2; done
if grep -q 'SUBNET UP' rogue.log; then
  sim dump_fts >lfts.rogue 2>lfts.rogue.err || die "dump_fts failed under the tenant's SM"
  sort lfts.rogue | grep -E '^0x' >entries.rogue
  changed=$(diff entries.good entries.rogue | grep -c '^>' || true)
  [ "$changed" -gt 0 ] || die "the tenant's SM changed no LFT entry: nothing to take back"
  log "the tenant's master rewrote $changed LFT entries"
else
  grep -q 'Entering STANDBY state' rogue.log || die "the tenant's SM is neither master nor standby"
  [ "$(metric laas_master_trusted)" = 0 ] || die "no SM is master, yet laas_master_trusted is not 0"
  log "the tenant's SM entered STANDBY and ignored the handover: no SM is master, laas_master_trusted stays 0"
fi

# The tenant's SM leaves: ours is master again and the tables are ours.
applied=$(count_log 'laas: forwarding tables applied')
kill -KILL "$ROGUE_PID"
wait "$ROGUE_PID" 2>/dev/null || true
wait_log 'laas: forwarding tables applied' $((applied + 1)) 60
deadline=$((SECONDS + 10))
while [ "$(metric laas_master_trusted)" != 1 ]; do
  [ $SECONDS -lt $deadline ] || die "laas_master_trusted is not 1 after our SM is master again"
  sleep 0.3
done
[ "$(ctl --json status | jq -r '.sm.role')" = master ] || die "our SM is not master again"
audit_layout back
sort lfts.back | grep -E '^0x' >entries.back
cmp -s entries.good entries.back ||
  die "the tables read back differ from ours before: $(diff entries.good entries.back | wc -l) lines, $(diff entries.good entries.back | head -4)"
log "ours is master again: laas_master_trusted 1, $(wc -l <entries.back) LFT entries read back equal ours and audited clean"

# An SM with another SM_Key: OpenSM ignores its SMInfo (no election), but its port says IsSM.
# It is named at the next sweep, its role unknown, trusted false, and counted.
start_tenant_sm other "$ROGUE_HOST" "sm_key 0x0000000000000042"
seen_other=""
for _ in $(seq 1 20); do
  kill -HUP "$OSM_PID"
  sleep 1
  ctl --json sm list >sm.other || die "sm list failed"
  if jq -e --arg g "$ROGUE_GUID" '.[] | select(.guid == $g and .trusted == false)' sm.other \
    >/dev/null; then
    seen_other=1
    break
  fi
done
[ -n "$seen_other" ] || die "an SM with another SM_Key is not named: $(jq -c . sm.other)"
[ "$(metric laas_unaccepted_subnet_managers)" -ge 1 ] || die "the other-key SM is not counted"
log "an SM with another SM_Key on $ROGUE_HOST is named (role $(jq -r --arg g "$ROGUE_GUID" '.[] | select(.guid == $g) | .role' sm.other)) and counted"
log "PASS"
