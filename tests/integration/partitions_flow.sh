#!/usr/bin/env bash
# partitions_flow.sh: the plugin's managed partitions.conf, read back from the simulated ports.
# Demo tree, SM on SW_L2_0. OpenSM starts with a broken base file (partitions_base): the plugin
# refuses it, logs why and leaves partitions.conf alone; with ALL=full in the base a tenant add
# fails. With the base fixed, tenants A and B are added with laasctl; smpquery reads every
# tenant host's P_Key table: A's hosts hold A's P_Key as full members and not B's, and vice
# versa; every host is a limited member of the default partition (0x7fff), the SM's port a
# full one (0xffff); SA queries from a host still work. After `tenant remove A`, A's former
# hosts no longer hold A's P_Key. OpenSM's log has no partition parse error.
# index 0 of a tenant host's P_Key table
# is its tenant's key (indx0); the SM's port is a full member of every tenant partition; names
# the exporters cannot write (30 characters, .hidden, -rf) are refused and change nothing; a
# base file holding the key a new tenant's name hashes to, and an auto-numbered partition, push
# the tenant's key elsewhere; a write that fails (partitions.conf made immutable) fails the add
# and changes nothing; after a remove, partitions.conf lacks the tenant's key before the reply,
# and the tenant placed next (on its hosts) never sees it.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup partitions_flow
export SIM_HOST=SW_L2_0
"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
: >state/tenants.yaml
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }

# pkeys LID PORT: the P_Key table entries of a port, one "0x...." a line, zeros dropped.
pkeys() {
  sim smpquery pkeys "$1" "$2" 2>/dev/null |
    grep -oE '0x[0-9a-fA-F]{4}' | tr 'A-F' 'a-f' | grep -v '^0x0000$' || true
}

# holds LID PORT PKEY: the table holds exactly this 16-bit entry (membership bit included).
holds() { pkeys "$1" "$2" | grep >/dev/null -x "$3"; }
# holds_any LID PORT PKEY15: full or limited.
holds_any() {
  local low=$(( $3 & 0x7fff ))
  pkeys "$1" "$2" | while read -r e; do [ $(( e & 0x7fff )) -eq $low ] && echo y; done | grep >/dev/null y
}

# wait_pkey LID PKEY(16 bit) present|absent TIMEOUT_S: OpenSM applies partitions on a heavy sweep.
wait_pkey() {
  local deadline=$((SECONDS + $4))
  while :; do
    if [ "$3" = present ]; then holds "$1" 1 "$2" && return 0; else holds_any "$1" 1 "$2" || return 0; fi
    [ $SECONDS -lt $deadline ] || die "lid $1: P_Key $2 not $3 after $4 s (table: $(pkeys "$1" 1 | tr '\n' ' '))"
    sleep 0.5
  done
}

