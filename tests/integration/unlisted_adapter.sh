#!/usr/bin/env bash
# unlisted_adapter.sh: an adapter nobody listed, cabled to a spare switch port, is a free host
# (the real OpenSM with qos TRUE, ibsim, infiniband-diags). The lab tree pgft(2;8,4;1,4;1,2),
# OpenSM on comp-1 (management), tenants a (8) and b (10). Live through ibsim's console, two
# adapters that no laas.yaml list names: rogue-leaf on a spare port of a leaf holding a's hosts
# and rogue-spine on a spare port of a spine. After a heavy sweep, on the tables read back:
#  - the tenants' own LFT entries are bit-identical, and status names both as unlisted;
#  - walking the LFTs, no tenant host on another leaf reaches either adapter (its own leaf has
#    no entry for it), while the management host comp-1 reaches both;
#  - ibtracert from a tenant host to rogue-leaf finds no route; from comp-1 it arrives;
#  - the audit with the SL2VL tables read back is clean, and traces every tenant host to both
#    adapters and back, all refused at the first switch (a tenant host on rogue-leaf's own leaf
#    by the first-hop drop);
#  - neither adapter is a member of a tenant's partition.
# Before this change every switch routed an attached host like its switch: the walk fails.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup unlisted_adapter
export SIM_HOST=comp-1 QOS=1
ROGUE_LEAF=0x0002c90300580101 ROGUE_SPINE=0x0002c90300590101
"$LAAS_TOPOGEN" "pgft(2;8,4;1,4;1,2)" -o fabric.net
sed -i -E 's/^Switch\t8 "SW_L2_/Switch\t12 "SW_L2_/; s/^Switch\t16 "SW_L1_/Switch\t20 "SW_L1_/' fabric.net
printf '\nHca\t1 "rogue-leaf"\n\nHca\t1 "rogue-spine"\n' >>fabric.net
start_lab_tenants
console "Guid \"rogue-leaf\" 0x0002c90300580100"
console "Guid \"rogue-spine\" 0x0002c90300590100"
audit_layout before
jq -r '.tenants[].hosts[].lid' state/allocations.json | sort -n >tenant.lids
lft_entries tenant.lids lfts.before >entries.before
[ -s entries.before ] || die "no LFT entry for the tenants' hosts was read"

