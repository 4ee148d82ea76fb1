#!/usr/bin/env bash
# load.sh: 8 concurrent laasctl clients send 1,000 mixed requests (add, remove, list, show,
# plan) to the plugin inside OpenSM. No crash; no tenant lost or duplicated; the final
# tenants are what a sequential replay of the acknowledged requests gives; audit clean.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup load
start_demo
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 60 "$@"; }

CLIENTS=8
PER_CLIENT=125
client() {
  local c=$1 i name op rc hosts
  RANDOM=$((c * 7919))
  for ((i = 0; i < PER_CLIENT; i++)); do
    name="c$c-$((RANDOM % 4))"
    case $((RANDOM % 6)) in
      0 | 1) op=add ;;
      2) op=remove ;;
      3) op=list ;;
      4) op=show ;;
      5) op=plan ;;
    esac
    rc=0
    case $op in
      add)
        hosts=$((1 + RANDOM % 3))
        if ((RANDOM % 4 == 0)); then
          ctl tenant add "$name" --hosts $hosts >/dev/null 2>err.$c || rc=$?
        else
          ctl tenant add "$name" --hosts $hosts --no-wait >/dev/null 2>err.$c || rc=$?
        fi
        ;;
      remove) ctl tenant remove "$name" --no-wait >/dev/null 2>err.$c || rc=$? ;;
      list) ctl tenant list >/dev/null 2>err.$c || rc=$? ;;
      show) ctl tenant show "$name" >/dev/null 2>err.$c || rc=$? ;;
      plan) ctl tenant add "$name-p" --hosts 2 --dry-run >/dev/null 2>err.$c || rc=$? ;;
    esac
    # The error code laasctl names, e.g. (duplicate), (refused), (not_found).
    echo "$name $op $rc $(sed -n 's/.*(\([a-z_]*\))$/\1/p' err.$c | tail -1)"
    : >err.$c
  done >"client.$c.log"
}
start=$SECONDS
pids=()
for ((c = 0; c < CLIENTS; c++)); do
  client "$c" &
  pids+=($!)
done
wait "${pids[@]}"  # not a bare wait: opensm and ibsim are children too
log "$((CLIENTS * PER_CLIENT)) requests from $CLIENTS clients in $((SECONDS - start)) s"
kill -0 "$OSM_PID" || die "opensm died under load"
cat client.*.log >requests.log
[ "$(wc -l <requests.log)" = $((CLIENTS * PER_CLIENT)) ] || die "not every request completed"
bad=$(awk '$3 != 0 && $3 != 1 { print }' requests.log | head -5)
[ -z "$bad" ] || die "requests failed with unexpected exit codes: $bad"
# Refusals are the expected kinds only: nothing unavailable, internal or timed out.
odd=$(awk '$3 == 1 && $4 != "duplicate" && $4 != "refused" && $4 != "not_found" { print }' requests.log | head -5)
[ -z "$odd" ] || die "unexpected refusals: $odd"
# Replay: per tenant name (each owned by one client, in order) the last acknowledged change.
expected=$(awk '$3 == 0 && $2 == "add" { live[$1] = 1 } $3 == 0 && $2 == "remove" { delete live[$1] }
  END { for (n in live) print n }' requests.log | sort | tr '\n' ' ')
actual=$(ctl --json tenant list | sed -n 's/.*"name": "\([^"]*\)".*/\1/p' | sort | tr '\n' ' ')
[ "$expected" = "$actual" ] || die "tenants '$actual', but the acknowledged requests give '$expected'"
# (tenant names only: state.json also names each host)
stored=$(jq -r '.tenants[].name' state/state.json | sort | tr '\n' ' ')
[ "$expected" = "$stored" ] || die "state.json holds '$stored', expected '$expected'"
log "acknowledged: $(awk '$3 == 0' requests.log | wc -l); refused: $(awk '$3 == 1 { print $4 }' requests.log | sort | uniq -c | tr -s ' \n' ' '); final tenants: $actual"
# Let the last re-route land, then audit live and read-back tables.
for _ in $(seq 1 100); do
  st=$(ctl --json status | tr -d ' \n')
  gen=$(echo "$st" | sed -n 's/.*"generation":\([0-9]*\).*/\1/p')
  routed=$(echo "$st" | sed -n 's/.*"routed_generation":\([0-9]*\).*/\1/p')
  [ "$gen" = "$routed" ] && break
  sleep 0.2
done
[ "$gen" = "$routed" ] || die "generation $gen was never routed (routed $routed)"
ctl audit >live-audit.out 2>&1 || die "laasctl audit: $(head -20 live-audit.out)"
snapshot final >/dev/null
log "PASS load"
