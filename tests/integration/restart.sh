#!/usr/bin/env bash
# restart.sh: kill -9 OpenSM in the middle of a sequence of tenant changes, start it again:
# every acknowledged change is there, the same tenants hold the same hosts and links, and
# the tables read back from the switches route them exactly as before.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup restart
start_demo
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
tenants_json() { ctl --json tenant list | tr -d ' \n' | sed 's/},{/}\n{/g' | sort; }

ctl tenant add a --hosts 6 >/dev/null
ctl tenant add b --hosts 5 >/dev/null
ctl tenant remove a >/dev/null
ctl tenant add c --hosts 7 >/dev/null
ctl --json tenant show b >show.b.1
ctl --json tenant show c >show.c.1
snapshot 1 >/dev/null
tenant_paths 1 b
tenant_paths 1 c

# First crash, between requests: the same tenants and bit-identical tables afterwards.
kill -KILL "$OSM_PID"
wait "$OSM_PID" 2>/dev/null || true
applied=$(count_log 'laas: forwarding tables applied')
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
snapshot 1b >/dev/null
cmp -s lfts.1 lfts.1b || die "the forwarding tables differ after a restart: $(diff lfts.1 lfts.1b | head -5)"
log "first kill -9: all $(grep -c '^0x' lfts.1b) table entries identical after the restart"

# A request in flight when OpenSM dies: it may or may not have been acknowledged.
ctl tenant add d --hosts 3 --no-wait >add.d.out 2>&1 &
CLIENT=$!
sleep 0.05
kill -KILL "$OSM_PID"
wait "$OSM_PID" 2>/dev/null || true
d_acked=0
wait "$CLIENT" && d_acked=1
log "opensm killed; the in-flight 'add d' was $([ $d_acked = 1 ] && echo acknowledged || echo not acknowledged)"

applied=$(count_log 'laas: forwarding tables applied')
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
names=$(ctl --json tenant list | sed -n 's/.*"name": "\([^"]*\)".*/\1/p' | sort | tr '\n' ' ')
if [ $d_acked = 1 ]; then
  [ "$names" = "b c d " ] || die "after the restart the tenants are '$names', expected 'b c d '"
else
  [ "$names" = "b c " ] || [ "$names" = "b c d " ] || die "after the restart the tenants are '$names'"
fi
for t in b c; do
  ctl --json tenant show "$t" >"show.$t.2"
  cmp -s "show.$t.1" "show.$t.2" || die "tenant $t changed across the restart: $(diff "show.$t.1" "show.$t.2" | head)"
done
snapshot 2 >/dev/null
for t in b c; do
  tenant_paths 2 "$t"
  cmp -s "paths.$t.1" "paths.$t.2" || die "tenant $t's routes changed across the restart"
done
if [ "$names" = "b c " ]; then
  cmp -s lfts.1 lfts.2 || die "the forwarding tables differ after the restart: $(diff lfts.1 lfts.2 | head -5)"
fi
log "PASS restart (tenants after restart: $names)"
