#!/usr/bin/env bash
# frozen_state.sh: a state directory that stops answering never stops OpenSM (real OpenSM,
# ibsim, infiniband-diags). The state directory is a FUSE pass-through (freezable_fs.py) that
# blocks every call while a flag file exists, as a hard-mounted NFS share whose server went
# away. The lab tree pgft(2;8,4;1,4;1,2), tenants a (8 hosts) and b (10) placed, then frozen:
# 1. heavy sweeps go on (each routed by laas, in seconds);
# 2. status and the metrics say the directory is not answering;
# 3. a cable a tenant holds is unplugged: it is routed around (no table read back forwards to
#    the dead port, `laasctl audit` of the live tables is clean);
# 4. `laasctl tenant add` is refused at once, naming the directory (exit 75, try again);
# then unfrozen: it recovers by itself (logged), the repairs made meanwhile are written, the
# tables read back during the freeze pass the offline audit against what is written, and a
# tenant change succeeds.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup frozen_state
FREEZE="$WORK/freeze.flag"
FS="$(dirname "$0")/freezable_fs.py"
/usr/bin/python3 -c 'import fusepy' 2>/dev/null || die "python3-fusepy is not installed (scripts/deps.sh)"
[ -e /dev/fuse ] || die "no /dev/fuse"
# At any exit, unfreeze first (a process blocked in a FUSE call cannot even be killed), then
# unmount (lazily: OpenSM may still hold files there) and tear down as every test does.
frozen_teardown() {
  local rc=$?
  set +e
  rm -f "$FREEZE"
  sleep 0.3
  grep -q " $WORK/state fuse" /proc/mounts && umount -l "$WORK/state"
  (exit $rc)
  laas_teardown
}
trap frozen_teardown EXIT
mkdir -p "$WORK/state.backing"
"$FS" "$WORK/state.backing" "$WORK/state" "$FREEZE" >fs.log 2>&1 &
LAAS_EXTRA_PIDS=$!
for _ in $(seq 1 50); do
  grep -q " $WORK/state fuse" /proc/mounts && break
  sleep 0.1
done
grep -q " $WORK/state fuse" /proc/mounts || die "the FUSE state directory is not mounted: $(cat fs.log)"

export SIM_HOST=comp-1
"$LAAS_TOPOGEN" "pgft(2;8,4;1,4;1,2)" -o fabric.net
start_lab_tenants
audit_layout good
cp state/layout.json layout.good.json
log "tenants a (8) and b (10) placed on a FUSE state directory; audit clean"

# A cable a tenant holds (the first up-link of the first tenant with links: b), for the fault.
read -r HOLDER SW PORT < <(jq -r '[.tenants[] | select(.links | length > 0)][0] | "\(.name) \(.links[0].switch.name) \(.links[0].switch.port)"' alloc.good.json)
[ -n "$SW" ] && [ "$SW" != null ] || die "no tenant holds a link in allocations.json"

# --- Freeze. ---
touch "$FREEZE"
log "state directory frozen"
# 1. Heavy sweeps go on, each routed by laas: the first right after the freeze (it meets the
# hang), the second once the plugin knows.
t0=$SECONDS
WAIT_S=30 heavy_sweep "heavy sweep 1 with the state directory frozen"
log "1. heavy sweep 1 while frozen: routed by laas in $((SECONDS - t0)) s"

# 2. Status and the metrics say the directory is not answering.
for _ in $(seq 1 40); do
  ctl --json status >status.frozen 2>&1 || true
  jq -e '.state_dir_not_answering // empty' status.frozen >/dev/null 2>&1 && break
  sleep 0.5
done
jq -e '.state_dir_not_answering // empty' status.frozen >/dev/null 2>&1 ||
  die "status never says the state directory is not answering: $(head -c 300 status.frozen)"
ctl status >status.frozen.txt 2>&1 || true
grep -q "STATE DIRECTORY: state directory $WORK/state not answering for" status.frozen.txt ||
  die "laasctl status does not say so: $(cat status.frozen.txt)"
ctl metrics >metrics.frozen || die "laasctl metrics failed while frozen"
awk '$1 == "laas_state_dir_not_answering_seconds" && $2 > 0 { ok = 1 } END { exit !ok }' metrics.frozen ||
  die "laas_state_dir_not_answering_seconds is not above 0: $(grep not_answering metrics.frozen)"
log "2. status: $(jq -r .state_dir_not_answering status.frozen); metrics: $(grep '^laas_state_dir_not_answering_seconds' metrics.frozen)"

