#!/usr/bin/env bash
# isolation_sl2vl.sh NAME SPEC SM_NODE A B C : the first-hop drop with the real OpenSM (qos TRUE),
# ibsim and infiniband-diags. OpenSM runs as SM_NODE (a host: the management host on its leaf).
# Tenant A alone, then A, B and C, then A and B. At every step the forwarding tables and the
# SL2VL tables of every switch are read back (dump_fts, laas-sl2vl-dump) and laas-audit traces
# every (source, destination) pair through both: no cross-tenant packet passes its first
# switch, no cable carries two owners' traffic, every intra-tenant pair and the management are
# reachable, SL2VL has VL15 exactly where the plan puts it, every exemption listed. A's
# paths and A's SL2VL entries stay the same at every step. Then `smpquery sl2vl` agrees with
# the dump, SA path records are refused between tenants and given within one and to the
# management host, and laas-audit catches a wrong SL2VL entry and a wrong LFT entry.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
NAME=$1 SPEC=${2//:/;} SM_NODE=$3 A=$4 B=$5 C=$6
laas_setup "$NAME"
export SIM_HOST=$SM_NODE
[ -n "${LAAS_SL2VL_DUMP:-}" ] || die "LAAS_SL2VL_DUMP is not set"

"$LAAS_TOPOGEN" "$SPEC" -o fabric.net
printf -- '- name: a\n  hosts: %s\n' "$A" >state/tenants.yaml
log "fabric $SPEC, SM on $SM_NODE, tenant a: $A hosts"
start_fabric fabric.net
start_opensm "qos TRUE"
wait_log 'laas: subnet up' 1 "${WAIT_S:-45}"
wait_log 'laas: forwarding tables applied' 1 "${WAIT_S:-45}"
grep -q 'laas tables configured on all switches' osm.log || die "the laas engine did not route"
! grep -q "'qos' is FALSE" osm.log || die "the plugin says qos is off"

# snap TAG: fabric, LFTs, SL2VL tables read back; audited over both.
snap() {
  local tag=$1 rc=0
  sleep 1 # OpenSM sends the SL2VL tables after the forwarding tables
  sim ibnetdiscover >"disc.$tag" 2>"disc.$tag.err" || die "ibnetdiscover failed"
  sim dump_fts >"lfts.$tag" 2>"lfts.$tag.err" || die "dump_fts failed"
  cp state/allocations.json "alloc.$tag.json"
  local args=(--fabric "disc.$tag" --lfts "lfts.$tag" --allocations "alloc.$tag.json" --sl2vl "sl2vl.$tag")
  # OpenSM sends the SL2VL Sets after the forwarding tables: one more read if they lag.
  for try in 1 2; do
    rc=0
    sim "$LAAS_SL2VL_DUMP" --fabric "disc.$tag" >"sl2vl.$tag" 2>"sl2vl.$tag.err" ||
      die "laas-sl2vl-dump failed: $(tail -3 "sl2vl.$tag.err")"
    "$LAAS_AUDIT" "${args[@]}" >"audit.$tag" 2>&1 || rc=$?
    if [ $rc -eq 1 ] && [ $try = 1 ] && grep -q '^  sl2vl-mismatch:' "audit.$tag"; then
      log "SL2VL not settled yet ($tag); reading again"
      sleep 2
      continue
    fi
    break
  done
  grep -E '^  |^OK|^FAIL' "audit.$tag"
  [ $rc -eq 0 ] || die "laas-audit ($tag) exit $rc: $(grep -E 'VIOLATION|laas-audit' "audit.$tag" | head -5)"
  for k in cross-tenant-survives-first-switch cable-carries-two-owners sl2vl-mismatch \
    management-unreachable intra-tenant-unreachable; do
    ! grep -q "^  $k:" "audit.$tag" || die "$k in $tag"
  done
  grep -q '^  cables_with_two_owners: 0$' "audit.$tag" || die "cable count missing ($tag)"
  "$LAAS_AUDIT" "${args[@]}" --paths a >"paths.a.$tag"
  ! grep -q UNREACHABLE "paths.a.$tag" || die "tenant a has unreachable pairs in $tag"
  "$LAAS_AUDIT" "${args[@]}" --sl2vl-of a | sed 's/ ([^)]*)//g' >"sl2vl-a.$tag"
  [ -s "sl2vl-a.$tag" ] || die "no SL2VL entries for tenant a ($tag)"
  "$LAAS_AUDIT" "${args[@]}" --owners >"owners.$tag"
}

# same_a T1 T2: a's entries agree between two snapshots, leaving out the pairs that are a
# management exemption in either (management routes into a may move when others take the
# management leaf's links; they are listed by the audit).
same_a() {
  cat "sl2vl-a.$1" "sl2vl-a.$2" | grep ': exempt$' | sed 's/: exempt$/:/' | sort -u >exempt.keys || true
  echo '#none#' >>exempt.keys
  cmp -s <(grep -v -F -f exempt.keys "sl2vl-a.$1" || true) <(grep -v -F -f exempt.keys "sl2vl-a.$2" || true)
}

snap 1
log "adding b ($B) and c ($C)"
set_tenants "a:$A" "b:$B" "c:$C"
snap 2
cat owners.2
cmp -s paths.a.1 paths.a.2 || die "tenant a's routes changed when b and c came"
# The live audit (laasctl audit): OpenSM's copy of the switches' SL2VL answers, same checks.
"$LAASCTL" -s "$WORK/laas.sock" --timeout 30 --json audit >live-audit.json 2>&1 ||
  die "laasctl audit reports violations: $(head -c 600 live-audit.json)"
grep -q '"sl2vl_checked": true' live-audit.json || die "laasctl audit did not check SL2VL"
grep -q '"cables_with_two_owners": 0' live-audit.json || die "laasctl audit: no cable figure"
log "laasctl audit: clean, SL2VL checked ($(grep -o '"cross_tenant_dropped_at_first_switch": [0-9]*' live-audit.json))"
same_a 1 2 || die "tenant a's SL2VL entries changed when b and c came"
SHARED=$(grep -E '=b( |$)' owners.2 | grep -E '=c( |$)' | head -1 | cut -d: -f1 || true)
if [ -n "$SHARED" ]; then
  log "b and c share $SHARED"
elif [ -n "${NEED_SHARED:-}" ]; then
  die "b and c share no leaf"
fi
grep -m3 '^exemption' audit.2 || true
log "$(grep -c '^exemption' audit.2) exemption(s); $(grep -c ': drop$' sl2vl-a.2) of a's port pairs dropped"

# smpquery sl2vl agrees with the dump, for the out-port of a dropped pair (or any port).
read -r SW _ IN _ OUT _ < <(grep ': drop$' sl2vl-a.2 | head -1) || die "no dropped pair of a"
OUT=${OUT%:}
SWLID=$(awk -v n="\"$SW\"" '$1 == "Switch" && index($0, n) { for (i = 1; i < NF; i++) if ($i == "lid") print $(i + 1) }' disc.2 | head -1)
[ -n "$SWLID" ] || die "no LID for $SW"
sim smpquery sl2vl "$SWLID" "$OUT" >smpquery.out 2>/dev/null || die "smpquery sl2vl $SWLID $OUT failed"
awk -v lid="$SWLID" -v out="$OUT" '/^# SL2VL table: Lid/ { cur = $NF } cur == lid && $1 == "ports:" && $5 == out ":" { print }' \
  sl2vl.2 | tr -s ' ' >sl2vl.dumped
grep '^ports:' smpquery.out | tr -s ' ' >sl2vl.queried
{ [ -s sl2vl.queried ] && cmp -s sl2vl.dumped sl2vl.queried; } || die "smpquery sl2vl $SWLID $OUT differs from the dump"
grep -E "^ports: in +$IN, " smpquery.out | grep >/dev/null '15|15|15|15|15|15|15|15|15|15|15|15|15|15|15|15|' ||
  die "smpquery sl2vl $SWLID $OUT: in $IN is not all VL15"
log "smpquery sl2vl $SWLID $OUT: in $IN -> every SL on VL15, as the dump and the plan say"

# SA path records: refused between tenants, given within one and to the management host.
lid_of() { host_lid disc.2 "$1"; }
host_of() { tr ' ' '\n' <owners.2 | awk -F= -v t="$1" '$2 == t { print $1; exit }'; }
second_of() { tr ' ' '\n' <owners.2 | awk -F= -v t="$1" '$2 == t { n++; if (n == 2) { print $1; exit } }'; }
pr() { sim saquery -p --src-to-dst "$(lid_of "$1"):$(lid_of "$2")" >"sa.$1.$2" 2>&1 && grep -q PathRecord "sa.$1.$2"; }
A1=$(host_of a) A2=$(second_of a) B1=$(host_of b) C1=$(host_of c) M=$(host_of management)
if [ -n "$SHARED" ]; then
  B1=$(grep "^$SHARED:" owners.2 | tr ' ' '\n' | awk -F= '$2 == "b" { print $1; exit }')
  C1=$(grep "^$SHARED:" owners.2 | tr ' ' '\n' | awk -F= '$2 == "c" { print $1; exit }')
fi
pr "$A1" "$A2" || die "no path record within a ($A1 -> $A2)"
pr "$A1" "$M" || die "no path record from a to the management host ($A1 -> $M)"
pr "$B1" "$M" || die "no path record from b to the management host ($B1 -> $M)"
! pr "$B1" "$C1" || die "a path record between b and c ($B1 -> $C1)"
! pr "$C1" "$B1" || die "a path record between c and b ($C1 -> $B1)"
! pr "$A1" "$B1" || die "a path record between a and b ($A1 -> $B1)"
log "saquery -p: $A1->$A2 and ->$M given; $B1<->$C1 and $A1->$B1 refused"

# The audit catches a wrong SL2VL entry (the dropped pair passes) and a wrong LFT entry.
awk -v lid="$SWLID" -v out="$OUT" -v in_="$IN" '/^# SL2VL table: Lid/ { cur = $NF }
  cur == lid && $1 == "ports:" && $5 == out ":" && $3 == in_ "," { gsub(/15\|/, " 0|") } { print }' \
  sl2vl.2 >sl2vl.broken
cmp -s sl2vl.2 sl2vl.broken && die "could not break the SL2VL dump"
rc=0
"$LAAS_AUDIT" --fabric disc.2 --lfts lfts.2 --allocations alloc.2.json --sl2vl sl2vl.broken >audit.broken 2>&1 || rc=$?
[ $rc -eq 1 ] || die "laas-audit missed a wrong SL2VL entry: exit $rc"
grep -q '^  sl2vl-mismatch:' audit.broken || die "no sl2vl-mismatch for the wrong entry"
log "laas-audit flags a wrong SL2VL entry ($(grep -m1 'VIOLATION' audit.broken | cut -c1-110))"
if [ -n "$SHARED" ]; then
  # On the shared leaf, send one of c's hosts' entries out of b's host port's... (the LFT
  # entry of a host of c to the port of a host of b): the drop stops c there, but the audit
  # must see c's own pairs broken.
  CLID=$(lid_of "$C1")
  BPORT=$(awk -v sw="\"$SHARED\"" -v b="\"$B1\"" '$1 == "Switch" { on = index($0, sw) > 0 } on && index($0, b) { gsub(/[\[\]]/, " ", $1); print $1 + 0; exit }' disc.2)
  [ -n "$BPORT" ] || die "no port of $B1 on $SHARED"
  awk -v leaf="($SHARED):" -v entry="$(printf '0x%04x ' "$CLID")" -v port="$(printf '%03d' "$BPORT")" '
    /^Unicast lids/ { inblock = ($NF == leaf) }
    inblock && index($0, entry) == 1 { $2 = port } { print }' lfts.2 >lfts.broken
  cmp -s lfts.2 lfts.broken && die "could not break $SHARED's LFT"
  rc=0
  "$LAAS_AUDIT" --fabric disc.2 --lfts lfts.broken --allocations alloc.2.json --sl2vl sl2vl.2 >audit.lft 2>&1 || rc=$?
  [ $rc -eq 1 ] || die "laas-audit missed a wrong LFT entry: exit $rc"
  log "laas-audit flags a wrong LFT entry ($(grep -m1 'VIOLATION' audit.lft | cut -c1-110))"
fi

log "removing c"
set_tenants "a:$A" "b:$B"
snap 3
cmp -s paths.a.1 paths.a.3 || die "tenant a's routes changed when c left"
same_a 1 3 || die "tenant a's SL2VL entries changed when c left"
# Without qos TRUE OpenSM never asks for SL2VL: the plugin must say so loudly.
applied=$(count_log 'laas: forwarding tables applied')
stop_opensm
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) "${WAIT_S:-45}"
grep -q "laas: WARNING: 'qos' is FALSE" osm.log || die "no warning with qos off"
log "qos off: $(grep -c "'qos' is FALSE" osm.log) warning(s) in the log"
log "PASS $NAME: $(grep -c . sl2vl-a.1) SL2VL pairs and $(wc -l <paths.a.1) paths of a unchanged over 3 steps"
