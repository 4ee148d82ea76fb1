#!/usr/bin/env bash
# switch_check.sh: LFT entries rewritten behind OpenSM's back are found by the switch check and
# sent again, with the real OpenSM, ibsim and infiniband-diags. The demo tree, tenants a (4) and
# b (8), switch_check_interval CHECK_S (5 s; CHECK_S=0 shows the test failing without the
# check). A full pass over untouched tables finds nothing (also across a tenant change). Then:
#  1. entries on a leaf of a and on a spine are rewritten with an SMP Set (laas-lft-set, as a
#     tenant's root could without an M_Key);
#     the same while routing fails closed (an unreadable state.json);
#  2. a tenant's OpenSM with another SM_Key (which OpenSM ignores) becomes a second master and
#     rewrites the tables with minhop, then leaves.
#  3. port tables rewritten with SMP Sets (laas-port-set): a tenant host's master SM LID and one
#     of its P_Keys, and a first-hop drop (SL2VL all VL15) on a's leaf;
#  and the second master of 2 leaves tenant hosts pointing at itself with its own P_Keys.
# Each time, within two check intervals, the tables read back with dump_fts (the port tables
# with laas-port-set) equal what this SM sent, the mismatches are counted in
# laas_switch_table_mismatches_total (per table in status), named per switch (per node and
# port) in `laasctl audit` and logged with the switch and block (or port and table).
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup switch_check
[ -x "${LAAS_LFT_SET:-}" ] || die "LAAS_LFT_SET (laas-lft-set) is not set"
[ -x "${LAAS_PORT_SET:-}" ] || die "LAAS_PORT_SET (laas-port-set) is not set"
CHECK_S=${CHECK_S:-5}
export LAAS_YAML_EXTRA="switch_check_interval: $CHECK_S"
export QOS=1  # the first-hop drops (SL2VL) are among the tables checked
start_demo
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
ctl tenant add a --hosts 4 >/dev/null || die "tenant add a failed"
ctl tenant add b --hosts 8 >/dev/null || die "tenant add b failed"
audit_layout base

# entries FILE: "switch-guid lid port" of every LFT entry in dump_fts output, sorted.
entries() {
  awk '/^Unicast lids/ { for (i = 1; i < NF; i++) if ($i == "guid") sw = $(i + 1); next }
    /^0x/ { print sw, tolower($1), $2 }' "$1" | sort
}
entries lfts.base >entries.base
[ "$(wc -l <entries.base)" -gt 100 ] || die "dump_fts gave $(wc -l <entries.base) entries"
mismatches() { ctl metrics | awk '$1 == "laas_switch_table_mismatches_total" { print $2 }'; }
passes() { ctl --json status | jq -r '.switch_check.passes // 0'; }

# A full pass over untouched tables (and one begun across a tenant change) finds nothing.
if [ "$CHECK_S" -gt 0 ]; then
  deadline=$((SECONDS + 3 * CHECK_S))
  until [ "$(passes)" -ge 1 ]; do
    [ $SECONDS -lt $deadline ] || die "no pass of the switch check in $((3 * CHECK_S)) s: $(ctl --json status | jq -c .switch_check)"
    sleep 0.5
  done
  ctl tenant add c --hosts 2 >/dev/null || die "tenant add c failed"
  ctl tenant remove c >/dev/null || die "tenant remove c failed"
  p=$(passes)
  deadline=$((SECONDS + 3 * CHECK_S))
  until [ "$(passes)" -gt "$p" ]; do
    [ $SECONDS -lt $deadline ] || die "no second pass in $((3 * CHECK_S)) s"
    sleep 0.5
  done
  [ "$(mismatches)" = 0 ] || die "untouched tables counted as mismatches: $(mismatches); $(grep 'switch check\|differs from' osm.log | head -3)"
  log "two passes over untouched tables (one across a tenant change): 0 mismatches; $(ctl --json status | jq -c '.switch_check | {reads, passes, last_pass_seconds, reads_per_second}')"
