#!/usr/bin/env bash
# openstack_scripts.sh: the OpenStack scripts LaaS exports (the golden files, which the unit
# tests keep equal to the generator's output) run against fake_openstack.py: every command is
# parsed by python-openstackclient's own parser for it, then applied to a recorded state.
# Checks: the aggregates hold exactly the tenants' hosts with filter_tenant_id set to the
# project ID (given, or looked up by name); a second run changes nothing; a drifted aggregate
# (a foreign host added) is repaired; the removal script deletes the aggregate, twice safely.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
golden="$here/../golden/export"
/usr/bin/python3 -c 'import openstackclient' 2>/dev/null ||
  { echo "SKIP: python3-openstackclient is not installed (scripts/deps.sh)"; exit 77; }
work=$(mktemp -d /tmp/laas-openstack-XXXXXX)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/bin"
ln -s "$here/fake_openstack.py" "$work/bin/openstack"
export PATH="$work/bin:$PATH" FAKE_OPENSTACK_STATE="$work/state.json" FAKE_OPENSTACK_LOG="$work/log"
die() { echo "FAIL: $*" >&2; exit 1; }
# One process holds openstackclient's parsers; every `openstack` call asks it.
export FAKE_OPENSTACK_SOCKET="$work/parser.sock"
"$here/fake_openstack.py" --serve &
server=$!
for _ in $(seq 1 100); do [ -S "$FAKE_OPENSTACK_SOCKET" ] && break; sleep 0.1; done
[ -S "$FAKE_OPENSTACK_SOCKET" ] || die "the parser server did not start"
state() { /usr/bin/python3 -c "import json,sys; s=json.load(open('$work/state.json')); print(eval(sys.argv[1]))" "$1"; }

echo '{"projects": {"1": "0f3c2b1a9d8e4f7a6b5c4d3e2f1a0b9c"}}' >"$work/state.json"
bash "$golden/openstack_add.sh" || die "openstack_add.sh failed (log: $(tail -3 "$work/log"))"
[ "$(state "sorted(s['aggregates'])")" = "['laas-1', 'laas-4']" ] || die "aggregates: $(cat "$work/state.json")"
[ "$(state "s['aggregates']['laas-4']['properties']['filter_tenant_id']")" = 8c1f0a4e6b2d4f39a1c3e5d7f9b0a2c4 ] ||
  die "laas-4 not isolated to its project ID"
[ "$(state "s['aggregates']['laas-1']['properties']['filter_tenant_id']")" = 0f3c2b1a9d8e4f7a6b5c4d3e2f1a0b9c ] ||
  die "laas-1 not isolated to the project looked up by name"
[ "$(state "' '.join(s['aggregates']['laas-4']['hosts'])")" = "$(echo comp-{1..10})" ] || die "laas-4 hosts"
[ "$(state "' '.join(s['aggregates']['laas-1']['hosts'])")" = "$(echo comp-{11..20})" ] || die "laas-1 hosts"
echo "first run: $(wc -l <"$work/log") commands parsed by openstackclient, 2 aggregates"

cp "$work/state.json" "$work/state.first"
: >"$work/log"
bash "$golden/openstack_add.sh" || die "second run of openstack_add.sh failed"
cmp -s "$work/state.json" "$work/state.first" || die "second run changed the state"
! grep -qE 'aggregate (create|add host|remove host)' "$work/log" || die "second run changed aggregates: $(cat "$work/log")"
echo "second run: no change ($(wc -l <"$work/log") commands, all read-only or the same property)"

openstack aggregate add host laas-4 intruder >/dev/null
bash "$golden/openstack_add.sh" || die "run after drift failed"
cmp -s "$work/state.json" "$work/state.first" || die "the drifted aggregate was not repaired"
echo "a foreign host in laas-4 is removed by the next run"

bash "$golden/openstack_remove.sh" || die "openstack_remove.sh failed"
[ "$(state "sorted(s['aggregates'])")" = "['laas-4']" ] || die "laas-1 not deleted"
bash "$golden/openstack_remove.sh" || die "second run of openstack_remove.sh failed"
echo "removal deletes laas-1; a second run is a no-op"

# The parser is real: a command line it refuses fails the fake (so the checks above mean it).
if openstack aggregate set --propertyy x=1 laas-4 2>/dev/null; then die "fake accepted a bad option"; fi
echo "PASS openstack_scripts"
