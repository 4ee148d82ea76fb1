#!/usr/bin/env bash
# switch_audit.sh: `laasctl audit --from-switches --via-diags` reads the tables back from the
# switches (ibnetdiscover and dump_fts from the SM's node) and audits them with laas-audit, with
# the real OpenSM, ibsim and infiniband-diags. A leaf's LFT entry is then changed behind
# OpenSM's back (a directed SMP Set, as a tenant's root could without an M_Key): tenant a's leaf
# gets a route to a free host. The audit of OpenSM's copy still finds nothing; the audit from
# the switches finds the route and exits 1, keeping the tables it read as evidence. Then
# `laasctl audit --from-switches` (the SM's own reader, the switch check's, on demand with the
# periodic check off) finds the block too, exits 1, sends it again, and is clean once more.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup switch_audit
[ -x "${LAAS_LFT_SET:-}" ] || die "LAAS_LFT_SET (laas-lft-set) is not set"
# The switch check off: it would read the changed entry back and send it again (switch_check.sh);
# this test is about what each audit sees.
export LAAS_YAML_EXTRA="switch_check_interval: 0"
start_demo
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
ctl tenant add a --hosts 4 >/dev/null || die "tenant add a failed"
ctl tenant add b --hosts 8 >/dev/null || die "tenant add b failed"
audit_layout base

# Clean from the switches as from OpenSM's copy.
sim "$LAASCTL" -s "$WORK/laas.sock" --timeout 60 audit --from-switches --via-diags >clean.json 2>clean.err ||
  die "audit --from-switches of untouched tables failed: $(head -3 clean.err)"
[ "$(jq -r .source clean.json)" = switches ] && [ "$(jq .violations clean.json)" = 0 ] ||
  die "audit --from-switches: $(jq -c '{source, violations}' clean.json)"
[ "$(jq .traces clean.json)" -gt 0 ] || die "audit --from-switches traced nothing"
ctl audit >opensm.clean.json || die "laasctl audit failed"
log "untouched: clean from the switches ($(jq .traces clean.json) paths) and from OpenSM's copy"

# Tamper: on tenant a's leaf, a route to a free host on another leaf.
tamper_free_route disc.base ctl

# OpenSM's copy does not know.
rc=0
ctl audit >opensm.json 2>&1 || rc=$?
[ $rc -eq 0 ] && [ "$(jq .violations opensm.json)" = 0 ] ||
  die "the audit of OpenSM's copy exited $rc: $(jq -c '.findings[:2]' opensm.json)"
# The switches do.
rc=0
sim "$LAASCTL" -s "$WORK/laas.sock" --timeout 60 audit --from-switches --via-diags >tampered.json 2>tampered.err || rc=$?
[ $rc -eq 1 ] || die "audit --from-switches of a tampered table exited $rc: $(head -3 tampered.err)"
[ "$(jq .violations tampered.json)" -gt 0 ] || die "no violation reported"
jq -e --arg f "$FREE" '[.findings[] | select(.violation and (.destination | contains($f)))] | length > 0' \
  tampered.json >/dev/null || die "no finding names $FREE: $(jq -c '.findings[:3]' tampered.json)"
dumps=$(jq -r .dumps tampered.json)
[ -s "$dumps/lfts" ] || die "the tables read back are not kept ($dumps)"
rm -rf "$dumps"
log "found from the switches: $(jq -r '[.findings[] | select(.violation)][0] | "\(.kind): \(.source) -> \(.destination)"' tampered.json)"
# --m-key KEY: the tools read with the M_Key (-y), as a fabric at m_key_protection_level 2
# requires (ibsim enforces no M_Key: wrappers record what the tools were given).
mkdir -p tools
for tool in ibnetdiscover dump_fts; do
  real=$(command -v "$tool")
  printf '#!/bin/sh\necho "$0 $*" >>%s/tools.args\nexec %s "$@"\n' "$WORK" "$real" >"tools/$tool"
  chmod +x "tools/$tool"
done
rc=0
PATH="$WORK/tools:$PATH" sim "$LAASCTL" -s "$WORK/laas.sock" --timeout 60 audit --from-switches \
  --m-key 0x5A5A0C0FFEE1D00D >mkey.json 2>mkey.err || rc=$?
[ $rc -eq 1 ] || die "audit --from-switches --m-key exited $rc: $(head -3 mkey.err)"
for tool in ibnetdiscover dump_fts; do
  grep -q "/$tool .*-y 0x5a5a0c0ffee1d00d" tools.args || die "$tool was not given the M_Key: $(cat tools.args)"
done
rm -rf "$(jq -r .dumps mkey.json)"
rc=0
"$LAASCTL" -s "$WORK/laas.sock" audit --from-switches --m-key 0xzz >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || die "a malformed --m-key exited $rc, expected 2"
log "--m-key: ibnetdiscover and dump_fts read with -y $(grep -o -- '-y [^ ]*' tools.args | head -1 | cut -d' ' -f2)"

# The SM's own reader, on demand (the periodic check is off): finds the block, sends it again.
rc=0
ctl audit --from-switches >readback.json 2>readback.err || rc=$?
[ $rc -eq 1 ] || die "audit --from-switches (the SM's reader) of a tampered table exited $rc: $(head -3 readback.err)"
[ "$(jq -r .source readback.json)" = switches ] && [ "$(jq .read_back.mismatches readback.json)" -ge 1 ] ||
  die "the read-back found nothing: $(jq -c .read_back readback.json)"
jq -e --arg l "$LEAF" '.read_back.switches[] | select(.name == $l and (.blocks_differing | length) >= 1)' \
  readback.json >/dev/null || die "the read-back does not name $LEAF: $(jq -c .read_back.switches readback.json)"
grep -q "table(s) read back from the switches differed" readback.err || die "no line on stderr: $(cat readback.err)"
log "the SM's reader: $(jq -c '.read_back | {tables, mismatches, seconds}' readback.json)"
deadline=$((SECONDS + 15))
# (dump_fts leaves out entries on port 255, as this one was before the Set)
until sim dump_fts >lfts.repaired 2>/dev/null &&
  ! awk -v lid="$(printf '0x%04x' "$FREE_LID")" '/^Unicast lids/ { sw = $0 } index(sw, "'"$LEAF"'") && tolower($1) == lid { print $2 }' lfts.repaired | grep -Eq '^0*1$'; do
  [ $SECONDS -lt $deadline ] || die "$LEAF still routes $FREE to port 1 after the read-back"
  sleep 0.5
done
rc=0
ctl audit --from-switches >readback2.json 2>readback2.err || rc=$?
[ $rc -eq 0 ] && [ "$(jq .read_back.mismatches readback2.json)" = 0 ] ||
  die "a second read-back after the repair exited $rc: $(jq -c .read_back readback2.json) $(head -2 readback2.err)"
log "sent again by the SM; a second read-back is clean ($(jq -c '.read_back | {tables, mismatches}' readback2.json))"
log "PASS switch_audit: a table changed behind OpenSM's back is found from the switches only"
