#!/usr/bin/env bash
# fail_closed.sh: never fail open (acceptance 2) with the real OpenSM (qos TRUE), ibsim
# and infiniband-diags. The lab tree pgft(2;8,4;1,4;1,2), OpenSM on comp-1, tenants a and b.
# 1. state.json made unreadable (garbage written over it) and a heavy sweep: the plugin fails
#    closed -- every LFT entry read back equals the last good tables, the audit of those tables
#    finds no isolation violation, and `laasctl status`, the metrics (laas_fail_closed 1) and
#    `laasctl audit` (non-zero) say why; a tenant change is refused. The good file put back:
#    it recovers by itself at the next sweep (same tables, audit exit 0, laas_fail_closed 0).
# 2. A loop cable (a leaf cabled to itself through ibsim's console): the fabric is not
#    recognized; the same checks; the cable removed, it recovers by itself.
# 3. OpenSM restarted on an unreadable state: it routes the tenants of allocations.json, and the
#    tables read back are the good ones again.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup fail_closed
export SIM_HOST=comp-1 QOS=1
"$LAAS_TOPOGEN" "pgft(2;8,4;1,4;1,2)" -o fabric.net
sed -i -E 's/^Switch\t16 "SW_L1_/Switch\t20 "SW_L1_/' fabric.net
start_lab_tenants
audit_layout good
sort lfts.good | grep -E '^0x' >entries.good
cp state/state.json state.json.good
log "tenants a (8) and b (10) placed; $(wc -l <entries.good) LFT entries read back; audit clean"

# closed TAG WHY N: (the Nth such log line) the tables read back equal the good ones, isolation holds on them, and status,
# metrics and laasctl audit say the plugin fails closed because of WHY.
closed() {
  local tag=$1 why=$2 rc=0
  wait_log "laas: failing closed: $why" "$3" 45
  grep "laas: failing closed: $why" osm.log | tail -1 | sed 's/^.*laas: /  log: /'
  sim dump_fts >"lfts.$tag" 2>"lfts.$tag.err" || die "dump_fts failed ($tag)"
  sort "lfts.$tag" | grep -E '^0x' >"entries.$tag"
  cmp -s entries.good "entries.$tag" ||
    die "$tag: the tables changed while failing closed: $(diff entries.good "entries.$tag" | head -6)"
  # The offline audit of the tables read back against the last good tenants: no violation.
  sim ibnetdiscover >"disc.$tag" 2>/dev/null || die "ibnetdiscover failed ($tag)"
  "$LAAS_AUDIT" --fabric disc.good --lfts "lfts.$tag" --allocations alloc.good.json \
    --layout state/layout.json >"audit.$tag" 2>&1 || die "$tag: the kept tables fail the audit: $(grep VIOLATION "audit.$tag" | head -3)"
  ctl --json status >"status.$tag" || true
  jq -r '.fail_closed // empty' "status.$tag" | grep >/dev/null "$why" ||
    die "$tag: status does not say it fails closed: $(jq -c . "status.$tag")"
  ctl metrics >"metrics.$tag" || die "laasctl metrics failed ($tag)"
  grep -qx 'laas_fail_closed 1' "metrics.$tag" || die "$tag: laas_fail_closed is not 1"
  ctl audit >"ctl_audit.$tag" 2>&1 || rc=$?
  [ $rc -ne 0 ] || die "$tag: laasctl audit exits 0 while failing closed"
  grep -q 'fail' "ctl_audit.$tag" || die "$tag: laasctl audit does not say why: $(head -3 "ctl_audit.$tag")"
  local audit_rc=$rc
  rc=0
  ctl tenant add z --hosts 1 >"refused.$tag" 2>&1 || rc=$?
  [ $rc -ne 0 ] || die "$tag: a tenant change was accepted while failing closed"
  log "$tag: failing closed ($why): $(wc -l <"entries.$tag") LFT entries equal the good ones, audit of them clean, status and laas_fail_closed 1 say so, laasctl audit exit $audit_rc, tenant add refused (exit $rc: $(head -c 100 "refused.$tag"))"
}

# recovered TAG: back to normal by itself.
recovered() {
  local tag=$1
  wait_log 'laas: recovered: routing from the fabric and the tenant state again' "$2" 20
  audit_layout "$tag"
  sort "lfts.$tag" | grep -E '^0x' >"entries.$tag"
  cmp -s entries.good "entries.$tag" || die "$tag: the tables differ after recovery: $(diff entries.good "entries.$tag" | head -6)"
  ctl metrics >"metrics.$tag" || die "laasctl metrics failed ($tag)"
  grep -qx 'laas_fail_closed 0' "metrics.$tag" || die "$tag: laas_fail_closed is not 0"
  ctl audit >/dev/null || die "$tag: laasctl audit fails after recovery"
  [ "$(ctl --json tenant list | jq length)" = 2 ] || die "$tag: the tenants are not both there"
  log "$tag: recovered by itself; tables equal the good ones, audits clean, laas_fail_closed 0"
}

# 1. The state file made unreadable.
printf '{ "version": 2, "tenants": [ garbage' >state/state.json
heavy_sweep "state.json made unreadable"
closed state_unreadable "the tenant state cannot be read" 1
cp state.json.good state/state.json
heavy_sweep "state.json put back"
recovered state_back 1

# 2. A loop cable: SW_L1_3 cabled to itself.
console 'Link "SW_L1_3"[17] "SW_L1_3"[18]'
heavy_sweep "a loop cable on SW_L1_3"
closed loop "the fabric is not recognized: a loop cable" 1
console 'Unlink "SW_L1_3"[17]'
heavy_sweep "the loop cable removed"
recovered loop_removed 2

# 3. A restart on an unreadable state routes the tenants last routed.
stop_opensm
printf 'not json at all' >state/state.json
start_opensm
closed restart_unreadable "the tenant state cannot be read" 2
cp state.json.good state/state.json
heavy_sweep "state.json put back after the restart"
recovered restart_back 3
log "PASS fail_closed: unreadable state, loop cable and a restart on an unreadable state all fail closed and recover by themselves"
