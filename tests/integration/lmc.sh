#!/usr/bin/env bash
# lmc.sh: OpenSM with `lmc 1` (LMC > 0 was a reason to hand the fabric to the next
# engine). The lab tree, OpenSM on comp-1, tenants a and b. The laas engine routes (no
# fallback), every host port's second LID takes its base LID's route in every switch's table
# read back with dump_fts, and the audit of the tables (base LIDs) is clean.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup lmc
export SIM_HOST=comp-1
"$LAAS_TOPOGEN" "pgft(2;8,4;1,4;1,2)" -o fabric.net
start_fabric fabric.net
start_opensm "lmc 1"
wait_log 'laas: forwarding tables applied' 1 45
grep -q 'laas: LMC 1: every LID of a port is routed like its base LID' osm.log ||
  die "no LMC line: $(grep -m2 -i lmc osm.log)"
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
ctl tenant add a --hosts 8 >/dev/null || die "tenant add a failed"
ctl tenant add b --hosts 10 >/dev/null || die "tenant add b failed"
audit_layout lmc
! grep -qE '(minhop|updn|ftree) tables configured' osm.log || die "a fallback engine routed"
# dump_fts lists a port's second LID right after its base LID ("path #2 out of 2"): both must
# leave on the same port, in every switch.
awk '/^Unicast lids/ { sw = $0; next }
  /^0x/ && /Channel Adapter/ { base = $2; n++; pending = 1; next }
  /^0x/ && /path #2 out of 2/ { if (!pending || $2 != base) { bad++; print "differs:", sw, $0 } pending = 0; m++; next }
  /^0x/ { pending = 0 }
  END { print n " host LIDs with " m " second LIDs checked"; exit (bad > 0 || n == 0 || n != m) }' \
  lfts.lmc >lmc.check || die "$(head -3 lmc.check)"
log "lmc 1: $(tail -1 lmc.check) in every switch, each with its second LID on the same port; audit clean"
log "PASS lmc: the laas engine routes with LMC 1"
