#!/usr/bin/env bash
# failover_chaos.sh [NAME]: FAILOVERS (default 6; an acceptance run uses 20 or more)
# kill -9s of the master SM of two OpenSMs with the plugin on one ibsim fabric (the demo tree),
# sharing one state directory. Between events, random tenant adds and removes at the current
# master (exit 0: acknowledged, must stay; exit 1: refused, must be absent); sometimes an add is
# in flight when the master dies (then it may be there or not, but wholly). After each kill the
# killed SM comes back, at random as a standby or taking the fabric back (a handover).
# After every change of master: its first routing run routed every acknowledged tenant (the
# plugin's 'took over' line), `tenant list` and state.json name exactly the acknowledged set,
# laas-audit passes on the tables read back, and those tables are bit-identical to the ones
# before the change whenever the tenants are the same.
# Prints the time from each kill -9 to the new master's "forwarding tables applied" line
# (OpenSM's log timestamps) and from each handover request to it, then min/median/max.
# SEED fixes the random choices. QOS=1: qos TRUE on both, SL2VL read back and audited too.
# ETCD=1: the SMs share their state through a three-member etcd (`state_store: etcd`) and
# nothing else (each its own state directory), and before every failover an etcd member chosen
# at random is killed (-9) too, tenants changed without it, then it is restarted: FAILOVERS
# kill -9s of masters and as many of etcd members. Every part of the shared state is then in etcd:
# after each change of master, etcd's record of the tenants last routed names exactly the
# acknowledged set, the audit reads the parts from etcd, and no SM wrote them into its own
# directory. scripts/bench-etcd-chaos.sh runs the acceptance's 20-kill version and reports it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ha.sh"
source "$(dirname "$0")/lib_etcd.sh"
laas_enter_namespace "$@"
NAME=${1:-failover_chaos}
FAILOVERS=${FAILOVERS:-6}
SEED=${SEED:-$((RANDOM * 32768 + RANDOM))}
ha_setup "$NAME"
RANDOM=$SEED
if [ "${ETCD:-0}" = 1 ]; then
  command -v etcd >/dev/null || { echo "SKIP: no etcd"; exit 77; }
  trap 'rc=$?; set +e; etcd_stop_cluster; (exit $rc); ha_teardown' EXIT
  etcd_start_cluster "$WORK/etcd"
  export HA_OWN_STATE_DIR=1
  export LAAS_YAML_EXTRA="state_store: etcd
etcd: {endpoints: [127.0.0.1:23791, 127.0.0.1:23792, 127.0.0.1:23793], timeout_ms: 1000}"
fi
ETCD_KILLS=0
NODE_1=SW_L2_0 NODE_2=SW_L2_1
HA_NODES="$NODE_1 $NODE_2"
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric fabric.net
start_sm 1 15 "$NODE_1"
wait_master 1 60
start_sm 2 1 "$NODE_2"
wait_standby 2 60
log "failover chaos: $FAILOVERS kill -9s, seed $SEED; SM 1 at $NODE_1 master, SM 2 at $NODE_2 standby"
CUR=1

declare -A ACKED=() # tenant name -> hosts, acknowledged by the master
next=0
KILL_TIMES=()
HANDOVER_TIMES=()
PENDING="" # an add in flight when the master died: unknown until the new master answers

