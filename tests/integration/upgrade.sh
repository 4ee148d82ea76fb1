#!/usr/bin/env bash
# upgrade.sh: an HA pair upgraded from the previous release to this one, one SM at a time, with
# tenants routed throughout, and back -- the procedure of docs/admin-guide.md ("Upgrade with
# tenants running") and docs/ha.md, under ibsim with the real OpenSM.
# The previous release is built from this clone's history (scripts/build-previous-release.sh;
# exit 77, a skip, in a shallow clone). The demo tree, QOS=1, two SMs sharing the state
# directory as that release's HA recipe does; SM 1 at SW_L2_0, SM 2 at SW_L2_1.
#  0. Both SMs on the previous release; tenants a and b added, a free host drained, with the
#     previous release's laasctl.
#  1. The standby (SM 2) restarted on this release: it follows as standby, lists a and b.
#  2. The master (SM 1) restarted (SIGTERM, as a package upgrade does): SM 2 takes over on this
#     release from the previous release's state files.
#  3. SM 1 back on this release as standby; tenant c added at the master and followed.
#  4. Back: the standby (SM 1) restarted on the previous release, then the master (SM 2)
#     stopped: SM 1 takes over on the previous release from this release's state files, lists
#     a, b and c, and removes c with the previous release's laasctl; SM 2 back as its standby.
# Throughout 1-2 and 4, a sampler reads the LFTs back from the switches every half second: each
# sample must equal the tables before the step (no moment without the tenants' routes). After
# each step the tables read back are audited (laas-audit, SL2VL first-hop drops included) and
# equal those before it; the drained host stays drained.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ha.sh"
laas_enter_namespace "$@"
[ -n "${LAAS_SOURCE_DIR:-}" ] || die "LAAS_SOURCE_DIR is not set"
prev_dir=${LAAS_PREVIOUS_RELEASE_DIR:-$LAAS_WORK/previous-release}
rc=0
bash "$LAAS_SOURCE_DIR/scripts/build-previous-release.sh" "$prev_dir" || rc=$?
[ $rc -ne 77 ] || { echo "SKIP: the previous release is not in this clone's history" >&2; exit 77; }
[ $rc -eq 0 ] || die "cannot build the previous release (scripts/build-previous-release.sh: exit $rc)"
# shellcheck disable=SC1091 # written by the build
source "$prev_dir/env"
export QOS=1
ha_setup "${1:-upgrade}"
SAMPLER_PID=""
# The sampler ends before ibsim does (ha_teardown reads the exit status: errexit off first).
upgrade_teardown() {
  local rc=$?
  set +e
  if [ -n "$SAMPLER_PID" ]; then
    touch "$WORK/sampler.stop"
    wait "$SAMPLER_PID" 2>/dev/null
  fi
  (exit $rc)
  ha_teardown
}
trap upgrade_teardown EXIT
HA_NODES="SW_L2_0 SW_L2_1"
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric fabric.net

