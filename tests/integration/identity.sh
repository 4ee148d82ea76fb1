#!/usr/bin/env bash
# identity.sh: identity is the host, not the slot, with the real OpenSM (qos TRUE),
# ibsim and infiniband-diags, on the paper's demo tree (32 hosts, OpenSM on SW_L2_0). Tenants a
# and b placed; then the host in one of a's slots is given another node (and so port) GUID through
# ibsim's console (`Guid`: a replaced server, or someone else's machine on a's cable) and
# OpenSM heavy-sweeps. Until an administrator accepts it, the newcomer is unaccepted: no switch
# routes its LID (dump_fts read back), every other LFT entry is unchanged, its port holds no P_Key
# of a (smpquery pkeys; partitions.conf lacks its GUID), `laasctl host list` shows it (by the new
# name and the old, "quarantined") with the recorded GUID, status and metrics count it,
# `laasctl audit` and laas-audit exit 1 naming it (unaccepted-host, nothing else), and kill -9 of OpenSM changes none of it. After
# `laasctl host accept` the slot is routed exactly as before the swap, the newcomer holds a's
# P_Key and both audits are clean.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup identity
export SIM_HOST=SW_L2_0 QOS=1
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric_console fabric.net
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
# ibsim answers NodeInfo of a CA port with the node GUID + the port number as its port GUID.
NODE_GUID=0x0002c90300dead00 NEW_GUID=0x0002c90300dead01

# pkeys LID: the P_Key table of the CA port with that LID, one "0x...." a line, zeros dropped.
# pkeys -D PATH: the same over a directed route (reaches a port no switch routes to).
pkeys() {
  local opts=()
  [ "$1" = -D ] && opts=(-D) && shift
  sim smpquery "${opts[@]}" pkeys "$1" 0 2>/dev/null |
    grep -oE '0x[0-9a-fA-F]{4}' | tr 'A-F' 'a-f' | grep -v '^0x0000$' || true
}
# routes LFTS LID: how many switches have an entry for LID in a dump_fts output.
routes() { grep -ciE "^0x0*$(printf '%x' "$2") " "$1" || true; }
# others LFTS LID: every LFT entry but LID's, as "switch LID port" (names of destinations
# dropped: the newcomer's description differs).
others() {
  awk -v skip="$(printf '0x%04x' "$2")" '/^Unicast lids/ { sw = $(NF - 1); next }
    /^0x/ { if (tolower($1) != skip) print sw, $1, $2 }' "$1" | sort
}
restart_hard() {
  local applied
  kill -KILL "$OSM_PID"
  wait "$OSM_PID" 2>/dev/null || true
  applied=$(count_log 'laas: forwarding tables applied')
  start_opensm
  wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
}
# audit_expecting_unaccepted TAG: tables, SL2VL and the fabric read back; laas-audit exits 1
# with exactly one violation, the unaccepted host in a's slot, and no switch routing its LID.
audit_expecting_unaccepted() {
  local tag=$1 rc=0
  sim ibnetdiscover >"disc.$tag" 2>/dev/null || die "ibnetdiscover failed ($tag)"
  sim dump_fts >"lfts.$tag" 2>/dev/null || die "dump_fts failed ($tag)"
  sim "$LAAS_SL2VL_DUMP" --fabric "disc.$tag" >"sl2vl.$tag" 2>"sl2vl.$tag.err" ||
    die "laas-sl2vl-dump failed ($tag)"
  cp state/allocations.json "alloc.$tag.json"
  "$LAAS_AUDIT" --fabric "disc.$tag" --lfts "lfts.$tag" --allocations "alloc.$tag.json" \
    --layout state/layout.json --sl2vl "sl2vl.$tag" >"audit.$tag" 2>&1 || rc=$?
  [ $rc -eq 1 ] || die "$tag: laas-audit exit $rc with a quarantined host: $(head -3 "audit.$tag")"
  [ "$(grep -c '^VIOLATION ' "audit.$tag")" = 1 ] &&
    grep -q "^VIOLATION unaccepted-host \[a\] .*holds $NEW_GUID" "audit.$tag" ||
    die "$tag: the audit should report exactly the unaccepted host: $(grep '^VIOLATION' "audit.$tag" | head -3)"
  checked=$(sed -n 's/^  quarantined_lid_entries_checked: //p' "audit.$tag")
  [ "${checked:-0}" -ge 12 ] || die "$tag: $checked switch tables checked for the newcomer's LID"
}