# The leaf of a's first host (ibnetdiscover: a CA's port line names the switch it is cabled to).
leaf_of() {
  awk -v want="\"$2\"" '/^Ca/ { found = ($NF == want); next }
    found && /^\[1\]/ { sub(/^[^#]*#[^"]*"/, ""); sub(/".*$/, ""); print; exit }' "$1"
}
a_host=$(jq -r '.tenants[] | select(.name == "a") | .hosts[0].name' state/allocations.json)
LEAF=$(leaf_of disc.before "$a_host")
[ -n "$LEAF" ] && [ "$LEAF" != "$(leaf_of disc.before comp-1)" ] ||
  die "no leaf of a's host $a_host apart from the management leaf (got '$LEAF')"
log "tenants a (8) and b (10) placed; a's $a_host is on $LEAF"

console "Link \"rogue-leaf\"[1] \"$LEAF\"[17]"
console 'Link "rogue-spine"[1] "SW_L2_2"[9]'
heavy_sweep "two unlisted adapters cabled"
wait_log 'laas: outside the tree: ' 1 20
grep 'laas: outside the tree: ' osm.log | tail -1 | sed 's/^.*laas: /  log: /'
ctl --json status >status.json
[ "$(jq -r '[.outside_tree.attached_hosts[] | select(.role == "unlisted") | .name] | sort | join(",")' status.json)" = rogue-leaf,rogue-spine ] ||
  die "status does not name both adapters as unlisted: $(jq -c .outside_tree status.json)"

audit_layout after
lft_entries tenant.lids lfts.after >entries.after
cmp -s entries.before entries.after ||
  die "LFT entries for the tenants' hosts changed: $(diff entries.before entries.after | head -6)"
pairs=$(sed -n 's/^  unlisted_attached_pairs: //p' audit.after)
refused=$(sed -n 's/^  unlisted_attached_pairs_refused: //p' audit.after)
[ "${pairs:-0}" -gt 0 ] && [ "$pairs" = "$refused" ] ||
  die "the audit refused ${refused:-?} of ${pairs:-?} pairs between hosts and the unlisted adapters: $(grep -A3 unlisted audit.after | head -8)"
log "audit clean with SL2VL: $refused of $pairs pairs between tenant or free hosts and the 2 unlisted adapters refused at the first switch"

# The LFT walk: tenant and free hosts off the adapters' switches reach neither; comp-1 (the
# management host) reaches both.
awk '/^Ca/ { gsub(/"/, "", $NF); print $NF }' disc.after | grep -v -x -E 'comp-1|rogue-.*' >tenant.hosts
: >pairs
while read -r h; do
  [ "$(leaf_of disc.after "$h")" = "$LEAF" ] && continue # the first-hop drop's case (audit)
  [ "$(leaf_of disc.after "$h")" = "$(leaf_of disc.after comp-1)" ] && continue # rule 3 (audit)
  printf '%s rogue-leaf\n%s rogue-spine\n' "$h" "$h" >>pairs
done <tenant.hosts
[ "$(wc -l <pairs)" -ge 20 ] || die "too few tenant hosts to walk from: $(wc -l <pairs) pairs"
python3 "$(dirname "$0")/reach.py" --pairs pairs disc.after lfts.after >reach.tenants
grep -q "^reachable 0 of $(wc -l <pairs) pairs" reach.tenants ||
  die "hosts reach an unlisted adapter: $(grep -v '^UNREACHABLE' reach.tenants)"
printf 'comp-1 rogue-leaf\ncomp-1 rogue-spine\n' >pairs.mgmt
python3 "$(dirname "$0")/reach.py" --pairs pairs.mgmt disc.after lfts.after >reach.mgmt
grep -q '^reachable 2 of 2 pairs' reach.mgmt || die "management does not reach them: $(cat reach.mgmt)"
log "LFT walk: 0 of $(wc -l <pairs) pairs from tenant and free hosts reach an unlisted adapter; comp-1 reaches both"

# The real tools agree.
ROGUE_LID=$(host_lid disc.after rogue-leaf)
b_host=$(jq -r '.tenants[] | select(.name == "b") | .hosts[-1].name' state/allocations.json)
[ "$(leaf_of disc.after "$b_host")" != "$LEAF" ] || b_host=$(grep -v -x -F "$a_host" tenant.hosts | tail -1)
B_LID=$(host_lid disc.after "$b_host")
if sim ibtracert "$B_LID" "$ROGUE_LID" >trace.tenant 2>&1 && grep -q rogue-leaf trace.tenant; then
  die "ibtracert from $b_host (LID $B_LID) reaches rogue-leaf: $(tail -3 trace.tenant)"
fi
sim ibtracert "$(host_lid disc.after comp-1)" "$ROGUE_LID" >trace.mgmt 2>&1 && grep -q rogue-leaf trace.mgmt ||
  die "ibtracert from comp-1 does not reach rogue-leaf: $(tail -3 trace.mgmt)"
log "ibtracert: $b_host -> rogue-leaf (LID $ROGUE_LID): $(tail -1 trace.tenant | cut -c1-80); comp-1 -> rogue-leaf arrives"

grep -qiE "$ROGUE_LEAF|$ROGUE_SPINE" partitions.conf &&
  die "an unlisted adapter is in partitions.conf: $(grep -iE "$ROGUE_LEAF|$ROGUE_SPINE" partitions.conf)"
log "PASS unlisted_adapter: two adapters nobody listed are free hosts; tenants unchanged, none reaches them"
