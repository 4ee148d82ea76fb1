#!/usr/bin/env bash
# package-test.sh: the Debian package from end to end, as an administrator would use it.
#
#   1. build laas_*.deb with dpkg-buildpackage from a copy of this tree (or take $LAAS_DEB);
#   2. apt-get install ./laas_*.deb; check group laas, /run/opensm, /var/lib/laas, the conffile;
#   3. in a private network namespace: ibsim with a laas-topogen fabric, OpenSM with the
#      INSTALLED plugin (no LD_LIBRARY_PATH) and the PACKAGED /etc/laas/laas.yaml;
#      laasctl tenant add t1 --hosts 10; laasctl audit clean; laas-audit on the tables read back;
#   4. apt-get remove keeps /var/lib/laas (the tenant is still in state.json);
#      apt-get purge removes it and /etc/laas;
#   5. installed again, purged with /var/lib/laas a mount point (shared state): it survives.
#
# It installs and purges a system package and uses the real /var/lib/laas and /run/opensm, so
# it needs root, apt-get and dpkg-buildpackage, and refuses to run where package laas or
# tenant state already exists. Otherwise it prints SKIP and exits 77 (ctest SKIP_RETURN_CODE).
#
# Environment: LAAS_DEB=path (skip the build), LAAS_WORK=dir (default /tmp/laas-package-test),
# LAAS_PKG_BUILD_OPTIONS (DEB_BUILD_OPTIONS of the build; default "nocheck noopt noddebs
# parallel=2", -g stripped from the compiler flags and a unity build: the unit tests already ran
# in the same CI run, and this test checks the packaging, the installation and the installed
# plugin, not the optimizer -- -O0 halves the compile time, the longest step of CI; the unity
# build took the whole test from 246-289 s to 172 s; LAAS_PKG_BUILD_OPTIONS="" builds as a
# release would),
# LAAS_KEEP=1 (keep the work directory).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=${LAAS_WORK:-/tmp/laas-package-test}
UMAD2SIM=${UMAD2SIM:-$(ls /usr/lib/*/umad2sim/libumad2sim.so 2>/dev/null | head -1)}
SPEC='xgft(2;4,8;1,4)'

log() { echo "[$(date +%T)] $*"; }
die() {
  echo "FAIL: $*" >&2
  exit 1
}
skip() {
  echo "SKIP: package test: $*"
  exit 77
}

# ---------------------------------------------------------------- stage 2: the fabric
# Runs inside `unshare -n` (ibsim's control socket is an abstract name: a private network
# namespace keeps it apart from any other fabric on the machine).
if [ "${1:-}" = "--fabric" ]; then
  cd "$WORK"
  SIM_PID=""
  OSM_PID=""
  # The fabric plumbing the integration tests use: start_fabric, wait_log, sim, and the
  # teardown that stops OpenSM before ibsim.
  export UMAD2SIM LAAS_IN_NS=1
  source "$SRC/tests/integration/lib.sh"
  trap laas_teardown EXIT
  export SIM_HOST=SW_L2_0 # OpenSM as a switch's embedded SM: every host is allocatable

  # The installed tools only, from a PATH without the build tree.
  export PATH=/usr/sbin:/usr/bin:/sbin:/bin
  unset LD_LIBRARY_PATH LAAS_SOCKET

  laas-topogen "$SPEC" -o fabric.net
  start_fabric fabric.net

  # The administrator's opensm.conf lines (conf/opensm.conf.snippet) plus test-only logging;
  # the plugin reads the packaged /etc/laas/laas.yaml: default socket and state directory.
  {
    grep -Ev '^[[:space:]]*(#|$)' /usr/share/doc/laas/examples/opensm.conf.snippet
    echo "force_log_flush TRUE"
    echo "sweep_interval 0"
    # The packaged laas.yaml manages partitions: keep the machine's /etc/opensm out of it.
    echo "partition_config_file $WORK/partitions.conf"
  } >opensm.conf
  LD_PRELOAD="$UMAD2SIM" opensm -F "$WORK/opensm.conf" -f "$WORK/osm.log" </dev/null \
    >opensm.out 2>&1 &
  OSM_PID=$!
  wait_log 'laas: forwarding tables applied' 1 60
  grep -q 'laas tables configured on all switches' osm.log || die "the laas engine did not route"
  lib=$(grep -o '/[^ ]*libosmlaas\.so' "/proc/$OSM_PID/maps" | sort -u)
  [ "$lib" = "$(dpkg -L laas | grep '/libosmlaas\.so$')" ] ||
    die "opensm did not load the installed plugin (maps: ${lib:-none})"
  log "opensm loaded $lib; $(grep -m1 -o 'laas: control socket listening on .*' osm.log)"

  sock=/run/opensm/laas.sock
  [ -S "$sock" ] || die "no control socket at $sock"
  perm=$(stat -c '%a %U %G' "$sock")
  [ "$perm" = "666 root laas" ] || die "$sock is '$perm', expected '666 root laas'"
  # Someone in neither group cannot even reach the socket (/run/opensm is 0750 root:laas, with
  # an ACL for laas-read); the peer credentials would refuse them anyway.
  rc=0
  setpriv --reuid=nobody --regid=nogroup --clear-groups laasctl status >nobody.out 2>&1 || rc=$?
  [ $rc -eq 77 ] || die "laasctl as nobody: exit $rc, expected 77 (permission denied)"
  log "laasctl as nobody: exit 77 ($(head -1 nobody.out))"
  # Group laas-read reads, and may not change tenants.
  as_reader() { setpriv --reuid=nobody --regid=laas-read --clear-groups "$@"; }
  as_reader laasctl status >reader.out 2>&1 || die "laasctl status as laas-read: $(cat reader.out)"
  rc=0
  as_reader laasctl tenant add r1 --hosts 1 >reader.out 2>&1 || rc=$?
  [ $rc -eq 77 ] || die "laasctl tenant add as laas-read: exit $rc, expected 77: $(cat reader.out)"
  log "laas-read: status ok, tenant add exit 77 ($(head -1 reader.out))"

  laasctl --timeout 60 tenant add t1 --hosts 10 >add.out 2>&1 ||
    die "laasctl tenant add t1 --hosts 10: $(cat add.out)"
  log "laasctl tenant add t1 --hosts 10: $(head -1 add.out)"
  laasctl tenant list >list.out 2>&1 || die "laasctl tenant list: $(cat list.out)"
  grep -q '\bt1\b' list.out || die "tenant list lacks t1: $(cat list.out)"
  # OpenSM's QoS manager sends the SL2VL tables after the forwarding tables (the reply of
  # tenant add waits for those): read again while the SL2VL findings show them lagging.
  for try in 1 2 3 4 5; do
    rc=0
    laasctl audit >audit.out 2>&1 || rc=$?
    [ $rc -ne 0 ] && [ $try -lt 5 ] && grep -q '"sl2vl-mismatch"' audit.out || break
    sleep 1
  done
  [ $rc -eq 0 ] || die "laasctl audit: $(head -20 audit.out)"
  grep -Eq '"violations": *0\b' audit.out || die "laasctl audit: no '\"violations\": 0' in $(head -20 audit.out)"
  log "laasctl audit: exit 0, $(grep -Eo '"violations": *[0-9]+' audit.out)"

  # The same proof from the tables read back from the switches, with the installed laas-audit.
  sim ibnetdiscover >disc.txt 2>disc.err || die "ibnetdiscover: $(tail -3 disc.err)"
  sim dump_fts >lfts.txt 2>lfts.err || die "dump_fts: $(tail -3 lfts.err)"
  laas-audit --fabric disc.txt --lfts lfts.txt --allocations /var/lib/laas/allocations.json \
    >offline-audit.out 2>&1 || die "laas-audit: $(grep -E 'VIOLATION|laas-audit' offline-audit.out | head -5)"
  log "laas-audit on the switches' tables: $(grep -m1 -i 'violation' offline-audit.out || tail -1 offline-audit.out)"
  grep -q '"t1"' /var/lib/laas/state.json || die "t1 is not in /var/lib/laas/state.json"
  # The packaged configuration manages partitions.conf: t1's partition is there, validated.
  grep -q '^laas_t1=0x[0-9a-f]\{4\}, ipoib, indx0 :' partitions.conf ||
    die "the packaged configuration did not write t1's partition: $(cat partitions.conf 2>&1 | head -5)"
  log "partitions.conf (managed by the packaged laas.yaml): $(grep -c '^laas_' partitions.conf) tenant statements"
  exit 0
fi

# ---------------------------------------------------------------- stage 1: build, install
[ "$(id -u)" -eq 0 ] || skip "needs root (installs and purges the laas package)"
export PATH=$PATH:/usr/sbin:/sbin
for tool in apt-get git unshare setpriv ibsim opensm ibnetdiscover dump_fts; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (scripts/deps.sh)"
done
git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1 || skip "$SRC is not a git checkout"
[ -f "$UMAD2SIM" ] || skip "$UMAD2SIM missing (ibsim-utils)"
unshare -n true 2>/dev/null || skip "cannot create a network namespace (unshare -n)"
if dpkg-query -W -f='${Status}' laas 2>/dev/null | grep -qv 'not-installed'; then
  [ "$(dpkg-query -W -f='${Status}' laas)" = "deinstall ok config-files" ] &&
    [ -n "${LAAS_PKG_TEST_FORCE:-}" ] ||
    skip "package laas is already on this machine ($(dpkg-query -W -f='${Status}' laas)); this test would remove it"
fi
if [ -e /var/lib/laas ] && [ -z "${LAAS_PKG_TEST_FORCE:-}" ]; then
  skip "/var/lib/laas exists (tenant state?); this test would purge it (LAAS_PKG_TEST_FORCE=1 to allow)"
fi

rm -rf "$WORK"
mkdir -p "$WORK"
installed=""
cleanup() {
  local rc=$?
  if [ -n "$installed" ] && [ $rc -ne 0 ]; then
    apt-get purge -y -qq laas >/dev/null 2>&1 || true
  fi
  [ $rc -ne 0 ] || [ -n "${LAAS_KEEP:-}" ] || rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT

if [ -n "${LAAS_DEB:-}" ]; then
  deb=$(readlink -f "$LAAS_DEB")
  log "using $deb"
else
  # The packaging tools and the Build-Depends of debian/control, when missing (apt-get is
  # needed below anyway); a machine that cannot get them skips the test.
  export DEBIAN_FRONTEND=noninteractive
  if ! command -v dh >/dev/null || ! command -v dpkg-buildpackage >/dev/null; then
    log "installing debhelper dpkg-dev fakeroot"
    apt-get install -y -qq --no-install-recommends debhelper dpkg-dev fakeroot \
      >"$WORK/deps.log" 2>&1 || skip "cannot install debhelper/dpkg-dev: $(tail -1 "$WORK/deps.log")"
  fi
  version=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
  tree="$WORK/src/laas-$version"
  mkdir -p "$tree"
  # The tracked files and new ones not ignored (a build directory inside the tree is not copied).
  (cd "$SRC" && git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$tree" -xf -
  if ! (cd "$tree" && dpkg-checkbuilddeps -B) >/dev/null 2>&1; then
    log "installing the Build-Depends of debian/control"
    apt-get build-dep -y -qq "$tree" >>"$WORK/deps.log" 2>&1 ||
      skip "cannot install the Build-Depends: $(tail -1 "$WORK/deps.log")"
  fi
  log "dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS='${LAAS_PKG_BUILD_OPTIONS-nocheck noopt noddebs parallel=2}')"
  start=$SECONDS
  # Without debug information too, unless LAAS_PKG_BUILD_OPTIONS is given: noddebs ships none,
  # and -g costs a fifth of the compile time at -O0 (dpkg-buildflags' DEB_*FLAGS_STRIP).
  # And as a unity build (debian/rules' LAAS_DEB_CMAKE_ARGS): each header parsed once for
  # eight files.
  quick=()
  [ -n "${LAAS_PKG_BUILD_OPTIONS+set}" ] ||
    quick=(DEB_CFLAGS_STRIP=-g DEB_CXXFLAGS_STRIP=-g LAAS_DEB_CMAKE_ARGS=-DLAAS_UNITY_BUILD=ON)
  (cd "$tree" && env "${quick[@]}" \
    DEB_BUILD_OPTIONS="${LAAS_PKG_BUILD_OPTIONS-nocheck noopt noddebs parallel=2}" \
    dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1 ||
    die "dpkg-buildpackage failed, see $WORK/build.log: $(tail -5 "$WORK/build.log")"
  deb=$(ls "$WORK"/src/laas_"$version"_*.deb)
  log "built $(basename "$deb") in $((SECONDS - start)) s"
fi

log "apt-get install -y $deb"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq "$deb" >"$WORK/install.log" 2>&1 || die "apt-get install: $(tail -5 "$WORK/install.log")"
installed=1
dpkg-query -W -f='${Status} ${Version}\n' laas
plugin=$(dpkg -L laas | grep '/libosmlaas\.so$')
case "$plugin" in /usr/lib/*-linux-gnu*/libosmlaas.so) ;; *) die "plugin installed as '$plugin'" ;; esac
getent group laas >/dev/null || die "group laas was not created"
getent group laas-read >/dev/null || die "group laas-read was not created"
# /var/lib/laas is setgid, so the state files inside are group laas (readable by its members).
for want in "/run/opensm 750" "/var/lib/laas 2750"; do
  d=${want% *} mode=${want#* }
  [ "$(stat -c '%a %U %G' "$d")" = "$mode root laas" ] ||
    die "$d is '$(stat -c '%a %U %G' "$d")', expected '$mode root laas'"
done
grep -qx /etc/laas/laas.yaml /var/lib/dpkg/info/laas.conffiles || die "/etc/laas/laas.yaml is not a conffile"
log "group laas, /run/opensm (750) and /var/lib/laas (2750 root:laas), conffile /etc/laas/laas.yaml: ok"

log "fabric $SPEC in a private network namespace"
LAAS_WORK="$WORK" unshare -n "$SRC/scripts/package-test.sh" --fabric || die "fabric stage failed (work directory $WORK)"

log "apt-get remove -y laas"
apt-get remove -y -qq laas >"$WORK/remove.log" 2>&1 || die "apt-get remove: $(tail -5 "$WORK/remove.log")"
[ -d /var/lib/laas ] && grep -q '"t1"' /var/lib/laas/state.json ||
  die "apt-get remove did not keep /var/lib/laas/state.json"
[ -f /etc/laas/laas.yaml ] || die "apt-get remove deleted the conffile"
[ ! -e "$plugin" ] || die "$plugin is still there after remove"
log "after remove: /var/lib/laas kept ($(ls /var/lib/laas | tr '\n' ' '))"

log "apt-get purge -y laas"
apt-get purge -y -qq laas >"$WORK/purge.log" 2>&1 || die "apt-get purge: $(tail -5 "$WORK/purge.log")"
installed=""
[ ! -e /var/lib/laas ] || die "apt-get purge left /var/lib/laas"
[ ! -e /etc/laas ] || die "apt-get purge left /etc/laas"
log "after purge: /var/lib/laas and /etc/laas gone"

# A shared state directory (the HA recipe's NFS or DRBD mount: the tenant state of every SM
# using it) survives a purge. Installed again, then purged in a mount namespace where
# /var/lib/laas is a mount point holding another SM's state.
log "apt-get install again; purge with /var/lib/laas a mount point"
apt-get install -y -qq "$deb" >"$WORK/install2.log" 2>&1 || die "apt-get install (again): $(tail -5 "$WORK/install2.log")"
installed=1
unshare -m sh -euc '
  mount -t tmpfs -o mode=2750 laas-shared /var/lib/laas
  echo "{\"tenants\": [\"another SM\"]}" >/var/lib/laas/state.json
  apt-get purge -y -qq laas >"$1/purge2.log" 2>&1
  grep -q "another SM" /var/lib/laas/state.json
' sh "$WORK" || die "purge deleted a shared state directory's state.json, or failed: $(tail -5 "$WORK/purge2.log")"
installed=""
grep -q 'mount point or shared storage' "$WORK/purge2.log" || die "the purge did not say it left the shared directory: $(tail -3 "$WORK/purge2.log")"
[ ! -e /etc/laas ] || die "apt-get purge left /etc/laas"
[ ! -e /var/lib/laas ] || rmdir /var/lib/laas  # the directory under the mount, left alone
log "purge with a shared /var/lib/laas: its state.json kept, the purge says why"
log "PASS package test"
