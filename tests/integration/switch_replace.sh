#!/usr/bin/env bash
# switch_replace.sh: a leaf switch replaced by one with another node GUID under two tenants,
# and the procedure of docs/admin-guide.md (section 8, "Replacing a switch"), with the real
# OpenSM (qos TRUE), ibsim and infiniband-diags. The demo tree xgft(2;4,8;1,4) and a spare
# switch SW_NEW declared with no cables (invisible until cabled; another GUID). Tenants a and b
# (HOSTS_A, HOSTS_B: 2 each) both hold hosts under one leaf; the audit is clean. That leaf is
# unlinked and SW_NEW cabled port for port (its four spines, the same four hosts), as in the
# rack. Checked, as the guide says: the new leaf is a new leaf position of the recorded tree
# (`grew the intended tree ... +1 leaf`), the old one stays in the record, down; a and b are
# degraded; `laasctl audit` and laas-audit on the tables read back are clean. Then the
# procedure -- the tenants removed, OpenSM stopped, layout.json deleted, OpenSM started, the
# tenants added -- records the tree afresh with SW_NEW and without the old leaf, both tenants
# routed, audits clean. (With tenants of 6 hosts each, `laasctl audit` reports
# management-unreachable findings right after the first placement, before any replacement:
# not this test's subject.)
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup switch_replace
HOSTS_A=${HOSTS_A:-2} HOSTS_B=${HOSTS_B:-2}
export SIM_HOST=SW_L2_0 QOS=1
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
printf '\nSwitch\t8 "SW_NEW"\n' >>fabric.net
start_fabric_console fabric.net
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
# Until the restart laas-audit reads the forwarding tables back, not the SL2VL tables: ibsim
# did not answer an SL2VL query of the new leaf on the grown record (laas-sl2vl-dump: lid 45
# in 8 out 8); `laasctl audit` checks OpenSM's SL2VL plan (the first-hop drop) throughout.
AUDIT_SL2VL=0  # (start_opensm set it for qos TRUE, and sets it again at the restart)
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
ctl tenant add a --hosts "$HOSTS_A" >/dev/null 2>&1 || die "tenant add a failed"
ctl tenant add b --hosts "$HOSTS_B" >/dev/null 2>&1 || die "tenant add b failed"
# The leaf to replace: one that holds hosts of both tenants.
leaf_guids() { ctl --json tenant show "$1" | jq -r '.hosts[].leaf.guid' | sort -u; }
old_guid=$(comm -12 <(leaf_guids a) <(leaf_guids b) | head -1)
[ -n "$old_guid" ] || die "no leaf holds hosts of both tenants"
OLD=$(jq -r --arg g "$old_guid" '.switches[] | select(.guid == $g) | .name' state/layout.json)
old_index=$(jq -r --arg g "$old_guid" '.switches[] | select(.guid == $g) | .index' state/layout.json)
ctl audit >audit.placed 2>&1 || die "laasctl audit fails with the tenants placed: $(grep -m3 '"kind"' audit.placed)"
log "tenants a ($HOSTS_A hosts) and b ($HOSTS_B) placed, both with hosts under leaf $OLD ($old_guid); audit clean"

# The replacement: the old leaf out, the new one cabled to the old one's peers, port for port.
peers=$(awk -v n="\"$OLD\"" '/^Switch/ { inside = ($3 == n) } inside && /^\[/ { print $1, $2 }' fabric.net)
[ "$(wc -l <<<"$peers")" = 8 ] || die "$OLD has no 8 cables in fabric.net: $peers"
console "Unlink \"$OLD\""
while read -r port peer; do console "Link \"SW_NEW\"$port $peer"; done <<<"$peers"
heavy_sweep "leaf $OLD replaced by SW_NEW"
grew='grew the intended tree from xgft(2;4,8;1,4) to xgft(2;4,9;1,4): +1 leaf'
[ "$(count_log "$grew")" -ge 1 ] || heavy_sweep "the new leaf cabled whole"
wait_log "$grew" 1 20
new_index=$(jq -r '.switches[] | select(.name == "SW_NEW") | .index' state/layout.json)
still=$(jq -r --arg g "$old_guid" '.switches[] | select(.guid == $g) | .index' state/layout.json)
[ "$new_index" = 8 ] && [ "$still" = "$old_index" ] ||
  die "layout.json: old leaf at index '$still', new leaf at '$new_index' (expected $old_index and 8)"
ctl --json status >status.json || die "laasctl status failed"
[ "$(jq -r '.down_switches | if type == "array" then length else . end' status.json)" = 1 ] ||
  die "the old leaf is not the one switch down: $(jq -c .down_switches status.json)"
for t in a b; do
  [ "$(ctl --json tenant show $t | jq -r .state)" = degraded ] || die "tenant $t is not degraded"
done
ctl audit >audit.replaced 2>&1 || die "laasctl audit fails after the replacement: $(tail -5 audit.replaced)"
audit_layout replaced
log "replaced: the new leaf recorded as leaf 8 ($grew), the old one down at leaf $old_index; a and b degraded; audits clean"

# The procedure: the tenants removed, OpenSM stopped, layout.json deleted, OpenSM started (the
# tree recorded afresh from the cabling, with the new leaf), the tenants added again.
for t in a b; do ctl tenant remove $t >/dev/null 2>&1 || die "tenant remove $t failed"; done
applied=$(count_log 'laas: forwarding tables applied')
stop_opensm
rm state/layout.json
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
grep 'laas: recorded the intended tree' osm.log | tail -1 | grep >/dev/null -F 'xgft(2;4,8;1,4)' ||
  die "the restart did not record xgft(2;4,8;1,4): $(grep 'intended tree' osm.log | tail -2)"
[ "$(jq -r --arg g "$old_guid" '[.switches[] | select(.guid == $g)] | length' state/layout.json)" = 0 ] &&
  [ "$(jq -r '[.switches[] | select(.level == 1 and .name == "SW_NEW")] | length' state/layout.json)" = 1 ] ||
  die "layout.json does not record SW_NEW instead of $OLD: $(jq -c '[.switches[] | select(.level == 1) | [.index, .name]]' state/layout.json)"
for t in a b; do
  n=HOSTS_${t^^}
  ctl tenant add $t --hosts "${!n}" >/dev/null 2>&1 || die "tenant add $t failed after the replacement"
  [ "$(ctl --json tenant show $t | jq -r .state)" = routed ] || die "tenant $t is not routed again"
done
ctl audit >audit.again 2>&1 ||
  die "laasctl audit fails after the tenants were placed again: $(grep -m3 '"kind"' audit.again)"
audit_layout again
log "PASS: a leaf replaced under tenants a and b: recorded as a new leaf, the old one down, the tenants degraded and isolated; after the procedure (tenants removed, layout.json deleted, OpenSM restarted, tenants added) both routed on the tree recorded afresh; audits clean"