fi
audit_layout base2
entries lfts.base2 >entries.base2
cmp -s entries.base entries.base2 || die "the tables changed across tenant c's add and remove"

# restored TAG SINCE: waits up to two check intervals (from SINCE, in $SECONDS) for the tables
# read back to equal entries.base.
restored() {
  local tag=$1 since=$2 limit=$((2 * CHECK_S))
  [ "$limit" -gt 0 ] || limit=15
  while :; do
    sim dump_fts >"lfts.$tag" 2>"lfts.$tag.err" || die "dump_fts failed ($tag)"
    entries "lfts.$tag" >"entries.$tag"
    cmp -s entries.base "entries.$tag" && break
    [ $((SECONDS - since)) -lt "$limit" ] ||
      die "$tag: the tables read back still differ after $((SECONDS - since)) s (two intervals: $limit s): $(diff entries.base "entries.$tag" | grep -c '^>') entries, e.g. $(diff entries.base "entries.$tag" | grep '^>' | head -3 | tr '\n' ' ')"
    sleep 0.5
  done
  log "$tag: the tables read back equal what this SM sent, $((SECONDS - since)) s after the rewrite"
}

# 1. Two entries rewritten with SMP Sets: on a's leaf a route to a free host on another leaf,
#    and on a spine a's first host sent up the wrong port.
A_HOST=$(ctl --json tenant show a | jq -r '.hosts[0].name')
LEAF=$(ctl --json host show "$A_HOST" | jq -r .leaf)
FREE=$(ctl --json host list --state free | jq -r --arg l "$LEAF" '[.[] | select(.leaf != $l)][-1].name')
FREE_LID=$(ctl --json host show "$FREE" | jq -r .lid)
A_LID=$(ctl --json host show "$A_HOST" | jq -r .lid)
switch_lid() {
  awk -v n="\"$1\"" '/^Switch/ && index($0, "# " n) { for (i = 1; i < NF; i++) if ($i == "lid") print $(i + 1) }' disc.base
}
LEAF_LID=$(switch_lid "$LEAF")
SPINE=$(awk '/^Switch/ && /SW_L1_/ { match($0, /"SW_L1_[0-9]+"/); print substr($0, RSTART + 1, RLENGTH - 2); exit }' disc.base)
SPINE_LID=$(switch_lid "$SPINE")
[ -n "$LEAF_LID" ] && [ -n "$SPINE_LID" ] && [ "$FREE_LID" -gt 0 ] && [ "$A_LID" -gt 0 ] ||
  die "cannot find the LIDs (leaf $LEAF '$LEAF_LID', spine $SPINE '$SPINE_LID', $FREE '$FREE_LID', $A_HOST '$A_LID')"
m0=$(mismatches)
sim "$LAAS_LFT_SET" "$LEAF_LID" "$FREE_LID" 1 >tamper.leaf 2>&1 || die "laas-lft-set failed: $(cat tamper.leaf)"
sim "$LAAS_LFT_SET" "$SPINE_LID" "$A_LID" 7 >tamper.spine 2>&1 || die "laas-lft-set failed: $(cat tamper.spine)"
t1=$SECONDS
sim dump_fts >lfts.tampered 2>/dev/null && entries lfts.tampered >entries.tampered
! cmp -s entries.base entries.tampered || die "the Sets changed nothing"
log "rewritten: $LEAF: $(cat tamper.leaf); $SPINE: $(cat tamper.spine)"
restored tool "$t1"
m1=$(mismatches)
[ "$m1" -ge $((m0 + 2)) ] || die "laas_switch_table_mismatches_total went $m0 -> $m1 (2 blocks rewritten)"
rc=0
ctl audit >audit.tool.json 2>&1 || rc=$?
[ $rc -eq 0 ] || die "laasctl audit exits $rc after the repair: $(jq -c '.findings[:2]' audit.tool.json)"
for sw in "$LEAF" "$SPINE"; do
  jq -e --arg s "$sw" '.switch_check.switches[] | select(.name == $s and .mismatches >= 1)' \
    audit.tool.json >/dev/null || die "laasctl audit does not name $sw: $(jq -c .switch_check audit.tool.json)"
  grep -q "($sw): LFT block [0-9]* (LIDs .*) differs from what this SM sent" osm.log ||
    die "the log does not name $sw and its block"
