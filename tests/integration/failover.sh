#!/usr/bin/env bash
# failover.sh: tenants survive subnet-manager failover. Two OpenSMs with the plugin
# on one ibsim fabric (the demo tree), sharing one state directory: SM 1 (priority 15, at
# SW_L2_0) is master, SM 2 (priority 8, at SW_L2_1) standby.
#  1. Tenants a and b added at the master; kill -9 of the master: the standby becomes master and
#     its first routing run routes both from the shared state; the tables read back (LFTs and,
#     with QOS=1, SL2VL) are bit-identical to the old master's, the audit passes.
#  2. (before 1, while SM 2 is standby) a change sent to the standby is refused with exit 3,
#     naming the master's port GUID; state.json is untouched; the standby lists a and b.
#  3. Tenant c added at the new master; SM 1 comes back and takes the fabric over (handover):
#     it routes a, b and c with the same tables, the audit passes, it lists a b c.
#     The standby's partitions.conf is the master's, byte for byte (here and after 3).
#  4. kill -9 of the master in the middle of `tenant add d` (D_DELAY seconds after it was sent,
#     default 0.05): after the standby takes over, d is wholly there (listed, in state.json,
#     routed) or wholly absent, and there if acknowledged.
# SM1_NODE / SM2_NODE put the SMs elsewhere (hosts: management hosts then); PRIO1 / PRIO2 set
# their priorities (equal: the lower port GUID, SM 1 at SW_L2_0, is master).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ha.sh"
laas_enter_namespace "$@"
ha_setup "${1:-failover}"
SM1_NODE=${SM1_NODE:-SW_L2_0} SM2_NODE=${SM2_NODE:-SW_L2_1}
HA_NODES="$SM1_NODE $SM2_NODE"
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric fabric.net
start_sm 1 "${PRIO1:-15}" "$SM1_NODE"
wait_master 1 60
start_sm 2 "${PRIO2:-8}" "$SM2_NODE"
wait_standby 2 60
log "SM 1 ($SM1_NODE) master, SM 2 ($SM2_NODE) standby"

ctl 1 tenant add a --hosts 8 >add.a.out 2>&1 || die "tenant add a failed: $(cat add.a.out)"
ctl 1 tenant add b --hosts 10 >add.b.out 2>&1 || die "tenant add b failed: $(cat add.b.out)"
[ "$(tenant_names 1)" = "a b " ] || die "SM 1 lists '$(tenant_names 1)', expected 'a b '"

tenants_in_state() { jq -r '.tenants[].name' state/state.json | sort | tr '\n' ' '; }
role_of() { ctl "$1" --json status | jq -r '.sm.role'; }
# same_partitions MASTER STANDBY: the standby's partitions.conf (kept from the shared state,
# every tenants_poll_ms) becomes the master's, byte for byte, within 10 s.
same_partitions() {
  local i
  for i in $(seq 50); do
    cmp -s "partitions$1.conf" "partitions$2.conf" && return 0
    sleep 0.2
  done
  die "SM $2's partitions.conf differs from the master SM $1's: $(diff "partitions$1.conf" "partitions$2.conf" | head -8)"
}

# --- 2. A change sent to the standby is refused. ---------------------------------------------
[ "$(role_of 1)" = master ] || die "SM 1's status says role '$(role_of 1)', expected master"
[ "$(role_of 2)" = standby ] || die "SM 2's status says role '$(role_of 2)', expected standby"
master_guid=$(ctl 1 --json status | jq -r '.sm.self.guid')
if [ -z "$master_guid" ] || [ "$master_guid" = null ]; then die "SM 1's status names no port GUID"; fi
[ "$(ctl 2 --json status | jq -r '.sm.master.guid')" = "$master_guid" ] ||
  die "SM 2's status does not name SM 1 ($master_guid) as master: $(ctl 2 --json status | jq -c .sm)"
cp state/state.json state.p2.before
for req in "tenant add x --hosts 2" "tenant remove a"; do
  rc=0
  # shellcheck disable=SC2086 # the request is words
  ctl 2 $req >refused.out 2>refused.err || rc=$?
  [ $rc -eq 3 ] || die "'$req' at the standby: exit $rc, expected 3 (not master): $(cat refused.out refused.err)"
  grep -qi -- "${master_guid#0x}" refused.err ||
    die "the standby's refusal of '$req' does not name the master's port $master_guid: $(cat refused.err)"
