#!/usr/bin/env bash
# tenants_flow.sh NAME SPEC A_HOSTS OTHER... : on a laas-topogen fabric, tenant A alone, then
# with the other tenants, then with the first of them removed, then after an OpenSM restart.
# Every step: SUBNET UP, tables
# read back and audited (no isolation violation, every intra-tenant pair reachable, balance
# equal to the private tree's), tenant A's traced paths bit-identical across steps, and SA
# path records between A's hosts.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
# CMake lists eat ';': specs may be written with ':' instead (xgft(2:4,8:1,4)).
NAME=$1 SPEC=${2//:/;} A=$3
shift 3
OTHERS=("$@")
laas_setup "$NAME"
export SIM_HOST=SW_L2_0

"$LAAS_TOPOGEN" "$SPEC" -o fabric.net
# DROP_CABLE="SWITCH:PORT" removes one cable: the tree is still recognized, the cable is a
# faulty link no tenant gets, and every check below must still hold.
if [ -n "${DROP_CABLE:-}" ]; then
  sw=${DROP_CABLE%%:*} port=${DROP_CABLE##*:}
  peer=$(awk -v sw="\"$sw\"" -v port="[$port]" '$1 == "Switch" { cur = $3 } cur == sw && $1 == port { print $2 }' fabric.net)
  [ -n "$peer" ] || die "no cable at $DROP_CABLE"
  pname=${peer%%[*}
  pport=${peer##*[}
  pport=${pport%]}
  awk -v a="\"$sw\"" -v ap="[$port]" -v b="$pname" -v bp="[$pport]" '
    $1 == "Switch" || $1 == "Hca" { cur = $3 }
    (cur == a && $1 == ap) || (cur == b && $1 == bp) { next } { print }' fabric.net >fabric.cut
  mv fabric.cut fabric.net
  log "removed the cable $sw[$port] - $pname[$pport]"
fi
printf -- '- name: A\n  hosts: %s\n' "$A" >state/tenants.yaml
log "fabric $SPEC, tenant A: $A hosts"
# Room for big trees (ibsim's defaults stop at 2,048 nodes and 256 switches).
start_fabric fabric.net -N 16384 -S 2048 -P 65536
start_opensm
wait_log 'laas: subnet up' 1 "${WAIT_S:-45}"
wait_log 'laas: forwarding tables applied' 1 "${WAIT_S:-45}"
grep -q 'laas tables configured on all switches' osm.log || die "the laas engine did not route"
grep 'laas: routing done' osm.log | tail -1
if [ -n "${DROP_CABLE:-}" ]; then
  grep -q 'laas: fault: link' osm.log || die "the removed cable was not noticed"
fi
snapshot 1
tenant_paths 1 A

log "adding ${OTHERS[*]}"
set_tenants "A:$A" "${OTHERS[@]}"
grep -E "added tenant|refused" osm.log | tail -n ${#OTHERS[@]}
snapshot 2
tenant_paths 2 A
cmp -s paths.A.1 paths.A.2 || die "tenant A's routes changed when others were added"

# The audit must catch a broken table: on the first hop of one of A's inter-leaf paths,
# send the destination to port 0 (the switch itself). laas-audit exits 1; bad input exits 2.
read -r X _ Y HOP _ < <(awk 'NF >= 5' paths.A.2 | head -1)
LEAF=${HOP%%:*}
YLID=$(host_lid disc.2 "${Y%:}")
[ -n "$YLID" ] || die "no LID for $Y"
awk -v leaf="($LEAF):" -v entry="$(printf '0x%04x ' "$YLID")" '
  /^Unicast lids/ { inblock = ($NF == leaf) }
  inblock && index($0, entry) == 1 { $2 = "000" }
  { print }' lfts.2 >lfts.broken
cmp -s lfts.2 lfts.broken && die "could not inject a fault into $LEAF's table"
rc=0
"$LAAS_AUDIT" --fabric disc.2 --lfts lfts.broken --allocations alloc.2.json >audit.broken 2>&1 || rc=$?
[ $rc -eq 1 ] || die "laas-audit missed a broken route ($LEAF, LID $YLID): exit $rc"
rc=0
"$LAAS_AUDIT" --fabric fabric.net --lfts /dev/null --allocations alloc.2.json >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || die "laas-audit on bad input: exit $rc, expected 2"
log "laas-audit flags a broken route ($(grep -m1 VIOLATION audit.broken | cut -c1-100))"

log "removing ${OTHERS[0]%%:*}"
set_tenants "A:$A" "${OTHERS[@]:1}"
snapshot 3
tenant_paths 3 A
cmp -s paths.A.1 paths.A.3 || die "tenant A's routes changed when ${OTHERS[0]%%:*} was removed"

# FILE_LOSS=1: tenants.yaml removed (a slip of rm, a share that lost it), then unreadable (a
# directory in its place: EISDIR, as EACCES or EIO would be): no list at all, nobody removed.
if [ "${FILE_LOSS:-0}" = 1 ]; then
  for how in removed unreadable; do
    seen=$(count_log 'tenants file ignored')
    rm -rf state/tenants.yaml
    [ $how = unreadable ] && mkdir state/tenants.yaml
    if [ "${POLL_MS:-300}" = 0 ]; then kill -HUP "$OSM_PID"; fi
    wait_log 'tenants file ignored' $((seen + 1)) "${WAIT_S:-45}"
    log "tenants.yaml $how: $(grep 'tenants file ignored' osm.log | tail -1 | sed 's/.*laas: //' | cut -c1-150)"
  done
  rm -rf state/tenants.yaml
  set_tenants "A:$A" "${OTHERS[@]:1}"
  cmp -s <(grep -v '"lid"' alloc.3.json) <(grep -v '"lid"' state/allocations.json) ||
    die "a tenant changed while tenants.yaml was missing or unreadable"
  log "tenants.yaml missing, then unreadable: every tenant kept"
fi

# Restart OpenSM on the same fabric: tenants come back from state.json by GUID, and A's
# routes are still the same.
applied=$(count_log 'laas: forwarding tables applied')
stop_opensm
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) "${WAIT_S:-45}"
snapshot 4
tenant_paths 4 A
cmp -s paths.A.1 paths.A.4 || die "tenant A's routes changed across an OpenSM restart"
cmp -s <(grep -v '"lid"' alloc.3.json) <(grep -v '"lid"' alloc.4.json) ||
  die "allocations changed across an OpenSM restart"
log "OpenSM restarted: tenants restored, A's paths unchanged"

# SA path records between two of A's hosts (the SM answers through the simulated fabric).
read -r SRC _ DST _ < <(head -1 paths.A.4 | tr ':' ' ')
SLID=$(host_lid disc.4 "$SRC")
DLID=$(host_lid disc.4 "$DST")
[ -n "$SLID" ] && [ -n "$DLID" ] || die "no LIDs for $SRC/$DST in disc.4"
sim saquery -p --src-to-dst "$SLID:$DLID" >saquery.out 2>&1 ||
  die "saquery -p $SLID:$DLID failed: $(tail -3 saquery.out)"
grep -q 'PathRecord' saquery.out || die "no PathRecord for $SRC -> $DST"
log "saquery -p $SRC($SLID) -> $DST($DLID): $(grep -c 'dlid' saquery.out) path record(s)"
log "PASS $NAME ($(wc -l <paths.A.1) paths of A unchanged over 4 steps)"
