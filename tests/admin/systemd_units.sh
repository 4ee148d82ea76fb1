#!/usr/bin/env bash
# `systemd-analyze verify` of every unit and drop-in LaaS ships, laid out as on an SM host
# beside Debian's own systemd and OpenSM units (copied into a scratch root, --root):
#   plain  the packages' laas-audit.service and .timer (timer enabled), laas-api.service, Debian's opensm.service
#          enabled as its package does, one instance opensm@GUID.service;
#   ha     the same plus conf/systemd-ha (the instance unit and the opensm.service drop-in of
#          docs/ha.md, in /etc/systemd/system) and the state share mounted by NFS from the fstab
#          line of docs/ha.md (through systemd's own fstab generator).
# Any output fails the test: an ordering cycle (at boot systemd deletes a job to break it: the
# mount, OpenSM or network-online.target), an unknown key, a missing executable. A control run
# first checks that the harness sees the cycle of the layout conf/systemd-ha replaced (a drop-in
# with RequiresMountsFor on Debian's unit), so an empty output means something.
# Exit 77 (skip) without systemd-analyze or without Debian's OpenSM units (package opensm).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
vendor=/lib/systemd/system
generator=/lib/systemd/system-generators/systemd-fstab-generator
skip() {
  echo "SKIP: $*"
  exit 77
}
command -v systemd-analyze >/dev/null 2>&1 || skip "systemd-analyze not found (package systemd)"
if [ ! -f "$vendor/opensm.service" ] || [ ! -f "$vendor/opensm@.service" ]; then
  skip "Debian's OpenSM units are not in $vendor (package opensm)"
fi
[ -x "$generator" ] || skip "$generator not found (package systemd)"

work=$(mktemp -d /tmp/laas-units-XXXXXX)
trap 'rm -rf "$work"' EXIT
guid=0x0002c90300a1b2c1
# The fstab line of docs/ha.md.
fstab_line='nfs-server:/srv/laas  /var/lib/laas  nfs4  rw,hard,sync,actimeo=1,_netdev  0 0'

# Debian's units: those of packages systemd and opensm (not whatever else this machine has
# installed, which could bring its own complaints), or all of them without dpkg.
vendor_units() {
  if command -v dpkg-query >/dev/null 2>&1; then
    dpkg-query -L systemd opensm | grep "^$vendor/" || true
  else
    find "$vendor" -mindepth 1
  fi
}

# A scratch root: Debian's units, the packages' units, stub executables (verify checks that
# every Exec*= command exists and is executable).
make_root() {
  local root=$1
  mkdir -p "$root$vendor" "$root/etc/systemd/system" "$root/bin" "$root/usr/bin" "$root/usr/sbin"
  vendor_units | while read -r path; do
    if [ -d "$path" ] && [ ! -L "$path" ]; then
      mkdir -p "$root$path"
    else
      cp -a "$path" "$root$path"
    fi
  done
  for exe in /bin/sh /bin/kill /usr/sbin/opensm /usr/bin/laasctl /usr/bin/laas-api /usr/bin/laas-slurm \
    /usr/bin/laas-sdn; do
    printf '#!/bin/sh\n' >"$root$exe"
    chmod 755 "$root$exe"
  done
  # As the packages install them (debian/rules, packaging/rpm/laas.spec).
  install -m 0644 "$src/conf/systemd/laas-audit.service" "$src/conf/systemd/laas-audit.timer" \
    "$src/conf/systemd/laas-api.service" "$src/conf/systemd/laas-slurm.service" "$src/conf/systemd/laas-sdn.service" \
    "$root$vendor/"
  # Enabled: Debian's opensm.service (its postinst), the timer (systemctl enable).
  mkdir -p "$root/etc/systemd/system/network-online.target.wants" \
    "$root/etc/systemd/system/timers.target.wants"
  ln -s "$vendor/opensm.service" "$root/etc/systemd/system/network-online.target.wants/"
  ln -s "$vendor/laas-audit.timer" "$root/etc/systemd/system/timers.target.wants/"
}

