#!/usr/bin/env bash
# sdn_daemon.sh: laas-sdn, the tenant service for an SM without the plugin. A plain upstream
# OpenSM on ibsim -- no plugin; `routing_engine file,no_fallback`, `lfts_file` and
# `partition_config_file` pointing at laas-sdn's files -- and laas-sdn beside it (the same
# node, its discovery by ibnetdiscover as a child process), its reload a script sending OpenSM SIGHUP.
# Tenants are added and removed through laasctl on laas-sdn's socket. After each change: the
# tables read back from the switches (dump_fts) give laas-audit 0 violations, every tenant host
# holds its tenant's P_Key and no other tenant's (smpquery pkeys), and laas-sdn's own read-back
# says the SM applied what it wrote (status, metrics); the hosts a tenant left hold no tenant's
# P_Key. The same after a tenant's leaf up-link is pulled (a tenant added meanwhile) and
# returned (`laasctl reroute`), and after OpenSM is restarted (a tenant added, one removed).
# Last, 12 more runs: none fails and laas-sdn opened its MAD port once (one port per use in
# laas-sdn itself ran ibsim's umad2sim out of agents at the 8th run; ibnetdiscover's ports die
# with its process).
# SDN_RELOAD=true (a reload that tells the SM nothing): the read-back must say the tables were
# not applied and the tenant add must fail -- the check can fail.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup "${1:-sdn_daemon}"
export SIM_HOST=SW_L2_0
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric_console fabric.net

start_file_sm
# No lfts_file yet: nothing routes (no_fallback), but the LIDs are assigned.
wait_log 'No routing engine able to successfully configure' 1 45

# The reload: what `systemctl reload opensm` is on a real host (the PID changes at restarts).
printf '#!/bin/sh\nexec kill -HUP "$(cat %s/osm.pid)"\n' "$WORK" >reload-osm
chmod 755 reload-osm
cat >laas.yaml <<EOC
state_dir: $WORK/state
socket: $WORK/laas.sock
socket_group: ""
socket_read_group: ""
tenants_poll_ms: 0
sdn:
  lfts_file: $WORK/sdn.lfts
  partitions_file: $WORK/sdn.partitions
  reload: [${SDN_RELOAD:-$WORK/reload-osm}]
  discover_interval: 0
  readback_timeout: ${READBACK_S:-20}
EOC
"$LAAS_SDN" --config laas.yaml --check >check.out || die "laas-sdn --check refused laas.yaml"
grep -q '^laas-sdn: discovery runs /[^ ]*ibnetdiscover (.*BUILD VERSION' check.out ||
  die "laas-sdn --check does not say which ibnetdiscover it ran: $(cat check.out)"
# An sdn.ibnetdiscover that is not there: --check names it, before any routing run would fail.
{ cat laas.yaml; echo "  ibnetdiscover: $WORK/no-such/ibnetdiscover"; } >laas.nodiags.yaml
rc=0
"$LAAS_SDN" --config laas.nodiags.yaml --check >check.bad.out 2>check.bad.err || rc=$?
[ $rc -eq 2 ] && grep -q "cannot run $WORK/no-such/ibnetdiscover" check.bad.err ||
  die "laas-sdn --check with a missing ibnetdiscover: exit $rc, $(cat check.bad.err)"
log "--check: $(cat check.out); missing: $(cat check.bad.err)"
SIM_HOST=SW_L2_0 LD_PRELOAD="$UMAD2SIM" "$LAAS_SDN" --config "$WORK/laas.yaml" \
  </dev/null >sdn.log 2>&1 &
SDN_PID=$!
LAAS_EXTRA_PIDS="$SDN_PID"