done
ctl status >status.tool || die "laasctl status failed"
grep -q "WARNING: *$((m1)) LFT block(s) read back from the switches differed" status.tool ||
  die "laasctl status does not warn: $(cat status.tool)"
log "counted ($m0 -> $m1 in laas_switch_table_mismatches_total), named in laasctl audit: $(jq -c '[.switch_check.switches[] | {name, mismatches}]' audit.tool.json), logged: $(grep -m1 'differs from what this SM sent' osm.log | sed 's/^.*laas: //')"

# 1b. The same while routing fails closed (state.json unreadable: the tenants last routed are
#     routed, changes refused): the check and its repair go on.
cp state/state.json state.json.good
printf '{ "version": 2, "tenants": [ garbage' >state/state.json
heavy_sweep "state.json made unreadable"
ctl --json status | jq -e '.fail_closed' >/dev/null || die "the plugin does not fail closed"
sim "$LAAS_LFT_SET" "$LEAF_LID" "$FREE_LID" 1 >tamper.closed 2>&1 || die "laas-lft-set failed: $(cat tamper.closed)"
restored closed "$SECONDS"
cp state.json.good state/state.json
heavy_sweep "state.json put back"
ctl --json status | jq -e '.fail_closed == null' >/dev/null ||
  die "still failing closed: $(ctl --json status | jq -c .fail_closed)"

# 3. Port tables rewritten behind OpenSM's back.
by_table() { ctl --json status | jq -r --arg t "$1" '.switch_check.mismatches_by_table[$t] // 0'; }
port_tables() {  # the port tables part 3 and 2 rewrite, as the ports hold them now
  echo "smlid $(sim "$LAAS_PORT_SET" smlid "$A_LID" 1)"
  echo "pkey $(sim "$LAAS_PORT_SET" pkey "$A_LID" 0)"
  echo "drop $(sim "$LAAS_PORT_SET" sl2vl "$LEAF_LID" "$DROP_IN" "$DROP_OUT")"
}
# ports_restored TAG SINCE: waits up to two check intervals for port_tables to equal ports.base.
ports_restored() {
  local tag=$1 since=$2 limit=$((2 * CHECK_S))
  [ "$limit" -gt 0 ] || limit=15
  until port_tables >"ports.$tag" 2>&1 && cmp -s ports.base "ports.$tag"; do
    [ $((SECONDS - since)) -lt "$limit" ] ||
      die "$tag: the port tables still differ after $((SECONDS - since)) s (two intervals: $limit s): $(diff ports.base "ports.$tag" | grep '^[<>]' | tr '\n' ' ')"
    sleep 0.5
  done
  log "$tag: the port tables read back equal what this SM set, $((SECONDS - since)) s after the rewrite"
}
LEAF_PORTS=$(awk -v n="\"$LEAF\"" '/^Switch/ && index($0, "# " n) { print $2; exit }' disc.base)
read -r DROP_IN DROP_OUT < <(sim "$LAAS_PORT_SET" drops "$LEAF_LID" "$LEAF_PORTS" | head -1)
[ -n "$DROP_OUT" ] || die "no first-hop drop (SL2VL all VL15) on $LEAF's $LEAF_PORTS ports"
port_tables >ports.base 2>&1 || die "cannot read the port tables: $(cat ports.base)"
A_KEY_IDX=$(awk '/^pkey/ { for (i = 2; i <= NF; i++) if ($i != "0x0000" && $i != "0xffff" && $i != "0x7fff") { print i - 2; exit } }' ports.base)
[ -n "$A_KEY_IDX" ] || die "$A_HOST holds no tenant P_Key: $(grep pkey ports.base)"
# One table at a time: the first mismatch a pass finds asks for a heavy sweep, and OpenSM's
# heavy sweep sets every port's tables again -- a second table rewritten beside it could be
# repaired by that sweep before the check reads it, and never be counted.
# rewrite_counted TABLE CMD...: CMD rewrites TABLE; the check counts it within two intervals,
# and the port tables are all as this SM set them again before the next rewrite.
rewrite_counted() {
  local table=$1 before since
  shift
  before=$(by_table "$table") since=$SECONDS
  sim "$LAAS_PORT_SET" "$@" >>tamper.ports 2>&1 || die "laas-port-set $* failed: $(cat tamper.ports)"
  until [ "$(by_table "$table")" -gt "$before" ]; do
    [ $((SECONDS - since)) -lt $((2 * CHECK_S + 2)) ] ||
      die "the rewritten $table was not counted within two intervals ($before -> $(by_table "$table"))"
    sleep 0.5
  done
  ports_restored "$table" "$since"
}
: >tamper.ports
t3=$SECONDS
rewrite_counted port_info smlid "$A_LID" 1 99
rewrite_counted pkey pkey "$A_LID" 0 "$A_KEY_IDX" 0
rewrite_counted sl2vl sl2vl "$LEAF_LID" "$DROP_IN" "$DROP_OUT" 0
log "rewritten, counted and restored one after the other in $((SECONDS - t3)) s: $A_HOST: $(tr '\n' ';' <tamper.ports) on $LEAF's pair $DROP_IN -> $DROP_OUT"
ctl audit >audit.ports.json 2>&1 || true
jq -e --arg h "$A_HOST" '.switch_check.switches[] | select(.name | startswith($h)) | .mismatches >= 2' \
  audit.ports.json >/dev/null || die "laasctl audit does not name $A_HOST: $(jq -c .switch_check.switches audit.ports.json)"