# The share as fstab declares it: the mount unit systemd's generator makes of the line.
add_fstab_mount() {
  local root=$1 gen
  gen=$(mktemp -d "$work/gen-XXXXXX")
  mkdir -p "$gen/normal" "$gen/early" "$gen/late"
  printf '%s\n' "$fstab_line" >"$gen/fstab"
  SYSTEMD_FSTAB="$gen/fstab" SYSTEMD_PROC_CMDLINE="" \
    "$generator" "$gen/normal" "$gen/early" "$gen/late"
  [ -f "$gen/normal/var-lib-laas.mount" ] || {
    echo "FAIL: the fstab generator made no var-lib-laas.mount"
    exit 1
  }
  cp "$gen/normal/var-lib-laas.mount" "$root/etc/systemd/system/"
  mkdir -p "$root/etc/systemd/system/remote-fs.target.requires"
  ln -s ../var-lib-laas.mount "$root/etc/systemd/system/remote-fs.target.requires/"
}

# Prints what verify says (nothing when all is well) about the units of a boot of an SM host.
verify() {
  local root=$1
  shift
  systemd-analyze verify --root="$root" --man=no --generators=no \
    opensm.service "opensm@$guid.service" laas-audit.service laas-audit.timer laas-api.service laas-slurm.service \
    laas-sdn.service \
    network.target network-online.target remote-fs.target timers.target "$@" 2>&1 || true
}

status=0
check() {
  local name=$1 out=$2
  if [ -n "$out" ]; then
    echo "FAIL: systemd-analyze verify ($name):"
    printf '%s\n' "$out" | sed 's/^/  /'
    status=1
  else
    echo "ok: systemd-analyze verify ($name) prints nothing"
  fi
}

# Control: the layout conf/systemd-ha replaced must show its cycle here.
control="$work/control"
make_root "$control"
add_fstab_mount "$control"
mkdir -p "$control/etc/systemd/system/opensm@.service.d"
printf '[Unit]\nRequiresMountsFor=/var/lib/laas\n' \
  >"$control/etc/systemd/system/opensm@.service.d/laas-ha.conf"
out=$(verify "$control" var-lib-laas.mount)
if ! printf '%s\n' "$out" | grep >/dev/null 'ordering cycle'; then
  echo "FAIL: the harness does not see the known ordering cycle (OpenSM's Before=network.target"
  echo "      against a drop-in's RequiresMountsFor= on an NFS share); verify said:"
  printf '%s\n' "$out" | sed 's/^/  /'
  exit 1
fi
echo "ok: control: a drop-in with RequiresMountsFor on Debian's opensm@.service is an ordering cycle"

plain="$work/plain"
make_root "$plain"
check plain "$(verify "$plain")"

ha="$work/ha"
make_root "$ha"
add_fstab_mount "$ha"
cp -r "$src/conf/systemd-ha/." "$ha/etc/systemd/system/"
check ha "$(verify "$ha" var-lib-laas.mount remote-fs-pre.target)"
# The instance must really wait for the share, not merely start beside it.
if ! grep -q '^RequiresMountsFor=/var/lib/laas$' "$ha/etc/systemd/system/opensm@.service"; then
  echo "FAIL: the HA opensm@.service does not require the share (RequiresMountsFor=/var/lib/laas)"
  status=1
fi
# A hang verify cannot see (it is in a shell command): Debian's opensm.service, ordered before
# network.target, must not wait for instances that now wait for the network.
if ! grep -q -- '^ExecStart=/bin/sh -c .*systemctl --no-block start ' \
  "$ha/etc/systemd/system/opensm.service.d/laas-ha.conf"; then
  echo "FAIL: the opensm.service drop-in does not start the instances with --no-block"
  status=1
fi
exit $status
