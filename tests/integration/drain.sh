#!/usr/bin/env bash
# drain.sh: hosts drained and returned with the real OpenSM, ibsim and
# infiniband-diags, on the paper's demo tree (32 hosts). A free host drained is never placed:
# the request that needs it is refused naming it, a request that fits without it never gets it.
# A tenant's host drained stays with its tenant ("draining") and leaves service when the tenant
# is removed. Both survive kill -9 of OpenSM; the tables read back are audited throughout (a
# drained host, being no tenant's, is kept apart like a free one); resume returns them.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup drain
export LAAS_YAML_EXTRA="metrics_file: $WORK/laas.prom"
start_demo
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
command -v promtool >/dev/null || die "promtool is missing (Debian's prometheus, scripts/deps.sh)"
# metrics TAG: the textfile node_exporter would read, parsed by Prometheus' own parser (promtool),
# agrees with laasctl status; `laasctl metrics` prints the same families.
metric() { awk -v m="$1" '$1 == m { print $2 }' "metrics.$2"; }
metrics() {
  local tag=$1 st
  cp laas.prom "metrics.$tag"
  promtool check metrics <"metrics.$tag" >"promtool.$tag" 2>&1 ||
    die "promtool refuses the metrics ($tag): $(head -3 "promtool.$tag")"
  ctl --json status >"status.$tag"
  for s in free allocated drained draining management; do
    st=$(jq -r ".host_states.$s" "status.$tag")
    [ "$(metric "laas_hosts{state=\"$s\"}" "$tag")" = "$st" ] ||
      die "$tag: laas_hosts{state=\"$s\"} is $(metric "laas_hosts{state=\"$s\"}" "$tag"), status says $st"
  done
  [ "$(metric 'laas_tenants{state="routed"}' "$tag")" = "$(jq .tenants "status.$tag")" ] ||
    die "$tag: laas_tenants{state=\"routed\"} differs from status"
  # (Through a file: grep -q would leave laasctl writing into a closed pipe.)
  ctl metrics >"ctl_metrics.$tag" || die "laasctl metrics failed ($tag)"
  grep -q '^# TYPE laas_routing_duration_seconds histogram' "ctl_metrics.$tag" || die "laasctl metrics"
  log "$tag: metrics parsed by promtool, host and tenant counts equal laasctl status"
}
state_of() { ctl --json host show "$1" | jq -r .state; }
restart_hard() {
  local applied
  kill -KILL "$OSM_PID"
  wait "$OSM_PID" 2>/dev/null || true
  applied=$(count_log 'laas: forwarding tables applied')
  start_opensm
  wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
}

ctl host drain comp-3 --reason "DIMM errors, ticket 4711" >/dev/null || die "drain comp-3 failed"
[ "$(state_of comp-3)" = drained ] || die "comp-3 is $(state_of comp-3), not drained"
metrics drained1
ctl tenant add a --hosts 8 >/dev/null || die "tenant add a failed"
first=$(ctl --json tenant show a | jq -r '.hosts[0].name')
ctl host drain "$first" --reason "firmware update" >/dev/null || die "drain $first failed"
[ "$(state_of "$first")" = draining ] || die "$first is $(state_of "$first"), not draining"
grep -q "laas: uid 0 drained \[\"comp-3\"\]: DIMM errors" osm.log || die "the drain is not logged"
metrics draining

restart_hard
[ "$(state_of comp-3)" = drained ] || die "after kill -9 comp-3 is $(state_of comp-3)"
[ "$(state_of "$first")" = draining ] || die "after kill -9 $first is $(state_of "$first")"
log "kill -9: comp-3 drained, $first draining (held by a)"
metrics restarted

ctl tenant remove a >/dev/null || die "tenant remove a failed"
[ "$(state_of "$first")" = drained ] || die "$first is $(state_of "$first") after its tenant left"
restart_hard
[ "$(state_of "$first")" = drained ] || die "after kill -9 $first is $(state_of "$first")"
free=$(ctl --json host list --state free | jq length)
[ "$free" -eq 30 ] || die "$free free hosts, 30 expected (32 less 2 drained)"

# 31 hosts need a drained one: refused, naming the drained hosts; nothing changes.
cp state/state.json state.before
rc=0
ctl tenant add big --hosts 31 >big.out 2>&1 || rc=$?
[ $rc -eq 1 ] || die "a request needing a drained host exited $rc: $(cat big.out)"
grep -q "drained (out of service): 'comp-3'" big.out || die "the refusal does not name comp-3: $(cat big.out)"
cmp -s state.before state/state.json || die "a refused request changed state.json"
# Requests that fit without them never get them.
ctl tenant add b --hosts 16 >/dev/null || die "tenant add b failed"
ctl tenant add c --hosts 8 >/dev/null || die "tenant add c failed"
for t in b c; do
  ! ctl --json tenant show $t | jq -r '.hosts[].name' | grep >/dev/null -xE "comp-3|$first" ||
    die "tenant $t holds a drained host"
done
audit_layout drained
metrics placed
[ "$(metric 'laas_changes_total{op="add",result="refused"}' placed)" -ge 1 ] ||
  die "the refused add is not counted"
ctl topology show --no-color >map.txt || die "topology show failed"
[ "$(grep -c '~' map.txt)" -ge 2 ] && grep -q '~ = drained' map.txt ||
  die "topology show does not mark the drained hosts: $(head -5 map.txt)"
# The map as SVG: rendered by a real renderer (librsvg's rsvg-convert), parsed as XML; every
# tenant is in the legend, every host a square (32) with a tooltip, the drained ones hatched.
ctl topology show --svg >map.svg || die "topology show --svg failed"
command -v rsvg-convert >/dev/null || die "rsvg-convert is missing (librsvg2-bin, scripts/deps.sh)"
rsvg-convert -o map.png map.svg 2>svg.err || die "rsvg-convert refuses the SVG: $(head -3 svg.err)"
[ "$(head -c 8 map.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || die "no PNG rendered"
/usr/bin/python3 - map.svg <<'PY' || die "the SVG does not show what it should"
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
tips = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title")]
for tenant in ("b", "c"):
    assert "tenant " + tenant in texts, "no legend entry for " + tenant
hosts = [t for t in tips if " host " in t]
assert len(hosts) == 32, len(hosts)
assert sum("drained" in t for t in hosts) == 2, [t for t in hosts if "drained" in t]
PY
log "SVG map rendered by rsvg-convert ($(wc -c <map.png) bytes of PNG); legend and tooltips checked"
log "30 free hosts placed around 2 drained ones; audit clean: $(grep -m1 'paths traced' audit.drained)"

ctl host resume comp-3 "$first" >/dev/null || die "resume failed"
[ "$(state_of comp-3)" = free ] && [ "$(state_of "$first")" = free ] || die "resume did not free them"
free_after=$(ctl --json host list --state free | jq length)
[ "$free_after" -eq $((free - 24 + 2)) ] || die "$free_after free hosts after the resume, $((free - 24 + 2)) expected"
audit_layout resumed
metrics resumed
log "PASS drain: drained hosts never placed, survive kill -9, leave with their tenant, resume"