OLD=$PREVIOUS_PLUGIN_DIR NEW=$LAAS_PLUGIN_DIR
release_of() { if [ "$(eval "echo \"\${PLUGIN_DIR_$1:-}\"")" = "$OLD" ]; then echo previous; else echo this; fi; }
# ctl_on N ARGS: the laasctl of the release SM N runs.
ctl_on() {
  local n=$1 tool=$LAASCTL
  shift
  [ "$(release_of "$n")" = previous ] && tool=$PREVIOUS_LAASCTL
  "$tool" -s "$WORK/sm$n.sock" --timeout 30 "$@"
}
names_on() { ctl_on "$1" --json tenant list | jq -r '.[].name' | sort | tr '\n' ' '; }
# entries FILE: "switch-guid lid port" of every LFT entry in dump_fts output, sorted.
entries() {
  awk '/^Unicast lids/ { for (i = 1; i < NF; i++) if ($i == "guid") sw = $(i + 1); next }
    /^0x/ { print sw, tolower($1), $2 }' "$1" | sort
}
# sampler BASE: reads the LFTs every 0.5 s until sampler.stop exists; a sample that differs
# from BASE is kept as sample.bad.N.
sampler() {
  local base=$1 i=0
  rm -f sampler.stop sample.bad.*
  while [ ! -e sampler.stop ] && kill -0 $$ 2>/dev/null; do  # ends with the test, too
    i=$((i + 1))
    # A bound: umad2sim waits forever for an ibsim that has gone.
    if timeout 10 env LD_PRELOAD="$UMAD2SIM" dump_fts >sample.lfts 2>/dev/null; then
      entries sample.lfts >sample.entries
      cmp -s "$base" sample.entries || cp sample.entries "sample.bad.$i"
      echo "$i" >sample.count
    fi
    sleep 0.5
  done
}
start_sampler() {
  sampler "$1" &
  SAMPLER_PID=$!
}
# stop_sampler STEP: no sample differed from the base during STEP.
stop_sampler() {
  touch sampler.stop
  wait "$SAMPLER_PID" 2>/dev/null || true
  SAMPLER_PID=""
  local bad n
  n=$(cat sample.count 2>/dev/null || echo 0)
  [ "$n" -ge 2 ] || die "$1: the sampler read the tables $n time(s)"
  bad=$(find . -maxdepth 1 -name 'sample.bad.*' | sort -V | head -1)
  [ -z "$bad" ] || die "$1: tables read back during the step differ from before it ($(find . -maxdepth 1 -name 'sample.bad.*' | wc -l) of $n samples), e.g. $(diff "$SAMPLE_BASE" "$bad" | grep -c '^[<>]') entries: $(diff "$SAMPLE_BASE" "$bad" | grep '^[<>]' | head -3 | tr '\n' ' ')"
  log "$1: $n samples of the tables read back during the step, all equal to the tables before it"
}
# same_tables TAG BASE_TAG: audited, and the LFTs equal BASE_TAG's.
same_tables() {
  audit_layout "$1"
  entries "lfts.$1" >"entries.$1"
  cmp -s "entries.$2" "entries.$1" ||
    die "$1: the tables differ from $2's: $(diff "entries.$2" "entries.$1" | grep -c '^[<>]') entries"
}
drained_on() { ctl_on "$1" --json host show "$DRAINED" | jq -r .state; }

# --- 0. Both SMs on the previous release. ------------------------------------------------------
PLUGIN_DIR_1=$OLD PLUGIN_DIR_2=$OLD
start_sm 1 15 SW_L2_0
wait_master 1 60
start_sm 2 8 SW_L2_1
wait_standby 2 60
ctl_on 1 tenant add a --hosts 8 >add.a.out 2>&1 || die "tenant add a failed: $(cat add.a.out)"
ctl_on 1 tenant add b --hosts 10 >add.b.out 2>&1 || die "tenant add b failed: $(cat add.b.out)"
DRAINED=$(ctl_on 1 --json host list --state free | jq -r '.[0].name')
ctl_on 1 host drain "$DRAINED" --reason "upgrade test" >/dev/null || die "host drain failed"
[ "$(drained_on 1)" = drained ] || die "$DRAINED is '$(drained_on 1)' after the drain"
audit_layout old
entries lfts.old >entries.old
log "0: SM 1 master, SM 2 standby, both on the previous release ${PREVIOUS_RELEASE:0:12}; tenants a, b; $DRAINED drained"

# --- 1. The standby upgraded. ------------------------------------------------------------------
SAMPLE_BASE=entries.old
start_sampler entries.old
stop_sm 2
PLUGIN_DIR_2=$NEW
start_sm 2 8 SW_L2_1
wait_standby 2 60
check_sm 2
[ "$(ctl_on 2 --json status | jq -r .sm.role)" = standby ] ||
  die "SM 2 on this release is not standby: $(ctl_on 2 --json status | jq -c .sm)"
[ "$(names_on 2)" = "a b " ] || die "SM 2 on this release lists '$(names_on 2)', expected 'a b '"
log "1: SM 2 on this release follows as standby, lists a b"

# --- 2. The master restarted: SM 2 takes over on this release. -------------------------------
stop_sm 1
wait_master 2 60
same_tables up old
stop_sampler "1-2 (standby upgraded, master restarted)"
[ "$(names_on 2)" = "a b " ] || die "SM 2 lists '$(names_on 2)' after the takeover, expected 'a b '"
[ "$(drained_on 2)" = drained ] || die "$DRAINED is '$(drained_on 2)' on this release, expected drained"
log "2: SM 2 master on this release from the previous release's state files: a b, $DRAINED drained, tables audited and identical"

# --- 3. SM 1 back on this release; a change. ---------------------------------------------------
PLUGIN_DIR_1=$NEW
restart_standby 1 SW_L2_0
ctl_on 2 tenant add c --hosts 4 >add.c.out 2>&1 || die "tenant add c on this release failed: $(cat add.c.out)"
audit_layout new
entries lfts.new >entries.new
for _ in $(seq 50); do [ "$(names_on 1)" = "a b c " ] && break; sleep 0.2; done
[ "$(names_on 1)" = "a b c " ] || die "the standby on this release lists '$(names_on 1)', expected 'a b c '"
log "3: both SMs on this release; c added at SM 2, followed by SM 1"

# --- 4. Back to the previous release, one SM at a time. ---------------------------------------
SAMPLE_BASE=entries.new
start_sampler entries.new
stop_sm 1
PLUGIN_DIR_1=$OLD
start_sm 1 1 SW_L2_0
wait_standby 1 60
check_sm 1
[ "$(names_on 1)" = "a b c " ] ||
  die "SM 1 on the previous release lists '$(names_on 1)' from this release's state, expected 'a b c '"
stop_sm 2
wait_master 1 60
same_tables back new
stop_sampler "4 (back to the previous release)"
[ "$(drained_on 1)" = drained ] || die "$DRAINED is '$(drained_on 1)' back on the previous release"
ctl_on 1 tenant remove c >remove.c.out 2>&1 || die "tenant remove c on the previous release failed: $(cat remove.c.out)"
[ "$(names_on 1)" = "a b " ] || die "SM 1 lists '$(names_on 1)' after removing c, expected 'a b '"
audit_layout back2
PLUGIN_DIR_2=$OLD
restart_standby 2 SW_L2_1
[ "$(names_on 2)" = "a b " ] || die "SM 2 back on the previous release lists '$(names_on 2)', expected 'a b '"
log "4: SM 1 master on the previous release from this release's state files: a b c, tables identical; c removed there; SM 2 its standby"
log "PASS upgrade: ${PREVIOUS_RELEASE:0:12} -> this release -> ${PREVIOUS_RELEASE:0:12}, one SM at a time, tenants routed throughout"
