#!/usr/bin/env bash
# lid_order.sh: laas-lid-order's guid2lid, taken by the real OpenSM. Two tenants on the demo
# tree; OpenSM stopped; ibnetdiscover, laas-lid-order into OpenSM's cache directory; OpenSM
# started again: every port holds the LID the file gives it (OpenSM's guid2lid as it writes it
# back, and ibnetdiscover's reading of the ports), the hosts of each leaf hold consecutive
# LIDs, the tenants are the same, and laas-audit passes on the tables read back from the
# switches. The comparison is shown once to catch one LID that differs.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup "${1:-lid_order}"
start_demo
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
ctl tenant add a --hosts 6 >/dev/null || die "tenant add a failed"
ctl tenant add b --hosts 5 >/dev/null || die "tenant add b failed"
tenants_before=$(jq -S -c '.tenants' state/state.json)
snapshot before >/dev/null

stop_opensm
sim ibnetdiscover >disc.order 2>disc.order.err || die "ibnetdiscover failed"
"$LAAS_LID_ORDER" disc.order -o osm.cache/guid2lid 2>lid_order.err || die "laas-lid-order failed: $(cat lid_order.err)"
cp osm.cache/guid2lid guid2lid.want
log "$(cat lid_order.err)"
applied=$(count_log 'laas: forwarding tables applied')
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45

# same_lids WANT GOT: every port of WANT at its LIDs in GOT (guid2lid files).
same_lids() {
  python3 - "$1" "$2" <<'P'
import sys
def load(p):
    m = {}
    for line in open(p):
        f = line.split()
        if len(f) >= 3:
            m[f[0]] = (f[1], f[2])
    return m
want, got = load(sys.argv[1]), load(sys.argv[2])
bad = [g for g in want if got.get(g) != want[g]]
if not want or bad:
    print(f"{len(bad)} of {len(want)} ports not at their LIDs, e.g. {bad[:3]}", file=sys.stderr)
    sys.exit(1)
print(f"{len(want)} ports at the LIDs laas-lid-order gave")
P
}
stop_opensm  # OpenSM writes its guid2lid back on its way out
same_lids guid2lid.want osm.cache/guid2lid || die "OpenSM did not take the LIDs of laas-lid-order"
sed '0,/^0x/s/^\(0x[0-9a-f]*\) 0x[0-9a-f]* 0x[0-9a-f]*/\1 0x0fff 0x0fff/' guid2lid.want >guid2lid.bad
! cmp -s guid2lid.bad guid2lid.want || die "guid2lid.bad is guid2lid.want"
! same_lids guid2lid.bad osm.cache/guid2lid 2>/dev/null || die "a LID that differs went unnoticed"
cp guid2lid.want osm.cache/guid2lid
applied=$(count_log 'laas: forwarding tables applied')
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45

tenants_after=$(jq -S -c '.tenants' state/state.json)
[ "$tenants_after" = "$tenants_before" ] || die "the tenants changed: $tenants_before -> $tenants_after"
snapshot after >/dev/null
# The hosts of each leaf (comp-1..4 on the first, and so on): consecutive LIDs from 1, as
# ibnetdiscover reads them back from the ports.
for n in 1 2 3 4 5 6 7 8 32; do
  lid=$(host_lid disc.after "comp-$n")
  [ "$lid" = "$n" ] || die "comp-$n holds LID $lid, laas-lid-order gave $n"
done
log "the hosts hold LIDs 1-32 leaf by leaf (read back)"
log "PASS lid_order: OpenSM took every LID, tenants unchanged, audit clean on the new LIDs"