sdn_runs() { grep -c 'laas-sdn: read back' sdn.log || true; }
# wait_sdn N: until laas-sdn has read back after its Nth reload.
wait_sdn() {
  local deadline=$((SECONDS + 45))
  while [ "$(sdn_runs)" -lt "$1" ]; do
    [ $SECONDS -lt $deadline ] || die "laas-sdn did not read back a ${1}th time: $(tail -5 sdn.log)"
    kill -0 "$SDN_PID" 2>/dev/null || die "laas-sdn exited: $(tail -5 sdn.log)"
    sleep 0.3
  done
}
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 60 "$@"; }

wait_sdn 1
[ "${SDN_RELOAD:-}" = true ] || wait_log 'file tables configured on all switches' 1 45
ctl --json status >status.0.json || die "status failed"
jq -e '.adapter.role | test("master of its own state directory")' status.0.json >/dev/null ||
  die "status does not say laas-sdn is master of its own state: $(jq -c .adapter status.0.json)"
jq -e '.adapter.whole_leaves == true and .adapter.sl2vl_first_hop_drop == false' \
  status.0.json >/dev/null || die "status: $(jq -c .adapter status.0.json)"

# check TAG: tables read back and audited; P_Keys of every tenant host; laas-sdn's read-back.
pkey_of() {
  awk -v p="laas_$1" '$0 ~ "^" p "=" { sub(/^[^=]*=/, ""); sub(/[ ,:].*/, ""); print; exit }' sdn.partitions
}
tenant_names() { jq -r '.tenants[].name' state/allocations.json; }
check_pkeys() {
  local t lid table pkey other e
  for t in $(tenant_names); do
    pkey=$(pkey_of "$t")
    [ -n "$pkey" ] || die "no partition laas_$t in sdn.partitions"
    for lid in $(jq -r ".tenants[] | select(.name == \"$t\") | .hosts[].lid" state/allocations.json); do
      table=$(sim smpquery pkeys "$lid" 1 2>/dev/null | grep -oiE '0x[0-9a-f]{4}' | tr 'A-F' 'a-f')
      echo "$table" | grep >/dev/null -x "$(printf '0x%04x' $((pkey | 0x8000)))" || return 1
      for other in $(tenant_names); do
        [ "$other" != "$t" ] || continue
        other=$(pkey_of "$other")
        for e in $table; do
          [ $((e & 0x7fff)) -ne $((other & 0x7fff)) ] || die "tenant $t host lid $lid holds $other"
        done
      done
    done
  done
}
# check_left LIDS...: hosts no tenant holds (any more) hold no tenant's P_Key, neither of a
# tenant now nor of one removed (removed_pkeys).
removed_pkeys=""
check_left() {
  local lid e t pkeys="$removed_pkeys"
  for t in $(tenant_names); do pkeys="$pkeys $(pkey_of "$t")"; done
  for lid in "$@"; do
    for e in $(sim smpquery pkeys "$lid" 1 2>/dev/null | grep -oiE '0x[0-9a-f]{4}' | tr 'A-F' 'a-f'); do
      for t in $pkeys; do
        [ $((e & 0x7fff)) -ne $((t & 0x7fff)) ] || return 1
      done
    done
  done
}
# host_lids DISC: every adapter port's LID in an ibnetdiscover file.
host_lids() {
  awk '/^Ca/ { ca = 1; next } /^$/ { ca = 0 } ca && /^\[/ { if (match($0, /# lid [0-9]+/)) print substr($0, RSTART + 6, RLENGTH - 6) }' "$1"
}
# free_lids TAG: the hosts no tenant holds (laas-sdn's own node is a switch: none is the SM's).
free_lids() {
  host_lids "disc.$1" | sort -n >"hosts.$1"
  jq -r '.tenants[].hosts[].lid' state/allocations.json | sort -n >"tenant_hosts.$1"
  comm -23 "hosts.$1" "tenant_hosts.$1"
}
check() {
  local tag=$1 tries
  sim ibnetdiscover >"disc.$tag" 2>/dev/null || die "ibnetdiscover failed ($tag)"
  sim dump_fts >"lfts.$tag" 2>/dev/null || die "dump_fts failed ($tag)"
  cp state/allocations.json "alloc.$tag.json"
  "$LAAS_AUDIT" --fabric "disc.$tag" --lfts "lfts.$tag" --allocations "alloc.$tag.json" \
    >"audit.$tag" 2>&1 || die "laas-audit ($tag): $(grep -E 'VIOLATION|laas-audit' "audit.$tag" | head -5)"
  grep -E '^violations' "audit.$tag" || true
  # The P_Keys come with the same sweep; the SM may answer a moment after the tables.
  for tries in 1 2 3 4 5 6 7 8 9 10; do
    check_pkeys && break
    [ "$tries" -lt 10 ] || die "a tenant host lacks its P_Key ($tag)"
    sleep 1
  done
  local free
  free=$(free_lids "$tag")
  [ "$(wc -l <"hosts.$tag")" -ge 32 ] || die "ibnetdiscover found $(wc -l <"hosts.$tag") hosts, not 32 ($tag)"
  for tries in 1 2 3 4 5 6 7 8 9 10; do
    check_left $free && break
    [ "$tries" -lt 10 ] || die "a free host holds a tenant's P_Key ($tag)"
    sleep 1
  done
  ctl --json status >"status.$tag.json" || die "status failed ($tag)"
  # (A change may leave every LFT as it was -- a one-leaf tenant's hosts are reached from their
  # own leaf before and after -- and change only the P_Keys: nothing to read back then.)
  jq -e '.adapter.readback.applied == true and .adapter.readback.blocks_differing == 0' \
    "status.$tag.json" >/dev/null ||
    die "laas-sdn's read-back ($tag): $(jq -c .adapter.readback "status.$tag.json")"
  log "$tag: 0 violations, P_Keys held (none on $(echo $free | wc -w) free hosts), read back $(jq -c '.adapter.readback | {switches, blocks}' "status.$tag.json")"
}

