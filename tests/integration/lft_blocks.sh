#!/usr/bin/env bash
# lft_blocks.sh: a tenant change sends only the LFT blocks it changes. Without
# managed partitions a change is a re-route, not a heavy sweep; OpenSM marks the switches it
# discovered for a full update until a heavy sweep, and the plugin lowers that mark once they
# are fully programmed (SUBNET UP). OpenSM's own debug log counts the blocks it writes: after
# the first sweep (every block), adding and removing a tenant must write fewer, and exactly
# as many as the plugin announced.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup lft_blocks
export SIM_HOST=SW_L2_0
"$LAAS_TOPOGEN" "xgft(3;4,4,4;1,4,4)" -o fabric.net  # 64 hosts, 48 switches: 2 blocks each
start_fabric fabric.net
LAAS_YAML_EXTRA="manage_partitions: false" start_opensm "log_flags 0x0f"
wait_log 'SUBNET UP' 1 45
wait_log 'laas: forwarding tables applied' 1 45
grep -q 'laas: 48 switch(es) fully programmed' osm.log || die "the switches were not settled"
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
written() { grep -c 'Writing FT block' osm.log || true; }
announced() { grep 'laas: routing done' osm.log | tail -1 | sed 's/.*; \([0-9]*\) LFT blocks.*/\1/'; }

full=$(written)
[ "$full" -ge 96 ] || die "the first sweep wrote $full LFT blocks, expected every block (96)"
log "first sweep: $full LFT blocks written"
for step in "tenant add a --hosts 6" "tenant remove a"; do
  before=$(written)
  # shellcheck disable=SC2086
  ctl $step >ctl.out 2>&1 || die "laasctl $step: $(cat ctl.out)"
  sleep 1
  n=$(($(written) - before))
  [ "$n" -gt 0 ] || die "$step wrote no LFT block"
  [ "$n" -lt 96 ] || die "$step wrote $n LFT blocks: every block, not only the changed ones"
  [ "$n" = "$(announced)" ] || die "$step wrote $n LFT blocks, the plugin announced $(announced)"
  log "$step: $n LFT blocks written (announced $(announced))"
done
log "ok"