grep -q "port 1's P_Key block 0 differs from what this SM sent" osm.log &&
  grep -q "($LEAF): the SL2VL table from port $DROP_IN to port $DROP_OUT (a first-hop drop) differs" osm.log ||
  die "the log does not name the port tables: $(grep 'differs from what' osm.log | tail -3)"
ctl status | grep >/dev/null "WARNING: *[0-9]* port table(s) read back (PortInfo [1-9][0-9]*, SL2VL [1-9][0-9]*, P_Key [1-9]" ||
  die "laasctl status does not warn of the port tables: $(ctl status | grep WARNING)"
log "counted per table: $(ctl --json status | jq -c .switch_check.mismatches_by_table)"

# 2. A tenant's OpenSM with another SM_Key: a second master that rewrites the tables (minhop).
ROGUE_HOST=$(ctl --json tenant show a | jq -r '.hosts[1].name')
start_tenant_sm rogue "$ROGUE_HOST" "sm_priority 15" "sm_key 0x00000000000000aa" \
  "routing_engine minhop"
ROGUE_PID=$TENANT_SM_PID
deadline=$((SECONDS + 30))
until grep -q "SUBNET UP" rogue.log 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || die "the tenant's SM did not come up: $(tail -3 rogue.log 2>/dev/null)"
  sleep 0.3
done
kill -TERM "$ROGUE_PID" 2>/dev/null || true
for _ in 1 2 3 4 5 6; do kill -0 "$ROGUE_PID" 2>/dev/null || break; sleep 0.5; done
kill -KILL "$ROGUE_PID" 2>/dev/null || true
wait "$ROGUE_PID" 2>/dev/null || true
t2=$SECONDS
log "the tenant's SM on $ROGUE_HOST (sm_key 0xaa, minhop) came up as master and left: $(grep -c 'non-matching sm_key' osm.log) 'non-matching sm_key' line(s) in our log"
restored rogue "$t2"
m2=$(mismatches)
[ "$m2" -gt "$m1" ] || die "the second master's rewrite was not counted ($m1 -> $m2)"
log "the second master's blocks counted ($m1 -> $m2)"
ports_restored rogue "$t2"
audit_layout after
log "PASS switch_check: LFT entries rewritten by a tool and by a second SM with another SM_Key were found and sent again within two ${CHECK_S}-s intervals"
