#!/usr/bin/env bash
# faults.sh NAME SPEC TENANTS... : hardware faults under tenants, injected through ibsim's
# console (stdin on a FIFO opened read-write), each followed by a heavy sweep (SIGHUP).
# Fault classes in turn: a free host, a tenant's host, one of a parallel pair under a tenant
# (when the tree has parallel links), a whole leaf's up-links, a level-2 / top switch.
# After each fault: OpenSM's log shows `laas` configured the tables in that sweep (no
# fallback), the audit of the tables read back (with the plugin's layout.json) is clean,
# every tenant is still listed, and a new tenant receives no host a tenant holds. After
# Relink and another heavy sweep the tables read back are bit-identical to the ones before.
# Two more classes: `nofree`, every link of a tenant on its partial leaf down where no free
# column can replace them (the tenant is degraded and the host pairs left without a dedicated
# path are named), and `repair`, one of a tenant's links down where a free column exists (the
# tenant is repaired online onto it; relinking undoes the repair). In both, nothing of any
# other tenant moves: their hosts, links and traced paths stay the same.
# TENANTS are NAME:HOSTS. FAULTS (default "free thost parallel leafup spine") picks classes.
# QOS=1 runs OpenSM with `qos TRUE` and audits the SL2VL tables read back (the first-hop drop
# under faults); MCAST=1 makes every host of a tenant with links join a multicast group and
# audits the multicast tables read back (the group stays on the tenant's links under faults).
# The switch check runs throughout (switch_check_interval CHECK_S, default 3 s): nobody but this
# SM writes the tables, so every mismatch it counts under the faults is a false alarm.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
NAME=$1 SPEC=${2//:/;}
shift 2
TENANTS=("$@")
laas_setup "$NAME"
export SIM_HOST=SW_L2_0
export POLL_MS=0
"$LAAS_TOPOGEN" "$SPEC" -o fabric.net

start_fabric_console fabric.net
export LAAS_YAML_EXTRA="switch_check_interval: ${CHECK_S:-3}"
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
wait_log 'SUBNET UP' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
for t in "${TENANTS[@]}"; do
  ctl tenant add "${t%%:*}" --hosts "${t##*:}" >"add.${t%%:*}" 2>&1 ||
    die "tenant add $t: $(cat "add.${t%%:*}")"
done
log "tenants ${TENANTS[*]} placed"
[ -f state/layout.json ] || die "the plugin did not record layout.json"
grep -m1 'intended tree' osm.log | sed 's/.*laas: /  /'

audit() {
  audit_layout "$1"
  log "audit $1 clean: $(head -1 "audit.$1")"
}
sweep() { heavy_sweep "$@"; }

check_after() {
  local what=$1 list
  audit "$2"
  if [ "${MCAST:-0}" = 1 ]; then
    grep -q "group .*: tenant $T1, [1-9][0-9]* receivers" "audit.$2" ||
      die "after $what the audit does not see $T1's group: $(grep -m3 group "audit.$2")"
  fi
  list=$(ctl tenant list 2>&1) || die "tenant list failed after $what: $list"
  for t in "${TENANTS[@]}"; do
    grep -q "\b${t%%:*}\b" <<<"$list" || die "tenant ${t%%:*} no longer listed after $what: $list"
  done
  # Every tenant still placed (kept with its hosts and links, degraded at worst).
  [ "$(ctl --json status | jq -r .tenants_not_placed)" = 0 ] ||
    die "after $what a tenant is not placed: $(ctl tenant list 2>&1 | head -5)"
  # A new tenant never receives a host another tenant holds.
  held_hosts >held.before
  [ -s held.before ] || die "after $what no tenant holds a host"
  if ctl --json tenant add probe --hosts 2 >probe.json 2>probe.err; then
    jq -r '.. | objects | select(has("hosts")) | .hosts[]? | objects | .name' probe.json |
      sort -u >probe.hosts
    if [ -s probe.hosts ] && comm -12 held.before probe.hosts | grep >/dev/null .; then
      die "after $what the new tenant received held host(s): $(comm -12 held.before probe.hosts | tr '\n' ' ')"
    fi
    ctl tenant remove probe >/dev/null 2>&1 || die "cannot remove the probe tenant"
  else
    log "  (probe tenant refused after $what: $(head -1 probe.err))"
  fi
  log "after $what: $(ctl status | grep -E '^down' || true)"
}

# The hosts and links of the tenants, from allocations.json.
held_hosts >held.start
[ "$(wc -l <held.start)" -gt 0 ] || die "the service lists no held host"
FREE_HOST=$(comm -23 <(grep -o '"comp-[0-9]*"' fabric.net | tr -d '"' | sort -u) held.start | head -1)
# A tenant holding links (its links carry the link faults), another one for the host fault.
T1=$(jq -r '[.tenants[] | select((.links | length) > 0)][0].name' state/allocations.json)
T2=$(jq -r --arg t "$T1" '[.tenants[] | select(.name != $t)][0].name' state/allocations.json)
TENANT_HOST=$(jq -r --arg t "$T2" '.tenants[] | select(.name == $t) | .hosts[0].name' state/allocations.json)
LEAF_OF_T1=$(jq -r --arg t "$T1" '.tenants[] | select(.name == $t) | .links[0].switch.name' state/allocations.json)
read -r PAR_SW PAR_PORT < <(jq -r --arg t "$T1" '.tenants[] | select(.name == $t) | .links[0] |
  "\(.switch.name) \(.switch.port)"' state/allocations.json)
if [ -z "$FREE_HOST" ] || [ -z "$TENANT_HOST" ] || [ "$LEAF_OF_T1" = null ]; then
  die "cannot pick the parts to fail"
fi
grep -qx "$FREE_HOST" held.start && die "$FREE_HOST is held, not free"
grep -qx "$TENANT_HOST" held.start || die "$TENANT_HOST is not held"

if [ "${MCAST:-0}" = 1 ]; then
  [ -n "${LAAS_MCAST_JOIN:-}" ] || die "MCAST=1 needs LAAS_MCAST_JOIN"
  export AUDIT_MFTS=1
  mapfile -t T1_HOSTS < <(jq -r --arg t "$T1" '.tenants[] | select(.name == $t) | .hosts[].name' state/allocations.json)
  for h in "${T1_HOSTS[@]}"; do
    out=$(SIM_HOST=$h sim "$LAAS_MCAST_JOIN" ff12:601b:ffff::f1 2>&1) || die "$h cannot join: $out"
  done
  MLID_T1=${out#mlid }
  wait_log "laas: multicast MLID $MLID_T1: ${#T1_HOSTS[@]} member(s), tenant $T1" 1 30
  log "every host of $T1 (${#T1_HOSTS[@]}) joined group $MLID_T1"
fi

audit before
cp lfts.before lfts.reference
if [ "${MCAST:-0}" = 1 ]; then
  grep -q "group .*: tenant $T1, ${#T1_HOSTS[@]} receivers" audit.before ||
    die "the audit does not see $T1's group: $(grep -m3 group audit.before)"
fi
UP_COLUMNS=$(awk -v sw="\"$LEAF_OF_T1\"" '$1 == "Switch" { cur = $3 } cur == sw && /"SW_L2_/ { n++ } END { print n }' fabric.net)
if grep -q '^Switch.*"SW_L3_' fabric.net; then SPINE=SW_L3_1; else SPINE=SW_L2_1; fi
PARALLEL=no
case "$SPEC" in pgft*) PARALLEL=yes ;; esac

# check_nofree: T1 is degraded, the pairs without a dedicated path are named, no repair was
# made, and no other tenant moved.
check_nofree() {
  local h
  h=$(health_of "$T1")
  [ "$(jq -r .degraded <<<"$h")" = true ] || die "$T1 is not degraded: $h"
  [ "$(jq -r .lost_pairs_total <<<"$h")" -gt 0 ] || die "$T1 names no pair without a path: $h"
  [ "$(count_log "tenant '$T1' repaired online")" = "$repairs_before" ] ||
    die "$T1 was repaired although no column is free: $(grep "repaired online" osm.log | tail -1)"
  ctl tenant show "$T1" >show.nofree || die "tenant show $T1 failed"
  grep -q 'without a dedicated path' show.nofree ||
    die "tenant show $T1 does not name the pairs: $(ctl tenant show "$T1" | head -5)"
  others_snapshot nofree
  cmp -s others.before others.nofree || die "another tenant moved: $(diff others.before others.nofree | head -5)"
  log "  $T1 degraded, $(jq -r .lost_pairs_total <<<"$h") pair(s) named, e.g. $(jq -c '.lost_pairs[0]' <<<"$h"); others unchanged"
}

# check_repair: T1 was repaired online onto a free column, it is whole again (no pair lost),
# its traced paths reach every pair, and no other tenant moved.
check_repair() {
  local h
  h=$(health_of "$T1")
  grep -q "tenant '$T1' repaired online" osm.log || die "$T1 was not repaired: $h"
  [ "$(jq -r '.repairs | length' <<<"$h")" -gt 0 ] || die "tenant show $T1 lists no repair: $h"
  [ "$(jq -r .lost_pairs_total <<<"$h")" = 0 ] || die "$T1 still loses pairs after the repair: $h"
  "$LAAS_AUDIT" --fabric disc.repair --lfts lfts.repair --allocations alloc.repair.json \
    --layout state/layout.json --paths "$T1" >"paths.$T1.repair"
  ! grep -q UNREACHABLE "paths.$T1.repair" || die "$T1 has unreachable pairs after the repair"
  # The new column: every link the repair added is the tenant's and carries its traffic.
  local added part sw port parts
  added=$(grep "tenant '$T1' repaired online" osm.log | tail -1 | sed 's/.*(\(.*\))$/\1/')
  IFS=',' read -ra parts <<<"$added"
  [ ${#parts[@]} -gt 0 ] || die "the repair line names no added link"
  for part in "${parts[@]}"; do
    part=${part# }
    sw=${part% port *} port=${part##* }
    jq -e --arg t "$T1" --arg s "$sw" --argjson p "$port" '.tenants[] | select(.name == $t) |
      .links[] | select(.switch.name == $s and .switch.port == $p)' alloc.repair.json >/dev/null ||
      die "$sw port $port is not among $T1's links after the repair"
    grep -qE " $sw:$port( |\$)" "paths.$T1.repair" || die "no path of $T1 uses $sw port $port"
  done
  # Balance: the repaired tenant's worst shift-permutation link load equals its private tree's.
  awk -v t="$T1:" '$1 == "balance" && $2 == t { found = 1; ok = ($NF == $8) } END { exit !(found && ok) }' \
    audit.repair || die "$T1's balance after the repair differs from its private tree: $(grep "^balance $T1:" audit.repair)"
  cmp -s "lfts.reference" "lfts.repair" && die "the repair changed no forwarding table"
  others_snapshot repair
  cmp -s others.before others.repair || die "another tenant moved: $(diff others.before others.repair | head -5)"
  log "  $(grep "tenant '$T1' repaired online" osm.log | tail -1 | sed 's/.*laas: //'); others unchanged"
}

# fault NAME UNLINK-COMMANDS... ; RELINK-COMMANDS... : inject, sweep, check, repair, compare.
fault() {
  local name=$1 tag=$2
  shift 2
  case " ${FAULTS:-free thost parallel leafup spine} " in *" $tag "*) ;; *) return 0 ;; esac
  local -a down=() up=()
  local into=down
  for c in "$@"; do
    if [ "$c" = ";" ]; then into=up; continue; fi
    if [ $into = down ]; then down+=("$c"); else up+=("$c"); fi
  done
  log "fault: $name"
  # Log lines of this fault's sweep only (osm.log holds every earlier fault too).
  local from
  from=$(($(wc -l <osm.log) + 1))
  for c in "${down[@]}"; do console "$c"; done
  sweep "$name"
  { tail -n +"$from" osm.log | grep 'laas: fault: ' || true; } | tail -3 | sed 's/.*laas: /  /'
  check_after "$name" "$tag"
  case $tag in nofree | repair) check_$tag ;; esac
  from=$(($(wc -l <osm.log) + 1))
  for c in "${up[@]}"; do console "$c"; done
  sweep "relink after $name"
  audit "$tag.back"
  cmp -s lfts.reference "lfts.$tag.back" ||
    die "tables after relinking ($name) differ from before: $(diff lfts.reference "lfts.$tag.back" | head -5)"
  tail -n +"$from" osm.log | grep 'laas: fault cleared' >/dev/null ||
    die "no 'fault cleared' line after relinking ($name)"
  log "  relinked: tables bit-identical to before"
}

fault "free host $FREE_HOST" free "Unlink \"$FREE_HOST\"" ";" "ReLink \"$FREE_HOST\""
fault "host $TENANT_HOST of tenant $T2" thost "Unlink \"$TENANT_HOST\"" ";" "ReLink \"$TENANT_HOST\""
if [ $PARALLEL = yes ]; then
  fault "one of a parallel pair under $T1 ($PAR_SW port $PAR_PORT)" parallel \
    "Unlink \"$PAR_SW\"[$PAR_PORT]" ";" "ReLink \"$PAR_SW\"[$PAR_PORT]"
fi
unl=() rel=()
for p in $(seq 1 "$UP_COLUMNS"); do
  unl+=("Unlink \"$LEAF_OF_T1\"[$p]")
  rel+=("ReLink \"$LEAF_OF_T1\"[$p]")
done
fault "every up-link of $LEAF_OF_T1 (a leaf of $T1)" leafup "${unl[@]}" ";" "${rel[@]}"
fault "switch $SPINE" spine "Unlink \"$SPINE\"" ";" "ReLink \"$SPINE\""
# others_snapshot TAG: every other tenant's hosts and links (allocations.json) and traced
# paths in snapshot TAG, into others.TAG.
others_snapshot() {
  local tag=$1 t
  jq -S --arg t "$T1" '[.tenants[] | select(.name != $t) | {name, hosts: [.hosts[].name], links}]' \
    "alloc.$tag.json" >"others.$tag"
  for t in $(jq -r --arg t "$T1" '.tenants[] | select(.name != $t) | .name' "alloc.$tag.json"); do
    "$LAAS_AUDIT" --fabric "disc.$tag" --lfts "lfts.$tag" --allocations "alloc.$tag.json" \
      --layout state/layout.json --paths "$t" >>"others.$tag"
  done
}

# health_of TENANT: the tenant's health as the service reports it (JSON).
health_of() { ctl --json tenant show "$1" | jq -c .health; }

# The partial leaf of T1: the leaf where it holds the fewest links, and those links.
PARTIAL_LEAF=$(jq -r --arg t "$T1" '[.tenants[] | select(.name == $t) | .links[].switch.name] |
  group_by(.) | min_by(length) | .[0]' state/allocations.json)
mapfile -t PARTIAL_PORTS < <(jq -r --arg t "$T1" --arg l "$PARTIAL_LEAF" '.tenants[] |
  select(.name == $t) | .links[] | select(.switch.name == $l) | .switch.port' state/allocations.json)

if [[ " ${FAULTS:-} " == *" nofree "* ]]; then
  unl=() rel=()
  for p in "${PARTIAL_PORTS[@]}"; do
    unl+=("Unlink \"$PARTIAL_LEAF\"[$p]")
    rel+=("ReLink \"$PARTIAL_LEAF\"[$p]")
  done
  others_snapshot before
  repairs_before=$(count_log "tenant '$T1' repaired online")
  fault "every link of $T1 on $PARTIAL_LEAF (ports ${PARTIAL_PORTS[*]}), no free column" nofree \
    "${unl[@]}" ";" "${rel[@]}"
  # fault() relinked already: the degraded state was checked through the hook below.
fi
if [[ " ${FAULTS:-} " == *" repair "* ]]; then
  others_snapshot before
  fault "link $PAR_SW port $PAR_PORT of $T1, a free column to repair it" repair \
    "Unlink \"$PAR_SW\"[$PAR_PORT]" ";" "ReLink \"$PAR_SW\"[$PAR_PORT]"
  grep -q "tenant '$T1': fault under .* cleared, repair undone" osm.log ||
    die "no 'repair undone' line after relinking"
  log "  repair undone on relink: $(grep "tenant '$T1': fault under .* cleared, repair undone" osm.log | tail -1 | sed 's/.*laas: //')"
fi
check=$(ctl --json status | jq -c '.switch_check | {passes, reads, unanswered, mismatches}')
[ "$(jq .passes <<<"$check")" -ge 1 ] || die "no pass of the switch check under the faults: $check"
[ "$(jq .mismatches <<<"$check")" = 0 ] ||
  die "the switch check counted tables nobody else wrote under the faults: $check; $(grep 'differs from what' osm.log | head -3 | sed 's/.*laas: //')"
log "switch check under the faults: $check"
log "PASS $NAME"
