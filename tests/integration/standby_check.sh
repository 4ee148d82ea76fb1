#!/usr/bin/env bash
# standby_check.sh: only the master reads the switches' tables back. Two OpenSMs with the plugin
# on the demo tree (SM 1 master at SW_L2_0, SM 2 standby at SW_L2_1), switch_check_interval 1.
#  1. While SM 1 makes passes over every switch, the standby sends no read at all: its status
#     counts 0 reads and 0 passes (a standby's reads would be answered with what the master
#     sent, and its repairs would fight the master's sweeps).
#  2. kill -9 of the master: SM 2 takes over, and its own check starts: passes within a few
#     intervals, 0 mismatches (the tables it sends are the ones the switches hold).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ha.sh"
laas_enter_namespace "$@"
ha_setup "${1:-standby_check}"
HA_NODES="SW_L2_0 SW_L2_1"
export LAAS_YAML_EXTRA="switch_check_interval: 1"
ha_pair_up
ctl 1 tenant add a --hosts 8 >/dev/null || die "tenant add a failed"
check_of() { ctl "$1" --json status | jq -r ".switch_check.$2 // 0"; }

# --- 1. The master passes, the standby reads nothing. ------------------------------------------
deadline=$((SECONDS + 20))
until [ "$(check_of 1 passes)" -ge 3 ]; do
  [ $SECONDS -lt $deadline ] || die "the master made $(check_of 1 passes) pass(es) in 20 s: $(ctl 1 --json status | jq -c .switch_check)"
  sleep 0.5
done
[ "$(check_of 2 reads)" = 0 ] && [ "$(check_of 2 passes)" = 0 ] ||
  die "the standby reads the switches: $(ctl 2 --json status | jq -c .switch_check)"
log "1: the master made $(check_of 1 passes) passes ($(check_of 1 reads) reads); the standby 0 reads, 0 passes"

# --- 2. The standby takes over and checks. -----------------------------------------------------
kill_sm 1
wait_master 2 60
deadline=$((SECONDS + 20))
until [ "$(check_of 2 passes)" -ge 2 ]; do
  [ $SECONDS -lt $deadline ] || die "the new master made $(check_of 2 passes) pass(es) in 20 s: $(ctl 2 --json status | jq -c .switch_check)"
  sleep 0.5
done
mismatches=$(ctl 2 metrics | awk '$1 == "laas_switch_table_mismatches_total" { print $2 }')
[ "$mismatches" = 0 ] || die "the new master found $mismatches mismatches in the tables it sent"
log "2: SM 2 took over and made $(check_of 2 passes) passes ($(check_of 2 reads) reads), 0 mismatches"
log "PASS standby_check: only the master reads the switches back"