ctl tenant add a --hosts 6 >/dev/null || die "tenant add a failed"
ctl tenant add b --hosts 5 >/dev/null || die "tenant add b failed"
ctl --json tenant show a >show.a
VICTIM=$(jq -r '.hosts[1].name' show.a)
OLD_GUID=$(jq -r '.hosts[1].guid' show.a)
PKEY=$(jq -r '.pkey' show.a)
FULL=0x$(printf '%04x' $((PKEY | 0x8000)))
audit_layout before
LID_BEFORE=$(host_lid disc.before "$VICTIM")
ROUTED_BEFORE=$(routes lfts.before "$LID_BEFORE")
[ "$ROUTED_BEFORE" -ge 5 ] || die "only $ROUTED_BEFORE switches route $VICTIM before the swap"
pkeys "$LID_BEFORE" | grep >/dev/null -x "$FULL" || die "$VICTIM lacks a's P_Key $FULL before the swap"
# The slot by directed route from the SM's switch SW_L2_0, whose port i+1 leads to SW_L1_i.
ctl --json host show "$VICTIM" >victim.json
leaf=$(jq -r .leaf victim.json)
DR="0,$((${leaf#SW_L1_} + 1)),$(jq -r .port victim.json)"
pkeys -D "$DR" | grep >/dev/null -x "$FULL" || die "$VICTIM lacks a's P_Key over the directed route $DR"
log "tenants a (6 hosts) and b (5) placed; $VICTIM ($OLD_GUID, LID $LID_BEFORE) is a's, routed by $ROUTED_BEFORE of 12 switches, P_Key $FULL; audit clean"

# Another machine in a's slot: a new node GUID (so a new port GUID), same cable and description.
console "Guid \"$VICTIM\" $NODE_GUID"
heavy_sweep "new GUID in $VICTIM's slot"
wait_log 'laas: quarantined: tenant' 1 20
ctl --json host list --state quarantined >quarantined.json || die "host list failed"
[ "$(jq length quarantined.json)" = 1 ] &&
  [ "$(jq -r '.[0].guid' quarantined.json)" = "$NEW_GUID" ] &&
  [ "$(jq -r '.[0].tenant' quarantined.json)" = a ] &&
  [ "$(jq -r '.[0].recorded.guid' quarantined.json)" = "$OLD_GUID" ] ||
  die "host list does not show the newcomer quarantined: $(cat quarantined.json)"
ctl host list | grep -E "^$VICTIM +$NEW_GUID .* quarantined +a; not the recorded $OLD_GUID" >/dev/null ||
  die "laasctl host list does not say it: $(ctl host list | grep "$VICTIM")"
NEW_LID=$(jq -r '.[0].lid' quarantined.json)
[ "$(ctl --json status | jq '.host_states.quarantined')" = 1 ] || die "status does not count it"
ctl status >status.quarantined || die "laasctl status failed"
grep -q "^quarantined: 1 host" status.quarantined || die "laasctl status does not say it"
ctl metrics >metrics.quarantined || die "laasctl metrics failed"
grep -qx 'laas_hosts{state="quarantined"} 1' metrics.quarantined || die "the metrics do not count it"
# The glossary's name beside the old one (kept for one release), in every place.
ctl --json host list --state unaccepted >unaccepted.json || die "host list --state unaccepted failed"
cmp -s quarantined.json unaccepted.json || die "--state unaccepted lists other hosts: $(cat unaccepted.json)"
[ "$(ctl --json status | jq '.host_states.unaccepted, (.unaccepted_hosts | length)' | tr '\n' ' ')" = "1 1 " ] ||
  die "status does not count it as unaccepted"
grep -qx 'laas_hosts{state="unaccepted"} 1' metrics.quarantined || die "the metrics do not count it as unaccepted"
[ "$(jq '(.unaccepted | length), (.quarantined | length)' state/allocations.json | tr '\n' ' ')" = "1 1 " ] ||
  die "allocations.json does not name the slot by both names"
[ "$(ctl --json tenant show a | jq -r '.hosts[1].guid')" = "$OLD_GUID" ] ||
  die "tenant show a names the newcomer as a's host"
[ "$(ctl --json tenant show a | jq -r .state)" = degraded ] || die "a is not degraded by the quarantine"

