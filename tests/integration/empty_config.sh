#!/usr/bin/env bash
# empty_config.sh: laas.yaml cut to zero (a full disk) between two starts of OpenSM fails
# closed and reads nothing from a guessed state directory. The demo tree, tenants a and b;
# OpenSM stopped, laas.yaml emptied, OpenSM started again on the same opensm.conf:
#   - nothing is created in (or read from) /var/lib/laas, the built-in default state_dir;
#   - partitions.conf (every tenant's P_Key) stays as it was;
#   - every host is routed as a free host: the audit of the tables read back, with no tenant,
#     is clean (free hosts reach management only), so the tenants lose their routes, never
#     their isolation;
#   - the log, `laasctl status` (config_error, blocked) and the metrics (laas_config_error 1,
#     laas_state_blocked 1) say why, and a tenant change is refused.
# Runs in its own mount namespace (root only): /var/lib and /run are fresh tmpfs there, so the
# defaults the empty file falls back to touch nothing of this host.
source "$(dirname "$0")/lib.sh"
if [ -z "${LAAS_IN_NS:-}" ]; then
  if [ "$(id -u)" != 0 ] || ! unshare -mn true 2>/dev/null; then
    echo "SKIP: needs root for a mount namespace"
    exit 77
  fi
  LAAS_IN_NS=1 exec unshare -mn "$0" "$@"
fi
mount -t tmpfs -o mode=0755 laas-test /var/lib
mount -t tmpfs -o mode=0755 laas-test /run
mkdir -p /var/lib/laas /run/opensm
laas_setup empty_config
start_demo
ctl() { "$LAASCTL" -s "$1" --timeout 30 "${@:2}"; }
ctl "$WORK/laas.sock" tenant add a --hosts 6 >/dev/null || die "tenant add a failed"
ctl "$WORK/laas.sock" tenant add b --hosts 5 >/dev/null || die "tenant add b failed"
snapshot 1 >/dev/null
cp partitions.conf partitions.before
grep -q 'laas_a=' partitions.before || die "tenant a has no partition: $(cat partitions.before)"
log "tenants a (6) and b (5) routed; audit clean"

applied=$(count_log 'laas: forwarding tables applied')
stop_opensm
: >laas.yaml
# start_opensm would write a good laas.yaml again: the same command on the same opensm.conf.
OSM_CACHE_DIR="$WORK/osm.cache" OSM_TMP_DIR="$WORK/osm.tmp" \
  LD_LIBRARY_PATH="$LAAS_PLUGIN_DIR" LD_PRELOAD="$UMAD2SIM" \
  opensm -F "$WORK/opensm.conf" -f "$WORK/osm.log" </dev/null >opensm.out 2>&1 &
OSM_PID=$!
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
[ -z "$(ls -A /var/lib/laas)" ] || die "files in the default state directory: $(ls -A /var/lib/laas)"
cmp -s partitions.before partitions.conf || die "partitions.conf was rewritten: $(diff partitions.before partitions.conf | head -5)"
cmp -s alloc.1.json state/allocations.json || die "allocations.json in the real state directory changed"
grep -q 'laas.yaml is invalid: .*laas.yaml: holds no key' osm.log || die "the log does not say laas.yaml is empty"
grep -q 'state directory not known' osm.log || die "the log does not say the state directory is not known"
log "log: $(grep -m1 'laas.yaml is invalid' osm.log | sed 's/^.*laas: //' | cut -c1-160)"

# Every host free: with no tenant, the audit of what the switches hold is clean.
sim ibnetdiscover >disc.2 2>/dev/null || die "ibnetdiscover failed"
sim dump_fts >lfts.2 2>/dev/null || die "dump_fts failed"
jq '.tenants = []' alloc.1.json >alloc.free.json
"$LAAS_AUDIT" --fabric disc.2 --lfts lfts.2 --allocations alloc.free.json >audit.2 2>&1 ||
  die "the tables are not those of a fabric without tenants: $(grep VIOLATION audit.2 | head -3)"
"$LAAS_AUDIT" --fabric disc.2 --lfts lfts.2 --allocations alloc.1.json --paths a >paths.a.2 || true
grep -q UNREACHABLE paths.a.2 || die "tenant a's hosts still reach each other"

# The default socket of the empty file: status, metrics, a refused change.
sock=/run/opensm/laas.sock
ctl $sock --json status >status.2 || die "laasctl status failed"
jq -r '.config_error // empty' status.2 | grep >/dev/null 'holds no key' || die "status has no config_error: $(jq -c . status.2)"
jq -r '.blocked // empty' status.2 | grep >/dev/null 'the state directory is not known' ||
  die "status does not say the state directory is not known: $(jq -c . status.2)"
ctl $sock metrics >metrics.2 || die "laasctl metrics failed"
grep -qx 'laas_config_error 1' metrics.2 || die "laas_config_error is not 1"
grep -qx 'laas_state_blocked 1' metrics.2 || die "laas_state_blocked is not 1"
rc=0
ctl $sock tenant add z --hosts 1 >refused.2 2>&1 || rc=$?
[ $rc -ne 0 ] || die "a tenant change was accepted with an empty laas.yaml"
[ -z "$(ls -A /var/lib/laas)" ] || die "files in the default state directory: $(ls -A /var/lib/laas)"
log "PASS empty_config: nothing read or written in /var/lib/laas, partitions.conf kept, every host free (audit clean, a's hosts unreachable), status/metrics say why, tenant add refused (exit $rc)"
