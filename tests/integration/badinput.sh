#!/usr/bin/env bash
# badinput.sh: every kind of bad request against the plugin inside OpenSM gets a clear error
# and laasctl's documented exit code (1 refused, 2 usage, 69 unreachable, 77 permission);
# the durable state is byte-for-byte unchanged and the service keeps serving.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup badinput
# A socket every uid can reach: who may read is decided by the peer's groups, tested as uid
# 65534 in the read-only group (gid 65534, see start_demo) and in no group (gid 65533).
PUBLIC_SOCKET=1 start_demo
ctl() { "$LAASCTL" -s "$LAAS_SOCKET_PATH" --timeout 30 "$@"; }
ctl tenant add a --hosts 3 >/dev/null
cp state/state.json state.before

# expect_exit CODE PATTERN CMD...: CMD exits CODE and says PATTERN.
expect_exit() {
  local want=$1 pattern=$2 rc=0
  shift 2
  "$@" >out.txt 2>&1 || rc=$?
  [ "$rc" = "$want" ] || die "'$*' exited $rc, expected $want: $(cat out.txt)"
  grep -qE -- "$pattern" out.txt || die "'$*' did not say '$pattern': $(cat out.txt)"
  log "exit $rc as expected: $(echo "$*" | cut -c1-100) -> $(head -c 160 out.txt | tr '\n' ' ')"
}
raw() { printf '%s\n' "$1" | ctl raw; }

expect_exit 0 'malformed JSON' raw '{"v":1,"method":"status"'
expect_exit 0 'longer than' raw "$(head -c 70000 /dev/zero | tr '\0' 'x')"
expect_exit 0 'unknown method' raw '{"v":1,"id":1,"method":"tenant.frobnicate"}'
expect_exit 0 'protocol version' raw '{"v":7,"id":2,"method":"status"}'
expect_exit 0 "field 'hosts' must be an integer" \
  raw '{"v":1,"id":3,"method":"tenant.add","params":{"name":"x","hosts":"ten"}}'
expect_exit 0 "field 'name' must be a string" \
  raw '{"v":1,"id":4,"method":"tenant.add","params":{"name":5,"hosts":2}}'
expect_exit 0 'at least 1' raw '{"v":1,"id":5,"method":"tenant.add","params":{"name":"x","hosts":0}}'
expect_exit 1 "no tenant named 'nobody'" ctl tenant remove nobody
expect_exit 1 "no tenant named 'nobody'" ctl tenant show nobody
expect_exit 1 "already exists" ctl tenant add a --hosts 2
expect_exit 2 'hosts' ctl tenant add x --hosts 0
expect_exit 2 'hosts' ctl tenant add x --hosts -4
expect_exit 2 'only 32' ctl tenant add x --hosts 40
expect_exit 1 'only 29 hosts are free' ctl tenant add x --hosts 30
expect_exit 2 'contains a space' ctl tenant add 'bad name' --hosts 2
expect_exit 2 'required|NAME' ctl tenant add
expect_exit 2 'Subcommand|subcommand|required' ctl tenant
expect_exit 69 'cannot reach' "$LAASCTL" -s "$WORK/no-such.sock" status

# Permission: the socket is 0666 and the peer's credentials decide. In neither group: refused
# whatever the request; in the read-only group: reads, but no change.
if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
  [ "$(stat -c %a "$LAAS_SOCKET_PATH")" = 666 ] || die "the socket is not 0666: $(stat -c %a "$LAAS_SOCKET_PATH")"
  as_stranger() { setpriv --reuid=65533 --regid=65533 --clear-groups "$@"; }
  as_reader() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  expect_exit 77 'permission denied' as_stranger "$LAASCTL" -s "$LAAS_SOCKET_PATH" tenant list
  expect_exit 77 'permission denied' as_stranger "$LAASCTL" -s "$LAAS_SOCKET_PATH" status
  expect_exit 0 'NAME' as_reader "$LAASCTL" -s "$LAAS_SOCKET_PATH" tenant list
  expect_exit 77 'may read but not change' as_reader "$LAASCTL" -s "$LAAS_SOCKET_PATH" tenant add z --hosts 1
  expect_exit 77 'may read but not change' as_reader "$LAASCTL" -s "$LAAS_SOCKET_PATH" tenant remove a
  grep -q 'uid 0 added tenant' osm.log || die "changes are not logged with the uid"
else
  log "SKIP permission checks: cannot switch to uid 65534 here"
fi

cmp -s state.before state/state.json || die "a refused request changed state.json"
kill -0 "$OSM_PID" || die "opensm died"
expect_exit 0 'tenants: +1 routed' ctl status
rm -rf "$SOCKDIR" 2>/dev/null || true  # opensm may still hold it; the teardown stops it
log "PASS badinput (state.json unchanged, service still serving)"