acked_names() {
  [ ${#ACKED[@]} -gt 0 ] || return 0
  printf '%s\n' "${!ACKED[@]}" | sort | tr '\n' ' '
}
tenants_in_state() {
  if [ "${ETCD:-0}" = 1 ]; then
    ETCDCTL_API=3 etcdctl --endpoints "$(etcd_endpoints)" get --print-value-only /laas/state
  else
    cat state/state.json
  fi | jq -r '.tenants[].name' | sort | tr '\n' ' '
}

# tenant_ops: one to three random adds and removes at the current master.
tenant_ops() {
  local rc name hosts names
  for _ in $(seq 1 $((1 + RANDOM % 3))); do
    if { [ ${#ACKED[@]} -gt 0 ] && [ $((RANDOM % 3)) = 0 ]; } || [ ${#ACKED[@]} -ge 6 ]; then
      names=("${!ACKED[@]}")
      name=${names[RANDOM % ${#names[@]}]}
      rc=0
      ctl "$CUR" tenant remove "$name" >op.out 2>&1 || rc=$?
      [ $rc -eq 0 ] || die "tenant remove $name at SM $CUR: exit $rc: $(cat op.out)"
      unset "ACKED[$name]"
    else
      name=t$((++next)) hosts=$((1 + RANDOM % 4))
      rc=0
      ctl "$CUR" tenant add "$name" --hosts "$hosts" >op.out 2>&1 || rc=$?
      case $rc in
      0) ACKED[$name]=$hosts ;;
      1) log "  add $name ($hosts hosts) refused: $(head -c 120 op.out)" ;;
      *) die "tenant add $name at SM $CUR: exit $rc: $(cat op.out)" ;;
      esac
    fi
  done
}

# check_master M TAG: M just became master (MASTER_LINE set by wait_master): its first routing
# run took the acknowledged tenants over, they are listed, saved and routed, the audit passes.
check_master() {
  local m=$1 tag=$2 took routed want n
  wait_sm_log "$m" 'laas: routed' 1 30 "$MASTER_LINE"
  if [ -n "$PENDING" ]; then
    # The in-flight add: wholly there (listed and in state.json) or wholly absent.
    if grep -qw -- "$PENDING" <<<"$(tenant_names "$m")"; then
      ACKED[$PENDING]=$PENDING_HOSTS
      log "  the in-flight add of $PENDING was kept"
    else
      log "  the in-flight add of $PENDING was dropped"
    fi
    PENDING=""
  fi
  want=$(acked_names)
  n=${#ACKED[@]}
  took=$(tail -n +"$MASTER_LINE" "osm$m.log" | grep -m1 'laas: took over as master' || true)
  routed=$(tail -n +"$MASTER_LINE" "osm$m.log" | grep -m1 'laas: routed' || true)
  [ -n "$took" ] || die "$tag: SM $m became master but logged no 'laas: took over as master'"
  grep -q " $n tenant(s) from " <<<"$took" || die "$tag: SM $m took over, expected $n tenants: $took"
  grep -q ", $n tenants," <<<"$routed" || die "$tag: SM $m's first run did not route $n tenants: $routed"
  [ "$(tenant_names "$m")" = "$want" ] || die "$tag: SM $m lists '$(tenant_names "$m")', acknowledged '$want'"
  [ "$(tenants_in_state)" = "$want" ] || die "$tag: state.json has '$(tenants_in_state)', acknowledged '$want'"
  if [ "${ETCD:-0}" = 1 ]; then
    etcd_wait_routed "$want" ||
      die "$tag: etcd's /laas/allocations names '$(etcd_routed_names)', acknowledged '$want'"
    etcd_export_state state
    etcd_no_local_parts state1 state2
  fi
  sleep 1
  audit_layout "$tag"
}

# same_tables BEFORE AFTER WHAT: the LFTs read back are bit-identical.
same_tables() {
  cmp -s "lfts.$1" "lfts.$2" || die "the LFTs differ after $3: $(diff "lfts.$1" "lfts.$2" | head -5)"
}

for i in $(seq 1 "$FAILOVERS"); do
  if [ "${ETCD:-0}" = 1 ]; then
    member=$((1 + RANDOM % 3))
    etcd_stop_member "$member"
    ETCD_KILLS=$((ETCD_KILLS + 1))
    # If it was etcd's leader, the other two elect another first (changes meanwhile: busy).
    etcd_wait_healthy 10 || die "etcd has no quorum with member $member down"
    etcd_wait_sm "$CUR" || die "SM $CUR does not see etcd answering with member $member down"
    tenant_ops
    [ "$(tenants_in_state)" = "$(acked_names)" ] || die "etcd member $member down: etcd holds '$(tenants_in_state)'"
    etcd_start_member "$member"
    log "etcd member $member killed (-9), tenants changed without it, restarted"
  fi
  tenant_ops
  other=$((3 - CUR))
  sim dump_fts >"lfts.pre$i" 2>"lfts.pre$i.err" || die "dump_fts failed"
  from=$(log_lines "$other")
  had=$(acked_names) # the tables must stay bit-identical unless an add in flight is kept
  PENDING=""
  ha_quiesce "$CUR" # the standby's pause before the kill, taken before an add in flight starts
  if [ $((RANDOM % 3)) = 0 ]; then
    # An add in flight when the master dies.
    PENDING=t$((++next)) PENDING_HOSTS=$((1 + RANDOM % 3))
    ctl "$CUR" tenant add "$PENDING" --hosts "$PENDING_HOSTS" --no-wait >inflight.out 2>&1 &
    client=$!
    sleep "0.0$((RANDOM % 3))$((RANDOM % 10))" # 0-29 ms: saving and answering an add takes ms
  fi
  kill_sm "$CUR"
  if [ -n "$PENDING" ]; then
    rc=0
    wait "$client" || rc=$?
    log "  add $PENDING in flight at the kill: exit $rc"
    case $rc in
    0) ACKED[$PENDING]=$PENDING_HOSTS PENDING="" ;; # acknowledged: must be there
    1) PENDING="" ;;                                # refused: must be absent
    esac
  fi
  wait_master "$other" 60 "$from"
  t_master=$(elapsed "$KILL_AT" "$(log_time "$other" "$MASTER_LINE")")
  t_applied=$(elapsed "$KILL_AT" "$(log_time "$other" "$APPLIED_LINE")")
  KILL_TIMES+=("$t_applied")
  log "failover $i: kill -9 of SM $CUR -> SM $other master after ${t_master} s, tables applied after ${t_applied} s"
  tail -n +"$from" "osm$other.log" | grep -m1 'laas: failover:' | sed 's/.*-> laas: /  /' || true
  check_master "$other" "kill$i"
  [ "$(acked_names)" != "$had" ] || same_tables "pre$i" "kill$i" "failover $i"
  dead=$CUR CUR=$other
  tenant_ops
  if [ $((RANDOM % 2)) = 0 ]; then
    restart_standby "$dead" "$(eval "echo \$NODE_$dead")"
    log "  SM $dead back as standby"
  else
    sim dump_fts >"lfts.preho$i" 2>"lfts.preho$i.err" || die "dump_fts failed"
    take_back "$dead" "$(eval "echo \$NODE_$dead")"
    t_applied=$(elapsed "$HANDOVER_AT" "$(log_time "$dead" "$APPLIED_LINE")")
    HANDOVER_TIMES+=("$t_applied")
    log "  SM $dead back and master again (handover): tables applied ${t_applied} s after the request"
    PENDING=""
    check_master "$dead" "ho$i"
    same_tables "preho$i" "ho$i" "handover $i"
    CUR=$dead
  fi
done

# stats NAME VALUES...: min/median/max.
stats() {
  local name=$1
  shift
  [ $# -gt 0 ] || return 0
  printf '%s\n' "$@" | sort -g | awk -v name="$name" '{ v[NR] = $1 }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          printf "%s (%d): min %.3f s, median %.3f s, max %.3f s\n", name, NR, v[1], m, v[NR] }'
}
{
  stats "kill -9 to the new master's tables applied" "${KILL_TIMES[@]}"
  stats "handover request to the new master's tables applied" "${HANDOVER_TIMES[@]}"
  echo "tenants at the end: $(acked_names)"
} | tee failover_chaos.summary
if [ "${ETCD:-0}" = 1 ]; then
  # Both SMs hold the same state: the standby's list is the master's (what its watch brought).
  for _ in $(seq 50); do [ "$(tenant_names 1)" = "$(tenant_names 2)" ] && break; sleep 0.1; done
  [ "$(tenant_names 1)" = "$(tenant_names 2)" ] ||
    die "the SMs differ at the end: SM 1 '$(tenant_names 1)', SM 2 '$(tenant_names 2)'"
  etcd_wait_routed "$(acked_names)" ||
    die "at the end etcd's /laas/allocations names '$(etcd_routed_names)', acknowledged '$(acked_names)'"
  etcd_no_local_parts state1 state2
fi
log "PASS failover_chaos ($FAILOVERS failovers, ${#HANDOVER_TIMES[@]} handovers, $ETCD_KILLS etcd member kills, seed $SEED)"
