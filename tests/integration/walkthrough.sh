#!/usr/bin/env bash
# walkthrough.sh: the paper appendix's walkthrough on xgft(2;4,8;1,4) with the real laasctl
# against the plugin inside OpenSM: add 10, add 10, list, show, the refused 13, remove, the
# 13 placed. After every step the live tables (laasctl audit) and the tables read back from
# the switches (dump_fts + laas-audit) show no violation.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup walkthrough
start_demo
wait_log 'SUBNET UP' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }

step=0
audited() {
  step=$((step + 1))
  ctl audit >"live-audit.$step" 2>&1 || die "laasctl audit after step $step: $(head -20 "live-audit.$step")"
  snapshot "$step" >/dev/null
  log "step $step audited: live and read-back tables clean"
}

hosts_of() { ctl --json tenant show "$1" | sed -n 's/.*"name": "\(comp-[0-9]*\)".*/\1/p' | tr '\n' ' '; }
links_of() {
  ctl tenant show "$1" | awk '/ port .* -> / { print $1 ":" $3 }' | tr '\n' ' '
}

ctl tenant add 4 --hosts 10 | tee add4.out
[ "$(hosts_of 4)" = "comp-1 comp-2 comp-3 comp-4 comp-5 comp-6 comp-7 comp-8 comp-9 comp-10 " ] ||
  die "tenant 4 got $(hosts_of 4)"
[ "$(links_of 4)" = "SW_L1_0:1 SW_L1_0:2 SW_L1_0:3 SW_L1_0:4 SW_L1_1:1 SW_L1_1:2 SW_L1_1:3 SW_L1_1:4 SW_L1_2:1 SW_L1_2:2 " ] ||
  die "tenant 4 got links $(links_of 4)"
grep -q 'uploaded' add4.out || die "laasctl did not wait for the tables: $(cat add4.out)"
audited

ctl tenant add 1 --hosts 10
[ "$(hosts_of 1)" = "comp-11 comp-12 comp-13 comp-14 comp-15 comp-16 comp-17 comp-18 comp-19 comp-20 " ] ||
  die "tenant 1 got $(hosts_of 1)"
[ "$(links_of 1)" = "SW_L1_2:3 SW_L1_2:4 SW_L1_3:1 SW_L1_3:2 SW_L1_3:3 SW_L1_3:4 SW_L1_4:1 SW_L1_4:2 SW_L1_4:3 SW_L1_4:4 " ] ||
  die "tenant 1 got links $(links_of 1)"
audited

ctl tenant list | tee list.out
[ "$(grep -c 'routed' list.out)" = 2 ] || die "tenant list: $(cat list.out)"
ctl tenant show 1 >show1.out
grep -q 'guid 0x' show1.out && grep -q 'lid ' show1.out || die "tenant show: $(cat show1.out)"
ctl topology show --no-color | tee map.out
grep -q 'SW_L1_2  BBAA   BBAA' map.out || die "the allocation map does not show SW_L1_2 shared"

rc=0
ctl tenant add 2 --hosts 13 >refused.out 2>&1 || rc=$?
[ $rc -eq 1 ] || die "the 13-host request exited $rc, expected 1 (refused): $(cat refused.out)"
grep -q 'only 12 hosts are free' refused.out || die "refusal reason: $(cat refused.out)"
log "refused as expected: $(cat refused.out)"
audited

ctl tenant remove 1
audited
ctl tenant add 2 --hosts 13 | tee add2.out
audited
[ "$(ctl --json status | sed -n 's/.*"free_hosts": \([0-9]*\).*/\1/p')" = 9 ] || die "free hosts after the walkthrough"
log "PASS walkthrough"
