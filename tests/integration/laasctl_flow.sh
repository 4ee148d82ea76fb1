#!/usr/bin/env bash
# laasctl_flow.sh: tenants through the plugin's control socket with the real laasctl.
# Tenant A comes from the tenants file; D is added and removed with laasctl, which waits
# until OpenSM has uploaded the new tables. The live audit (laasctl audit, tables read from
# OpenSM's switch objects) and the offline one (tables read back from the switches) are
# clean, and A's paths never change.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup laasctl_flow
export SIM_HOST=SW_L2_0
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
printf -- '- name: A\n  hosts: 10\n' >state/tenants.yaml
start_fabric fabric.net
# The plugin also keeps OpenSM's partitions.conf: one P_Key per tenant.
LAAS_YAML_EXTRA="manage_partitions: true" start_opensm "partition_config_file $WORK/partitions.conf"
wait_log 'laas: forwarding tables applied' 1 45
wait_log 'SUBNET UP' 1 45
snapshot 1
tenant_paths 1 A
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }

ctl tenant add D --hosts 4 >add.out 2>&1 || die "laasctl tenant add failed: $(cat add.out)"
log "laasctl tenant add D: $(head -3 add.out | tr '\n' ' ')"
ctl tenant list >list.out 2>&1 || die "laasctl tenant list failed: $(cat list.out)"
grep -q '\bD\b' list.out && grep -q '\bA\b' list.out || die "tenant list lacks A or D: $(cat list.out)"
ctl audit >live-audit.out 2>&1 || die "laasctl audit reports violations: $(head -20 live-audit.out)"
log "laasctl audit: $(grep -m1 '"violations"' live-audit.out)"
snapshot 2
grep -q '"D"' alloc.2.json || die "allocations.json lacks D"
tenant_paths 2 A
cmp -s paths.A.1 paths.A.2 || die "tenant A's routes changed when D was added"

grep -q '^D' partitions.conf || grep >/dev/null 'D' partitions.conf || die "partitions.conf has no partition for D: $(cat partitions.conf)"
log "partitions.conf: $(grep -v '^#' partitions.conf | grep -c .) line(s), D included"
ctl tenant remove D >remove.out 2>&1 || die "laasctl tenant remove failed: $(cat remove.out)"
snapshot 3
! grep -q '"D"' alloc.3.json || die "D is still allocated"
tenant_paths 3 A
cmp -s paths.A.1 paths.A.3 || die "tenant A's routes changed when D was removed"
log "PASS laasctl_flow"
