#!/usr/bin/env bash
# sdn_file_engine.sh: laas-sdn's way in. A plain upstream OpenSM -- no plugin, `routing_engine
# file,no_fallback`, `lfts_file` and `partition_config_file` pointing at files laas-sdn-plan
# writes -- routes the tables the project computed for the fabric laas-sdn-plan discovered
# itself by running ibnetdiscover. Checked: before the file exists nothing is routed (no minhop);
# the tables read back from every switch (dump_fts) equal the file, every LID (those the file
# leaves out read back unrouted); laas-audit finds no violation; tenant hosts hold their
# tenant's P_Key; laas-sdn-plan reads the same tables from the switches itself (libibmad); the
# offline path (an ibnetdiscover file) writes the same file; a file the
# engine rejects leaves the switches' tables as they were; a switch the file does not list is
# left with no route at all; after the fabric and OpenSM restart with other LIDs, the same file
# still isolates the tenants (the engine follows each entry's port GUID to its new LID).
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup sdn_file_engine
export SIM_HOST=SW_L2_0
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric fabric.net

start_file_sm
# No lfts_file yet: the file engine fails and nothing routes, but the LIDs are assigned.
wait_log 'No routing engine able to successfully configure' 1 45
grep -q "Can't open ucast dump file" osm.log || die "the file engine did not look for the file"
file_routed() { count_log 'file tables configured on all switches'; }
[ "$(file_routed)" = 0 ] || die "the file engine routed without a file"
[ "$(count_log 'minhop tables configured')" = 0 ] || die "minhop routed the fabric"
sim dump_fts >sdn.dump.none 2>&1 || die "dump_fts failed (no file)"
[ "$(grep -c '^0x' sdn.dump.none || true)" = 0 ] || die "switches hold routes before laas-sdn wrote any"

plan() { sim "$LAAS_SDN_PLAN" "$@"; }
log "laas-sdn-plan: discover (ibnetdiscover, a child), place a:10 and b:6, write, reload"
before=$(file_routed)
plan --tenant a:10 --tenant b:6 --lfts-file sdn.lfts --partitions-file sdn.partitions \
  --allocations sdn.alloc.json -- kill -HUP "$OSM_PID" >plan.out 2>&1 ||
  die "laas-sdn-plan failed: $(cat plan.out)"
cat plan.out
grep -q "^reload 'kill -HUP $OSM_PID': ok" plan.out || die "no reload reported"
wait_log 'file tables configured on all switches' $((before + 1)) 45
wait_log 'SUBNET UP' 1 45

# readback TAG: every switch's table read back, compared with sdn.lfts by laas-sdn-plan.
readback() {
  sim dump_fts >"sdn.dump.$1" 2>"sdn.dump.$1.err" || die "dump_fts failed ($1)"
  "$LAAS_SDN_PLAN" --lfts-file sdn.lfts --readback "sdn.dump.$1" >"readback.$1" 2>&1 || return 1
  tail -1 "readback.$1"
}
readback first || die "the tables read back differ from the file: $(head -5 readback.first)"
grep -q '^applied: 12 switches' readback.first || die "not every switch compared: $(cat readback.first)"
# The same read by laas-sdn-plan itself from the switches (libibmad, by LID).
sim "$LAAS_SDN_PLAN" --lfts-file sdn.lfts --readback-live >readback.live 2>&1 ||
  die "the tables read live differ from the file: $(head -5 readback.live)"
grep -q '^applied: 12 switches, 528 LIDs' readback.live || die "live read-back: $(cat readback.live)"

# LIDs the file leaves out: unrouted on the switch, as the engine clears every table it reads.
written=$(grep -c '^0x' sdn.lfts)
read_back=$(grep -c '^0x' sdn.dump.first)
log "file: $written entries; read back: $read_back entries"
[ "$written" = "$read_back" ] || die "the switches hold $read_back entries, the file $written"

# The isolation the tables give, on the tables the switches hold.
sim ibnetdiscover >sdn.disc 2>sdn.disc.err || die "ibnetdiscover failed"
"$LAAS_AUDIT" --fabric sdn.disc --lfts sdn.dump.first --allocations sdn.alloc.json \
  >audit.first 2>&1 || die "laas-audit: $(grep -E 'VIOLATION|laas-audit' audit.first | head -5)"
grep -E '^(violations|isolation)' audit.first | head -3 || true

# The offline path (the ibnetdiscover file) gives the very same file.
"$LAAS_SDN_PLAN" --ibnetdiscover sdn.disc --sm-port-guid "$(node_port_guid SW_L2_0)" \
  --tenant a:10 --tenant b:6 --lfts-file sdn.offline.lfts >plan.offline 2>&1 ||
  die "offline plan failed: $(cat plan.offline)"
cmp -s sdn.lfts sdn.offline.lfts || die "live discovery and the ibnetdiscover file give different tables: $(diff sdn.lfts sdn.offline.lfts | head -5)"

