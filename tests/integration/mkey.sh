#!/usr/bin/env bash
# mkey.sh: OpenSM's management keys with the plugin, the real OpenSM (qos TRUE), ibsim and
# infiniband-diags. The demo tree xgft(2;4,8;1,4), OpenSM with the plugin on comp-1, tenants a (6)
# and b (8).
#
# What cannot be tested here: ibsim (0.10, Debian 12) enforces no M_Key. It never reads the
# M_Key of an SMP, keeps neither the M_Key nor ProtectBits nor the lease period of a PortInfo
# Set, and answers every Get and Set (PortInfo, LFT, P_Key table, SL2VL) from any node; OpenSM
# reads M_Key 0 back and so does not check the key of SMInfo sent to its own port either. A Set
# refused for want of the key never happens under ibsim (docs/security.md, "What was verified
# under ibsim"). This test checks what the plugin and OpenSM themselves do with the keys:
# 1. OpenSM with m_key, m_key_protection_level 2, m_key_lease_period 60, sm_key and sa_key: OpenSM takes
#    them (and turns sweeping back on below the lease), tenants are placed and audited clean,
#    and the plugin logs no key warning through heavy sweeps. A tenant's root starts its own
#    OpenSM with another SM_Key (0, so that it stays standby under ibsim; a non-zero one would
#    make it ignore the master and sweep as a second master): the master logs the non-matching
#    SM_Key and ignores it; every LFT entry read back is unchanged.
# 2. OpenSM restarted without keys: the plugin warns that there is no m_key at every routing
#    run; tables unchanged.
# 3. OpenSM restarted with m_key_protection_level 1, m_key_lease_period 0 and sm_key 0: the
#    warning names all three at every routing run; tables unchanged.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup mkey
export SIM_HOST=comp-1 QOS=1
MKEY=0x5a5a0c0ffee1d00d
SMKEY=0x7e11a5ecc0de0001
SAKEY=0x3c3c5a5a0f0f0001
KEYS=("m_key $MKEY" "m_key_protection_level 2" "m_key_lease_period 60" "sm_key $SMKEY" "sa_key $SAKEY")
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric_console fabric.net
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
# since LINE: osm.log after its first LINE lines (OpenSM appends across restarts).
since() { tail -n +$(($1 + 1)) osm.log; }
lines() { wc -l <osm.log; }
WARN='WARNING: OpenSM runs with'
RUNS='laas tables configured on all switches'
# warned_every_run FROM WHAT: every routing run since line FROM logged the key warning, which
# names WHAT.
warned_every_run() {
  local runs warnings
  runs=$(since "$1" | grep -c "$RUNS" || true)
  warnings=$(since "$1" | grep -c "$WARN" || true)
  [ "$runs" -ge 1 ] || die "no routing run since line $1"
  [ "$warnings" -ge "$runs" ] || die "$runs routing runs, $warnings key warnings"
  since "$1" | grep "$WARN" | tail -1 | grep >/dev/null -F -- "$2" ||
    die "the key warning does not name '$2': $(since "$1" | grep "$WARN" | tail -1)"
}
# restart [opensm.conf lines]: OpenSM stopped and started again on the same state. Stopped, not
# killed: ibsim clears the IsSM bit of a port when it finds a killed SM's connection dead, even
# with a new SM running there.
restart() {
  local applied
  stop_opensm
  applied=$(count_log 'laas: forwarding tables applied')
  start_opensm "$@"
  wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
}
# unchanged TAG: the tables read back equal the good ones and pass the audit.
unchanged() {
  audit_layout "$1"
  sort "lfts.$1" | grep -E '^0x' >"entries.$1"
  cmp -s entries.good "entries.$1" ||
    die "$1: the tables changed: $(diff entries.good "entries.$1" | head -6)"
}

# 1. The keys set.
start_opensm "${KEYS[@]}"
wait_log 'laas: forwarding tables applied' 1 45
grep -q "Loading Cached Option:m_key = $MKEY" opensm.out || die "OpenSM did not read m_key"
grep -q "Loading Cached Option:sm_key = $SMKEY" opensm.out || die "OpenSM did not read sm_key"
grep -q 'Sweep disabled with protected mkey leases in effect; re-enabling sweeping with interval 59' \
  opensm.out || die "OpenSM did not turn sweeping back on below the M_Key lease"
ctl tenant add a --hosts 6 >/dev/null || die "tenant add a failed"
ctl tenant add b --hosts 8 >/dev/null || die "tenant add b failed"
heavy_sweep "keys set"
heavy_sweep "keys set, again"
[ "$(grep -c "$WARN" osm.log || true)" = 0 ] ||
  die "key warning with every key set: $(grep "$WARN" osm.log | tail -1)"
