#!/usr/bin/env bash
# partitions_light.sh: a tenant change applies partitions.conf without a heavy sweep (issue
# 14): the plugin runs OpenSM's partition manager once the re-route's tables are on the
# switches, and the reply comes after the P_Key answers. Right when `laasctl tenant add`
# returns, every host of the tenant holds its P_Key as a full member; right when `tenant
# remove` returns, none does. OpenSM swept heavily only once (its first sweep). With
# LAAS_PARTITIONS_HEAVY_SWEEP=1 the change takes a heavy sweep, as before.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup partitions_light
export SIM_HOST=SW_L2_0
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric fabric.net
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
pkeys() {
  sim smpquery pkeys "$1" 1 2>/dev/null | grep -oE '0x[0-9a-fA-F]{4}' | tr 'A-F' 'a-f' |
    grep -v '^0x0000$' || true
}
full() { printf '0x%04x' $(($1 | 0x8000)); }
heavy() { grep -c 'INITIATING HEAVY SWEEP' osm.log || true; }

start_opensm "log_flags 0x07"
wait_log 'SUBNET UP' 1 45
wait_log 'laas: forwarding tables applied' 1 45
h0=$(heavy)
ctl tenant add A --hosts 5 >add.out 2>&1 || die "tenant add: $(cat add.out)"
ctl --json tenant show A >show.A.json || die "tenant show A failed"
PK=$(full "$(jq -r .pkey show.A.json)")
LIDS=$(jq -r '.hosts[].lid' show.A.json)
for lid in $LIDS; do
  pkeys "$lid" | grep >/dev/null -x "$PK" || die "lid $lid lacks A's P_Key $PK when the add returned: $(pkeys "$lid" | tr '\n' ' ')"
done
grep -q 'laas: partitions.conf applied to the P_Key tables' osm.log || die "partitions not applied by the plugin"
log "add: A's $(echo "$LIDS" | wc -w) hosts hold $PK at the reply"
ctl tenant remove A >rm.out 2>&1 || die "tenant remove: $(cat rm.out)"
for lid in $LIDS; do
  ! pkeys "$lid" | grep >/dev/null -x "$PK" || die "lid $lid still holds A's P_Key $PK when the remove returned"
done
[ "$(heavy)" = "$h0" ] || die "a tenant change took a heavy sweep ($h0 -> $(heavy))"
log "remove: none holds $PK at the reply; no heavy sweep ($h0 in all)"
stop_opensm

# The old way, for comparison: a heavy sweep per partitions change.
rm -f osm.log
LAAS_PARTITIONS_HEAVY_SWEEP=1 start_opensm "log_flags 0x07"
wait_log 'SUBNET UP' 1 45
h0=$(heavy)
ctl tenant add B --hosts 3 >add.out 2>&1 || die "tenant add B: $(cat add.out)"
wait_log 'SUBNET UP' 2 45
[ "$(heavy)" -gt "$h0" ] || die "LAAS_PARTITIONS_HEAVY_SWEEP=1: no heavy sweep"
log "LAAS_PARTITIONS_HEAVY_SWEEP=1: the change took a heavy sweep"
log "ok"