# P_Keys: every tenant host holds its tenant's key (full) and not the other tenant's.
pkey_of() {
  awk -v p="laas_$1" '$0 ~ "^" p "=" { sub(/^[^=]*=/, ""); sub(/[ ,:].*/, ""); print; exit }' sdn.partitions
}
for t in a b; do
  pkey=$(pkey_of $t)
  other=$(pkey_of "$([ $t = a ] && echo b || echo a)")
  [ -n "$pkey" ] && [ -n "$other" ] || die "no partitions laas_a, laas_b in sdn.partitions"
  for lid in $(jq -r ".tenants[] | select(.name == \"$t\") | .hosts[].lid" sdn.alloc.json); do
    table=$(sim smpquery pkeys "$lid" 1 2>/dev/null | grep -oiE '0x[0-9a-f]{4}' | tr 'A-F' 'a-f')
    echo "$table" | grep >/dev/null -x "$(printf '0x%04x' $((pkey | 0x8000)))" ||
      die "tenant $t host lid $lid lacks P_Key $pkey: $(echo $table)"
    for e in $table; do
      [ $((e & 0x7fff)) -ne $((other & 0x7fff)) ] || die "tenant $t host lid $lid holds $other"
    done
  done
done
log "tenant hosts hold their own P_Keys, not the other tenant's"

# A file the engine rejects (a port the switch lacks; laas-sdn-plan never writes one): the
# switches keep the tables they hold.
cp sdn.lfts sdn.full.lfts
awk '/^0x/ && !done { $2 = "099"; done = 1 } { print }' sdn.full.lfts >sdn.bad
mv sdn.bad sdn.lfts
failed=$(count_log 'file: cannot build fwd tables')
kill -HUP "$OSM_PID"
wait_log 'file: cannot build fwd tables' $((failed + 1)) 45
grep -q 'Invalid port 99 found for switch' osm.log || die "the engine did not reject port 99"
sleep 1
mv sdn.full.lfts sdn.lfts
readback rejected || die "a rejected file changed the tables: $(head -5 readback.rejected)"

# A switch the file does not list: OpenSM clears its table and fills nothing in.
leaf=$(awk '/^Unicast lids/ && /SW_L1_7/ {for (i = 1; i < NF; i++) if ($i == "guid") print $(i + 1)}' sdn.lfts)
[ -n "$leaf" ] || die "SW_L1_7 not in sdn.lfts"
cp sdn.lfts sdn.full.lfts
awk '/^Unicast lids/ {skip = /SW_L1_7/} !skip' sdn.full.lfts >sdn.partial
mv sdn.partial sdn.lfts
before=$(file_routed)
kill -HUP "$OSM_PID"
wait_log 'file tables configured on all switches' $((before + 1)) 45
sleep 1
sim dump_fts >sdn.dump.partial 2>/dev/null || die "dump_fts failed (partial)"
left=$(awk -v g="$leaf" '/^Unicast lids/ {on = ($0 ~ g)} on && /^0x/' sdn.dump.partial | wc -l)
log "a switch left out of the file holds $left entries"
[ "$left" = 0 ] || die "SW_L1_7, left out of the file, still holds $left entries"
readback partial || die "the switches listed differ from the file: $(head -5 readback.partial)"
mv sdn.full.lfts sdn.lfts
# Read live against the whole file, the switch left out shows: its LIDs are not applied.
! sim "$LAAS_SDN_PLAN" --lfts-file sdn.lfts --readback-live >readback.live.partial 2>&1 ||
  die "the live read-back missed the switch left out"
grep -q '^NOT applied: 12 switches' readback.live.partial || die "live: $(tail -2 readback.live.partial)"
grep -q 'SW_L1_7' readback.live.partial || die "live: SW_L1_7 not named: $(head -3 readback.live.partial)"

# The fabric powered off and on, OpenSM restarted without its LID cache and attached elsewhere:
# the ports get other LIDs. The file's entries carry their destination's port GUID, and the
# engine moves each to the LID its port has now: the tables still isolate the tenants, with no
# new file.
stop_opensm
kill -TERM "$SIM_PID" 2>/dev/null || true
wait "$SIM_PID" 2>/dev/null || true
rm -rf osm.cache/* osm.tmp/*
mv osm.log osm.first.log
start_fabric fabric.net
OSM_CACHE_DIR="$WORK/osm.cache" OSM_TMP_DIR="$WORK/osm.tmp" SIM_HOST=SW_L1_7 LD_PRELOAD="$UMAD2SIM" \
  opensm -F "$WORK/opensm.conf" -f "$WORK/osm.log" </dev/null >opensm.out 2>&1 &
OSM_PID=$!
wait_log 'file tables configured on all switches' 1 45
wait_log 'SUBNET UP' 1 45
sim ibnetdiscover >sdn.disc.moved 2>/dev/null || die "ibnetdiscover failed (restart)"
sim dump_fts >sdn.dump.moved 2>/dev/null || die "dump_fts failed (restart)"
moved=$(diff <(grep -o 'lid [0-9]*' sdn.disc) <(grep -o 'lid [0-9]*' sdn.disc.moved) | grep -c '^>' || true)
log "after the restart, $moved LID mentions differ in ibnetdiscover"
[ "$moved" -gt 0 ] || die "the restart kept every LID: nothing shows the remapping"
"$LAAS_AUDIT" --fabric sdn.disc.moved --lfts sdn.dump.moved --allocations sdn.alloc.json \
  >audit.moved 2>&1 || die "laas-audit after the restart: $(grep -E 'VIOLATION|laas-audit' audit.moved | head -5)"
tail -1 audit.moved
log "ok"
