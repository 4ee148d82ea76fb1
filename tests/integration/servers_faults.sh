#!/usr/bin/env bash
# servers_faults.sh: faults on one rail of GPU servers. 2 groups of 8 servers with 4
# HCAs each on rail leaves (xgft(2;8,8;1,4)), qos TRUE; tenants a and b (8 servers each: a
# free host on a leaf whose link to the SM's spine a tenant holds cannot reach it). Through
# ibsim's console, each followed by a heavy sweep:
#   port: one HCA of one of a's servers ("srv0 mlx5_1") down, then back;
#   leaf: the rail-1 leaf of a's group (SW_L1_1) down, then back.
# While the fault lasts the audit of the tables read back (LFTs and SL2VL) is clean and every
# LFT entry towards a's and b's ports on the other rails is bit-identical to before; after the
# part returns every table is bit-identical to before.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup servers_faults
export SIM_HOST=SW_L2_0 POLL_MS=0 QOS=${QOS:-1}
"$LAAS_TOPOGEN" "xgft(2;8,8;1,4)" --rails 4 -o fabric.net
start_fabric_console fabric.net
start_opensm
wait_log 'laas: forwarding tables applied' 1 45
wait_log 'SUBNET UP' 1 45
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
ctl tenant add a --servers 8 >add.a 2>&1 || die "tenant add a: $(cat add.a)"
ctl tenant add b --servers 8 >add.b 2>&1 || die "tenant add b: $(cat add.b)"
ctl --json tenant show a >show.a
ctl --json tenant show b >show.b
grep -q '"srv0 mlx5_1"' show.a || die "srv0 is not a's (the test expects it): $(jq -c '[.servers[].name]' show.a)"
grep -q '"SW_L1_1"' show.a || die "a has no port on SW_L1_1: $(jq -c '[.hosts[].name]' show.a)"
audit_layout before
log "a: $(jq -c '[.servers[].name]' show.a), b: $(jq -c '[.servers[].name]' show.b); audit clean"

# entries TAG: "switch-guid lid port destination" of every LFT entry towards a CA, sorted.
entries() {
  awk '/^Unicast lids/ { for (i = 1; i <= NF; i++) if ($i == "guid") sw = $(i + 1); next }
       /^0x[0-9a-fA-F]+ [0-9]+ : \(Channel Adapter/ {
         n = split($0, q, "\047"); print sw, $1, $2, q[2] }' "lfts.$1" | sort
}
# others TAG DOWN_REGEX: the entries towards a's and b's ports except those matching DOWN_REGEX,
# on the switches that are up in both tables.
others() {
  jq -r '.hosts[].name' show.a show.b | grep -vE "$2" | sort >keep.names
  entries "$1" | awk 'NR == FNR { keep[$0] = 1; next }
    { name = $4; for (i = 5; i <= NF; i++) name = name " " $i; if (name in keep) print }' \
    keep.names - | grep -vE "^${3:-NOSWITCH} "
}

fault() {
  local tag=$1 down=$2 up=$3 gone=$4 sw=${5:-}
  console "$down"
  heavy_sweep "$tag down"
  audit_layout "$tag"
  grep -q "laas: fault" osm.log || die "no fault logged for $tag"
  others before "$gone" "$sw" >"others.before.$tag"
  others "$tag" "$gone" "$sw" >"others.$tag"
  [ -s "others.$tag" ] || die "no entries left to compare for $tag"
  cmp -s "others.before.$tag" "others.$tag" ||
    die "$tag: routes to the tenants' other ports changed: $(diff "others.before.$tag" "others.$tag" | head -5)"
  log "$tag down: audit clean, $(wc -l <"others.$tag") entries towards the other rails' ports identical"
  console "$up"
  heavy_sweep "$tag up"
  audit_layout "$tag.back"
  cmp -s lfts.before "lfts.$tag.back" || die "$tag: tables differ after the part returned: $(diff lfts.before "lfts.$tag.back" | head -5)"
  if [ "${AUDIT_SL2VL:-0}" = 1 ]; then
    cmp -s sl2vl.before "sl2vl.$tag.back" || die "$tag: SL2VL tables differ after the part returned"
  fi
  log "$tag back: every table bit-identical to before"
}

fault port 'Unlink "srv0 mlx5_1"' 'ReLink "srv0 mlx5_1"' '^srv0 mlx5_1$'
# The leaf's own switch is gone while it is down: compare the other switches.
leaf_guid=$(awk '/^Unicast lids/ && /SW_L1_1/ { for (i = 1; i <= NF; i++) if ($i == "guid") print $(i + 1) }' lfts.before)
fault leaf 'Unlink "SW_L1_1"' 'ReLink "SW_L1_1"' ' mlx5_1$' "$leaf_guid"
log "PASS servers_faults"
