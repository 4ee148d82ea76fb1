#!/usr/bin/env bash
# adoption.sh: LaaS enabled on a running cluster without an outage, with the real OpenSM, ibsim
# and infiniband-diags on the paper's demo tree (32 hosts, the SM on SW_L2_0).
# 1. OpenSM without LaaS (minhop): every host reaches every host (tables read back, walked).
# 2. The ALL=full default partition taken out (laasctl validate names it), LaaS enabled with
#    `free_pool: open` (the adoption mode): every host still reaches every
#    host, and every host is a full member of the default partition (so two hosts without a
#    tenant still talk).
# 3. Tenants created while the pool is open: each tenant's pairs reach each other, and hosts
#    without a tenant still reach each other.
# 4. The administrator closes the pool (`free_pool: closed`, OpenSM restarted): the guarantees of
#    today -- the audit of the tables read back is clean, tenants keep their routes, and two
#    free hosts no longer reach each other.
# 5. LaaS disabled and removed as the admin guide's uninstall says (plugin out of opensm.conf,
#    OpenSM stopped, partitions.conf.pre-laas put back, OpenSM started): partitions.conf is the
#    administrator's file again, byte for byte, every host reaches every host as before LaaS,
#    and as many hosts are full members of the default partition as before.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup adoption
export SIM_HOST=SW_L2_0
REACH="$(dirname "$0")/reach.py"
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric fabric.net
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
# reach TAG: fabric and tables read back, every host pair walked.
reach() {
  sim ibnetdiscover >"disc.$1" 2>/dev/null || die "ibnetdiscover failed ($1)"
  sim dump_fts >"lfts.$1" 2>/dev/null || die "dump_fts failed ($1)"
  python3 "$REACH" "disc.$1" "lfts.$1" "${@:2}" >"reach.$1" || die "reach.py failed ($1)"
  tail -1 "reach.$1"
}
# full_members: how many hosts hold the full default P_Key 0xffff.
full_members() {
  local lid n=0
  for lid in $(awk '/^Ca/ { ca = 1; next } ca && /# lid / { for (i = 1; i < NF; i++) if ($i == "lid") { print $(i + 1); break }; ca = 0 }' disc.before); do
    sim smpquery pkeys "$lid" 0 2>/dev/null | grep >/dev/null -i '0xffff' && n=$((n + 1))
  done
  echo $n
}

# OpenSM without the plugin, as before LaaS and after its removal.
start_opensm_without_laas() {
  cat >opensm.conf <<EOC
routing_engine minhop
force_log_flush TRUE
sweep_interval 0
partition_config_file $WORK/partitions.conf
EOC
  mkdir -p osm.cache osm.tmp
  local up
  up=$(count_log 'SUBNET UP')
  OSM_CACHE_DIR="$WORK/osm.cache" OSM_TMP_DIR="$WORK/osm.tmp" LD_PRELOAD="$UMAD2SIM" \
    opensm -F "$WORK/opensm.conf" -f "$WORK/osm.log" </dev/null >opensm.out 2>&1 &
  OSM_PID=$!
  wait_log 'SUBNET UP' $((up + 1)) 45
  sleep 1
}

# 1. Before LaaS.
printf 'Default=0x7fff, ipoib : ALL=full ;\n' >partitions.conf
start_opensm_without_laas
before=$(reach before)
HOSTS=$(grep -c '^Ca' disc.before)
PAIRS=$((HOSTS * (HOSTS - 1)))
[ "$before" = "reachable $PAIRS of $PAIRS pairs" ] || die "before LaaS: $before"
full_before=$(full_members)
log "before LaaS (minhop): $before, $full_before hosts full members of the default partition"
stop_opensm

# 2. LaaS enabled, free pool open. The administrator's default partition makes every port a
# full member, which LaaS refuses to keep (tenants could reach each other over it): as the admin
# guide says, that line goes, and LaaS writes its own default partition (every host without a
# tenant a full member while the pool is open).
rc=0
"$LAASCTL" validate partitions.conf >validate.before 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q 'partitions.conf:1: error: ALL=full' validate.before ||
  die "laasctl validate does not refuse the ALL=full default partition (exit $rc)"