# change CMD...: a laasctl change; it returns once laas-sdn read the tables back.
change() {
  local before
  before=$(sdn_runs)
  ctl "$@" >change.out 2>&1 || die "laasctl $*: $(cat change.out)"
  wait_sdn $((before + 1))
}

if [ "${SDN_RELOAD:-}" = true ]; then
  # The SM is never told: laas-sdn's read-back finds the switches without the new tables. The
  # add waits for a routing that never comes (as for the plugin, a failed application is not
  # the end), so a short wait: 9 s.
  ! "$LAASCTL" -s "$WORK/laas.sock" --timeout 10 tenant add a --hosts 8 >change.out 2>&1 ||
    die "the add succeeded with a reload that does nothing"
  cat change.out
  ctl --json status >status.noreload.json
  jq -e '.adapter.readback.applied == false and .adapter.readback.blocks_differing > 0' \
    status.noreload.json >/dev/null || die "read-back: $(jq -c .adapter.readback status.noreload.json)"
  ctl metrics | grep -x 'laas_sdn_tables_applied 0' || die "metrics do not say not applied"
  log "ok: a reload that tells the SM nothing is found by the read-back"
  exit 0
fi

log "tenants a (8 hosts) and b (6) through laas-sdn's socket"
change tenant add a --hosts 8
change tenant add b --hosts 6
check two
jq -e '.adapter.readback.blocks > 0' status.two.json >/dev/null || die "nothing read back (two)"
# whole_leaves: no leaf holds hosts of two tenants.
shared=$(jq -r '.tenants[] | .name as $t | .hosts[] | "\(.slot.switch) \($t)"' \
  state/allocations.json | sort -u | awk '{print $1}' | uniq -d | grep -c . || true)
[ "$shared" = 0 ] || die "whole_leaves: $shared leaf/leaves hold hosts of two tenants"
change tenant add c --hosts 3
check three
b_lids=$(jq -r '.tenants[] | select(.name == "b") | .hosts[].lid' state/allocations.json)
removed_pkeys=$(pkey_of b)
change tenant remove b
check removed
# b's hosts, free again, hold neither b's P_Key nor another tenant's.
for tries in 1 2 3 4 5 6 7 8 9 10; do
  check_left $b_lids && break
  [ "$tries" -lt 10 ] || die "a host tenant b left still holds a tenant's P_Key (P_Key of b: $removed_pkeys)"
  sleep 1
