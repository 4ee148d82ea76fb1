#!/usr/bin/env bash
# mgmt_shared_leaf.sh: management traffic from shared leaves, with the real OpenSM (qos TRUE:
# the first-hop drop), ibsim and infiniband-diags. The demo tree xgft(2;4,8;1,4) (4 hosts and 4
# up-links a leaf), the SM on SW_L2_0; tenants x and y of 6 hosts each, then z of 2. Plain LaaS
# gave x and y each a full leaf and 2 hosts with 2 up-links of one more leaf, the same one
# (SW_L1_1), which then had no open up-link: its switch and SM entries left over x's or y's
# links, and the first-hop drop cut the other tenant's hosts off (22 management-unreachable
# findings; the SA refused comp-7 and comp-8 a path to the SM). The placement rule
# (allocator/management_way.h) never leaves a leaf shared by two or more owners without a free
# up-link. Checked: every leaf holding hosts of two or more tenants keeps an up-link no tenant
# holds (z shares one), `laasctl audit` has 0 violations and no management-unreachable finding,
# and the SA gives a path record from every tenant host to the SM's LID (OpenSM refuses a path
# crossing a VL15 hop, as the switch would drop the SA query itself).
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup mgmt_shared_leaf
export QOS=1
start_demo
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
for t in x:6 y:6 z:2; do
  ctl tenant add "${t%:*}" --hosts "${t#*:}" >"add.${t%:*}" 2>&1 || die "tenant add $t failed: $(cat "add.${t%:*}")"
  ctl --json tenant show "${t%:*}" >"${t%:*}.json"
done
failed=""
# Leaves with hosts of two or more tenants, and how many of their 4 up-links tenants hold.
leaves=$(jq -r '.name as $t | .hosts[] | "\(.leaf.guid) \($t)"' x.json y.json z.json | sort -u |
  awk '{ n[$1]++ } END { for (l in n) if (n[l] > 1) print l }')
[ -n "$leaves" ] || die "no leaf holds two tenants' hosts: not the case under test"
for leaf in $leaves; do
  held=$(jq -r --arg l "$leaf" '.links[] | select(.switch.guid == $l) | .switch.port' x.json y.json z.json | wc -l)
  log "leaf $leaf: hosts of $(jq -r --arg l "$leaf" 'select(any(.hosts[]; .leaf.guid == $l)) | .name' x.json y.json z.json | tr '\n' ' ')and $held of 4 up-links held"
  [ "$held" -lt 4 ] || failed="leaf $leaf is shared with no open up-link ($held held)"
done
sleep 2 # OpenSM sends the SL2VL tables after the forwarding tables
audit() {
  local rc=0
  ctl --json audit >audit.json 2>audit.err || rc=$?
  [ $rc -eq 0 ] && [ "$(jq -r .violations audit.json)" = 0 ] &&
    ! jq -e '.findings[] | select(.kind == "management-unreachable")' audit.json >/dev/null
}
audit || { sleep 4 && audit; } || # once more, in case the SL2VL tables lagged
  failed="$failed; laasctl audit: $(jq -r .violations audit.json 2>/dev/null) violations, $(jq '[.findings[]? | select(.kind == "management-unreachable")] | length' audit.json 2>/dev/null) management-unreachable (e.g. $(jq -r '[.findings[]? | select(.kind == "management-unreachable")][0] | tostring' audit.json 2>/dev/null | head -c 300))"
sim ibnetdiscover >disc 2>disc.err || die "ibnetdiscover failed"
smlid=$(sim sminfo 2>/dev/null | sed -n 's/.*sm lid \([0-9]*\).*/\1/p')
[ -n "$smlid" ] || die "sminfo gave no SM LID"
refused="" asked=0
for h in $(jq -r '.hosts[].name' x.json y.json z.json); do
  lid=$(host_lid disc "$h")
  asked=$((asked + 1))
  { sim saquery -p --src-to-dst "$lid:$smlid" >"sa.$h" 2>&1 && grep -q PathRecord "sa.$h"; } ||
    refused="$refused $h"
done
[ -z "$refused" ] || failed="$failed; the SA refuses a path to the SM (lid $smlid) from:$refused"
[ -z "$failed" ] || die "${failed#; }"
log "shared leaves keep an open up-link; audit: 0 violations, no management-unreachable; all $asked tenant hosts have a path record to the SM (lid $smlid)"
