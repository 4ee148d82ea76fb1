#!/usr/bin/env bash
# servers.sh KIND: servers with several ports under the real OpenSM.
#   rails4: 2 groups of 8 GPU servers with 4 HCAs each, HCA r on the group's rail-r leaf, 4
#           spines joining the rails (xgft(2;8,8;1,4), 64 HCAs);
#   rails3: the same on a 3-level tree, 2 pods of 2 groups of 4 servers with 4 HCAs each
#           (xgft(3;4,8,2;1,4,4)): a tenant of 10 servers spans the pods, 2x4+2 on each rail;
#   dual:   8 servers, each one HCA with 2 cabled ports on two leaves (xgft(2;8,2;1,4)).
# Tenants added and removed with laasctl --servers get whole servers (every port of each, on
# every rail), never a server split between tenants; the audit of the tables read back passes
# (no cross-tenant route past the first switch, no shared cable, every pair of a tenant's ports
# reachable, rail to rail included); every port of a tenant's servers holds its P_Key.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
KIND=${1:-rails4}
laas_setup "servers_$KIND"
export SIM_HOST=${SM_NODE:-SW_L2_0}
case "$KIND" in
rails4) SPEC="xgft(2;8,8;1,4)" RAILS=4 TOPO=(--rails 4) SIZES=(a:5 b:6 c:3) LATER=(d:2) ;;
rails3) SPEC="xgft(3;4,8,2;1,4,4)" RAILS=4 TOPO=(--rails 4) SIZES=(a:10 b:3 c:2) LATER=(d:1) ;;
dual) SPEC="xgft(2;8,2;1,4)" RAILS=2 TOPO=(--rails 2 --dual-port) SIZES=(a:3 b:2 c:2) LATER=(d:2) ;;
*) die "unknown kind '$KIND' (rails4, rails3, dual)" ;;
esac
"$LAAS_TOPOGEN" "$SPEC" "${TOPO[@]}" -o fabric.net
start_fabric fabric.net
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
grep -q 'laas: routed' osm.log || die "the laas engine did not route the fabric: $(grep -m2 'laas:' osm.log)"
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }

# pkeys LID: the P_Key table of the CA port with that LID, one "0x...." a line, zeros dropped.
pkeys() {
  sim smpquery pkeys "$1" 0 2>/dev/null |
    grep -oE '0x[0-9a-fA-F]{4}' | tr 'A-F' 'a-f' | grep -v '^0x0000$' || true
}

# check_whole: every tenant's servers have all RAILS ports in its host list, no server or port
# is held twice, every port holds its tenant's P_Key (full member).
check_whole() {
  local t servers ports pkey lid deadline
  : >held.servers
  for t in $(ctl --json tenant list | jq -r '.[].name'); do
    ctl --json tenant show "$t" >"show.$t"
    servers=$(jq '.servers | length' "show.$t")
    ports=$(jq '.hosts | length' "show.$t")
    [ "$ports" -eq $((servers * RAILS)) ] ||
      die "tenant $t holds $ports ports for $servers servers (expected $RAILS each)"
    jq -e --argjson r "$RAILS" '[.servers[] | (.ports | length) == $r] | all' "show.$t" >/dev/null ||
      die "tenant $t has a server without all its $RAILS ports: $(jq -c '.servers' "show.$t" | head -c 300)"
    # Each of its servers' ports, by GUID, is one of its hosts.
    jq -e '([.servers[].ports[].guid] | sort) == ([.hosts[].guid] | sort)' "show.$t" >/dev/null ||
      die "tenant $t's servers and hosts differ"
    jq -r '.servers[].name' "show.$t" >>held.servers
    pkey=$(jq -r '.pkey' "show.$t")
    for lid in $(jq -r '.hosts[].lid' "show.$t"); do
      deadline=$((SECONDS + 20))
      until pkeys "$lid" | grep >/dev/null -x "0x$(printf '%04x' $((pkey | 0x8000)))"; do
        [ $SECONDS -lt $deadline ] || die "tenant $t: port LID $lid lacks P_Key $pkey: $(pkeys "$lid" | tr '\n' ' ')"
        sleep 0.5
      done
    done
  done
  [ -z "$(sort held.servers | uniq -d)" ] || die "servers held twice: $(sort held.servers | uniq -d | tr '\n' ' ')"
  # No port of a held server is free or someone else's: the fabric's ports, by server name.
  sim ibnetdiscover >disc.check 2>/dev/null || die "ibnetdiscover failed"
}

