#!/usr/bin/env bash
# hostile.sh: the control socket inside the real OpenSM under hostile clients.
# 32 slow clients (a byte every 2 s), then root's `laasctl status` answers within a few
# seconds; 200 connections at once from one uid leave other uids and root served; a client
# that pipelines requests and never reads, then SIGTERM: OpenSM exits within 10 s.
# HOSTILE_STEPS (default "slow flood noread") picks the parts, e.g. to show one failing on an
# older plugin (LAAS_PLUGIN_DIR).
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup hostile
: "${LAAS_HOSTILE:?set by ctest: the laas-hostile test client}"
# Other uids must reach the socket, and may read: they act with gid 65534, the socket's
# read-only group here (start_demo).
PUBLIC_SOCKET=1 start_demo
SOCK=$LAAS_SOCKET_PATH
setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null || die "setpriv cannot switch uid"
as_uid() {
  local uid=$1
  shift
  setpriv --reuid="$uid" --regid=65534 --clear-groups "$@"
}

# status_within SECONDS [uid]: `laasctl status` answers, in time.
status_within() {
  local limit=$1 uid=${2:-0} start end rc=0
  start=$(date +%s%N)
  if [ "$uid" = 0 ]; then
    "$LAASCTL" -s "$SOCK" --timeout "$limit" status >status.out 2>&1 || rc=$?
  else
    as_uid "$uid" "$LAASCTL" -s "$SOCK" --timeout "$limit" status >status.out 2>&1 || rc=$?
  fi
  end=$(date +%s%N)
  [ "$rc" = 0 ] || die "laasctl status as uid $uid exited $rc: $(cat status.out)"
  grep -q 'fabric:' status.out || die "laasctl status as uid $uid: $(cat status.out)"
  log "laasctl status as uid $uid answered in $(((end - start) / 1000000)) ms"
  [ $(((end - start) / 1000000)) -le $((limit * 1000)) ] || die "status took too long"
}

steps=" ${HOSTILE_STEPS:-slow flood noread} "

# 1. 32 slow clients (one byte every 2 s) from uid 65534.
if [[ $steps == *" slow "* ]]; then
as_uid 65534 "$LAAS_HOSTILE" slow "$SOCK" 32 2000 14 >slow.out &
SLOW=$!
sleep 3
status_within 3 0
status_within 3 65533
wait "$SLOW"
log "$(cat slow.out)"
grep -qE 'slow: 32 connections, 24 refused busy, 8 cut \(first after 1[0-2]\.' slow.out ||
  die "slow clients were not bounded as expected: $(cat slow.out)"
fi

# 2. 200 connections at once from uid 65534.
if [[ $steps == *" flood "* ]]; then
as_uid 65534 "$LAAS_HOSTILE" flood "$SOCK" 200 8 >flood.out &
FLOOD=$!
for _ in $(seq 1 50); do
  [ -s flood.out ] && break
  sleep 0.2
done
log "$(cat flood.out)"
grep -q 'flood: 200 connections, 192 refused busy, 0 could not connect' flood.out ||
  die "the flood was not limited to 8 connections: $(cat flood.out)"
status_within 3 0
status_within 3 65533
rc=0
as_uid 65534 "$LAASCTL" -s "$SOCK" status >busy.out 2>&1 || rc=$?
[ "$rc" = 75 ] || die "a refused connection exits $rc, expected 75: $(cat busy.out)"
grep -q 'too many connections from uid 65534' busy.out || die "$(cat busy.out)"
wait "$FLOOD"
fi

# 3. A client that never reads its replies, then SIGTERM.
if [[ $steps == *" noread "* ]]; then
"$LAAS_HOSTILE" noread "$SOCK" 60 >noread.out &
NOREAD=$!
for _ in $(seq 1 50); do
  [ -s noread.out ] && break
  sleep 0.2
done
log "$(cat noread.out)"
start=$(date +%s%N)
kill -TERM "$OSM_PID"
for _ in $(seq 1 150); do
  kill -0 "$OSM_PID" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$OSM_PID" 2>/dev/null && die "OpenSM still runs 15 s after SIGTERM"
wait "$OSM_PID" 2>/dev/null || true
OSM_PID=""
elapsed=$((($(date +%s%N) - start) / 1000000))
log "OpenSM exited $elapsed ms after SIGTERM with a client that never reads"
[ "$elapsed" -le 10000 ] || die "OpenSM took $elapsed ms to exit"
kill "$NOREAD" 2>/dev/null || true
wait "$NOREAD" 2>/dev/null || true
fi
rm -rf "$SOCKDIR"
log "PASS hostile"
