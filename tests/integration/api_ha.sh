#!/usr/bin/env bash
# api_ha.sh: laas-api beside an HA pair (docs/api.md, "Beside an HA pair"). Two OpenSMs with the
# plugin on the demo tree sharing one state directory (lib_ha.sh): SM 1 master, SM 2 standby,
# a laas-api in front of each one's socket, both serving the certificates docs/api.md makes with
# openssl (its commands run as they stand), reached as sm1.example.com and sm2.example.com.
#  1. Through the standby's laas-api: GET /v1/status says standby and names SM 1 as master; a
#     tenant added through the master's laas-api is listed (the shared state); POST and DELETE
#     answer 503 not_master with Retry-After, the message naming the master's port GUID and
#     node description; state.json is untouched by them.
#  2. kill -9 of SM 1: its laas-api answers 503 (no service); the client that retries on the
#     other host gets 201 from SM 2's laas-api once SM 2 has taken over, and the tenant of step 1
#     is still there.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ha.sh"
source "$(dirname "$0")/lib_api.sh"
laas_enter_namespace "$@"
ha_setup api_ha
[ -n "${LAAS_API:-}" ] || die "LAAS_API (the laas-api binary) is not set"
# shellcheck disable=SC2034 # read by start_sm
HA_NODES="SW_L2_0 SW_L2_1"
src=$(cd "$(dirname "$0")/../.." && pwd)
# The certificate commands of docs/api.md: the fenced block after its marker naming this test.
awk '/doc-test: skip .*api_ha\.sh/ { mark = 1; next }
  mark && /^```/ { if (inblk) exit; inblk = 1; next }
  inblk { print }' "$src/docs/api.md" >certs.sh
[ "$(grep -c '^openssl ' certs.sh)" -ge 7 ] || die "docs/api.md's certificate block not found: $(cat certs.sh)"
bash -e certs.sh >certs.log 2>&1 || die "docs/api.md's certificate commands failed: $(tail -5 certs.log)"
ha_pair_up
API_AT_SOCKET=$WORK/sm1.sock API_AT_PORT=18441 API_AT_LOG=api1.log start_api
port1=$API_PORT
API_AT_SOCKET=$WORK/sm2.sock API_AT_PORT=18442 API_AT_LOG=api2.log start_api
port2=$API_PORT
url1=https://sm1.example.com:$port1 url2=https://sm2.example.com:$port2
log "SM 1 master, SM 2 standby; laas-api at $url1 (SM 1) and $url2 (SM 2)"

# api WHO METHOD URL [BODY]: the HTTP status; the body in out.json, the headers in out.hdr.
api() {
  local data=()
  [ -z "${4:-}" ] || data=(-H 'Content-Type: application/json' --data-binary "$4")
  rm -f out.json out.hdr
  curl -s --cacert ca.crt --cert "$1.crt" --key "$1.key" -X "$2" "${data[@]}" -o out.json \
    --resolve "sm1.example.com:$port1:127.0.0.1" --resolve "sm2.example.com:$port2:127.0.0.1" \
    -D out.hdr -w '%{http_code}' --max-time 60 "$3" || true
}
master_guid=$(ctl 1 --json status | jq -r '.sm.self.guid')
master_name=$(ctl 1 --json status | jq -r '.sm.self.name')
[ -n "$master_guid" ] && [ "$master_guid" != null ] || die "SM 1's status names no port GUID"

# --- 1. The standby's laas-api -------------------------------------------------------------
got=$(api ops POST "$url1/v1/tenants" '{"name": "a", "hosts": 6}')
[ "$got" = 201 ] || die "POST a at the master's laas-api: HTTP $got: $(head -c 300 out.json)"
got=$(api monitor GET "$url2/v1/status")
[ "$got" = 200 ] || die "GET /v1/status at the standby's laas-api: HTTP $got"
[ "$(jq -r .sm.role out.json)" = standby ] || die "the standby's status: $(jq -c .sm out.json)"
[ "$(jq -r .sm.master.guid out.json)" = "$master_guid" ] ||
  die "the standby's status does not name SM 1 ($master_guid) as master: $(jq -c .sm out.json)"
[ "$(jq -r .sm.holds_state out.json)" = false ] || die "the standby's status: holds_state $(jq -c .sm out.json)"
got=$(api monitor GET "$url1/v1/status")
[ "$got" = 200 ] && [ "$(jq -r '.sm.role + " " + (.sm.holds_state | tostring)' out.json)" = "master true" ] ||
  die "the master's status through its laas-api (HTTP $got): $(jq -c .sm out.json)"
listed=""
for _ in $(seq 50); do
  got=$(api monitor GET "$url2/v1/tenants")
  listed=$(jq -r '.[].name' out.json 2>/dev/null | tr '\n' ' ')
  [ "$got" = 200 ] && [ "$listed" = "a " ] && break
  sleep 0.2
done
[ "$listed" = "a " ] || die "the standby's laas-api lists '$listed' (HTTP $got), expected 'a '"
cp state/state.json state.before
refused() { # WHAT: out.json and out.hdr are a 503 not_master naming the master
  jq -e '.error.code == "not_master"' out.json >/dev/null || die "$1: not not_master: $(cat out.json)"
  local message
  message=$(jq -r .error.message out.json)
  grep >/dev/null -F "$master_guid" <<<"$message" || die "$1: the message does not name $master_guid: $message"
  grep >/dev/null -F "$master_name" <<<"$message" || die "$1: the message does not name '$master_name': $message"
  grep >/dev/null -i '^Retry-After: ' out.hdr || die "$1: no Retry-After: $(cat out.hdr)"
}
got=$(api ops POST "$url2/v1/tenants" '{"name": "b", "hosts": 2}')
[ "$got" = 503 ] || die "POST at the standby's laas-api: HTTP $got, expected 503: $(head -c 300 out.json)"
refused "POST /v1/tenants at the standby"
log "ok: POST at the standby -> 503: $(jq -r .error.message out.json)"
got=$(api ops DELETE "$url2/v1/tenants/a")
[ "$got" = 503 ] || die "DELETE at the standby's laas-api: HTTP $got, expected 503: $(head -c 300 out.json)"
refused "DELETE /v1/tenants/a at the standby"
got=$(api ops POST "$url2/v1/hosts/drain" '{"hosts": ["comp-1"], "reason": "test"}')
[ "$got" = 503 ] || die "a host drain at the standby's laas-api: HTTP $got, expected 503"
refused "POST /v1/hosts/drain at the standby"
cmp -s state.before state/state.json || die "state.json changed after changes refused at the standby"
log "ok: the standby's laas-api: status names the master, lists a, refuses POST, DELETE, drain with 503 not_master"

# --- 2. The master dies: the client goes to the other host ----------------------------------
kill_sm 1
got=$(api monitor GET "$url1/v1/status")
[ "$got" = 503 ] || die "SM 1's laas-api with SM 1 dead: HTTP $got, expected 503"
jq -e '.error.code == "unavailable"' out.json >/dev/null || die "SM 1's laas-api: $(cat out.json)"
start=$SECONDS
codes=""
while :; do
  got=$(api ops POST "$url2/v1/tenants" '{"name": "b", "hosts": 2}')
  [ "$got" = 201 ] && break
  [ "$got" = 503 ] || die "POST at SM 2's laas-api during the take-over: HTTP $got: $(head -c 300 out.json)"
  code=$(jq -r .error.code out.json)
  [ "${codes##* }" = "$code" ] || codes="$codes $code"
  [ $((SECONDS - start)) -lt 60 ] || die "SM 2's laas-api still answers 503 60 s after SM 1's death: $(cat out.json)"
  sleep 0.5
done
log "ok: SM 1 dead: its laas-api 503 unavailable; SM 2's laas-api answered 503 ($codes ) then added b (201) $((SECONDS - start)) s after the kill"
got=$(api monitor GET "$url2/v1/tenants")
[ "$(jq -r '.[].name' out.json | sort | tr '\n' ' ')" = "a b " ] ||
  die "SM 2's laas-api lists $(jq -c '[.[].name]' out.json), expected a and b"
log "PASS api_ha"
