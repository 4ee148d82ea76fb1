#!/usr/bin/env bash
# fallback.sh NETFILE: a fabric that is not a fat-tree: the laas engine declines with one
# clear log line, the next engine routes it, and the subnet comes up.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
NET=$1
laas_setup "fallback-$(basename "$NET")"
cp "$NET" fabric.net
start_fabric fabric.net
start_opensm
wait_log 'SUBNET UP' 1 60
wait_log 'laas: fabric is not a fat-tree: ' 1 30
grep -m1 'laas: fabric is not a fat-tree: ' osm.log
grep -q 'falling back to the next routing engine' osm.log || die "no fallback line"
grep -E 'tables configured on all switches' osm.log | tail -1
! grep -q 'laas tables configured' osm.log || die "laas claimed a non-fat-tree"
sim ibnetdiscover >disc.out 2>&1 || die "ibnetdiscover failed"
log "PASS fallback on $(basename "$NET")"