done
cmp -s state.p2.before state/state.json || die "state.json changed after requests refused at the standby"
[ "$(tenant_names 2)" = "a b " ] || die "the standby lists '$(tenant_names 2)', expected 'a b '"
log "2: the standby refused add and remove (exit 3: $(head -c 200 refused.err | tr '\n' ' ')), state.json unchanged"

# A host drained at the master stays drained at the SM that takes over.
drained=$(ctl 1 --json host list --state free | jq -r '.[0].name')
ctl 1 host drain "$drained" --reason "failover test" >/dev/null || die "host drain at SM 1 failed"
rc=0
ctl 2 host resume "$drained" >refused.out 2>refused.err || rc=$?
[ $rc -eq 3 ] || die "host resume at the standby: exit $rc, expected 3: $(cat refused.err)"
same_partitions 1 2
log "2: the standby's partitions.conf is the master's ($(grep -c '^laas_.*indx0' partitions2.conf) tenant partitions)"

# --- 1. kill -9 of the master: the standby routes a and b with the same tables. ---------------
audit_layout p1.before
ctl 1 --json tenant show a >show.a.1
ctl 1 --json tenant show b >show.b.1
if [ "$(count_sm_log 2 'laas: routed')" != 0 ] || [ "$(count_sm_log 2 'laas: forwarding tables applied')" != 0 ]; then
  die "the standby ran the routing engine: $(grep -E 'laas: (routed|forwarding)' osm2.log | head -2)"
fi
from2=$(log_lines 2)
kill_sm 1
wait_master 2 60 "$from2"
wait_sm_log 2 'laas: routed' 1 30 "$MASTER_LINE"
took=$(tail -n +"$MASTER_LINE" osm2.log | grep -m1 'laas: took over as master' || true)
routed=$(tail -n +"$MASTER_LINE" osm2.log | grep -m1 'laas: routed' || true)
[ -n "$took" ] || die "SM 2 became master but logged no 'laas: took over as master'"
grep -q ' 2 tenant(s) from ' <<<"$took" || die "SM 2 took over without both tenants: $took"
grep -q ', 2 tenants,' <<<"$routed" || die "SM 2's first routing run did not route 2 tenants: $routed"
[ "$(first_line_of 2 'laas: took over as master' "$MASTER_LINE")" -lt "$(first_line_of 2 'laas: routed' "$MASTER_LINE")" ] ||
  die "SM 2's first 'laas: routed' line after it became master precedes its 'took over' line"
log "1: kill -9 -> SM 2 'Entering MASTER state' after $(elapsed "$KILL_AT" "$(log_time 2 "$MASTER_LINE")") s," \
  "tables applied after $(elapsed "$KILL_AT" "$(log_time 2 "$APPLIED_LINE")") s"
log "   ${took#*-> }"
grep -m1 'laas: failover:' <(tail -n +"$from2" osm2.log) | sed 's/.*-> /   /' || true
sleep 1
audit_layout p1.after
cmp -s lfts.p1.before lfts.p1.after ||
  die "the LFTs differ after the failover: $(diff lfts.p1.before lfts.p1.after | head -5)"
if [ "${AUDIT_SL2VL:-0}" = 1 ]; then
  cmp -s sl2vl.p1.before sl2vl.p1.after ||
    die "the SL2VL tables differ after the failover (< SM 1's, > SM 2's): $(sl2vl_diff sl2vl.p1.before sl2vl.p1.after)"
fi
for t in a b; do
  ctl 2 --json tenant show "$t" >"show.$t.2"
  cmp -s "show.$t.1" "show.$t.2" || die "tenant $t changed across the failover: $(diff "show.$t.1" "show.$t.2" | head)"
done
[ "$(role_of 2)" = master ] || die "SM 2's status says role '$(role_of 2)' after the failover"
[ "$(ctl 2 --json host show "$drained" | jq -r .state)" = drained ] ||
  die "$drained is not drained at SM 2 after the failover: $(ctl 2 --json host show "$drained")"
ctl 2 host resume "$drained" >/dev/null || die "host resume at the new master failed"
log "1: all $(grep -c '^0x' lfts.p1.after) LFT entries identical$([ "${AUDIT_SL2VL:-0}" = 1 ] &&
  echo ", SL2VL identical"), audit clean"