for spec in "${SIZES[@]}"; do
  ctl tenant add "${spec%%:*}" --servers "${spec##*:}" >"add.${spec%%:*}" 2>&1 ||
    die "tenant add ${spec%%:*} --servers ${spec##*:} failed: $(cat "add.${spec%%:*}")"
  log "$(cat "add.${spec%%:*}" | head -1)"
done
check_whole
# The map rail by rail: a tenant's servers are the same host columns on every rail.
ctl topology show >map.txt || die "topology show failed"
for r in $(seq 0 $((RAILS - 1))); do
  grep -q "^rail $r:" map.txt || die "topology show has no 'rail $r:' section: $(head -12 map.txt)"
done
audit_layout 1
log "$(grep -cx '.*' held.servers) servers held whole by ${#SIZES[@]} tenants; audit clean: $(grep -m1 -E 'paths traced' audit.1)"

# OpenStack by server: the exported aggregate commands, each parsed by python-openstackclient's
# own parser (tests/openstack/fake_openstack.py), leave every tenant's aggregate holding
# exactly its servers' names, one compute host a server.
openstack_by_server() {
  local here t
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../openstack" && pwd)
  if ! /usr/bin/python3 -c 'import openstackclient' 2>/dev/null; then
    log "OpenStack check skipped: python3-openstackclient is not installed"
    return 0
  fi
  mkdir -p os/bin
  ln -sf "$here/fake_openstack.py" os/bin/openstack
  export FAKE_OPENSTACK_STATE=$WORK/os/state.json FAKE_OPENSTACK_LOG=$WORK/os/log
  export FAKE_OPENSTACK_SOCKET=$WORK/os/parser.sock
  ctl --json tenant list | jq '{projects: (map({key: .name, value: ("p-" + .name)}) | from_entries)}' \
    >"$FAKE_OPENSTACK_STATE"
  "$here/fake_openstack.py" --serve &
  LAAS_EXTRA_PIDS="${LAAS_EXTRA_PIDS:-} $!"
  for _ in $(seq 1 100); do [ -S "$FAKE_OPENSTACK_SOCKET" ] && break; sleep 0.1; done
  [ -S "$FAKE_OPENSTACK_SOCKET" ] || die "the OpenStack parser server did not start"
  ctl export openstack >os/add.sh || die "export openstack failed"
  PATH="$WORK/os/bin:$PATH" bash os/add.sh >os/run.out 2>&1 ||
    die "the exported OpenStack script failed: $(tail -3 os/run.out) (log: $(tail -3 os/log))"
  for t in $(ctl --json tenant list | jq -r '.[].name'); do
    [ "$(jq -r --arg a "laas-$t" '.aggregates[$a].hosts | sort | join(" ")' "$FAKE_OPENSTACK_STATE")" = \
      "$(jq -r '[.servers[].name] | sort | join(" ")' "show.$t")" ] ||
      die "aggregate laas-$t holds $(jq -c --arg a "laas-$t" '.aggregates[$a].hosts' "$FAKE_OPENSTACK_STATE"), not tenant $t's servers $(jq -c '[.servers[].name]' "show.$t")"
  done
  log "OpenStack: $(wc -l <os/log) commands parsed by openstackclient; each aggregate holds its tenant's servers ($(jq -r '[.aggregates[] | .hosts | length] | map(tostring) | join(", ")' "$FAKE_OPENSTACK_STATE") hosts)"
}
openstack_by_server
# More than the free servers: refused, nothing changes.
cp state/state.json state.before
rc=0
ctl tenant add big --servers 100 >big.out 2>&1 || rc=$?
[ $rc -eq 1 ] || die "an oversized request exited $rc: $(cat big.out)"
cmp -s state.before state/state.json || die "a refused request changed state.json"
# Churn: remove one, add another.
ctl tenant remove b >/dev/null || die "tenant remove b failed"
for spec in "${LATER[@]}"; do
  ctl tenant add "${spec%%:*}" --servers "${spec##*:}" >"add.${spec%%:*}" 2>&1 ||
    die "tenant add ${spec%%:*} failed: $(cat "add.${spec%%:*}")"
done
check_whole
audit_layout 2
log "PASS servers $KIND ($(ctl tenant list | tail -n +2 | wc -l) tenants after churn, audit clean)"