t0=$SECONDS
WAIT_S=30 heavy_sweep "heavy sweep 2 with the state directory frozen"
log "2. heavy sweep 2 while frozen: routed by laas in $((SECONDS - t0)) s"

# 3. A cable of tenant $HOLDER's unplugged: routed around.
swept=$(count_log 'laas tables configured on all switches')
console "Unlink \"$SW\"[$PORT]"
t0=$SECONDS
WAIT_S=30 heavy_sweep "unplugging $SW port $PORT (frozen)"
grep -q "laas: fault: link .*$SW.* is down" osm.log || die "the fault on $SW port $PORT is not logged"
sim ibnetdiscover >disc.frozen 2>disc.frozen.err || die "ibnetdiscover failed (frozen)"
sim dump_fts >lfts.frozen 2>lfts.frozen.err || die "dump_fts failed (frozen)"
sw_guid=$(jq -r --arg sw "$SW" '[.tenants[].links[] | .switch | select(.name == $sw) | .guid][0]' alloc.good.json)
dead=$(awk -v g="$sw_guid" -v p="$PORT" '
  /^Unicast lids/ { on = 0; for (i = 1; i < NF; i++) if ($i == "guid" && tolower($(i + 1)) == tolower(g)) on = 1; next }
  on && /^0x/ && $2 + 0 == p + 0 { n++ } END { print n + 0 }' lfts.frozen)
[ "$dead" = 0 ] || die "$dead LFT entries of $SW still forward to its dead port $PORT"
grep -q '^Unicast lids' lfts.frozen || die "dump_fts read no table"
ctl audit >audit.live.frozen 2>&1 || die "laasctl audit of the live tables fails while frozen: $(head -5 audit.live.frozen)"
[ "$(count_log 'laas tables configured on all switches')" -gt "$swept" ] || die "OpenSM stopped sweeping"
log "3. $SW port $PORT (tenant $HOLDER's) unplugged: re-routed in $((SECONDS - t0)) s, no entry of $SW forwards to it, laasctl audit clean"

# 4. A change is refused at once, naming the directory.
t0=$(date +%s%N)
rc=0
ctl tenant add c --hosts 2 >refused.out 2>&1 || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc = 75 ] || die "tenant add while frozen: exit $rc (want 75, try again): $(cat refused.out)"
grep -q "state directory $WORK/state not answering for" refused.out ||
  die "the refusal does not name the directory: $(cat refused.out)"
[ $ms -lt 5000 ] || die "the refusal took $ms ms"
log "4. tenant add refused in $ms ms, exit $rc: $(head -c 160 refused.out)"
[ "$(count_log 'laas: forwarding tables applied')" -gt 0 ] && kill -0 "$OSM_PID" || die "OpenSM died"

# --- Unfreeze: it recovers by itself. ---
applied=$(count_log 'laas: forwarding tables applied')
rm -f "$FREEZE"
wait_log 'laas: state directory .* answers again' 1 30
wait_log 'laas: forwarding tables applied' $((applied + 1)) 30
for _ in $(seq 1 20); do
  ctl --json status >status.after 2>&1 || true
  jq -e 'has("state_dir_not_answering") | not' status.after >/dev/null 2>&1 && break
  sleep 0.5
done
jq -e 'has("state_dir_not_answering") | not' status.after >/dev/null ||
  die "status still says the directory is not answering: $(jq -c . status.after)"
grep -q "laas: cannot save .* yet: state directory" osm.log &&
  ! jq -e --arg t "$HOLDER" '[.tenants[] | select(.name == $t) | .repairs // [] | length] | add > 0' state/state.json >/dev/null &&
  die "the repair made while frozen is not in state.json after recovery"
cp state/allocations.json alloc.frozen.json
"$LAAS_AUDIT" --fabric disc.frozen --lfts lfts.frozen --allocations alloc.frozen.json \
  --layout state/layout.json >audit.frozen 2>&1 ||
  die "the tables read back while frozen fail the audit: $(grep -E 'VIOLATION|laas-audit' audit.frozen | head -3)"
ctl tenant add c --hosts 2 >added.out 2>&1 || die "tenant add after recovery failed: $(cat added.out)"
[ "$(ctl --json tenant list | jq length)" = 3 ] || die "not three tenants after recovery"
audit_layout after
log "recovered by itself: $(grep -o 'state directory .* answers again[^;]*' osm.log | tail -1); tables read back while frozen audit clean; tenant c added; audit clean"
