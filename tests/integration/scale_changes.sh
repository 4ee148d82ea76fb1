#!/usr/bin/env bash
# scale_changes.sh [SPEC] [SIZES...]: tenant changes through laasctl on a large tree (default
# the 1,728-host xgft(3;12,12,12;1,12,12), tenants of 10, 300 and 600 hosts), each checked on
# what the switches hold once laasctl has returned:
#  - the audit of the fabric and forwarding tables read back (ibnetdiscover, dump_fts) is
#    clean, every tenant's balance equals its private tree's (with QOS=1 the SL2VL tables are
#    read back and audited too);
#  - the SA answers `saquery -p` between hosts of one tenant (a sample of pairs per tenant),
#    and refuses a pair of hosts of two tenants (different partitions);
# then each tenant is removed and the same checks run. Not part of CI (minutes at 1,728
# hosts): run by scripts/check-scale.sh, which prints a line per change.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
SPEC=${1:-"xgft(3;12,12,12;1,12,12)"}
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10 300 600)
PAIRS=${LAAS_SCALE_PAIRS:-20}
laas_setup scale_changes
export SIM_HOST=SW_L2_0
"$LAAS_TOPOGEN" "$SPEC" -o fabric.net
log "$("$LAAS_TOPOGEN" "$SPEC" --summary | head -1)"
start_fabric fabric.net -N 16384 -S 4096 -P 131072
start_opensm
wait_log 'laas: forwarding tables applied' 1 600
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 600 "$@"; }

# lids_of TENANT: the LIDs of the tenant's hosts, from the service's view.
lids_of() {
  ctl --json tenant show "$1" | jq -r '.hosts[].lid' | grep -v -x 0 || true
}

# paths_within TENANT: PAIRS random pairs of its hosts have a path record, in the tenant's
# partition (its P_Key, full member).
paths_within() {
  local lids n i s d pkey got
  pkey=$(ctl --json tenant show "$1" | jq -r .pkey)
  mapfile -t lids < <(lids_of "$1")
  n=${#lids[@]}
  [ "$n" -ge 2 ] || die "tenant $1 has $n host LID(s)"
  for ((i = 0; i < PAIRS; i++)); do
    s=${lids[RANDOM % n]} d=${lids[RANDOM % n]}
    [ "$s" != "$d" ] || continue
    sim saquery -p --src-to-dst "$s:$d" >sa.out 2>&1 || die "saquery -p $s:$d in $1: $(tail -2 sa.out)"
    grep -q PathRecord sa.out || die "no path record $s:$d in $1"
    got=$(sed -n 's/.*pkey\.*\(0x[0-9A-Fa-f]*\).*/\1/p' sa.out | head -1)
    [ $((got)) -eq $((pkey | 0x8000)) ] || die "path $s:$d in $1 has P_Key $got, not $pkey (full)"
  done
}

# no_path_between A B: the SA refuses a path between one host of each.
no_path_between() {
  local a b
  a=$(lids_of "$1" | head -1) b=$(lids_of "$2" | tail -1)
  if sim saquery -p --src-to-dst "$a:$b" >sa.out 2>&1 && grep -q PathRecord sa.out; then
    die "the SA gave a path between tenants $1 ($a) and $2 ($b)"
  fi
}

# check TAG: audit, then path records within every tenant and across two of them.
check() {
  local tag=$1 t0 tenants=() t
  t0=$SECONDS
  audit_layout "$tag"
  check_balance "$tag"
  mapfile -t tenants < <(ctl --json tenant list | jq -r '.[] | select(.state != "not placed") | .name')
  for t in "${tenants[@]}"; do paths_within "$t"; done
  [ ${#tenants[@]} -lt 2 ] || no_path_between "${tenants[0]}" "${tenants[1]}"
  # The cross-tenant check fails on a pair that may talk (two hosts of one tenant).
  [ ${#tenants[@]} = 0 ] || ! (no_path_between "${tenants[0]}" "${tenants[0]}") 2>/dev/null ||
    die "the cross-tenant check passed two hosts of ${tenants[0]}"
  log "$tag: audit clean, ${#tenants[@]} tenant(s) with path records, checks $((SECONDS - t0)) s"
}

timed() { # TAG laasctl-args...
  local tag=$1 t0
  shift
  t0=$(date +%s.%N)
  ctl "$@" >ctl.out 2>&1 || die "laasctl $*: $(cat ctl.out)"
  log "$tag: laasctl returned in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s; $(grep 'laas: routing done' osm.log | tail -1 | sed 's/.*routing done in \([0-9.]*\) ms.*; \([0-9]*\) LFT blocks.*/plugin \1 ms, \2 LFT blocks/')"
  sleep 1  # OpenSM's SL2VL and multicast tables follow the unicast ones
  check "$tag"
}

check initial
for n in "${SIZES[@]}"; do timed "add-$n" tenant add "t$n" --hosts "$n"; done
for n in "${SIZES[@]}"; do timed "remove-$n" tenant remove "t$n"; done
log "ok"
