#!/usr/bin/env bash
# hop_matrices.sh NAME SPEC HOST CABLE... : the laas engine fills OpenSM's min-hop matrices
# itself (build_lid_matrices, routing/switch_hops.h) instead of OpenSM's iterative pass. On a
# laas-topogen fabric with one tenant, OpenSM is run twice -- with the plugin's matrices and
# with OpenSM's own (LAAS_OPENSM_HOPS=1) -- and what depends on the matrices must be
# identical: OpenSM's lid-matrix dump (every switch, switch LID and port), its route dump
# (opensm.fdbs) and its LFT dump, and the SA's path records (saquery -p). Then HOST (a
# node name) and the CABLEs ("SWITCH[PORT]") are unlinked through ibsim's console and the
# comparison is repeated on the faulty fabric. A third run has OpenSM's routing dumps off
# (log_flags without 0x40): the plugin leaves the matrices unfilled, since nothing else reads
# them while laas routes, and the tables read back from the switches (dump_fts) and the SA's
# path records must be those of the run that filled them.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
NAME=$1 SPEC=${2//:/;} HOST=$3
shift 3
CABLES=("$@")
laas_setup "$NAME"
export SIM_HOST=SW_L2_0

"$LAAS_TOPOGEN" "$SPEC" -o fabric.net
printf -- '- name: A\n  hosts: 6\n' >state/tenants.yaml
start_fabric_console fabric.net

# run TAG [env]: one OpenSM run to SUBNET UP, its dumps kept in dumps.TAG (LOG_FLAGS: OpenSM's
# log_flags, default 0x43).
run() {
  local tag=$1
  mkdir -p "dumps.$tag"
  rm -f osm.log
  # 0x40 (OSM_LOG_ROUTING) makes OpenSM write its dumps at every SUBNET UP.
  if [ -n "${2:-}" ]; then export "${2?}"; else unset LAAS_OPENSM_HOPS; fi
  start_opensm "log_flags ${LOG_FLAGS:-0x43}" "dump_files_dir $WORK/dumps.$tag"
  wait_log 'SUBNET UP' 1 45
  wait_log 'laas: forwarding tables applied' 1 45
  grep -q 'laas tables configured on all switches' osm.log || die "$tag: laas did not route"
  # Path records between every two of tenant A's hosts (the SA answers within a partition);
  # saquery prints the records' reserved bytes too, not all of them cleared by OpenSM.
  local lids s d
  lids=$(grep -o -E '"lid": *[0-9]+' state/allocations.json | grep -o -E '[0-9]+$' | grep -v -x 0)  # 0: down
  : >"dumps.$tag/paths"
  for s in $lids; do
    for d in $lids; do
      [ "$s" != "$d" ] || continue
      sim saquery -p --src-to-dst "$s:$d" 2>"dumps.$tag/paths.err" |
        grep -v -E 'resv|preference' >>"dumps.$tag/paths" || die "$tag: saquery -p $s:$d failed"
    done
  done
  grep -q PathRecord "dumps.$tag/paths" || die "$tag: no path record"
  sim dump_fts >"dumps.$tag/fts" 2>"dumps.$tag/fts.err" || die "$tag: dump_fts failed"
  stop_opensm
  cp osm.log "osm.$tag.log"
  local filled
  filled=$(grep -c 'laas: hop matrices filled' osm.log || true)
  if [ -n "${2:-}" ]; then
    [ "$filled" = 0 ] || die "$tag: the plugin filled the matrices with $2"
  elif [ -n "${LOG_FLAGS:-}" ]; then
    [ "$filled" = 0 ] || die "$tag: the plugin filled the matrices with the routing dumps off"
    grep -q 'laas: hop matrices not filled' osm.log || die "$tag: no 'hop matrices not filled' line"
    [ ! -e "dumps.$tag/opensm-lid-matrix.dump" ] || die "$tag: OpenSM dumped with log_flags $LOG_FLAGS"
  else
    [ "$filled" -ge 1 ] || die "$tag: the plugin did not fill the matrices"
    log "$tag: $(grep -m1 'laas: hop matrices filled' osm.log | sed 's/.*laas: //')"
  fi
  unset LAAS_OPENSM_HOPS
}

# same TAG1 TAG2: every dump of both runs identical.
same() {
  local f n
  for f in opensm-lid-matrix.dump opensm.fdbs opensm-lfts.dump paths; do
    [ -s "dumps.$1/$f" ] || die "$1: no $f"
    if ! cmp -s "dumps.$1/$f" "dumps.$2/$f"; then
      diff "dumps.$1/$f" "dumps.$2/$f" | head -10 >&2
      die "$f differs between $1 and $2"
    fi
  done
  n=$(grep -c '^0x' "dumps.$1/opensm-lid-matrix.dump")
  log "$1 = $2: lid matrix ($n rows), routes, LFTs and $(grep -c PathRecord "dumps.$1/paths") path records identical"
}

# same_routes TAG1 TAG2: the tables read back and the path records of both runs identical.
same_routes() {
  local f
  for f in fts paths; do
    if ! cmp -s "dumps.$1/$f" "dumps.$2/$f"; then
      diff "dumps.$1/$f" "dumps.$2/$f" | head -10 >&2
      die "$f differs between $1 and $2"
    fi
  done
  log "$1 = $2: $(grep -c -i 'lid' "dumps.$1/fts") LFT lines read back and $(grep -c PathRecord "dumps.$1/paths") path records identical"
}

run plugin
run opensm LAAS_OPENSM_HOPS=1
same plugin opensm
LOG_FLAGS=0x03 run unfilled
same_routes plugin unfilled
# The comparison catches one path record more.
cp -r dumps.unfilled dumps.bad_routes
echo "PathRecord dump: one more" >>dumps.bad_routes/paths
! (same_routes plugin bad_routes) 2>/dev/null || die "a changed path record went unnoticed"
# The comparison catches one hop count changed.
cp -r dumps.plugin dumps.bad
sed -i '0,/^0x/s/^\(0x[0-9a-f]*: [0-9a-f][0-9a-f]\) [0-9a-f][0-9a-f]/\1 07/' dumps.bad/opensm-lid-matrix.dump
! (same bad opensm) 2>/dev/null || die "a changed hop count went unnoticed"

log "unlinking $HOST and ${CABLES[*]}"
console "Unlink \"$HOST\""
for c in "${CABLES[@]}"; do console "Unlink \"${c%%[*}\"[${c##*[}"; done
run plugin_faults
grep -q 'laas: down: 1 host(s)' osm.plugin_faults.log || die "the faults were not seen"
run opensm_faults LAAS_OPENSM_HOPS=1
same plugin_faults opensm_faults
LOG_FLAGS=0x03 run unfilled_faults
same_routes plugin_faults unfilled_faults
cmp -s dumps.plugin/opensm-lid-matrix.dump dumps.plugin_faults/opensm-lid-matrix.dump &&
  die "the faults changed no hop count"
log "ok"