audit_expecting_unaccepted quarantined
[ "$(routes lfts.quarantined "$NEW_LID")" = 0 ] ||
  die "$(routes lfts.quarantined "$NEW_LID") switches route the newcomer's LID $NEW_LID"
others lfts.before "$LID_BEFORE" >others.before
others lfts.quarantined "$NEW_LID" >others.quarantined
cmp -s others.before others.quarantined ||
  die "other LFT entries changed with the quarantine: $(diff others.before others.quarantined | head -6)"
grep -qi "${NEW_GUID#0x}" partitions.conf && die "partitions.conf lists the newcomer"
grep -qi "${OLD_GUID#0x}" partitions.conf || die "partitions.conf lost a's recorded host"
sleep 1
[ -n "$(pkeys -D "$DR")" ] || die "no P_Key table read over $DR"
! pkeys -D "$DR" | grep >/dev/null -x "$FULL" || die "the newcomer holds a's P_Key $FULL: $(pkeys -D "$DR" | tr '\n' ' ')"
rc=0
ctl audit >live.quarantined 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q '"unaccepted-host": 1' live.quarantined ||
  die "laasctl audit exit $rc with a quarantined host: $(grep -A4 '"counts"' live.quarantined)"
log "quarantined: newcomer $NEW_GUID (LID $NEW_LID) routed by 0 of $checked switch tables read back (was $ROUTED_BEFORE for $OLD_GUID); $(wc -l <others.before) other LFT entries unchanged; P_Keys over $DR: $(pkeys -D "$DR" | tr '\n' ' ')(not $FULL); laas-audit and laasctl audit exit 1 naming unaccepted-host only"

# Never adopted silently: not by kill -9 of OpenSM, nor by a request that names a host not
# unaccepted.
restart_hard
[ "$(ctl --json host show "$NEW_GUID" | jq -r .state)" = quarantined ] || die "kill -9 accepted the newcomer"
grep -qi "${NEW_GUID#0x}" state/state.json && die "state.json records the newcomer"
audit_expecting_unaccepted restarted
rc=0
ctl host accept "$(jq -r '.hosts[0].name' show.a)" >accept.refused 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q "not quarantined" accept.refused || die "accept of a host not quarantined: exit $rc, $(cat accept.refused)"
log "kill -9: still quarantined, state.json keeps $OLD_GUID; accepting a host not quarantined exits 1"

# Accepted: routed as before the swap, a's P_Key, audits clean.
ctl host accept "$NEW_GUID" >accept.out 2>&1 || die "host accept failed: $(cat accept.out)"
grep -q "accepted $NEW_GUID '$VICTIM' as tenant a's host" accept.out || die "accept says: $(cat accept.out)"
grep -q "laas: uid 0 accepted $NEW_GUID" osm.log || die "the accept is not logged"
[ "$(ctl --json host show "$NEW_GUID" | jq -r .state)" = allocated ] || die "the newcomer is not a's host now"
audit_layout accepted
[ "$(routes lfts.accepted "$NEW_LID")" = "$ROUTED_BEFORE" ] ||
  die "$(routes lfts.accepted "$NEW_LID") switches route the accepted host, $ROUTED_BEFORE did before"
others lfts.accepted "$NEW_LID" >others.accepted
cmp -s others.before others.accepted || die "other LFT entries differ after the accept"
grep -qi "${NEW_GUID#0x}" partitions.conf || die "partitions.conf lacks the accepted host"
deadline=$((SECONDS + 20))
until pkeys "$NEW_LID" | grep >/dev/null -x "$FULL"; do
  [ $SECONDS -lt $deadline ] || die "the accepted host lacks a's P_Key: $(pkeys "$NEW_LID" | tr '\n' ' ')"
  sleep 0.5
done
ctl audit >live.accepted 2>&1 || die "laasctl audit after the accept: $(grep -A4 '"counts"' live.accepted)"
[ "$(ctl --json tenant show a | jq -r .state)" = routed ] || die "a is still degraded"
log "accepted: $NEW_GUID routed by $ROUTED_BEFORE switches as $OLD_GUID was, P_Key $FULL, $(wc -l <others.accepted) other entries unchanged; audits clean: $(grep -m1 'paths traced' audit.accepted)"
log "PASS identity: a new GUID in a tenant's slot is quarantined until accepted, reported by the audit"
