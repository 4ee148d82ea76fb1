#!/usr/bin/env bash
# share_loss.sh: a standby that loses the shared state directory keeps its partitions.conf.
# Two OpenSMs with the plugin on the demo tree sharing $WORK/state (state_must_exist: true, as
# docs/ha.md sets it): SM 1 master, SM 2 standby; tenants a and b, the standby's partitions.conf
# follows the master's. Then the share "is unmounted" on the standby's view (the directory
# replaced by an empty one): over several polls the standby's partitions.conf stays as it was
# (every tenant's partition), and its status says why (blocked). The master is killed: the
# standby becomes master, fails closed without a state to take over, and OpenSM's first sweep
# as master read the partitions.conf that still holds the tenants.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ha.sh"
laas_enter_namespace "$@"
ha_setup share_loss
HA_NODES="SW_L2_0 SW_L2_1"
export LAAS_YAML_EXTRA="state_must_exist: true"
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric fabric.net
printf 'state_dir: %s/state\n' "$WORK" >init.yaml
"$LAASCTL" state init --config init.yaml >init.out 2>&1 || die "state init: $(cat init.out)"
start_sm 1 15 SW_L2_0
wait_master 1 60
start_sm 2 8 SW_L2_1
wait_standby 2 60
ctl 1 tenant add a --hosts 6 >/dev/null || die "tenant add a failed"
ctl 1 tenant add b --hosts 5 >/dev/null || die "tenant add b failed"
for _ in $(seq 50); do
  cmp -s partitions1.conf partitions2.conf && break
  sleep 0.2
done
cmp -s partitions1.conf partitions2.conf || die "the standby's partitions.conf does not follow the master's"
grep -q 'laas_a=' partitions2.conf && grep -q 'laas_b=' partitions2.conf ||
  die "the standby's partitions.conf lacks a tenant: $(cat partitions2.conf)"
cp partitions2.conf partitions2.before
log "SM 1 master, SM 2 standby; tenants a and b in both partitions.conf"

# The share goes away: its mount point is an empty directory.
mv state state.mounted
mkdir state
from=$(log_lines 2)
sleep 2  # several tenants_poll_ms periods
cmp -s partitions2.before partitions2.conf ||
  die "the standby rewrote partitions.conf without the share: $(diff partitions2.before partitions2.conf | head -6)"
wait_sm_log 2 'does not exist any more or cannot be reached' 1 10 "$from"
ctl 2 --json status >status2.json || die "laasctl status at the standby failed"
jq -r '.blocked // empty' status2.json | grep >/dev/null 'does not exist any more' ||
  die "the standby's status does not say the state is gone: $(jq -c . status2.json)"
log "share gone: the standby keeps its partitions.conf; status: $(jq -r .blocked status2.json | cut -c1-100)"

# The master dies: the standby takes the fabric with the partitions.conf it kept.
from=$(log_lines 2)
kill_sm 1
wait_sm_log 2 'Entering MASTER state' 1 30 "$from"
wait_sm_log 2 'cannot take the tenant state over' 1 30 "$from"
cmp -s partitions2.before partitions2.conf ||
  die "partitions.conf changed at the failover: $(diff partitions2.before partitions2.conf | head -6)"
log "PASS share_loss: the standby's partitions.conf kept every tenant through the share's loss and the failover"