# --- 3. c at the new master; SM 1 comes back and takes over. ------------------------------------
ctl 2 tenant add c --hosts 5 >add.c.out 2>&1 || die "tenant add c at SM 2 failed: $(cat add.c.out)"
audit_layout p3.before
from2=$(log_lines 2)
take_back 1 "$SM1_NODE"
wait_sm_log 1 'laas: routed' 1 30 "$MASTER_LINE"
took=$(tail -n +"$MASTER_LINE" osm1.log | grep -m1 'laas: took over as master' || true)
routed=$(tail -n +"$MASTER_LINE" osm1.log | grep -m1 'laas: routed' || true)
[ -n "$took" ] || die "SM 1 became master again but logged no 'laas: took over as master'"
grep -q ' 3 tenant(s) from ' <<<"$took" || die "SM 1 took over without the 3 tenants: $took"
grep -q ', 3 tenants,' <<<"$routed" || die "SM 1's first routing run did not route 3 tenants: $routed"
log "3: handover -> SM 1 master after $(elapsed "$HANDOVER_AT" "$(log_time 1 "$MASTER_LINE")") s," \
  "tables applied after $(elapsed "$HANDOVER_AT" "$(log_time 1 "$APPLIED_LINE")") s; SM 2 standby"
log "   ${took#*-> }"
[ "$(count_sm_log 2 'laas: routed' "$(last_line_of 2 'Entering STANDBY state' "$from2")")" = 0 ] ||
  die "SM 2 routed after it handed over"
sleep 1
audit_layout p3.after
cmp -s lfts.p3.before lfts.p3.after ||
  die "the LFTs differ after the handover: $(diff lfts.p3.before lfts.p3.after | head -5)"
if [ "${AUDIT_SL2VL:-0}" = 1 ]; then
  cmp -s sl2vl.p3.before sl2vl.p3.after ||
    die "the SL2VL tables differ after the handover (< SM 2's, > SM 1's): $(sl2vl_diff sl2vl.p3.before sl2vl.p3.after)"
fi
[ "$(tenant_names 1)" = "a b c " ] || die "SM 1 lists '$(tenant_names 1)', expected 'a b c '"
roles="$(role_of 1) $(role_of 2)"
[ "$roles" = "master standby" ] || die "after the handover SM 1 and SM 2 are: $roles"
same_partitions 1 2
log "3: SM 1 routes a b c with identical tables, audit clean; SM 2's partitions.conf is SM 1's"

# --- 4. kill -9 of the master in the middle of 'tenant add d'. ------------------------------------
from2=$(log_lines 2)
ha_quiesce 1 # the standby's pause before the kill, so that D_DELAY is the add's own
ctl 1 tenant add d --hosts 3 --no-wait >add.d.out 2>&1 &
CLIENT=$!
sleep "${D_DELAY:-0.05}"
kill_sm 1
d_acked=0
wait "$CLIENT" && d_acked=1
log "4: SM 1 killed; the in-flight 'add d' was $([ $d_acked = 1 ] && echo acknowledged || echo not acknowledged)"
wait_master 2 60 "$from2"
wait_sm_log 2 'laas: routed' 1 30 "$MASTER_LINE"
routed=$(tail -n +"$MASTER_LINE" osm2.log | grep -m1 'laas: routed')
names=$(tenant_names 2)
case "$names" in
"a b c ") [ $d_acked = 0 ] || die "d was acknowledged but is gone after the failover" ;;
"a b c d ") ;;
*) die "after the failover SM 2 lists '$names'" ;;
esac
n=$(wc -w <<<"$names")
[ "$(tenants_in_state)" = "$names" ] || die "state.json has '$(tenants_in_state)', SM 2 lists '$names'"
grep -q ", $n tenants," <<<"$routed" || die "SM 2 lists $n tenants but routed: $routed"
sleep 1
audit_layout p4
d_hosts=$(jq -r '.tenants[] | select(.name == "d") | .hosts | length' state/state.json)
if [ "$names" = "a b c " ]; then
  [ -z "$d_hosts" ] || die "d is not listed but state.json holds it"
  cmp -s lfts.p3.after lfts.p4 || die "d is absent but the LFTs changed: $(diff lfts.p3.after lfts.p4 | head -5)"
else
  [ "$d_hosts" = 3 ] || die "d is listed but state.json gives it '$d_hosts' hosts"
  ctl 2 --json tenant show d | jq -e '.hosts | length == 3' >/dev/null || die "d is listed but not placed"
  grep -q '"d"' alloc.p4.json || die "d is listed but not in allocations.json (not routed)"
fi
log "PASS failover (after the in-flight add: $names)"
