#!/usr/bin/env bash
# never_dark.sh: OpenSM keeps serving, closed and truthful, whatever goes wrong around it, with the
# real OpenSM (qos TRUE), ibsim and infiniband-diags. The lab tree pgft(2;8,4;1,4;1,2), OpenSM on
# comp-1, tenants a (8) and b (10); every check reads the tables back from the switches.
# 1. OpenSM stopped; a loop cable and a new switch above the spines cabled meanwhile; OpenSM
#    started on the same state: the recorded tree is routed with the loop and the new switch set
#    aside -- every LFT entry of the tree's switches equals the good ones (every tenant pair on
#    its old paths, the audit of them clean), status says it fails closed, changes refused.
# 2. OpenSM restarted with a bad value in laas.yaml (a number that is not a number, an unknown
#    placer, a host name in management): tables and every tenant host's P_Key kept,
#    partitions.conf untouched, status, metrics and the log say why, changes refused.
# 3. state.json missing at a restart: tables and partitions.conf kept, changes refused; then
#    a garbage state.json with allocations.json lost as well: OpenSM, just started, knows
#    nothing of what the switches hold, so the switches get the tables this SM last sent
#    (tables.bin in the state directory): every LFT entry and SL2VL drop as before, P_Keys
#    kept, changes refused; with tables.bin lost too: closed with no tenant routed.
# 4. A routing exception injected on a running OpenSM: every switch keeps its tables, no other
#    engine routes, status says why; it recovers by itself. The same at a restart: the
#    switches get the tables last sent.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup never_dark
export SIM_HOST=comp-1 QOS=1
export LAAS_INJECT_ROUTING_FAILURE="$WORK/inject-routing-failure"
"$LAAS_TOPOGEN" "pgft(2;8,4;1,4;1,2)" -o fabric.net
# Spare ports on the leaves and spines, and a switch nobody cabled yet (ibsim shows it once the
# console links it).
sed -i -E 's/^Switch\t16 "SW_L1_/Switch\t20 "SW_L1_/; s/^Switch\t8 "SW_L2_/Switch\t10 "SW_L2_/' fabric.net
printf '\nSwitch\t8 "SW_NEW"\n' >>fabric.net
start_lab_tenants
AUDIT_SL2VL=1 audit_layout good
cp partitions.conf partitions.good
cp state/state.json state.json.good
# entries LFTS: "switch-GUID lid port" of every switch of the good tables.
switches_good=$(awk '/^Unicast lids/ { for (i = 1; i < NF; i++) if ($i == "guid") print $(i + 1) }' lfts.good | sort -u)
entries() {
  awk '/^Unicast lids/ { for (i = 1; i < NF; i++) if ($i == "guid") sw = $(i + 1); next }
    /^0x/ { print sw, tolower($1), $2 }' "$1" | grep -F -f <(echo "$switches_good") | sort
}
entries lfts.good >entries.good
HOSTS=$( (ctl --json tenant show a; ctl --json tenant show b) | jq -r '.hosts[].name')
# host_pkeys TAG: "host pkey..." for every tenant host (full-member bit dropped, zeros dropped).
host_pkeys() {
  local h lid
  for h in $HOSTS; do
    lid=$(host_lid disc.good "$h")
    echo "$h $(sim smpquery pkeys "$lid" 0 2>/dev/null | grep -oE '0x[0-9a-fA-F]{4}' |
      tr 'A-F' 'a-f' | grep -v '^0x0000$' | sort | tr '\n' ' ')"
  done
}
host_pkeys >pkeys.good
[ "$(grep -c '0x' pkeys.good)" = "$(echo "$HOSTS" | wc -w)" ] || die "some tenant host has no P_Key"
log "tenants a (8) and b (10) placed; $(wc -l <entries.good) LFT entries and $(echo "$HOSTS" | wc -w) tenant hosts' P_Keys read back"

