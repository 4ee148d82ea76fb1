#!/usr/bin/env bash
# closed_free_pool.sh: free hosts are reached from management only, with the real OpenSM
# (qos TRUE), ibsim and infiniband-diags. The lab tree pgft(2;8,4;1,4;1,2) with OpenSM on a
# host (comp-1: a management leaf shared with tenants); tenants a, b, c added with laasctl, then
# b removed and d added (the churn that left 54 routes from tenants to free hosts), then a cable
# of a leaf holding a tenant and free hosts unlinked and relinked through ibsim's console. After
# every step the forwarding and SL2VL tables read back are audited (laas-audit traces every
# host pair through both): no host but management reaches a free host past its first switch
# (free-host-reachable and cross-route 0, every such pair dropped at the first switch), the
# management host reaches every free host, and the tables after the churn equal those of a
# fresh fabric with the same tenants (a second OpenSM started on the final state).
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup closed_free_pool
export SIM_HOST=comp-1 QOS=1
"$LAAS_TOPOGEN" "pgft(2;8,4;1,4;1,2)" -o fabric.net
start_fabric_console fabric.net
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }

# closed TAG: audit the tables read back; every non-management host to free host pair is
# dropped at its first switch, and there are such pairs (so the check means something).
closed() {
  local tag=$1 pairs dropped
  audit_layout "$tag"
  for kind in free-host-reachable cross-route; do
    ! grep -qE "^  $kind:" "audit.$tag" || die "$tag: $(grep -E "^  $kind:" "audit.$tag")"
  done
  pairs=$(sed -n 's/^  pairs_to_free_hosts: //p' "audit.$tag")
  dropped=$(sed -n 's/^  pairs_to_free_hosts_dropped_at_first_switch: //p' "audit.$tag")
  [ "${pairs:-0}" -gt 0 ] || die "$tag: no pair to a free host was traced"
  [ "$pairs" = "$dropped" ] || die "$tag: $dropped of $pairs pairs to free hosts dropped at the first switch"
  log "$tag: $pairs pairs from tenants and free hosts to free hosts, all dropped at the first switch; audit clean"
}

for spec in a:8 b:10 c:5; do
  ctl tenant add "${spec%%:*}" --hosts "${spec##*:}" >/dev/null || die "tenant add $spec failed"
done
closed fresh
ctl tenant remove b >/dev/null || die "tenant remove b failed"
ctl tenant add d --hosts 4 >/dev/null || die "tenant add d failed"
closed churn

# A cable of a leaf holding tenant and free hosts goes down and comes back.
guid=$(jq -r '.tenants[] | select(.name == "d") | .hosts[0].slot.switch' state/allocations.json)
leaf=$(grep -m1 "^Switch.*\"S-${guid#0x}\"" disc.churn | sed 's/.*# "\([^"]*\)".*/\1/')
[ -n "$leaf" ] || die "no leaf switch with GUID $guid in disc.churn"
console "Unlink \"$leaf\"[1]"
heavy_sweep "unlink $leaf[1]"
grep -q "laas: fault: link .*$leaf" osm.log || die "the plugin did not see $leaf[1] go down: $(grep 'laas: fault' osm.log | tail -2)"
closed fault
console "Relink \"$leaf\"[1]"
heavy_sweep "relink $leaf[1]"
closed repaired

# The tables after all that are those of a fresh fabric with the same tenants: OpenSM restarted
# on the saved state routes a fresh sweep; every LFT entry read back is the same.
sort lfts.repaired >lfts.before
stop_opensm
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
audit_layout restarted
sort lfts.restarted >lfts.after
cmp -s lfts.before lfts.after ||
  die "the tables after churn differ from a fresh start's: $(diff lfts.before lfts.after | head -6)"
log "PASS closed_free_pool: fresh, churn, fault and repair all closed; tables equal a fresh start's"
