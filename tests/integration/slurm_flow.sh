#!/usr/bin/env bash
# slurm_flow.sh: `laasctl export slurm|slurm-topology` against a real slurmctld (Debian 12's
# Slurm 22.05), run standalone in this test's network namespace: munged with a fresh key and
# its own socket, slurm.conf with one node per fabric host (named like the hosts), no slurmd,
# no slurmdbd (accounting_storage/none: accounts are plain strings Slurm still checks against a
# reservation's Accounts=).
#  1. topology.conf from `laasctl export slurm-topology -o` is accepted: `scontrol show
#     topology` lists every switch and every host.
#  2. Tenant A (--slurm-account acct_a): its reservation holds exactly A's hosts; a held job of
#     account acct_a submitted as uid 65534 is admitted, one of acct_b is refused.
#  3. The release script removes the reservation; running it again changes nothing.
#  4. Tenant B added: the export for all tenants runs (twice) and leaves A and B reserved;
#     A removed and C placed (on A's former hosts where the allocator chooses): the export for
#     all tenants deletes laas-A instead of failing on the overlap, and reserves C. These
#     exports also make a Slurm partition per tenant (--partitions: laas-A's goes with it) and
#     MAGNETIC reservations (--magnetic).
# RAILS=4 runs it on GPU servers with 4 HCAs on rail leaves (xgft(2;8,8;1,4), 16 servers, issue
# 21): Slurm's nodes are servers, topology.conf lists each under its rail-0 leaf (one leaf a
# node, as Slurm expects), reservations hold the tenants' servers.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_slurm.sh"
laas_enter_namespace "$@"
laas_setup "${1:-slurm_flow}"
export SIM_HOST=SW_L2_0
slurm_prepare
if [ "${RAILS:-1}" -gt 1 ]; then
  "$LAAS_TOPOGEN" "xgft(2;8,8;1,4)" --rails "$RAILS" -o fabric.net
  MIN_HOSTS=16 SWITCHES=$((8 / RAILS + 4))
else
  "$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
  MIN_HOSTS=30 SWITCHES=12
fi
: >state/tenants.yaml
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }

start_fabric fabric.net
start_opensm
wait_log 'SUBNET UP' 1 45
ctl tenant add A --hosts 4 --slurm-account acct_a >add.A 2>&1 || die "tenant add A: $(cat add.A)"
ctl --json tenant show A >show.A.json

# -o targets: /dev/full fails loudly, a directory for routing chains gets its four files.
rc=0
ctl export slurm-topology -o /dev/full 2>full.err || rc=$?
[ $rc -ne 0 ] || die "laasctl export -o /dev/full exited 0"
grep -q 'cannot write /dev/full' full.err || die "no error for /dev/full: $(cat full.err)"
ctl export routing-chains -o chains 2>chains.err || die "export routing-chains -o DIR: $(cat chains.err)"
for f in port_groups.conf topologies.conf routing_chains.conf opensm.conf.snippet; do
  [ -s "chains/$f" ] || die "routing-chains -o chains: no $f"
done
grep -qx "rch_policy_file $WORK/chains/routing_chains.conf" chains/opensm.conf.snippet ||
  die "opensm.conf.snippet: $(cat chains/opensm.conf.snippet)"
grep -q '^engine: updn$' chains/routing_chains.conf || die "no updn fallback step"
log "-o /dev/full: exit $rc ($(cat full.err)); routing-chains -o DIR: $(cd chains && echo *)"

# The fabric's hosts: every CA node description (first word), from the fabric file.
hosts=$(sed -n 's/^Hca[[:space:]].*"\([^" ]*\)[^"]*".*/\1/p' fabric.net | sort -V | uniq)
nhosts=$(wc -w <<<"$hosts")
[ "$nhosts" -ge "$MIN_HOSTS" ] || die "only $nhosts hosts in fabric.net"

# Slurm, standalone: munged and slurmctld in this namespace.
slurm_start_munge
slurm_write_conf "$hosts"

# 1. The topology, written where slurmctld reads it (beside slurm.conf).
ctl export slurm-topology -o slurm/topology.conf || die "export slurm-topology failed"
[ "$(stat -c %a slurm/topology.conf)" = 644 ] || die "topology.conf mode $(stat -c %a slurm/topology.conf)"
slurm_start_ctld
log "slurmctld up ($(slurmctld -V)), $nhosts nodes"
scontrol show topology >topology.shown || die "scontrol show topology failed"
switches=$(sed -n 's/^SwitchName=\([^ ]*\) .*/\1/p' slurm/topology.conf)
[ "$(wc -w <<<"$switches")" = "$SWITCHES" ] || die "topology.conf has not $SWITCHES switches: $switches"
for s in $switches; do grep -q "^SwitchName=$s " topology.shown || die "switch $s not in scontrol show topology"; done
shown_hosts=$(sed -n 's/.* Nodes=\([^ ]*\).*/\1/p' topology.shown | while read -r l; do scontrol show hostnames "$l"; done | sort -V | uniq)
[ "$shown_hosts" = "$hosts" ] || die "scontrol show topology lists other hosts: $(tr '\n' ' ' <<<"$shown_hosts")"
log "scontrol show topology: $(wc -w <<<"$switches") switches, $(wc -w <<<"$shown_hosts") hosts, e.g. $(head -1 topology.shown)"

