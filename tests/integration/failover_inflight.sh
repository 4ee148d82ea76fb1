#!/usr/bin/env bash
# failover_inflight.sh: kill -9 of a master that has not yet answered the standby's SMInfo polls
# (a busy master: paused with SIGSTOP for QUEUE_S seconds, default 1.5, so that the standby's
# polls wait inside it, then resumed and killed at once). The standby must take over and apply
# its tables within 30 s.
# Under ibsim a request delivered to an SM that dies is never answered (umad2sim emulates no
# send timeout), and OpenSM's sweep waits for every outstanding SMP: without lib_ha.sh's
# HA_KILL_QUIESCE_S (the standby paused while the master drains its polls, then the kill) the
# standby enters DISCOVERING and stays there at 0 % CPU, as at the LID limit
# (bench/plugin_routing_results.md, "DISCOVERING stall"). HA_KILL_QUIESCE_S=0 shows it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ha.sh"
laas_enter_namespace "$@"
ha_setup "${1:-failover_inflight}"
export HA_NODES="SW_L2_0 SW_L2_1"
export HA_KILL_QUIESCE_S=${HA_KILL_QUIESCE_S:-1}
ha_pair_up
ctl 1 tenant add a --hosts 8 >add.a.out 2>&1 || die "tenant add a failed: $(cat add.a.out)"
sleep 1
from2=$(log_lines 2)

# The master stops answering; the standby polls it every second (HA_POLL_MS), so its polls
# wait in the master's socket. Resumed and killed at once, before it can answer them.
kill -STOP "$OSM_PID_1"
sleep "${QUEUE_S:-1.5}"
kill -CONT "$OSM_PID_1"
kill_sm 1
log "master killed with the standby's polls unanswered (quiesce ${HA_KILL_QUIESCE_S} s)"

deadline=$((SECONDS + 30))
until [ "$(first_line_of 2 'Entering MASTER state' "$from2")" -gt 0 ] &&
  [ "$(first_line_of 2 'laas: forwarding tables applied' "$(first_line_of 2 'Entering MASTER state' "$from2")")" -gt 0 ]; do
  if [ $SECONDS -ge $deadline ]; then
    echo "---- SM 2 since the kill ----" >&2
    tail -n +$((from2 + 1)) osm2.log | grep -E 'Entering|ERR 3113|SUBNET' | tail -8 >&2 || true
    echo "---- ibsim ----" >&2
    grep -E 'seems to be dead|no one to handle' ibsim.log | tail -4 >&2 || true
    die "the standby did not take over within 30 s of the kill: stalled in DISCOVERING (a poll lost in the killed master)"
  fi
  check_sm 2
  sleep 0.2
done
took=$(elapsed "$KILL_AT" "$(log_time 2 "$(last_line_of 2 'laas: forwarding tables applied' "$from2")")")
[ "$(tenant_names 2)" = "a " ] || die "the new master lists '$(tenant_names 2)', expected 'a '"
log "ok: the standby took over and applied its tables ${took} s after the kill"
