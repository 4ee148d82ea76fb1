#!/usr/bin/env bash
# link_drain.sh: a link drained for maintenance under a tenant, with the real OpenSM, ibsim
# and infiniband-diags, on the paper's demo tree. `laasctl link drain` moves the tenant to a
# free column and returns once the tables are on the switches; the tables read back are
# audited clean; then the cable is pulled (ibsim's console): the forwarding tables do not
# change, nothing is degraded. Plugged back and resumed, the tenant is on its links as placed
# and the tables are bit-identical to before the drain.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup link_drain
export SIM_HOST=SW_L2_0
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric_console fabric.net
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
metric() { ctl metrics | awk -v m="$1" '$1 == m { print $2 }'; }
# entries LFTS: "switch-GUID lid port" of every entry of a dump_fts output, sorted (dump_fts
# walks the fabric by directed routes, so a pulled cable reorders its output).
entries() {
  awk '/^Unicast lids/ { for (i = 1; i < NF; i++) if ($i == "guid") sw = $(i + 1); next }
    /^0x/ { print sw, tolower($1), $2 }' "$1" | sort
}
same_tables() { cmp -s <(entries "lfts.$1") <(entries "lfts.$2"); }
links_of() { ctl --json tenant show "$1" | jq -r '.links[] | "\(.switch.name):\(.switch.port)"' | sort; }

# Tenant a on two hosts of each of two leaves: two of each leaf's four columns, two free.
printf '%s\n' '{"v":1,"id":1,"method":"tenant.add","params":{"name":"a","host_list":["comp-1","comp-2","comp-5","comp-6"]}}' |
  ctl raw >add.out
jq -e '.ok' add.out >/dev/null || die "tenant add a failed: $(cat add.out)"
ctl tenant add b --hosts 8 >/dev/null || die "tenant add b failed"
links_of a >links.placed
LINK=$(head -1 links.placed)  # e.g. SW_L1_0:1
LEAF=${LINK%%:*} PORT=${LINK##*:}
PEER=$(ctl --json tenant show a | jq -r --arg s "$LEAF" --argjson p "$PORT" \
  '.links[] | select(.switch.name == $s and .switch.port == $p) | "\(.peer.name):\(.peer.port)"')
LEAF_GUID=$(ctl --json switch list | jq -r --arg s "$LEAF" '.[] | select(.name == $s) | .guid')
[ -n "$PEER" ] && [ -n "$LEAF_GUID" ] || die "cannot name $LINK's ends"
audit_layout base
log "tenant a on $(tr '\n' ' ' <links.placed); draining $LINK ($PEER at the other end)"

# Bad names: usage errors (exit 2), nothing drained.
rc=0
ctl link drain "$LEAF" --reason x >bad.out 2>&1 || rc=$?
[ $rc -eq 2 ] || die "a link without a port exited $rc: $(cat bad.out)"
rc=0
ctl link drain "$LEAF:5" --reason x >bad.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'not a switch-to-switch link' bad.out || die "a host port exited $rc: $(cat bad.out)"

# Drain by node GUID and port: it returns with the tenant moved and the tables applied.
ctl link drain "$LEAF_GUID:$PORT" --reason "optic swap, ticket 4711" >drain.out 2>&1 ||
  die "link drain failed: $(cat drain.out)"
grep -q ': drained' drain.out || die "the link is not drained: $(cat drain.out)"
links_of a >links.drained
! grep -qx "$LINK" links.drained || die "tenant a still routes over $LINK"
[ "$(wc -l <links.drained)" -eq "$(wc -l <links.placed)" ] || die "tenant a lost links"
[ "$(ctl --json tenant show a | jq -r .state)" = routed ] || die "tenant a is not routed"
[ "$(ctl --json link list --state drained | jq length)" = 1 ] || die "link list shows no drained link"
grep -q "laas: uid 0 drained link $LEAF port $PORT" osm.log || die "the drain is not logged"
[ "$(metric 'laas_links{level="1",state="drained"}')" = 1 ] || die "laas_links drained is not 1"
[ "$(metric 'laas_changes_total{op="link_drain",result="ok"}')" = 1 ] || die "the drain is not counted"
ctl status | grep >/dev/null 'maintenance: 1 link(s) drained' || die "status does not say a link is drained"
audit_layout drained
log "drained: tenant a on $(tr '\n' ' ' <links.drained); audit clean"

# Pull the cable: nothing to re-route, nothing degraded.
console "Unlink \"$LEAF\"[$PORT]"
heavy_sweep "unplugging $LINK"
grep -q "laas: fault: link $LEAF port $PORT is down" osm.log || die "the pulled cable is not seen"
[ "$(ctl --json status | jq .tenants_degraded)" = 0 ] || die "a tenant is degraded"
[ "$(ctl --json tenant show a | jq -r .state)" = routed ] || die "tenant a is not routed"
[ "$(ctl --json link list --state drained | jq length)" = 1 ] || die "the pulled link is not drained"
audit_layout unplugged
[ "$(entries lfts.drained | wc -l)" -gt 300 ] || die "too few LFT entries read back"
same_tables drained unplugged ||
  die "pulling a drained link changed the tables: $(diff <(entries lfts.drained) <(entries lfts.unplugged) | head -5)"
log "unplugged: no table changed, no tenant degraded, audit clean"

console "ReLink \"$LEAF\"[$PORT]"
heavy_sweep "plugging $LINK back"
# Resume by the other end's recorded name: the tenant returns to its links as placed.
ctl link resume "$PEER" >resume.out 2>&1 || die "link resume failed: $(cat resume.out)"
links_of a >links.resumed
cmp -s links.placed links.resumed || die "tenant a is not back on its links: $(cat links.resumed)"
rc=0
ctl link resume "$PEER" >again.out 2>&1 || rc=$?
[ $rc -eq 2 ] || die "resuming a link in service exited $rc: $(cat again.out)"
audit_layout resumed
same_tables base resumed ||
  die "the tables after the resume differ from before the drain: $(diff <(entries lfts.base) <(entries lfts.resumed) | head -5)"
log "PASS link_drain: tenant moved off before the cable was pulled, nothing degraded, resumed bit-identical"
