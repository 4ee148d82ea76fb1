#!/usr/bin/env bash
# chaos.sh NAME SPEC EVENTS SEED: random hardware and tenant events on a fabric under ibsim
# with the real OpenSM and the plugin, the tables read back and audited after every event.
# Events: a host, a switch-to-switch cable or a switch (never the SM's) goes down or comes
# back (ibsim console + heavy sweep), a tenant is added or removed (laasctl). After each:
# laas routed the fabric (no fallback), laas-audit --layout is clean, every tenant is listed
# and placed, and a new tenant never received a host another tenant held. At the end every
# part comes back and the extra tenants go: the tables read back must be bit-identical to
# the ones before the first event. Figures go to $WORK/chaos.summary (and stdout).
# QOS=1 runs OpenSM with `qos TRUE` and audits the SL2VL tables read back after every event too.
# MAX_DOWN (default 4) caps the parts down at once: faults are repaired as on a real fabric
# (with dozens of parts down, the SM's switch may no longer reach every host up*/down*).
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
NAME=$1 SPEC=${2//:/;} EVENTS=$3 SEED=$4
laas_setup "$NAME"
export SIM_HOST=SW_L2_0 POLL_MS=0
RANDOM=$SEED
"$LAAS_TOPOGEN" "$SPEC" -o fabric.net
start_fabric_console fabric.net
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
wait_log 'SUBNET UP' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
names_of() { jq -r '.. | objects | select(has("hosts")) | .hosts[]? | objects | .name' "$1" | sort -u; }

mapfile -t HOSTS < <(grep -o '^Hca.*"comp-[0-9]*"' fabric.net | grep -o 'comp-[0-9]*')
# Switch-to-switch cables by their lower end (a leaf's or level-2 switch's up-port).
mapfile -t CABLES < <(awk '$1 == "Switch" || $1 == "Hca" { sw = $1 == "Switch"; cur = $3; gsub(/"/, "", cur) }
  sw && $1 ~ /^\[/ && $2 ~ /"SW_L/ { split($2, a, "\""); if (cur < a[2]) print cur $1 }' fabric.net)
mapfile -t SWITCHES < <(grep -o '^Switch.*"SW_L[0-9]_[0-9]*"' fabric.net | grep -o 'SW_L[0-9]_[0-9]*' |
  grep -v "^$SIM_HOST\$")
log "chaos on $SPEC: ${#HOSTS[@]} hosts, ${#CABLES[@]} cables, ${#SWITCHES[@]} switches, $EVENTS events, seed $SEED"

BASE=(a:3 b:4 c:2)
for t in "${BASE[@]}"; do
  ctl tenant add "${t%%:*}" --hosts "${t##*:}" >/dev/null 2>&1 || die "cannot add $t"
done
audit_layout start
cp lfts.start lfts.reference

declare -A DOWN=()  # key (the target without quotes) -> console target, while down
declare -A COUNT=()
TENANTS=(a b c)
EXTRA=()
next=0
t_start=$SECONDS
max_down=0

pick_down() {  # a random down part, or nothing
  local keys=("${!DOWN[@]}")
  [ ${#keys[@]} -gt 0 ] && echo "${DOWN[${keys[RANDOM % ${#keys[@]}]}]}"
}

check_tenants() {
  local list t
  list=$(ctl tenant list 2>&1) || die "tenant list failed at event $1: $list"
  for t in "${TENANTS[@]}"; do
    grep -q "\b$t\b" <<<"$list" || die "tenant $t no longer listed at event $1"
  done
  [ "$(ctl --json status | jq -r .tenants_not_placed)" = 0 ] ||
    die "a tenant is not placed at event $1: $(head -5 <<<"$list")"
}

for ((e = 1; e <= EVENTS; e++)); do
  r=$((RANDOM % 100))
  kind=""
  if [ $r -lt 18 ]; then
    kind=host-down target="\"${HOSTS[RANDOM % ${#HOSTS[@]}]}\""
  elif [ $r -lt 36 ]; then
    c=${CABLES[RANDOM % ${#CABLES[@]}]}
    kind=cable-down target="\"${c%%[*}\"[${c##*[}"
  elif [ $r -lt 44 ]; then
    kind=switch-down target="\"${SWITCHES[RANDOM % ${#SWITCHES[@]}]}\""
  elif [ $r -lt 70 ]; then
    target=$(pick_down) && [ -n "$target" ] && kind=up
  elif [ $r -lt 86 ]; then
    kind=tenant-add
  else
    [ ${#EXTRA[@]} -gt 0 ] && kind=tenant-remove
  fi
  [ -n "$kind" ] || kind=tenant-add
  if [[ $kind == *-down ]] && [ ${#DOWN[@]} -ge "${MAX_DOWN:-4}" ]; then
    kind=up target=$(pick_down)
  fi
  case $kind in
    *-down)
      key=${target//\"/}
      [ -n "${DOWN[$key]:-}" ] && { e=$((e - 1)); continue; }
      console "Unlink $target"
      DOWN[$key]=$target
      heavy_sweep "$kind $target"
      ;;
    up)
      console "ReLink $target"
      key=${target//\"/}
      unset "DOWN[$key]"
      heavy_sweep "up $target"
      ;;
    tenant-add)
      name=t$next
      next=$((next + 1))
      held_hosts >held.before
      [ -s held.before ] || die "event $e: the service lists no held host"
      if ctl --json tenant add "$name" --hosts $((1 + RANDOM % 5)) >add.json 2>add.err; then
        names_of add.json >add.hosts
        [ -s add.hosts ] || die "event $e: the reply for $name names no host"
        if comm -12 held.before add.hosts | grep >/dev/null .; then
          die "event $e: $name received held host(s) $(comm -12 held.before add.hosts | tr '\n' ' ')"
        fi
        TENANTS+=("$name")
        EXTRA+=("$name")
      else
        kind=tenant-refused
      fi
      ;;
    tenant-remove)
      i=$((RANDOM % ${#EXTRA[@]}))
      name=${EXTRA[i]}
      ctl tenant remove "$name" >/dev/null 2>&1 || die "event $e: cannot remove $name"
      EXTRA=("${EXTRA[@]:0:i}" "${EXTRA[@]:i+1}")
      TENANTS=(a b c "${EXTRA[@]}")
      ;;
  esac
  COUNT[$kind]=$((${COUNT[$kind]:-0} + 1))
  audit_layout "e$e"
  check_tenants "$e"
  [ ${#DOWN[@]} -gt "$max_down" ] && max_down=${#DOWN[@]}
  rm -f "disc.e$e" "lfts.e$e" "alloc.e$e.json" "disc.e$e.err" "lfts.e$e.err"
  [ $((e % 10)) -eq 0 ] && log "event $e: ${#DOWN[@]} part(s) down, ${#TENANTS[@]} tenants, audit clean"
done

# Everything comes back, the extra tenants go: the tables are the ones from the start.
for key in "${!DOWN[@]}"; do console "ReLink ${DOWN[$key]}"; done
for name in "${EXTRA[@]}"; do ctl tenant remove "$name" >/dev/null 2>&1 || die "cannot remove $name"; done
heavy_sweep "final relink"
audit_layout final
cmp -s lfts.reference lfts.final || die "tables after the chaos differ from the start: $(diff lfts.reference lfts.final | head -5)"
faults_seen=$(count_log 'laas: fault: ')
cleared=$(count_log 'laas: fault cleared')
{
  echo "chaos $SPEC seed $SEED: $EVENTS events in $((SECONDS - t_start)) s"
  for k in host-down cable-down switch-down up tenant-add tenant-refused tenant-remove; do
    echo "  $k: ${COUNT[$k]:-0}"
  done
  echo "  audits: $((EVENTS + 2)), all clean; at most $max_down part(s) down at once"
  echo "  OpenSM log: $faults_seen fault lines, $cleared cleared lines; fallbacks: 0"
  echo "  final tables bit-identical to the start"
} | tee chaos.summary
log "PASS $NAME"
