#!/usr/bin/env bash
# uneven.sh: uneven up-links with the real OpenSM, ibsim and infiniband-diags. The lab
# tree pgft(2;8,4;1,4;1,2) with the second cable to SW_L2_0 and SW_L2_1 left out on every leaf
# (6 up-links over 4 spines) before OpenSM starts: the 8 columns are uncabled by design -- one
# log line, no "down" line, `uncabled_links` in status, laas_links{state="uncabled"} -- and the
# tree is still pgft(2;8,4;1,4;1,2). Tenants are placed on the cabled columns and not degraded,
# and the audit is clean. A cable then unlinked on one leaf is a fault (a "down" line,
# down_links 1) and clears when relinked.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup uneven
export SIM_HOST=comp-1
"$LAAS_TOPOGEN" "pgft(2;8,4;1,4;1,2)" -o fabric.net
start_fabric_console fabric.net
for leaf in 0 1 2 3; do
  console "Unlink \"SW_L1_$leaf\"[2]"
  console "Unlink \"SW_L1_$leaf\"[4]"
done
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
grep -q 'laas: 8 leaf up-link(s) of pgft(2;8,4;1,4;1,2) are uncabled on every leaf of their pod' osm.log ||
  die "no uncabled line: $(grep -m3 -E 'uncabled|intended tree' osm.log)"
! grep -q 'laas: fault: link' osm.log || die "uncabled links reported down: $(grep -m2 'laas: fault: link' osm.log)"
ctl --json status >status.json
[ "$(jq .uncabled_links status.json)" = 8 ] && [ "$(jq .down_links status.json)" = 0 ] &&
  [ "$(jq -r .topology status.json)" = 'pgft(2;8,4;1,4;1,2)' ] ||
  die "status: $(jq -c '{topology, uncabled_links, down_links}' status.json)"
ctl metrics >metrics.txt
grep -qx 'laas_links{level="1",state="uncabled"} 8' metrics.txt &&
  grep -qx 'laas_down{part="link"} 0' metrics.txt ||
  die "metrics: $(grep -E '^laas_(links|down)' metrics.txt | tr '\n' ' ')"
ctl tenant add a --hosts 8 >/dev/null || die "tenant add a failed"
ctl tenant add b --hosts 12 >/dev/null || die "tenant add b failed"
for t in a b; do
  [ "$(ctl --json tenant show $t | jq -r .state)" = routed ] || die "tenant $t: $(ctl --json tenant show $t | jq -c .)"
done
audit_layout placed
log "6 up-links over 4 spines: 8 columns uncabled by design (status, metrics, one log line, no fault); tenants a (8) and b (12) placed and routed, not degraded; audit clean: $(grep -m1 'paths traced' audit.placed || true)"

# A real fault on top: one more cable of SW_L1_0.
console 'Unlink "SW_L1_0"[5]'
heavy_sweep "SW_L1_0 port 5 unlinked"
grep -q 'laas: fault: link SW_L1_0 port 5 is down' osm.log || die "no fault line: $(grep 'laas: fault' osm.log | tail -2)"
[ "$(ctl --json status | jq .down_links)" = 1 ] || die "down_links is not 1"
console 'Relink "SW_L1_0"[5]'
heavy_sweep "SW_L1_0 port 5 relinked"
grep -q 'laas: fault cleared: link SW_L1_0 port 5 is back' osm.log || die "no cleared line"
[ "$(ctl --json status | jq '[.down_links, .uncabled_links]' -c)" = '[0,8]' ] || die "status after repair: $(ctl --json status | jq -c '[.down_links, .uncabled_links]')"
audit_layout repaired
log "a cable unlinked on one leaf is a fault (down_links 1) and clears when relinked; audit clean"
log "PASS uneven: uneven up-links are uncabled by design, not faults"