done
log "removed: b's $(echo $b_lids | wc -w) hosts hold no tenant's P_Key"
ctl metrics >metrics.txt
grep -x 'laas_sdn_tables_applied 1' metrics.txt || die "metrics: $(grep laas_sdn metrics.txt)"

# A cable of a tenant's leaf pulled, then returned: laas-sdn discovers it on laasctl reroute.
# Not an up-link to SW_L2_0: the diagnostics run there and reach the hosts through it.
a_link=$(jq -c '[.tenants[] | select(.name == "a") | .links[] | select(.peer.name != "SW_L2_0")][0]' state/allocations.json)
a_leaf=$(echo "$a_link" | jq -r '.switch.name')
a_port=$(echo "$a_link" | jq -r '.switch.port')
[ -n "$a_leaf" ] && [ "$a_leaf" != null ] || die "tenant a holds no up-link"
log "pull $a_leaf[$a_port] (tenant a's up-link) and reroute"
console "Unlink \"$a_leaf\"[$a_port]"
change reroute
check pulled
# A tenant placed while the cable is out (two leaves: its routes cross the spines).
change tenant add e --hosts 6
check pulled_add
console "ReLink \"$a_leaf\"[$a_port]"
sleep 1
change reroute
check returned
change tenant remove e
check returned_remove

log "restart OpenSM (it reads laas-sdn's files at start); then a change through laas-sdn"
stop_opensm
mv osm.log osm.first.log
start_file_sm
wait_log 'file tables configured on all switches' 1 45
wait_log 'SUBNET UP' 1 45
check restarted
change tenant add d --hosts 4
check after_restart
c_lids=$(jq -r '.tenants[] | select(.name == "c") | .hosts[].lid' state/allocations.json)
removed_pkeys="$removed_pkeys $(pkey_of c)"
change tenant remove c
check after_restart_remove
check_left $c_lids || { sleep 3; check_left $c_lids; } || die "c's hosts still hold a tenant's P_Key"

# Every run discovers (ibnetdiscover, a child) and reads back over the one MAD port: many runs,
# still one port (under ibsim a port per use in laas-sdn exhausted umad2sim's 32 agents at the
# 8th run).
runs_now() { ctl --json status | jq .adapter.runs; }
runs0=$(runs_now)
for i in $(seq 12); do
  ctl reroute >/dev/null 2>&1 || die "laasctl reroute ($i) failed"
  deadline=$((SECONDS + 20))
  until [ "$(runs_now)" -ge $((runs0 + i)) ]; do
    [ $SECONDS -lt $deadline ] || die "laas-sdn did not run after reroute $i: $(ctl --json status | jq -c .adapter)"
    sleep 0.2
  done
done
ctl --json status >status.end.json
ctl metrics >metrics.end.txt
jq -e '.adapter.run_failures == 0 and (.adapter | has("error") | not)' status.end.json >/dev/null ||
  die "a run failed: $(jq -c '.adapter | {run_failures, error}' status.end.json)"
grep -x 'laas_sdn_mad_port_opens_total 1' metrics.end.txt ||
  die "the MAD port was opened more than once: $(grep "^laas_sdn_mad" metrics.end.txt)"
log "$(jq .adapter.runs status.end.json) runs over one MAD port, none failed"
# The log says what the port is for: discovery is ibnetdiscover's, with ports of its own.
grep 'laas-sdn: opened the MAD port' sdn.log >port.lines || die "laas-sdn did not log its MAD port"
[ "$(wc -l <port.lines)" = 1 ] && grep -q "discovery runs ibnetdiscover as a child" port.lines &&
  ! grep -q "for discovery" port.lines || die "the MAD port's log line: $(cat port.lines)"
log "ok"