audit_layout good
sort lfts.good | grep -E '^0x' >entries.good
log "with m_key, protection level 2, lease 60 and sm_key: no key warning in $(grep -c "$RUNS" osm.log) routing runs, OpenSM sweeps every 59 s; tenants a and b placed, $(wc -l <entries.good) LFT entries audited clean"
# What ibsim shows of the key from a tenant's host (information only: ibsim keeps no M_Key).
TENANT_HOST=$(ctl --json tenant show a | jq -r '.hosts[0].name')
LEAF_LID=$(awk '/^Switch/ { lid = ""; for (i = 1; i < NF; i++) if ($i == "lid") lid = $(i + 1) }
  /^\[/ && /"comp-1"/ && lid != "" { print lid; exit }' disc.good)
pi=$(SIM_HOST=$TENANT_HOST LD_PRELOAD="$UMAD2SIM" smpquery -K portinfo "$LEAF_LID" 1 2>/dev/null |
  tr -d '.' |
  awk -F: '/^Mkey|^ProtectBits|^MkeyLeasePeriod/ { printf "%s %s ", $1, $2 }')
log "a switch port read from $TENANT_HOST without the key under ibsim: $pi"

# A tenant's root runs its own OpenSM with another SM_Key (0: it accepts the master's SMInfo
# and stays standby; a non-zero key would make it ignore the master and sweep as a second
# master, which ibsim, enforcing no M_Key, would let it do).
ROGUE_HOST=$(ctl --json tenant show b | jq -r '.hosts[1].name')
mkdir -p rogue.tmp rogue.cache
printf 'sm_priority 0\nsm_key 0x0\nforce_log_flush TRUE\nsweep_interval 0\n' >rogue.conf
OSM_TMP_DIR="$WORK/rogue.tmp" OSM_CACHE_DIR="$WORK/rogue.cache" SIM_HOST="$ROGUE_HOST" \
  LD_PRELOAD="$UMAD2SIM" opensm -F "$WORK/rogue.conf" -f "$WORK/rogue.log" </dev/null \
  >rogue.out 2>&1 &
ROGUE_PID=$!
LAAS_EXTRA_PIDS="$ROGUE_PID"
for _ in $(seq 1 40); do
  grep -q 'Entering STANDBY state' rogue.out 2>/dev/null && break
  grep -q 'Entering MASTER state' rogue.out 2>/dev/null && die "the tenant's SM became master"
  sleep 0.5
done
grep -q 'Entering STANDBY state' rogue.out || die "the tenant's SM never went standby: $(tail -3 rogue.out)"
mismatch=$(count_log 'with non-matching sm_key')
for i in 1 2 3 4 5 6; do
  heavy_sweep "tenant's SM running ($i)"
  [ "$(count_log 'with non-matching sm_key')" -gt "$mismatch" ] && break
done
[ "$(count_log 'with non-matching sm_key')" -gt "$mismatch" ] ||
  die "the master never logged the tenant's SM's non-matching SM_Key"
unchanged rogue
listed=$(ctl --json sm list | jq -r '[.[] | select(.state == "unaccepted")] | length')
log "the master ignores $ROGUE_HOST's SM (SM_Key 0): '$(grep 'non-matching sm_key' osm.log | tail -1 | sed 's/^.*-> //')'; tables unchanged; sm list shows $listed unaccepted SM(s)"
kill -TERM "$ROGUE_PID"
for _ in 1 2 3 4 5 6; do kill -0 "$ROGUE_PID" 2>/dev/null || break; sleep 0.5; done
kill -KILL "$ROGUE_PID" 2>/dev/null || true
wait "$ROGUE_PID" 2>/dev/null || true

# 2. No keys: OpenSM restarted on the same state.
from=$(lines)
restart
heavy_sweep "no keys"
warned_every_run "$from" "no m_key"
unchanged nokeys
log "without keys: the warning at each of $(since "$from" | grep -c "$RUNS") routing runs, tables unchanged"

# 3. Weak keys.
from=$(lines)
restart "m_key $MKEY" "m_key_protection_level 1" "m_key_lease_period 0" "sm_key 0x0"
heavy_sweep "weak keys"
for what in "m_key_protection_level 1" "m_key_lease_period 0" "sm_key 0"; do
  warned_every_run "$from" "$what"
done
unchanged weak
log "with protection level 1, lease 0 and sm_key 0: the warning names all three at each of $(since "$from" | grep -c "$RUNS") routing runs: $(since "$from" | grep "$WARN" | tail -1 | sed 's/^.*WARNING/WARNING/' | cut -c1-200)"
log "PASS"
