#!/usr/bin/env bash
# rogue_sm.sh: a tenant with root runs its own subnet manager, with the real OpenSM (qos TRUE),
# ibsim and infiniband-diags. The lab tree pgft(2;8,4;1,4;1,2), the administrator's OpenSM (with
# the plugin) on comp-1, tenants a (8) and b (10). Root on one of a's hosts starts a second
# OpenSM (no plugin, sm_priority 0) on its port: the master sees it answer SMInfo. Through
# several heavy sweeps while it runs and after it leaves, and across a restart of the master:
# a stays placed with the same hosts, every LFT entry read back is unchanged and passes the
# offline audit, the host's port holds a's P_Key and no other tenant's, `laasctl sm list`,
# status, the metrics and `laasctl audit` name the SM as unaccepted, and nothing about it is
# written to state.json. Also: a laas.yaml naming management by host name is refused with its
# line (`laasctl config check`).
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup rogue_sm
export SIM_HOST=comp-1 QOS=1
"$LAAS_TOPOGEN" "pgft(2;8,4;1,4;1,2)" -o fabric.net
start_lab_tenants
audit_layout good
sort lfts.good | grep -E '^0x' >entries.good
ctl --json tenant show a >show.a.good
ctl --json tenant show b >show.b
ROGUE_HOST=$(jq -r '.hosts[2].name' show.a.good)
PKEY_A=$(jq -r '.pkey' show.a.good)
PKEY_B=$(jq -r '.pkey' show.b)
[ -n "$ROGUE_HOST" ] && [ "$ROGUE_HOST" != null ] || die "tenant a has no third host"
ROGUE_LID=$(host_lid disc.good "$ROGUE_HOST")
log "tenants a and b placed; a's host $ROGUE_HOST (LID $ROGUE_LID) will run its own SM"

# pkeys LID: the P_Key table of the CA port with that LID (base values, zeros dropped).
pkeys() {
  sim smpquery pkeys "$1" 0 2>/dev/null | grep -oE '0x[0-9a-fA-F]{4}' | tr 'A-F' 'a-f' |
    grep -v '^0x0000$' | while read -r k; do printf '0x%04x\n' $((k & 0x7fff)); done | sort -u
}

# unchanged TAG: a holds the same hosts, the tables read back equal the good ones and pass the
# offline audit, the rogue's port holds a's P_Key and not b's.
unchanged() {
  local tag=$1
  ctl --json tenant show a >"show.a.$tag" || die "$tag: tenant show a failed"
  [ "$(jq -r '.state' "show.a.$tag")" != "not placed" ] ||
    die "$tag: tenant a is not placed: $(jq -c . "show.a.$tag")"
  diff <(jq -r '.hosts[].guid' show.a.good) <(jq -r '.hosts[].guid' "show.a.$tag") >/dev/null ||
    die "$tag: tenant a's hosts changed"
  audit_layout "$tag"
  sort "lfts.$tag" | grep -E '^0x' >"entries.$tag"
  cmp -s entries.good "entries.$tag" ||
    die "$tag: the tables changed: $(diff entries.good "entries.$tag" | head -6)"
  pkeys "$ROGUE_LID" >"pkeys.$tag"
  grep -qx "$(printf '0x%04x' $((PKEY_A & 0x7fff)))" "pkeys.$tag" ||
    die "$tag: $ROGUE_HOST lost a's P_Key: $(tr '\n' ' ' <"pkeys.$tag")"
  ! grep -qx "$(printf '0x%04x' $((PKEY_B & 0x7fff)))" "pkeys.$tag" ||
    die "$tag: $ROGUE_HOST holds b's P_Key"
  jq -e --arg g "$ROGUE_GUID" '(.sm_ports // []) | index($g)' state/state.json >/dev/null 2>&1 &&
    die "$tag: the rogue SM's port is recorded in state.json"
  log "$tag: a placed on the same hosts, $(wc -l <"entries.$tag") LFT entries unchanged and audited clean, $ROGUE_HOST holds a's P_Key only"
}

# The tenant's root starts its own OpenSM on its host's port.
start_tenant_sm rogue "$ROGUE_HOST" "sm_priority 0"
ROGUE_PID=$TENANT_SM_PID
ROGUE_GUID_RE=none
for i in $(seq 1 30); do
  heavy_sweep "rogue SM started ($i)"
  if grep -q "is not trusted" osm.log; then break; fi
  sleep 1
done
grep -q "is not trusted" osm.log || die "the master never saw the tenant's SM"
ROGUE_GUID=$(grep "is not trusted" osm.log | tail -1 | sed -E 's/.*subnet manager (0x[0-9a-f]+).*/\1/')
ROGUE_GUID_RE=${ROGUE_GUID#0x}
log "the master sees the tenant's SM $ROGUE_GUID: $(grep 'is not trusted' osm.log | tail -1 | sed 's/^.*laas: //' | head -c 160)"
heavy_sweep "rogue SM running"
heavy_sweep "rogue SM running, again"
unchanged running

ctl --json sm list >sm.list || die "laasctl sm list failed"
jq -e --arg g "$ROGUE_GUID" '.[] | select(.guid == $g and .state == "unaccepted")' sm.list \
  >/dev/null || die "sm list does not name $ROGUE_GUID unaccepted: $(jq -c . sm.list)"
ctl --json status >status.running || die "status failed"
[ "$(jq -r '.unaccepted_sms // 0' status.running)" -ge 1 ] || die "status does not count it"
ctl metrics >metrics.running || die "metrics failed"
grep -qE '^laas_unaccepted_subnet_managers [1-9]' metrics.running ||
  die "laas_unaccepted_subnet_managers is not >= 1"
rc=0
ctl audit >ctl_audit.running 2>&1 || rc=$?
[ $rc -eq 1 ] || die "laasctl audit exits $rc with an unaccepted SM on the fabric"
jq -e --arg g "$ROGUE_GUID" '.unaccepted_sms[] | select(.guid == $g)' ctl_audit.running \
  >/dev/null || die "laasctl audit does not name the SM: $(head -c 300 ctl_audit.running)"
log "sm list, status, laas_unaccepted_subnet_managers and laasctl audit (exit 1) name $ROGUE_GUID unaccepted"

# The tenant's SM leaves; nothing about it remains.
kill -TERM "$ROGUE_PID"
for i in 1 2 3 4 5 6; do kill -0 "$ROGUE_PID" 2>/dev/null || break; sleep 0.5; done
kill -KILL "$ROGUE_PID" 2>/dev/null || true
wait "$ROGUE_PID" 2>/dev/null || true
heavy_sweep "rogue SM gone"
heavy_sweep "rogue SM gone, again"
unchanged gone

# The master restarted: the same.
kill -KILL "$OSM_PID"
wait "$OSM_PID" 2>/dev/null || true
applied=$(count_log 'laas: forwarding tables applied')
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
unchanged restarted

# A host name where a privilege is granted is an error naming the line, never defaults.
cat >bad.yaml <<EOC
state_dir: $WORK/state
management: [comp-1]
EOC
rc=0
"$LAASCTL" config check bad.yaml >check.out 2>&1 || rc=$?
[ $rc -eq 1 ] || die "laasctl config check exits $rc for a host name in management"
grep -q "bad.yaml:2: key 'management': 'comp-1' is not a port GUID" check.out ||
  die "config check does not name the line: $(cat check.out)"
"$LAASCTL" config check laas.yaml >/dev/null || die "config check refuses the test's own laas.yaml"
log "laasctl config check names bad.yaml:2 for a host name in management"
log "PASS"