sed -i 's/^Default=0x7fff/# Default=0x7fff/' partitions.conf
cp partitions.conf partitions.admin
export LAAS_YAML_EXTRA="free_pool: open"
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
sleep 1
enabled=$(reach enabled)
[ "$enabled" = "reachable $PAIRS of $PAIRS pairs" ] || die "LaaS enabled with an open pool cut hosts off: $enabled; $(grep -m3 UNREACHABLE reach.enabled)"
full=$(full_members)
[ "$full" -ge $((HOSTS - 1)) ] || die "only $full of $HOSTS hosts are full members of the default partition"
ctl --json status | jq -e '.free_pool == "open"' >/dev/null || die "status does not say the pool is open"
ctl metrics >metrics.open || die "metrics failed"
grep -qx 'laas_free_pool_open 1' metrics.open || die "laas_free_pool_open is not 1"
log "LaaS enabled with free_pool: open: $enabled, $full hosts full members of the default partition"

# 3. Tenants while the pool is open.
ctl tenant add a --hosts 8 >/dev/null || die "tenant add a failed"
ctl tenant add b --hosts 6 >/dev/null || die "tenant add b failed"
for t in a b; do
  ctl --json tenant show $t | jq -r '.hosts[].name' >"hosts.$t"
  while read -r x; do while read -r y; do [ "$x" != "$y" ] && echo "$x $y"; done <"hosts.$t"; done <"hosts.$t" >"pairs.$t"
done
held=$(cat hosts.a hosts.b)
grep '^Ca' disc.enabled | sed -E 's/.*# "([^"]*)".*/\1/' | grep -vxF -f <(echo "$held") |
  grep -v '^$' >hosts.free
head -6 hosts.free >hosts.free6
while read -r x; do while read -r y; do [ "$x" != "$y" ] && echo "$x $y"; done <hosts.free6; done <hosts.free6 >pairs.free
# leaf_of NAME: the switch a host is cabled to (from the discovery before LaaS).
awk '/^Ca/ { match($0, /# "[^"]*"/); name = substr($0, RSTART + 3, RLENGTH - 4); next }
  name != "" && /^\[1\]/ { match($0, /"S-[0-9a-f]*"/); print name, substr($0, RSTART + 1, RLENGTH - 2); name = "" }' \
  disc.before >leaf.of
awk 'NR == FNR { leaf[$1] = $2; next } leaf[$1] != leaf[$2]' leaf.of pairs.free >pairs.free_cross
[ -s pairs.free_cross ] || die "no pair of free hosts on different leaves"
for t in a b free; do
  r=$(reach "open_$t" --pairs "pairs.$t")
  n=$(wc -l <"pairs.$t")
  [ "$r" = "reachable $n of $n pairs" ] || die "pool open, $t: $r"
done
log "tenants a (8) and b (6) created with the pool open: their pairs and free hosts' pairs all reachable"

# 4. The administrator closes the pool.
export LAAS_YAML_EXTRA="free_pool: closed"
stop_opensm
applied=$(count_log 'laas: forwarding tables applied')
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
sleep 1
audit_layout closed
for t in a b; do
  r=$(reach "closed_$t" --pairs "pairs.$t")
  n=$(wc -l <"pairs.$t")
  [ "$r" = "reachable $n of $n pairs" ] || die "pool closed, tenant $t: $r"
done
# Free hosts on different leaves: no route. (On one leaf the leaf must route to its own hosts for
# management's sake; the first-hop drop (qos TRUE) and the limited default membership part them.)
r=$(reach closed_free --pairs pairs.free_cross)
[ "$r" = "reachable 0 of $(wc -l <pairs.free_cross) pairs" ] || die "pool closed, free hosts on different leaves still reach each other: $r"
ctl metrics >metrics.closed || die "metrics failed"
grep -qx 'laas_free_pool_open 0' metrics.closed || die "laas_free_pool_open is not 0"
log "pool closed: audit clean, tenants' pairs reachable, free hosts on different leaves reach each other no more ($r)"

# 5. Disabled and removed, as the admin guide's uninstall says.
stop_opensm
cmp -s partitions.conf partitions.admin && die "LaaS never managed partitions.conf"
[ -f partitions.conf.pre-laas ] || die "no partitions.conf.pre-laas beside the managed file"
mv partitions.conf.pre-laas partitions.conf
cmp -s partitions.conf partitions.admin || die "partitions.conf.pre-laas is not the administrator's file: $(diff partitions.admin partitions.conf | head -4)"
start_opensm_without_laas
after=$(reach removed)
[ "$after" = "reachable $PAIRS of $PAIRS pairs" ] || die "LaaS removed, hosts still cut off: $after; $(grep -m3 UNREACHABLE reach.removed)"
full_after=$(full_members)
[ "$full_after" = "$full_before" ] || die "after removal $full_after hosts are full members of the default partition, before LaaS $full_before"
log "LaaS removed: partitions.conf is the administrator's again, $after as before LaaS, $full_after hosts full members of the default partition as before"
log "PASS adoption"
