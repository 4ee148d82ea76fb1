# Debian's Slurm 22.05 standalone in a test's network namespace: munged with
# a fresh key and its own socket, slurmctld -D -i with one node per fabric host, no slurmd, no
# slurmdbd (accounting_storage/none: accounts are plain strings Slurm still checks). Sourced
# after lib.sh by slurm_flow.sh and slurm_follow.sh.

# Every process a Slurm test starts dies with it (lib.sh's LAAS_OWN_PIDS): slurmctld forks
# slurmscriptd, laas-slurm runs scontrol, and a test killed at its timeout runs no teardown.
LAAS_OWN_PIDS=${LAAS_OWN_PIDS:-1}

# slurm_prepare: Slurm's and munge's files where every user can traverse (the work directory
# may sit under a private mktemp directory: a job submitted as uid 65534 must read slurm.conf
# and reach munge), linked as $WORK/munge and $WORK/slurm; teardown stops Slurm first.
slurm_prepare() {
  for tool in slurmctld scontrol sbatch munged setpriv; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (scripts/deps.sh)"; exit 77; }
  done
  SD=$(mktemp -d /tmp/laas-slurm.XXXXXX)
  chmod 0755 "$SD"
  MUNGE_PID="" SLURM_PID=""
  export SLURM_CONF="$SD/slurm/slurm.conf"
  trap slurm_teardown EXIT
}

stop_slurmctld() {
  for pid in "$SLURM_PID" "$@"; do
    if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then continue; fi
    kill -TERM "$pid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.3; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
stop_slurm() { stop_slurmctld "$MUNGE_PID"; }
slurm_teardown() {
  local rc=$?
  stop_slurm
  if [ $rc -ne 0 ] && [ -f "$SD/slurm/slurmctld.log" ]; then
    echo "---- tail of slurmctld.log ----" >&2
    tail -15 "$SD/slurm/slurmctld.log" >&2
  fi
  rm -rf "$SD" 2>/dev/null || true
  # laas_teardown reads the status from $?; without set +e, errexit would end the trap at
  # `(exit 1)` and leave OpenSM and ibsim running after a failure (holding the CPU lock's fd).
  set +e
  (exit $rc)
  laas_teardown
}

# slurm_start_munge: munged on its own socket, and lo with the extra address slurmctld needs.
slurm_start_munge() {
  mkdir -p "$SD/munge" "$SD/slurm/state" "$SD/slurm/spool"
  chmod 0755 "$SD/slurm"
  ln -s "$SD/munge" munge
  ln -s "$SD/slurm" slurm
  chmod 0711 munge
  dd if=/dev/urandom of=munge/munge.key bs=1024 count=1 status=none
  chmod 0400 munge/munge.key
  munged -F --force --socket="$SD/munge/munge.sock" --key-file="$SD/munge/munge.key" \
    --pid-file="$SD/munge/munged.pid" --log-file="$SD/munge/munged.log" \
    --seed-file="$SD/munge/munged.seed" </dev/null >munge/out 2>&1 &
  MUNGE_PID=$!
  ip link set lo up
  ip addr add 10.254.0.1/32 dev lo 2>/dev/null || true # slurmctld needs more than 127.0.0.1
}

# slurm_write_conf "HOSTS" [LINE...]: slurm.conf with a node per host and the partition "all",
# then the extra lines.
slurm_write_conf() {
  local hosts=$1 h line
  shift
  {
    echo "ClusterName=laas"
    echo "SlurmctldHost=localhost"
    echo "SlurmUser=root"
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=$SD/munge/munge.sock"
    echo "StateSaveLocation=$SD/slurm/state"
    echo "SlurmdSpoolDir=$SD/slurm/spool"
    echo "SlurmctldPidFile=$SD/slurm/slurmctld.pid"
    echo "SlurmctldLogFile=$SD/slurm/slurmctld.log"
    echo "SelectType=select/linear"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/none"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "MpiDefault=none"
    echo "TopologyPlugin=topology/tree"
    for h in $hosts; do echo "NodeName=$h NodeAddr=127.0.0.1 CPUs=1 State=IDLE"; done
    echo "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    for line in "$@"; do echo "$line"; done
  } >"$SLURM_CONF"
}

# slurm_start_ctld: slurmctld (its topology.conf written beforehand), once munged answers;
# waits until `scontrol ping` says it is up.
slurm_start_ctld() {
  for _ in $(seq 1 50); do [ -S munge/munge.sock ] && break; sleep 0.1; done
  [ -S munge/munge.sock ] || die "munged did not start: $(cat munge/out munge/munged.log 2>/dev/null)"
  slurmctld -D -i -f "$SLURM_CONF" </dev/null >slurm/out 2>&1 &
  SLURM_PID=$!
  for _ in $(seq 1 100); do scontrol ping 2>/dev/null | grep >/dev/null 'is UP' && break; sleep 0.2; done
  scontrol ping | grep >/dev/null 'is UP' || die "slurmctld is not up: $(tail -5 slurm/out slurm/slurmctld.log 2>/dev/null)"
}

# What slurmctld shows of the tenants laas-slurm follows (FOLLOWER_PID: the follower, whose
# exit fails a wait). show.NAME.json: the tenant as `laasctl --json tenant show NAME` gives it.
partition_hosts() {
  scontrol -o show partition "$1" 2>/dev/null | sed -n 's/.* Nodes=\([^ ]*\) .*/\1/p' |
    xargs -r scontrol show hostnames | sort -V
}
tenant_hosts() { jq -r '.hosts[].name' "show.$1.json" | awk '{print $1}' | sort -V | uniq; }
# wait_for WHAT CONDITION...: until CONDITION holds (10 s at most); prints the seconds it took.
wait_for() {
  local what=$1 start=$SECONDS
  shift
  for _ in $(seq 1 100); do
    if "$@"; then
      echo $((SECONDS - start))
      return 0
    fi
    kill -0 "$FOLLOWER_PID" 2>/dev/null || die "laas-slurm exited: $(tail -5 follower.log)"
    sleep 0.1
  done
  die "$what not within 10 s; follower: $(tail -5 follower.log)"
}
has_partition() { [ "$(partition_hosts "laas-$1")" = "$(tenant_hosts "$1")" ]; }
no_partition() { ! scontrol -o show partition "laas-$1" 2>/dev/null | grep >/dev/null "^PartitionName=laas-$1 "; }
# Each host of the tenant under the leaf its record names, in slurmctld's topology.
in_topology() {
  scontrol show topology >topology.shown || return 1
  local guid leaf name
  while read -r name guid; do
    leaf="ibsw-${guid#0x}"
    grep "^SwitchName=$leaf " topology.shown | sed -n 's/.* Nodes=\([^ ]*\).*/\1/p' |
      xargs -r scontrol show hostnames | grep >/dev/null -x "$name" || return 1
  done < <(jq -r '.hosts[] | "\(.name) \(.leaf.guid)"' "show.$1.json")
}

# slurm_no_leftovers: after stop_slurm and the follower's end, no Slurm, munge or laas-slurm
# process is left (in the test's own PID namespace: pgrep sees only the test's processes).
slurm_no_leftovers() {
  [ "${LAAS_PID_NS:-}" = 1 ] || { log "NOTE: no PID namespace of its own: leftovers not checked"; return 0; }
  local left
  left=$(ps -e -o pid=,comm=,args= | awk '$2 ~ /^(slurmctld|slurmscriptd|laas-slurm|munged|scontrol)$/')
  [ -z "$left" ] || die "processes left after the test's stop: $left"
}