# reservation_hosts NAME: the reservation's nodes, one a line, sorted.
reservation_hosts() {
  scontrol -o show reservation "$1" | sed -n 's/.* Nodes=\([^ ]*\) .*/\1/p' | xargs -r scontrol show hostnames | sort -V
}
tenant_hosts() { jq -r '.hosts[].name' "show.$1.json" | awk '{print $1}' | sort -V | uniq; }
# submit ACCOUNT: a held job in laas-A as uid 65534 (nobody); prints sbatch's output.
submit() {
  (cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups \
    sbatch --hold --reservation=laas-A --account="$1" --chdir=/tmp -N1 -J "job-$1" --wrap=true 2>&1)
}

# 2. Tenant A's reservation.
ctl export slurm -o reserve.sh || die "export slurm failed"
bash reserve.sh >reserve.out 2>&1 || die "reserve.sh failed: $(cat reserve.out)"
scontrol -o show reservation laas-A >resv.A || die "no reservation laas-A"
[ "$(reservation_hosts laas-A)" = "$(tenant_hosts A)" ] ||
  die "laas-A holds $(reservation_hosts laas-A | tr '\n' ' '), tenant A has $(tenant_hosts A | tr '\n' ' ')"
grep -q 'Accounts=acct_a' resv.A || die "laas-A lacks Accounts=acct_a: $(cat resv.A)"
log "reservation: $(cut -c1-160 resv.A)"
out=$(submit acct_a) || die "a job of acct_a was refused: $out"
job=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' <<<"$out")
[ -n "$job" ] || die "no job id: $out"
scontrol -o show job "$job" | grep >/dev/null 'UserId=nobody(65534)' || die "job $job is not nobody's"
scontrol -o show job "$job" | grep >/dev/null 'Reservation=laas-A' || die "job $job is not in laas-A"
log "acct_a job $job admitted as nobody (held, reservation laas-A)"
if out=$(submit acct_b); then die "a job of acct_b was admitted into laas-A: $out"; fi
log "acct_b job refused: $out"
scancel "$job" 2>/dev/null || true

# 3. Release, twice.
ctl export slurm --remove --tenant A -o release.sh || die "export slurm --remove failed"
grep -q 'scontrol delete ReservationName=laas-A' release.sh || die "release.sh: $(cat release.sh)"
bash release.sh >release.out 2>&1 || die "release.sh failed: $(cat release.out)"
if scontrol -o show reservation laas-A 2>/dev/null | grep >/dev/null '^ReservationName=laas-A '; then die "laas-A survived release.sh"; fi
bash release.sh >release.out 2>&1 || die "release.sh failed the second time: $(cat release.out)"
log "release.sh removed laas-A; a second run is a no-op"

# 4. Re-run for all tenants after tenant changes.
ctl tenant add B --hosts 6 --slurm-account acct_b --slurm-user nobody >add.B 2>&1 || die "tenant add B: $(cat add.B)"
ctl --json tenant show B >show.B.json
ctl export slurm --partitions -o reserve.sh
for run in 1 2; do
  bash reserve.sh >reserve.out.$run 2>&1 || die "reserve.sh run $run failed: $(cat reserve.out.$run)"
done
[ "$(reservation_hosts laas-A)" = "$(tenant_hosts A)" ] || die "laas-A wrong after re-run"
[ "$(reservation_hosts laas-B)" = "$(tenant_hosts B)" ] || die "laas-B wrong after re-run"
scontrol -o show reservation laas-B | grep >/dev/null 'Users=nobody' || die "laas-B lacks Users=nobody"
partition_hosts() {
  scontrol -o show partition "$1" | sed -n 's/.* Nodes=\([^ ]*\) .*/\1/p' | xargs -r scontrol show hostnames | sort -V
}
[ "$(partition_hosts laas-B)" = "$(tenant_hosts B)" ] || die "partition laas-B: $(scontrol -o show partition laas-B)"
scontrol -o show partition laas-B | grep >/dev/null 'AllowAccounts=acct_b' || die "partition laas-B lacks AllowAccounts=acct_b"
partition_exists() { scontrol -o show partition "$1" 2>/dev/null | grep >/dev/null "^PartitionName=$1 "; }
partition_exists laas-A || die "no partition laas-A"
log "after adding B: reserve.sh ran twice, laas-A and laas-B hold their tenants' hosts"
ctl tenant remove A >/dev/null || die "tenant remove A failed"
ctl tenant add C --hosts 4 --slurm-account acct_c >add.C 2>&1 || die "tenant add C: $(cat add.C)"
ctl --json tenant show C >show.C.json
ctl export slurm --partitions --magnetic -o reserve.sh
bash reserve.sh >reserve.out.3 2>&1 || die "reserve.sh after remove A / add C failed: $(cat reserve.out.3)"
if scontrol -o show reservation laas-A 2>/dev/null | grep >/dev/null '^ReservationName=laas-A '; then die "laas-A of removed tenant A survived"; fi
[ "$(reservation_hosts laas-C)" = "$(tenant_hosts C)" ] || die "laas-C wrong"
scontrol -o show reservation laas-C | grep >/dev/null 'Flags=.*MAGNETIC' || die "laas-C is not MAGNETIC: $(scontrol -o show reservation laas-C)"
! partition_exists laas-A || die "partition laas-A of removed tenant A survived"
[ "$(partition_hosts laas-C)" = "$(tenant_hosts C)" ] || die "partition laas-C wrong"
[ "$(reservation_hosts laas-B)" = "$(tenant_hosts B)" ] || die "laas-B wrong after C"
log "after remove A / add C ($(tenant_hosts C | tr '\n' ' ')): laas-A deleted, laas-B kept, laas-C created (MAGNETIC); partitions likewise"
log "PASS slurm_flow"
