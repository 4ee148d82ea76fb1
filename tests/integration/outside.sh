#!/usr/bin/env bash
# outside.sh: cables and hosts outside the tree (acceptance 1) with the real OpenSM
# (qos TRUE), ibsim and infiniband-diags. The lab tree pgft(2;8,4;1,4;1,2) with OpenSM on
# comp-1; tenants a, b and c placed. Then, live through ibsim's console: an extra cable between
# two leaves, a storage host (listed in `shared_services:`) on a spine, and the SM host's second
# HCA port on a spare port of its leaf. After a heavy sweep, on the tables read back: the fabric
# is still the recorded tree (no fallback, no fail-closed), every LFT entry for the tenants'
# host LIDs is bit-identical, the audit (with SL2VL) is clean and traces every tenant host to
# the storage host and back, ibtracert reaches the storage host from a host of every tenant,
# and the storage host is a full member of every tenant partition and of the default one.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup outside
export SIM_HOST=comp-1 QOS=1
STORAGE_NODE=0x0002c90300570100 STORAGE=0x0002c90300570101
export LAAS_YAML_EXTRA="shared_services: [\"$STORAGE\"]"
"$LAAS_TOPOGEN" "pgft(2;8,4;1,4;1,2)" -o fabric.net
# Spare ports on every switch, a second port on comp-1's HCA, and a storage HCA not cabled yet.
sed -i -E 's/^Switch\t8 "SW_L2_/Switch\t12 "SW_L2_/; s/^Switch\t16 "SW_L1_/Switch\t20 "SW_L1_/;
  s/^Hca\t1 "comp-1"$/Hca\t2 "comp-1"/' fabric.net
printf '\nHca\t1 "storage-1"\n' >>fabric.net
start_fabric_console fabric.net
console "Guid \"storage-1\" $STORAGE_NODE"
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
for spec in a:8 b:10 c:5; do
  ctl tenant add "${spec%%:*}" --hosts "${spec##*:}" >/dev/null || die "tenant add $spec failed"
done
audit_layout before
jq -r '.tenants[].hosts[].lid' state/allocations.json | sort -n >tenant.lids
lft_entries tenant.lids lfts.before >entries.before
[ -s entries.before ] || die "no LFT entry for the tenants' hosts was read"
log "tenants a (8), b (10), c (5) placed: $(wc -l <tenant.lids) host LIDs, $(wc -l <entries.before) LFT entries for them; audit clean"

# Live: a miscabled leaf port, a storage host on a spine, the SM host cabled twice.
console 'Link "SW_L1_1"[17] "SW_L1_2"[17]'
console 'Link "storage-1"[1] "SW_L2_1"[9]'
console 'Link "comp-1"[2] "SW_L1_0"[17]'
heavy_sweep "three cables outside the tree"
wait_log 'laas: outside the tree: ' 1 20
grep 'laas: outside the tree: ' osm.log | tail -1 | sed 's/^.*laas: /  log: /'
! grep -qE 'failing closed|not recognized|fabric is not a fat-tree' osm.log ||
  die "the fabric was refused: $(grep -m1 -E 'failing closed|not recognized|not a fat-tree' osm.log)"
ctl --json status >status.json
[ "$(jq '.outside_tree.attached_hosts | length' status.json)" = 2 ] &&
  [ "$(jq '.outside_tree.extra_cables | length' status.json)" = 1 ] &&
  [ "$(jq -r '.outside_tree.attached_hosts[] | select(.name == "storage-1") | .role' status.json)" = shared ] ||
  die "status does not show what is outside the tree: $(jq -c .outside_tree status.json)"
[ "$(jq -r .topology status.json)" = 'pgft(2;8,4;1,4;1,2)' ] || die "the tree changed: $(jq -r .topology status.json)"

audit_layout after
lft_entries tenant.lids lfts.after >entries.after
cmp -s entries.before entries.after ||
  die "LFT entries for the tenants' hosts changed: $(diff entries.before entries.after | head -6)"
pairs=$(sed -n 's/^  attached_pairs: //p' audit.after)
delivered=$(sed -n 's/^  attached_pairs_delivered: //p' audit.after)
[ "${pairs:-0}" -gt 0 ] && [ "$pairs" = "$delivered" ] ||
  die "the audit delivered $delivered of $pairs pairs between tenant hosts and attached hosts"
shared=$(sed -n 's/^  attached-host-reply-shares-link: //p' audit.after)
log "after: $(wc -l <entries.after) LFT entries for tenant hosts bit-identical; audit clean with SL2VL; $delivered of $pairs pairs between tenant or management hosts and the 2 attached hosts delivered (to and from), ${shared:-0} storage replies forced down another tenant's spine link (info)"

# The real tools: ibtracert from one host of each tenant reaches the storage host.
STORAGE_LID=$(host_lid disc.after storage-1)
[ -n "$STORAGE_LID" ] || die "storage-1 has no LID"
for t in a b c; do
  lid=$(jq -r ".tenants[] | select(.name == \"$t\") | .hosts[0].lid" state/allocations.json)
  sim ibtracert "$lid" "$STORAGE_LID" >"trace.$t" 2>&1 || die "ibtracert $t ($lid) -> storage-1: $(tail -2 "trace.$t")"
  grep -q 'storage-1' "trace.$t" || die "ibtracert from $t did not end at storage-1: $(tail -2 "trace.$t")"
done
log "ibtracert from a host of a, b and c reaches storage-1 (LID $STORAGE_LID)"

# Partitions: the storage host is a full member of every tenant's partition and of Default.
for t in a b c; do
  awk -v p="laas_$t=" 'index($0, p) == 1 { on = 1 } on { print } /;/ { on = 0 }' partitions.conf |
    grep -qi "$STORAGE=full" || die "storage-1 is not a full member of laas_$t: $(cat partitions.conf)"
done
# The statement runs from its Default= line to its ';' (members after the fixed ones a line each).
sed -n '/^Default=0x7fff/,/;/p' partitions.conf | grep >/dev/null -i "$STORAGE=full" ||
  die "storage-1 is not a full member of Default: $(sed -n '/^Default=0x7fff/,/;/p' partitions.conf)"
sim smpquery pkeys "$STORAGE_LID" >pkeys.storage 2>&1 || die "smpquery pkeys storage-1: $(tail -2 pkeys.storage)"
for t in a b c; do
  pkey=$(printf '0x%04x' $(($(jq -r ".tenants[] | select(.name == \"$t\") | .pkey" state/state.json) | 0x8000)))
  grep -qi "$pkey" pkeys.storage || die "storage-1's P_Key table lacks $t's full key $pkey: $(cat pkeys.storage)"
done
log "storage-1 is a full member of laas_a, laas_b, laas_c and Default ($(tr -s ' \n' ' ' <pkeys.storage | cut -c1-120))"
log "PASS outside: an extra cable, a storage host on a spine and the SM host cabled twice added live; tenants unchanged and isolated, storage reached by all"
