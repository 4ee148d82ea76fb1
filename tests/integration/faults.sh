#!/usr/bin/env bash
# faults.sh NAME SPEC TENANTS... : hardware faults under tenants, injected through ibsim's
# console (stdin on a FIFO opened read-write), each followed by a heavy sweep (SIGHUP).
# Fault classes in turn: a free host, a tenant's host, one of a parallel pair under a tenant
# (when the tree has parallel links), a whole leaf's up-links, a level-2 / top switch.
# After each fault: OpenSM's log shows `laas` configured the tables in that sweep (no
# fallback), the audit of the tables read back (with the plugin's layout.json) is clean,
# every tenant is still listed, and a new tenant receives no host a tenant holds. After
# Relink and another heavy sweep the tables read back are bit-identical to the ones before.
# TENANTS are NAME:HOSTS. FAULTS (default "free thost parallel leafup spine") picks classes.
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

# held_hosts: names of every host a tenant holds (from the service).
held_hosts() {
  ctl --json tenant list | jq -r '.. | objects | select(has("hosts")) | .hosts[]? | objects | .name' | sort -u
}

check_after() {
  local what=$1 list
  audit "$2"
  list=$(ctl tenant list 2>&1) || die "tenant list failed after $what: $list"
  for t in "${TENANTS[@]}"; do
    grep -q "\b${t%%:*}\b" <<<"$list" || die "tenant ${t%%:*} no longer listed after $what: $list"
  done
  # Every tenant still placed (kept with its hosts and links, degraded at worst).
  [ "$(ctl --json status | jq -r .tenants_not_placed)" = 0 ] ||
    die "after $what a tenant is not placed: $(ctl tenant list 2>&1 | head -5)"
  # A new tenant never receives a host another tenant holds.
  held_hosts >held.before
  if ctl --json tenant add probe --hosts 2 >probe.json 2>probe.err; then
    jq -r '.. | objects | select(has("hosts")) | .hosts[]? | objects | .name' probe.json |
      sort -u >probe.hosts
    if [ -s probe.hosts ] && comm -12 held.before probe.hosts | grep -q .; then
      die "after $what the new tenant received held host(s): $(comm -12 held.before probe.hosts | tr '\n' ' ')"
    fi
    ctl tenant remove probe >/dev/null 2>&1 || die "cannot remove the probe tenant"
  else
    log "  (probe tenant refused after $what: $(head -1 probe.err))"
  fi
  log "after $what: $(ctl status | grep -E '^down' || true)"
}

audit before
cp lfts.before lfts.reference

# The hosts and links of the tenants, from allocations.json.
FREE_HOST=$(comm -23 <(grep -o '"comp-[0-9]*"' fabric.net | tr -d '"' | sort -u) <(held_hosts) | head -1)
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
UP_COLUMNS=$(awk -v sw="\"$LEAF_OF_T1\"" '$1 == "Switch" { cur = $3 } cur == sw && /"SW_L2_/ { n++ } END { print n }' fabric.net)
if grep -q '^Switch.*"SW_L3_' fabric.net; then SPINE=SW_L3_1; else SPINE=SW_L2_1; fi
PARALLEL=no
case "$SPEC" in pgft*) PARALLEL=yes ;; esac

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
  for c in "${down[@]}"; do console "$c"; done
  sweep "$name"
  { grep 'laas: fault: ' osm.log || true; } | tail -3 | sed 's/.*laas: /  /'
  check_after "$name" "$tag"
  for c in "${up[@]}"; do console "$c"; done
  sweep "relink after $name"
  audit "$tag.back"
  cmp -s lfts.reference "lfts.$tag.back" ||
    die "tables after relinking ($name) differ from before: $(diff lfts.reference "lfts.$tag.back" | head -5)"
  grep -q 'laas: fault cleared' osm.log || die "no 'fault cleared' line after relinking"
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
log "PASS $NAME"
