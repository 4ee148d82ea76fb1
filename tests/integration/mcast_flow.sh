#!/usr/bin/env bash
# mcast_flow.sh [NAME SPEC]: multicast isolation with the real OpenSM + ibsim. Tenants a (8
# hosts), b (10) and c (5) on the lab tree pgft(2;8,4;1,4;1,2) (or SPEC), b and c sharing a leaf. Every host of b joins
# one group and every host of a another, through the SA (laas-mcast-join as each host under
# umad2sim); one host of a and one of c join a third, shared group. The multicast tables read
# back with `ibroute -M` from every switch keep each tenant's group on its own links (laas-audit
# --mfts and the live `laasctl audit` both say so); a deliberately wrong table -- b's group sent
# up one link of a leaf without b hosts -- makes the audit fail.
# With SM_HOST=<host>, OpenSM runs on that host (a management host): it joins b's group too,
# which then reaches it over b's links and links no tenant holds.
# Environment (besides lib.sh's): LAAS_MCAST_JOIN, LAASCTL, SM_HOST.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
# CMake lists eat ';': specs may be written with ':' instead.
NAME=${1:-mcast_flow} SPEC=${2:-pgft(2:8,4:1,4:1,2)}
SPEC=${SPEC//:/;}
laas_setup "$NAME"
export SIM_HOST=${SM_HOST:-SW_L2_0}
SOCK="$WORK/laas.sock"

"$LAAS_TOPOGEN" "$SPEC" -o fabric.net
log "fabric $SPEC"
printf -- '- name: a\n  hosts: 8\n- name: b\n  hosts: 10\n- name: c\n  hosts: 5\n' \
  >state/tenants.yaml
start_fabric fabric.net
start_opensm
wait_log 'laas: subnet up' 1 45
wait_log 'laas: forwarding tables applied' 1 45
grep -q 'laas tables configured on all switches' osm.log || die "the laas engine did not route"

sim ibnetdiscover >disc 2>disc.err || die "ibnetdiscover failed"
sim dump_fts >lfts 2>lfts.err || die "dump_fts failed"
cp state/allocations.json alloc.json
hosts_of() {
  "$LAAS_AUDIT" --fabric disc --lfts lfts --allocations alloc.json --paths "$1" |
    awk '{ print $1 }' | sort -u
}
mapfile -t A_HOSTS < <(hosts_of a)
mapfile -t B_HOSTS < <(hosts_of b)
mapfile -t C_HOSTS < <(hosts_of c)
if [ ${#A_HOSTS[@]} != 8 ] || [ ${#B_HOSTS[@]} != 10 ] || [ ${#C_HOSTS[@]} != 5 ]; then
  die "placements: a ${#A_HOSTS[@]}, b ${#B_HOSTS[@]}, c ${#C_HOSTS[@]} hosts"
fi
log "a: ${A_HOSTS[*]}"
log "b: ${B_HOSTS[*]}"
log "c: ${C_HOSTS[*]}"

# join MGID HOST...: every host joins through the SA; prints the group's MLID.
join() {
  local mgid=$1 host out mlid=""
  shift
  for host in "$@"; do
    out=$(SIM_HOST=$host sim "$LAAS_MCAST_JOIN" "$mgid" 2>&1) || die "$host cannot join $mgid: $out"
    mlid=${out#mlid }
  done
  echo "$mlid"
}
MLID_B=$(join ff12:601b:ffff::b "${B_HOSTS[@]}")
MLID_A=$(join ff12:601b:ffff::a "${A_HOSTS[@]}")
MLID_S=$(join ff12:601b:ffff::5 "${A_HOSTS[0]}" "${C_HOSTS[0]}")
log "groups: b $MLID_B, a $MLID_A, shared $MLID_S"
# OpenSM rebuilds a group's tree after each join, with the laas engine's mcast_build_stree.
wait_log "laas: multicast MLID $MLID_B: 10 member(s), tenant b" 1 30
wait_log "laas: multicast MLID $MLID_A: 8 member(s), tenant a" 1 30
wait_log "laas: multicast MLID $MLID_S: 2 member(s), shared" 1 30
grep 'laas: multicast MLID' osm.log | tail -3

# read_mfts FILE: `ibroute -M` of every switch, by the LIDs ibnetdiscover found.
read_mfts() {
  : >"$1"
  local lid
  while read -r lid; do
    sim ibroute -M "$lid" >>"$1" 2>>"$1.err" || die "ibroute -M $lid failed: $(tail -2 "$1.err")"
  done < <(awk '/^Switch/ { for (i = 1; i < NF; i++) if ($i == "lid") print $(i + 1) }' disc)
}
mlid_lc() { echo "$1" | tr 'A-F' 'a-f' | sed 's/^0X/0x/'; }
# mfts_settled TAG LFTS ALLOC PATTERN...: the tables reach the switches after OpenSM answers
# the join. Polls the audit of `dump_fts -M` (one process for every switch) until it shows every
# PATTERN, then reads the tables with `ibroute -M`, switch by switch, into mfts.TAG and audits
# them into audit.TAG, which must show every PATTERN too.
mfts_settled() {
  local tag=$1 lfts=$2 alloc=$3 p ok=""
  shift 3
  for _ in $(seq 1 60); do
    sim dump_fts -M >"mfts.$tag.dr" 2>"mfts.$tag.dr.err" || true
    "$LAAS_AUDIT" --fabric disc --lfts "$lfts" --allocations "$alloc" --mfts "mfts.$tag.dr" \
      >"audit.$tag.dr" 2>&1 || true
    ok=1
    for p in "$@"; do grep -q "$p" "audit.$tag.dr" || ok=""; done
    [ -n "$ok" ] && break
    sleep 0.3
  done
  [ -n "$ok" ] || die "the multicast tables never showed: $* ($(grep -E 'group|laas-audit' "audit.$tag.dr" | head -5))"
  read_mfts "mfts.$tag"
  "$LAAS_AUDIT" --fabric disc --lfts "$lfts" --allocations "$alloc" --mfts "mfts.$tag" \
    >"audit.$tag" 2>&1 || true
  for p in "$@"; do grep -q "$p" "audit.$tag" || die "ibroute -M and dump_fts -M disagree on: $p"; done
}
mfts_settled 1 lfts alloc.json "group $(mlid_lc "$MLID_B"): tenant b, 10 receivers" \
  "group $(mlid_lc "$MLID_A"): tenant a, 8 receivers" "group $(mlid_lc "$MLID_S"): shared, 2 receivers"
sed -n '/^multicast:/,$p' audit.1
! grep -q '^VIOLATION mcast' audit.1 || die "multicast isolation violated: $(grep '^VIOLATION mcast' audit.1 | head -3)"
grep -q '^OK: no isolation violation' audit.1 || die "laas-audit failed: $(grep -E 'VIOLATION|FAIL' audit.1 | head -5)"
# b's group spans switches (its hosts sit on two leaves): its tree uses links, all b's own.
awk -v g="group $(mlid_lc "$MLID_B"):" 'index($0, g) { found = 1; if ($(NF - 1) == 0) exit 1 }
  END { exit !found }' audit.1 || die "b's group uses no link"

# The live audit (OpenSM's own copy of the tables) agrees.
"$LAASCTL" -s "$SOCK" audit >live.json || die "laasctl audit failed: $(head -c 400 live.json)"
grep -q '"multicast"' live.json || die "laasctl audit has no multicast section"
grep -q "\"class\": \"tenant\"" live.json || die "laasctl audit sees no tenant group"

# A deliberately wrong table: a leaf without b's group forwards it up its first port.
LEAF=$(awk -v m="$(mlid_lc "$MLID_B")" '
  /^Multicast mlids/ { if (name != "" && !has) { print name; exit } name = ""; has = 0
                       if ($0 ~ /\(SW_L1_/) { name = $0; sub(/.*\(/, "", name); sub(/\).*/, "", name) } }
  $1 == m { has = 1 }
  END { if (name != "" && !has) print name }' mfts.1 | head -1)
[ -n "$LEAF" ] || die "every leaf carries b's group"
awk -v leaf="($LEAF):" -v m="$(mlid_lc "$MLID_B")" '
  { print }
  /^Multicast mlids/ { cur = index($0, leaf) > 0 }
  cur && $1 == "MLid" { printf "%s        x\n", m; cur = 0 }' mfts.1 >mfts.bad
cmp -s mfts.1 mfts.bad && die "could not tamper with $LEAF's table"
rc=0
"$LAAS_AUDIT" --fabric disc --lfts lfts --allocations alloc.json --mfts mfts.bad >audit.bad 2>&1 || rc=$?
grep -E 'VIOLATION mcast' audit.bad | head -3
[ $rc = 1 ] || die "laas-audit exit $rc on a wrong multicast table (want 1)"
grep -q "VIOLATION mcast-tenant-group-escapes $(mlid_lc "$MLID_B") \[b\] $LEAF port 1" audit.bad ||
  die "the wrong entry on $LEAF was not reported"

# Leaving: b's group shrinks to the hosts still in it, on b's links.
SIM_HOST=${B_HOSTS[0]} sim "$LAAS_MCAST_JOIN" --leave ff12:601b:ffff::b >/dev/null ||
  die "${B_HOSTS[0]} cannot leave"
wait_log "laas: multicast MLID $MLID_B: 9 member(s), tenant b" 1 30
mfts_settled 2 lfts alloc.json "group $(mlid_lc "$MLID_B"): tenant b, 9 receivers"
grep -q '^OK: no isolation violation' audit.2 || die "laas-audit failed after the leave"

# Another tenant comes: OpenSM only reroutes, and the plugin asks for every group's tree to be
# rebuilt under the new tenants.
before=$(count_log "laas: multicast MLID $MLID_B: 9 member(s), tenant b")
set_tenants a:8 b:10 c:5 d:4
wait_log 'laas: tenants changed: rebuilding 4 multicast group(s)' 1 30
wait_log "laas: multicast MLID $MLID_B: 9 member(s), tenant b" $((before + 1)) 30
sim dump_fts >lfts.3 2>lfts.3.err || die "dump_fts failed"
cp state/allocations.json alloc.3.json
mfts_settled 3 lfts.3 alloc.3.json "group $(mlid_lc "$MLID_B"): tenant b, 9 receivers" \
  "group $(mlid_lc "$MLID_S"): shared, 2 receivers"
grep -q '^OK: no isolation violation' audit.3 ||
  die "laas-audit failed after tenant d came: $(grep -E 'VIOLATION|FAIL' audit.3 | head -5)"

if [ -n "${SM_HOST:-}" ]; then
  # a sits on a leaf of its own: its group reaches the management host over free links.
  log "the management host $SM_HOST joins a's and b's groups"
  join ff12:601b:ffff::a "$SM_HOST" >/dev/null
  join ff12:601b:ffff::b "$SM_HOST" >/dev/null
  wait_log "laas: multicast MLID $MLID_A: 9 member(s), tenant a" 1 30
  wait_log "laas: multicast MLID $MLID_B: 10 member(s), tenant b" 1 30
  mfts_settled 4 lfts.3 alloc.3.json "group $(mlid_lc "$MLID_A"): tenant+management a, 9 receivers" \
    "group $(mlid_lc "$MLID_B"): tenant+management b, 10 receivers"
  grep -E "group $(mlid_lc "$MLID_A")|exemption" audit.4 | head -5
  grep -q '^OK: no isolation violation' audit.4 ||
    die "laas-audit failed with a management member: $(grep -E 'VIOLATION|FAIL' audit.4 | head -5)"
  awk -v g="group $(mlid_lc "$MLID_A"):" 'index($0, g) { found = 1; if ($(NF - 1) == 0) exit 1 }
    END { exit !found }' audit.4 || die "a's group does not reach the management host's leaf"
fi
log "PASS"
