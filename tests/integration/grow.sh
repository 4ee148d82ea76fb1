#!/usr/bin/env bash
# grow.sh: staged build-out (acceptance 3) with the real OpenSM (qos TRUE), ibsim and
# infiniband-diags. The net file is xgft(2;4,5;1,5), but leaf SW_L1_4 (with its hosts) and
# spine SW_L2_4 are unlinked before OpenSM starts: the plugin records xgft(2;4,4;1,4). Tenants
# a, b and c are placed (14 of 16 hosts; a 3-host tenant is refused). Then the new spine and
# leaf are cabled live (ibsim `Relink`; the new leaf's last host stays uncabled, so the leaf is
# partly populated) and OpenSM heavy-sweeps. Checked on tables read back with dump_fts: the
# plugin logs the growth, layout.json records xgft(2;4,5;1,5) with every recorded switch at its
# old model index, every pre-existing switch's LFT entries for the tenants' host LIDs are
# bit-identical, the audit is clean, and the 3-host tenant is now placed, on the new leaf.
# DECLARED=1: laas.yaml declares `topology: xgft(2;4,5;1,5)`, so the recorded tree is the full
# size from the start (the new leaf and spine absent) and the build-out fills its absent parts.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup "grow${DECLARED:+_declared}"
export SIM_HOST=SW_L2_0 QOS=1
FIRST='xgft(2;4,4;1,4)' GREW='grew the intended tree from xgft(2;4,4;1,4) to xgft(2;4,5;1,5): +1 leaf, +1 spine'
if [ "${DECLARED:-0}" = 1 ]; then
  export LAAS_YAML_EXTRA='topology: "xgft(2;4,5;1,5)"'
  FIRST='xgft(2;4,5;1,5)' GREW='filled absent parts of the intended tree xgft(2;4,5;1,5): +1 leaf, +1 spine'
fi
"$LAAS_TOPOGEN" "xgft(2;4,5;1,5)" -o fabric.net
start_fabric_console fabric.net
console 'Unlink "SW_L1_4"'
console 'Unlink "SW_L2_4"'
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
grep -qF "recorded the intended tree $FIRST" osm.log ||
  die "the first tree is not $FIRST: $(grep -m2 'intended tree' osm.log)"
cp state/layout.json layout.before.json

ctl tenant add a --hosts 6 >/dev/null || die "tenant add a failed"
ctl tenant add b --hosts 5 >/dev/null || die "tenant add b failed"
ctl tenant add c --hosts 3 >/dev/null || die "tenant add c failed"
rc=0
ctl tenant add d --hosts 3 --dry-run >refused.out 2>&1 || rc=$?
[ $rc -eq 1 ] || die "a 3-host tenant fits the 4-leaf tree with 2 free hosts? exit $rc: $(cat refused.out)"
audit_layout before
# The tenants' host LIDs, and (switch GUID, LID, port) for each in the tables read back.
jq -r '.tenants[].hosts[].lid' state/allocations.json | sort -n >tenant.lids
lft_entries tenant.lids lfts.before >entries.before
switches_before=$(grep -c '^Unicast lids' lfts.before)
log "$FIRST recorded; tenants a (6 hosts), b (5), c (3) placed, $(wc -l <tenant.lids) host LIDs, $(wc -l <entries.before) LFT entries for them on $switches_before switches; a 3-host tenant is refused (2 hosts free); audit clean"

# Build-out: the new spine and leaf are cabled to the running fabric.
console 'Relink "SW_L2_4"'
console 'Relink "SW_L1_4"'
console 'Unlink "SW_L1_4"[9]'
heavy_sweep "a leaf and a spine added"
wait_log "$GREW" 1 20
grep -m1 -F "$GREW" osm.log | sed 's/^.*laas: /  log: /'
[ "$(jq -r .topology state/layout.json)" = 'xgft(2;4,5;1,5)' ] ||
  die "layout.json records $(jq -r .topology state/layout.json)"
# Every recorded switch at its model index, with the physical ports it had.
moved=$(jq -n --slurpfile a layout.before.json --slurpfile b state/layout.json '
  [$a[0].switches[] | select(.guid != "0x0000000000000000") as $o | ($b[0].switches[] | select(.level == $o.level and .index == $o.index)) as $n
   | select($n.guid != $o.guid or (($o.ports - $n.ports) | length) != 0)] | length')
[ "$moved" = 0 ] || die "$moved recorded switches moved or lost ports in layout.json"
newsw() { jq -r ".switches[] | select(.level == $1 and .index == $2) | .name" state/layout.json; }
[ "$(newsw 1 4)" = SW_L1_4 ] && [ "$(newsw 2 4)" = SW_L2_4 ] ||
  die "the new switches are not the last model indices: $(newsw 1 4) $(newsw 2 4)"
audit_layout grown
grep -q 'xgft(2;4,5;1,5)' audit.grown || grep >/dev/null 'xgft(2;4,5;1,5)' state/allocations.json ||
  die "the audit did not run on the grown tree"
switches_after=$(grep -c '^Unicast lids' lfts.grown)
lft_entries tenant.lids lfts.grown >entries.after
# Only the switches that were there before (the new ones have entries of their own).
awk 'NR == FNR { old[$1] = 1; next } ($1 in old)' entries.before entries.after >entries.after.old
cmp -s entries.before entries.after.old ||
  die "LFT entries for the tenants' hosts changed: $(diff entries.before entries.after.old | head -6)"
for t in a b c; do
  [ "$(ctl --json tenant show $t | jq -r .state)" = routed ] || die "tenant $t is not routed"
done
lids=$(wc -l <tenant.lids)
routed=$(wc -l <entries.before)
log "grown: $switches_before -> $switches_after switches; the $((lids * switches_before)) LFT entries for $lids tenant host LIDs on the $switches_before pre-existing switches compared ($routed routed, $((lids * switches_before - routed)) without a route), all bit-identical; audit clean: $(grep -m1 'paths traced' audit.grown || true)"

# The new capacity: a 3-host tenant now fits, on the new leaf.
ctl tenant add d --hosts 3 >/dev/null || die "tenant add d failed on the grown tree"
ctl --json tenant show d >show.d
leaves=$(for h in $(jq -r '.hosts[].name' show.d); do ctl --json host show "$h" | jq -r .leaf; done | sort -u)
[ "$leaves" = SW_L1_4 ] || die "tenant d is not on the new leaf: $leaves"
audit_layout placed
lft_entries tenant.lids lfts.placed | awk 'NR == FNR { old[$1] = 1; next } ($1 in old)' entries.before - >entries.placed.old
cmp -s entries.before entries.placed.old || die "adding d changed a, b or c's entries"
log "tenant d (3 hosts) placed on the new leaf SW_L1_4 ($(jq -r '[.hosts[].name] | join(",")' show.d)); a, b, c's entries still bit-identical; audit clean"
log "PASS grow: a leaf and a spine added live are recognized, tenants' tables unchanged, new capacity placeable"