# kept TAG WHY: the tree's tables read back equal the good ones and pass the audit against the
# good tenants, every tenant host's P_Key is kept, partitions.conf is untouched, status says WHY,
# and a change is refused.
kept() {
  local tag=$1 why=$2 rc=0
  sim dump_fts >"lfts.$tag" 2>/dev/null || die "dump_fts failed ($tag)"
  entries "lfts.$tag" >"entries.$tag"
  cmp -s entries.good "entries.$tag" ||
    die "$tag: the tables changed: $(diff entries.good "entries.$tag" | head -6)"
  # The tree's switches only: a switch cabled meanwhile (set aside, unrouted) is not the audit's.
  awk -v keep="$switches_good" 'BEGIN { n = split(keep, k, "\n"); for (i = 1; i <= n; i++) want[k[i]] = 1 }
    /^Unicast lids/ { on = 0; for (i = 1; i < NF; i++) if ($i == "guid") on = ($(i + 1) in want) }
    on' "lfts.$tag" >"lfts.$tag.tree"
  "$LAAS_AUDIT" --fabric disc.good --lfts "lfts.$tag.tree" --allocations alloc.good.json \
    --layout state/layout.json >"audit.$tag" 2>&1 ||
    die "$tag: the tables fail the audit: $(grep VIOLATION "audit.$tag" | head -3)"
  host_pkeys >"pkeys.$tag"
  cmp -s pkeys.good "pkeys.$tag" || die "$tag: P_Keys changed: $(diff pkeys.good "pkeys.$tag" | head -4)"
  cmp -s partitions.good partitions.conf || die "$tag: partitions.conf was rewritten"
  ctl --json status >"status.$tag" || die "$tag: status failed"
  jq -r '[.fail_closed // "", .config_error // "", .blocked // ""] | join(" ")' "status.$tag" |
    grep -q -- "$why" || die "$tag: status does not say '$why': $(jq -c . "status.$tag" | head -c 400)"
  ctl tenant add z --hosts 1 >"refused.$tag" 2>&1 || rc=$?
  [ $rc -ne 0 ] || die "$tag: a tenant change was accepted"
  ! grep -qE '(minhop|updn|ftree|dnup) tables configured' osm.log || die "$tag: another engine routed"
  log "$tag: $(wc -l <"entries.$tag") LFT entries and every tenant host's P_Key kept, partitions.conf untouched, status says '$why', tenant add refused (exit $rc)"
}
# restart [CMD ARG...]: OpenSM stopped, CMD run while it is down, started, its tables applied.
restart() {
  local applied
  stop_opensm
  [ $# -eq 0 ] || "$@"
  applied=$(count_log 'laas: forwarding tables applied')
  start_opensm
  wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
  sleep 1
}

# 1. Cabled while OpenSM is down: a loop cable and a new switch above the spines.
miscable() {
  console 'Link "SW_L1_3"[17] "SW_L1_3"[18]'
  console 'Link "SW_NEW"[1] "SW_L2_0"[9]'
  console 'Link "SW_NEW"[2] "SW_L2_1"[9]'
}
restart miscable
grep -q 'failing closed: the fabric is not recognized' osm.log || die "the restart did not fail closed"
kept restart_miscabled "the fabric is not recognized"
# The new switch goes first: with the loop gone and it still there, it would be a new leaf
# (the staged build-out), which is not this test's subject.
console 'Unlink "SW_NEW"'
heavy_sweep "the new switch removed"
console 'Unlink "SW_L1_3"[17]'
heavy_sweep "the loop removed"
wait_log 'laas: recovered' 1 30
LAAS_YAML_EXTRA="" restart

# 2. A bad value in laas.yaml at a restart: never defaults.
for bad in "routing_threads: many" "placer: bogus" "management: [comp-1]"; do
  LAAS_YAML_EXTRA="$bad" restart
  grep -q "laas.yaml is invalid: .*laas.yaml:[0-9]*: key '${bad%%:*}'" osm.log ||
    die "the log does not name the bad key '${bad%%:*}' with its line"
  kept "config_${bad%%:*}" "laas.yaml"
  ctl metrics >"metrics.${bad%%:*}" || die "metrics failed"
  grep -qx 'laas_config_error 1' "metrics.${bad%%:*}" || die "laas_config_error is not 1 with '$bad'"
done
LAAS_YAML_EXTRA="" restart
ctl metrics >metrics.fixed || die "metrics failed"
grep -qx 'laas_config_error 0' metrics.fixed || die "laas_config_error is not 0 once fixed"
ctl --json status | jq -e '.fail_closed == null' >/dev/null || die "still failing closed once fixed"

# 3. state.json lost: a lost file, not an empty state.
restart mv state/state.json state.json.moved
kept state_missing "does not exist"
[ ! -e state/state.json ] || die "an empty state.json was written over the lost one"
mv state.json.moved state/state.json
heavy_sweep "state.json restored"
wait_log 'laas: recovered' 2 30
ctl tenant list --json >/dev/null 2>&1 || true
[ "$(ctl --json tenant list | jq length)" = 2 ] || die "the tenants are not both back"

# 3b. A garbage state.json and allocations.json lost too, at a restart: nothing records the
#     tenants, and after its start OpenSM knows nothing of what the switches hold. The tables
#     this SM last sent (tables.bin) are given back: every entry and SL2VL drop as before.
garble_state() {
  cp state/state.json state.json.good
  cp state/allocations.json allocations.json.good
  echo '{ "version": 1, "tenants": [ {"na' >state/state.json
  rm state/allocations.json
}
restart garble_state
why="nothing records the tenants last routed"
grep -q 'get the tables this SM last sent them' osm.log || die "sent: the switches did not get the tables last sent"
kept sent "$why"
for try in 1 2 3 4 5; do  # OpenSM sends SL2VL after the forwarding tables
  sim "$LAAS_SL2VL_DUMP" --fabric disc.good >sl2vl.sent 2>sl2vl.sent.err || die "laas-sl2vl-dump failed"
  cmp -s sl2vl.good sl2vl.sent && break
  [ $try -lt 5 ] || die "sent: the SL2VL drops changed: $(diff sl2vl.good sl2vl.sent | head -4)"
  sleep 1
done
log "sent: every LFT entry, P_Key and all $(wc -l <sl2vl.sent) lines of the SL2VL dump as before"

# 3c. The same with tables.bin lost as well: closed all the same, no tenant is routed (every
#     host free, reaching management only; the audit of the tables read back is clean), the
#     P_Keys and partitions.conf stay, changes are refused, no other engine routes; restored,
#     every table is the good one again.
restart mv state/tables.bin tables.bin.good
grep -q 'the tables last sent cannot be read' osm.log || die "lost: the log does not say tables.bin is missing"
ctl --json status >status.lost || die "status failed"
jq -r '.fail_closed // ""' status.lost | grep >/dev/null "$why" ||
  die "status does not say '$why': $(jq -c . status.lost | head -c 400)"
host_pkeys >pkeys.lost
cmp -s pkeys.good pkeys.lost || die "lost: P_Keys changed: $(diff pkeys.good pkeys.lost | head -4)"
cmp -s partitions.good partitions.conf || die "lost: partitions.conf was rewritten"
rc=0
ctl tenant add z --hosts 1 >refused.lost 2>&1 || rc=$?
[ $rc -ne 0 ] || die "lost: a tenant change was accepted"
! grep -qE '(minhop|updn|ftree|dnup) tables configured' osm.log || die "lost: another engine routed"
sim ibnetdiscover >disc.lost 2>/dev/null || die "ibnetdiscover failed"
sim dump_fts >lfts.lost 2>/dev/null || die "dump_fts failed"
"$LAAS_AUDIT" --fabric disc.lost --lfts lfts.lost --allocations state/allocations.json \
  --layout state/layout.json >audit.lost 2>&1 ||
  die "lost: the tables routed with no tenant fail the audit: $(grep VIOLATION audit.lost | head -3)"
log "lost: routed closed with no tenant (audit clean: $(head -1 audit.lost | cut -c1-60)...), P_Keys and partitions.conf kept, status says '$why', tenant add refused (exit $rc)"
cp state.json.good state/state.json
cp allocations.json.good state/allocations.json
heavy_sweep "state.json and allocations.json restored"
wait_log 'laas: recovered' 3 30
[ "$(ctl --json tenant list | jq length)" = 2 ] || die "the tenants are not both back"
sim dump_fts >lfts.restored 2>/dev/null
entries lfts.restored >entries.restored
cmp -s entries.good entries.restored || die "the tables differ once restored"

# 4. A routing exception on a running OpenSM.
touch "$LAAS_INJECT_ROUTING_FAILURE"
kill -HUP "$OSM_PID"
wait_log 'failing closed: routing failed: injected failure' 1 30
wait_log 'switch(es) keep the forwarding tables they hold' 1 30
sleep 1
kept injected "routing failed"
# injection_removed TAG N: the failure gone, the plugin recovers (its Nth time) with the good tables.
injection_removed() {
  rm -f "$LAAS_INJECT_ROUTING_FAILURE"
  heavy_sweep "the injected failure removed"
  wait_log 'laas: recovered' "$2" 30
  sim dump_fts >"lfts.$1" 2>/dev/null
  entries "lfts.$1" >"entries.$1"
  cmp -s entries.good "entries.$1" || die "the tables differ after recovery ($1)"
}
injection_removed after 4
# 4b. The same exception at a restart: OpenSM knows nothing of what the switches hold yet, so
#     they get the tables this SM last sent (tables.bin), never empty ones.
touch "$LAAS_INJECT_ROUTING_FAILURE"
restart
[ "$(count_log 'get the tables this SM last sent them')" -ge 2 ] ||
  die "injected at a start: the switches did not get the tables last sent"
kept injected_start "routing failed"
injection_removed after_start 5
log "PASS never_dark: a restart on a miscabled fabric, three bad laas.yaml values, a lost state.json, a garbage one without allocations.json (at a start, from the tables last sent) and a routing exception (running, and at a start) keep every tenant's tables and P_Keys, refuse changes, say why and recover"