partitions_teardown() {
  local rc=$?
  chattr -i "$WORK/partitions.conf" 2>/dev/null || true
  (exit $rc)
  laas_teardown
}
trap partitions_teardown EXIT
# fnv NAME: the P_Key LaaS derives from a tenant name (FNV-1a 32, onto 0x0001..0x7ffe).
fnv() {
  local s=$1 h=2166136261 i c
  for ((i = 0; i < ${#s}; i++)); do
    printf -v c '%d' "'${s:i:1}"
    h=$(( ((h ^ c) * 16777619) & 0xffffffff ))
  done
  printf '0x%04x' $(( 1 + h % 32766 ))
}
first_pkey() { pkeys "$1" "$2" | head -1; }

start_fabric fabric.net

# 1. A broken base file is refused: the plugin keeps the previous partitions.conf.
printf '# site partitions\nBroken=0x0010 : 0x1=full\n' >base.conf # no ';'
cat >partitions.conf <<'EOC'
# seeded by the test: the file a broken base must not replace
Default=0x7fff, ipoib : ALL_CAS=limited, ALL_SWITCHES=limited, SELF=full ;
EOC
cp partitions.conf partitions.seed
LAAS_YAML_EXTRA=$(printf 'manage_partitions: true\npartitions_base: %s' "$WORK/base.conf") \
  start_opensm "partition_config_file $WORK/partitions.conf"
wait_log 'SUBNET UP' 1 45
wait_log "laas: $WORK/partitions.conf not updated" 1 45
log "broken base refused: $(grep -m1 'partitions.conf not updated' osm.log | sed 's/.*laas: //')"
grep -q "not updated.*base.conf:2" osm.log || die "the refusal does not name base.conf:2"
cmp -s partitions.conf partitions.seed || die "partitions.conf was changed from a broken base"

# 1b. A base that makes every port a full member of a partition is refused as well: the tenant
# change that would rewrite partitions.conf fails, naming the file, line and member.
printf '# site partitions\nDefault=0x7fff : ALL=full ;\n' >base.conf
rc=0
ctl tenant add X --hosts 1 >add.X 2>&1 || rc=$?
[ $rc = 1 ] || die "tenant add over an ALL=full base exited $rc: $(cat add.X)"
grep -q "base.conf:2: ALL=full makes every port a full member of partition Default (0x7fff)" add.X ||
  die "the refusal does not name base.conf:2 and ALL=full: $(cat add.X)"
cmp -s partitions.conf partitions.seed || die "partitions.conf was changed from an ALL=full base"
log "ALL=full base refused: $(head -1 add.X)"

# 2. Base fixed (no 0x7fff rule: LaaS adds its default); tenants A and B.
printf '# site partitions: none yet\n' >base.conf
for t in A B; do
  ctl tenant add "$t" --hosts 4 >"add.$t" 2>&1 || die "laasctl tenant add $t: $(cat "add.$t")"
  ctl --json tenant show "$t" >"show.$t.json" || die "laasctl tenant show $t failed"
done
wait_log "laas: wrote $WORK/partitions.conf (2 tenant partitions)" 1 30
grep -q '^Default=0x7fff, ipoib : ALL_CAS=limited, ALL_SWITCHES=limited, SELF=full ;' partitions.conf ||
  die "partitions.conf lacks the limited-hosts default: $(cat partitions.conf)"
declare -A PK LIDS
for t in A B; do
  PK[$t]=$(jq -r .pkey "show.$t.json")
  LIDS[$t]=$(jq -r '.hosts[].lid' "show.$t.json" | tr '\n' ' ')
  [[ ${PK[$t]} =~ ^0x[0-9a-f]{4}$ ]] || die "tenant $t: no P_Key in $(cat "show.$t.json")"
  [ "$(wc -w <<<"${LIDS[$t]}")" = 4 ] || die "tenant $t: not 4 host LIDs: ${LIDS[$t]}"
  log "tenant $t: P_Key ${PK[$t]}, host LIDs ${LIDS[$t]}"
done
full() { printf '0x%04x' $(( $1 | 0x8000 )); }
for t in A B; do
  other=$([ $t = A ] && echo B || echo A)
  for lid in ${LIDS[$t]}; do
    wait_pkey "$lid" "$(full "${PK[$t]}")" present 30
    ! holds_any "$lid" 1 "${PK[$other]}" || die "lid $lid (tenant $t) holds $other's P_Key ${PK[$other]}"
    holds "$lid" 1 0x7fff || die "lid $lid (tenant $t) is not a limited member of 0x7fff: $(pkeys "$lid" 1 | tr '\n' ' ')"
    ! holds "$lid" 1 0xffff || die "lid $lid (tenant $t) is a full member of the default partition"
  done
done
first_a=${LIDS[A]%% *}
log "smpquery pkeys $first_a 1 (tenant A): $(pkeys "$first_a" 1 | tr '\n' ' ')"
first_b=${LIDS[B]%% *}
log "smpquery pkeys $first_b 1 (tenant B): $(pkeys "$first_b" 1 | tr '\n' ' ')"
sim smpquery pkeys "$first_a" 1 >pkeys.A.txt 2>&1 || true

# The SM's port (switch port 0 of SW_L2_0) is a full member of the default partition.
SM_LID=$(sim sminfo 2>/dev/null | sed -n 's/.*sm lid \([0-9]*\).*/\1/p')
[ -n "$SM_LID" ] || die "sminfo gave no SM LID"
holds "$SM_LID" 0 0xffff || die "the SM's port (lid $SM_LID) is not a full member of 0x7fff: $(pkeys "$SM_LID" 0 | tr '\n' ' ')"
log "smpquery pkeys $SM_LID 0 (SM): $(pkeys "$SM_LID" 0 | tr '\n' ' ')"

# SA queries from a tenant host (limited member of 0x7fff) to the SM (full member) still work.
# (Under ibsim, multi-record SA answers stop at the first record: counts mean nothing here.)
host_a=$(jq -r '.hosts[0].name' show.A.json)
a1=$(jq -r '.hosts[0].lid' show.A.json) a2=$(jq -r '.hosts[1].lid' show.A.json)
b1=$(jq -r '.hosts[0].lid' show.B.json)
sa() { SIM_HOST=$host_a sim saquery "$@"; }
sa -N >sa.nodes 2>sa.err || die "saquery -N from $host_a failed: $(head -3 sa.err)"
grep -q '^NodeRecord' sa.nodes || die "saquery -N from $host_a: no node record"
sa -p --src-to-dst "$a1:$SM_LID" >sa.sm 2>&1 || die "no path $host_a -> SM: $(tail -3 sa.sm)"
grep -q PathRecord sa.sm || die "no PathRecord $host_a -> SM"
pk_sm=$(sed -n 's/.*pkey\.*\(0x[0-9A-Fa-f]*\).*/\1/p' sa.sm | head -1)
sa -p --src-to-dst "$a1:$a2" >sa.aa 2>&1 || die "no path inside A: $(tail -3 sa.aa)"
pk_aa=$(sed -n 's/.*pkey\.*\(0x[0-9A-Fa-f]*\).*/\1/p' sa.aa | head -1)
[ $(( pk_aa )) -eq $(( PK[A] | 0x8000 )) ] || die "path inside A has P_Key $pk_aa, not A's $(full "${PK[A]}")"
log "saquery from $host_a: node record ok; PathRecord to the SM pkey $pk_sm; $a1 -> $a2 (A) pkey $pk_aa"
rc=0
sa -p --src-to-dst "$a1:$b1" >sa.ab 2>&1 || rc=$?
! grep -q PathRecord sa.ab || die "SA gives a path from A ($a1) to B ($b1): $(cat sa.ab)"
log "saquery -p $a1 -> $b1 (A -> B): exit $rc, no PathRecord ($(grep -m1 -iE 'err|fail' sa.ab || true))"

# indx0: P_Key index 0 of every tenant host is its tenant's key (full), not 0x7fff.
for t in A B; do
  for lid in ${LIDS[$t]}; do
    [ "$(first_pkey "$lid" 1)" = "$(full "${PK[$t]}")" ] ||
      die "lid $lid (tenant $t): index 0 is $(first_pkey "$lid" 1), not $(full "${PK[$t]}")"
  done
done
# The SM's port (a management port) is a full member of every tenant partition.
for t in A B; do
  holds "$SM_LID" 0 "$(full "${PK[$t]}")" ||
    die "the SM's port is not a full member of $t's partition: $(pkeys "$SM_LID" 0 | tr '\n' ' ')"
done
log "index 0 of tenant hosts: their tenant's key; SM port holds $(full "${PK[A]}") and $(full "${PK[B]}")"

# Names the exporters cannot write are refused at add; nothing changes.
cp partitions.conf partitions.before
for bad in "$(printf 'x%.0s' {1..30})" .hidden -rf; do
  rc=0
  ctl tenant add --hosts 2 -- "$bad" >bad.out 2>&1 || rc=$?
  [ $rc -eq 2 ] || die "tenant add '$bad': exit $rc, not 2 (usage): $(cat bad.out)"
  grep -q "tenant '$bad'" bad.out || die "the refusal of '$bad' does not name it: $(cat bad.out)"
  log "tenant add '$bad' refused: $(cat bad.out)"
done
cmp -s partitions.conf partitions.before || die "a refused name changed partitions.conf"
[ "$(ctl tenant list | grep -c routed)" = 2 ] || die "a refused name changed the tenants"

# The base file takes C's derived key and holds an auto-numbered partition: C goes elsewhere.
CLASH=$(fnv C)
printf '# site partitions\nStorage=%s : SELF=full ;\nAutoNumbered : SELF=full ;\n' "$CLASH" >base.conf
ctl tenant add C --hosts 2 >add.C 2>&1 || die "laasctl tenant add C: $(cat add.C)"
ctl --json tenant show C >show.C.json
PK[C]=$(jq -r .pkey show.C.json)
if [ "${PK[C]}" = "$CLASH" ] || [ "${PK[C]}" = 0x0001 ]; then die "C got P_Key ${PK[C]} (base: $CLASH and 0x0001)"; fi
grep -q "^Storage=$CLASH" partitions.conf || die "the base file was not kept: $(head -5 partitions.conf)"
for lid in $(jq -r '.hosts[].lid' show.C.json); do wait_pkey "$lid" "$(full "${PK[C]}")" present 30; done
for _ in $(seq 1 60); do holds "$SM_LID" 0 "$(full "$CLASH")" && break; sleep 0.5; done
holds "$SM_LID" 0 "$(full "$CLASH")" || die "the SM's port lacks the base file's Storage key $CLASH"
log "base clash: C's name hashes to $CLASH (base Storage), C got ${PK[C]}; SM port: $(pkeys "$SM_LID" 0 | tr '\n' ' ')"

# A write that fails: partitions.conf immutable (rename over it fails, even for root).
if chattr +i partitions.conf 2>/dev/null; then
  cp partitions.conf partitions.before
  rc=0
  ctl tenant add D --hosts 2 >add.D 2>&1 || rc=$?
  chattr -i partitions.conf
  [ $rc -ne 0 ] || die "tenant add D succeeded although partitions.conf could not be written"
  grep -q "partitions.conf not written" add.D || die "the refusal does not say why: $(cat add.D)"
  cmp -s partitions.conf partitions.before || die "a failed add changed partitions.conf"
  ! ctl tenant show D >/dev/null 2>&1 || die "tenant D exists after a failed add"
  log "failed write: $(cat add.D)"
else
  log "chattr +i unsupported here: the failed-write case is covered by the unit tests only"
fi

# 3. Remove A: its former hosts lose A's P_Key, B keeps its own.
ctl tenant remove A >remove.A 2>&1 || die "laasctl tenant remove A: $(cat remove.A)"
# The key is gone from the file before the reply, so before anyone can be given A's hosts.
! grep -q "laas_A=" partitions.conf || die "partitions.conf still has laas_A after the reply"
! grep -q "=${PK[A]}" partitions.conf || die "partitions.conf still has A's P_Key ${PK[A]}"
ctl tenant add E --hosts 4 >add.E 2>&1 || die "laasctl tenant add E: $(cat add.E)"
ctl --json tenant show E >show.E.json
LIDS[E]=$(jq -r '.hosts[].lid' show.E.json | tr '\n' ' ')
PK[E]=$(jq -r .pkey show.E.json)
reused=0
for lid in ${LIDS[E]}; do
  wait_pkey "$lid" "$(full "${PK[E]}")" present 30
  ! holds_any "$lid" 1 "${PK[A]}" || die "lid $lid (now E's) still holds A's P_Key ${PK[A]}"
  [[ " ${LIDS[A]} " == *" $lid "* ]] && reused=$((reused + 1))
done
for lid in ${LIDS[A]}; do wait_pkey "$lid" "${PK[A]}" absent 30; done
for lid in ${LIDS[B]}; do holds "$lid" 1 "$(full "${PK[B]}")" || die "lid $lid lost B's P_Key"; done
log "after remove A / add E ($reused of E's hosts were A's): no host holds A's key ${PK[A]}"
log "after remove A: smpquery pkeys $first_a 1: $(pkeys "$first_a" 1 | tr '\n' ' ')"

# 4. OpenSM parsed every partitions.conf it read without error (it would otherwise have fallen
# back to "everyone full member" silently; the checks above would then see 0xffff on hosts).
if grep -E 'PARSE (ERROR|WARN)|Partition configuration (in error|was not fully processed|.* is not accessible)|ERR 05' osm.log; then
  die "OpenSM reported a partition configuration problem (above)"
fi
log "osm.log: no partition parse error or fallback line"

# 5. The offline validator: the managed file passes; a definition wrapped before its ':' (which
# OpenSM rejects, falling back to "everyone full member") does not.
"$LAASCTL" validate partitions.conf >validate.out 2>&1 || die "laasctl validate partitions.conf: $(cat validate.out)"
printf 'Default=0x7fff : ALL=limited, SELF=full ;\nWrapped=0x0042,\n  ipoib : ALL=full ;\n' >wrapped.conf
rc=0
"$LAASCTL" validate wrapped.conf >validate.wrapped 2>&1 || rc=$?
if [ $rc -ne 1 ] || ! grep -q 'wrapped.conf:2: error: the partition definition is wrapped' validate.wrapped; then
  die "laasctl validate accepted a wrapped definition (exit $rc): $(cat validate.wrapped)"
fi
log "laasctl validate: $(cat validate.out); wrapped.conf: $(head -1 validate.wrapped | cut -c1-90)"
log "PASS partitions_flow"
