#!/usr/bin/env bash
# perfmgr.sh: the health of a tenant's links from OpenSM's performance manager, with
# the real OpenSM (perfmgr TRUE, a 1 s sweep), ibsim and infiniband-diags. Tenant a holds 2 + 2
# hosts on two leaves over 2 of their 4 up-links. ibsim's console gives one of a's up-links an
# error rate: packets crossing it are dropped and its port counters move; the plugin receives
# the perfmgr's readings, `laasctl tenant show a` and the metrics report the errors on a's
# links, the link goes over link_error_threshold and is isolated as a fault (a repaired onto a
# free column, routes around it), and the tables read back are audited: a keeps its isolation.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup perfmgr
export SIM_HOST=SW_L2_0
export LAAS_YAML_EXTRA="link_error_threshold: 1
link_error_consecutive_readings: 1
link_error_clean_readings: 1000
metrics_file: $WORK/laas.prom"
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
start_fabric_console fabric.net
start_opensm "perfmgr TRUE" "perfmgr_sweep_time_s 1"
wait_log 'laas: forwarding tables applied' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }

# 2 + 2 hosts on two leaves over 2 of their 4 up-links: free columns to repair onto.
echo '{"v": 1, "method": "tenant.add", "params": {"name": "a", "host_list": ["comp-1", "comp-2", "comp-5", "comp-6"]}}' |
  ctl raw >add.a 2>&1 || die "tenant add a failed: $(cat add.a)"
jq -e .ok add.a >/dev/null || die "tenant add a refused: $(cat add.a)"
ctl --json tenant show a >show.a.before
leaf=$(jq -r '.links[0].switch.name' show.a.before)
port=$(jq -r '.links[0].switch.port' show.a.before)
log "tenant a: $(jq -r '[.hosts[].name] | join(" ")' show.a.before); its link $leaf port $port gets errors"
audit_layout before

console "Error \"$leaf\"[$port] 100"
# Traffic over the link: queries from the SM's switch to the hosts behind it cross it.
deadline=$((SECONDS + 40))
until grep -q "laas: fault: link $leaf port $port had" osm.log; do
  [ $SECONDS -lt $deadline ] || die "no isolation after 40 s: $(grep -c 'laas' osm.log) laas lines; $(tail -2 osm.log)"
  for lid in $(jq -r '.hosts[].lid' show.a.before); do sim perfquery "$lid" >/dev/null 2>&1 || true; done
  sleep 1
done
log "$(grep -m1 "laas: fault: link $leaf port $port had" osm.log | sed 's/.*laas: //')"
ctl --json tenant show a >show.a.after
[ "$(jq '.link_health.errors' show.a.after)" -gt 0 ] || die "tenant show reports no errors: $(jq -c .link_health show.a.after)"
jq -e --arg l "$leaf port $port" '.link_health.ports_with_errors | map(select(.isolated)) | length > 0' show.a.after >/dev/null ||
  die "tenant show does not mark the isolated link"
# The textfile is rewritten when the re-route the isolation asked for is done: wait for it.
for _ in $(seq 20); do
  grep -qE '^laas_tenant_port_errors_total\{tenant="a"\} [1-9]' laas.prom && break
  sleep 0.5
done
grep -qE '^laas_tenant_port_errors_total\{tenant="a"\} [1-9]' laas.prom || die "the metrics have no errors for a"
grep -q '^laas_isolated_links 1' laas.prom || die "the metrics do not count the isolated link"
# The heavy sweep routes around it; a is repaired and isolated.
console "Error \"$leaf\"[$port] 0"
heavy_sweep "isolated $leaf port $port"
ctl --json tenant show a >show.a.repaired
! jq -e --arg s "$leaf" --argjson p "$port" '.links[] | select(.switch.name == $s and .switch.port == $p)' show.a.repaired >/dev/null ||
  die "tenant a still routes over the isolated link"
audit_layout repaired
log "PASS perfmgr: $(jq '.link_health.errors' show.a.after) errors on a's links reported; the link isolated, a repaired, audit clean"
