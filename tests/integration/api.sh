#!/usr/bin/env bash
# api.sh: laas-api (HTTPS, client certificates) in front of the plugin in the real OpenSM on the
# demo fabric, certificates made here with openssl: a CA, the server, a writer (CN ops), a reader
# (CN monitor), a CN in neither list (CN stranger) and a client of another CA (CN ops too).
# Checks: no client certificate, another CA's, or TLS 1.1 get no HTTP answer at all; a reader
# reads (200) and may not change (403); a writer adds a tenant (201) that is the tenant
# `laasctl tenant show` shows, and removes it; a cut body 400, a 2 MB body 413; a client that
# never speaks is dropped after --client-timeout; /v1/openapi.json is the installed document and
# valid OpenAPI 3 (Debian's openapi-specification schema, when installed); laasctl --server
# works over the API as over the socket; every curl example of docs/api.md runs and answers the
# status its comment gives.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_api.sh"
laas_enter_namespace "$@"
laas_setup api
src=$(cd "$(dirname "$0")/../.." && pwd)
[ -n "${LAAS_API:-}" ] || die "LAAS_API (the laas-api binary) is not set"

# --- certificates ---------------------------------------------------------------------------
make_api_certs
make_cert stranger stranger ca
make_ca other-ca
make_cert intruder ops other-ca
log "certificates made: CA, server, ops (writer), monitor (reader), stranger, ops of another CA"

# --- the fabric, the plugin, laas-api -------------------------------------------------------
start_demo
ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
start_api --client-timeout 2 --wait-ms 20000
url=$API_URL
port=$API_PORT

# as WHO METHOD PATH [BODY]: the HTTP status (000: no HTTP answer), the body in out.json.
as() {
  local who=$1 method=$2 path=$3 body=${4-} auth=()
  [ "$who" = none ] || auth=(--cert "$who.crt" --key "$who.key")
  local data=()
  [ -z "$body" ] || data=(-H 'Content-Type: application/json' --data-binary "$body")
  curl -s --cacert ca.crt "${auth[@]}" -X "$method" "${data[@]}" -o out.json -w '%{http_code}' \
    --max-time 60 "$url$path" || true
}
expect() { # STATUS WHAT WHO METHOD PATH [BODY]
  local want=$1 what=$2 got
  shift 2
  rm -f out.json
  got=$(as "$@")
  [ "$got" = "$want" ] || die "$what: HTTP $got, expected $want: $(head -c 400 out.json 2>/dev/null)"
  log "ok: $what -> $got"
}

# --- TLS: no answer without the right certificate --------------------------------------------
expect 000 "no client certificate" none GET /v1/status
[ ! -s out.json ] || die "a client without a certificate got an HTTP body: $(cat out.json)"
expect 000 "another CA's certificate (CN ops)" intruder GET /v1/status
[ ! -s out.json ] || die "another CA's client got an HTTP body: $(cat out.json)"
got=$(curl -s --cacert ca.crt --cert ops.crt --key ops.key --tls-max 1.1 -o /dev/null \
  -w '%{http_code}' "$url/v1/status" || true)
[ "$got" = 000 ] || die "TLS 1.1 was answered (HTTP $got)"
log "ok: TLS 1.1 -> no answer"
expect 403 "a CN in neither list reads" stranger GET /v1/status

# --- roles ----------------------------------------------------------------------------------
expect 200 "reader GET /v1/tenants" monitor GET /v1/tenants
expect 200 "reader GET /v1/status" monitor GET /v1/status
jq -e '.sm.role' out.json >/dev/null || die "status has no sm.role: $(head -c 300 out.json)"
expect 403 "reader POST /v1/tenants" monitor POST /v1/tenants '{"name":"apitest","hosts":4}'
ctl tenant show apitest >/dev/null 2>&1 && die "a reader's POST made tenant apitest"

# A second connection of one client offers the TLS session of its first (curl does): it is
# resumed, and keeps its certificate's role. Before laas-api set a session ID context, OpenSSL
# ended every such handshake with an "internal error" alert.
resumed() { # WHO [curl options]: the statuses of two requests, each on a connection of its own
  local who=$1
  shift
  curl -s --cacert ca.crt --cert "$who.crt" --key "$who.key" -H 'Connection: close' "$@" \
    -w '%{http_code} ' -o /dev/null "$url/v1/tenants" -o /dev/null "$url/v1/tenants" 2>&1 || true
}
got=$(resumed monitor)
[ "$got" = "200 200 " ] || die "a reader's second connection (a resumed session): $got, expected '200 200 '"
got=$(resumed monitor -H 'Content-Type: application/json' -d '{"name": "resumed", "hosts": 2}')
[ "$got" = "403 403 " ] || die "a reader's POSTs on a resumed session: $got, expected '403 403 '"
log "ok: a resumed TLS session is served, with its certificate's role (GET 200 200, POST 403 403)"

# --- a tenant through the API, as laasctl sees it -------------------------------------------
expect 201 "writer POST /v1/tenants" ops POST /v1/tenants '{"name":"apitest","hosts":4}'
[ "$(jq '.hosts | length' out.json)" = 4 ] || die "the 201 body has not 4 hosts: $(cat out.json)"
jq -S '.hosts' out.json >api-hosts.json
ctl --json tenant show apitest | jq -S . >laasctl-show.json || die "laasctl tenant show apitest failed"
jq -S '.hosts' laasctl-show.json | cmp -s - api-hosts.json ||
  die "the hosts the API placed are not those laasctl tenant show lists"
expect 200 "writer GET /v1/tenants/apitest" ops GET /v1/tenants/apitest
jq -S . out.json | cmp -s - laasctl-show.json ||
  die "GET /v1/tenants/apitest differs from laasctl --json tenant show apitest"
log "ok: GET /v1/tenants/apitest is laasctl --json tenant show apitest, byte for byte (sorted)"
expect 409 "a second POST of apitest" ops POST /v1/tenants '{"name":"apitest","hosts":4}'
jq -e '.error.code == "duplicate"' out.json >/dev/null || die "not a duplicate: $(cat out.json)"
expect 200 "writer DELETE /v1/tenants/apitest" ops DELETE /v1/tenants/apitest
ctl tenant show apitest >/dev/null 2>&1 && die "apitest is still there after DELETE"
expect 404 "GET of the removed tenant" monitor GET /v1/tenants/apitest
jq -e '.error.code == "not_found"' out.json >/dev/null || die "not not_found: $(cat out.json)"

# --- bad requests -------------------------------------------------------------------------
expect 400 "a cut JSON body" ops POST /v1/tenants '{"name":"cut","hosts":'
jq -e '.error.code == "bad_request"' out.json >/dev/null || die "no JSON error: $(cat out.json)"
head -c 2000000 /dev/zero | tr '\0' ' ' >big.json
rm -f out.json
got=$(curl -s --cacert ca.crt --cert ops.crt --key ops.key -H 'Content-Type: application/json' \
  --data-binary @big.json -o out.json -w '%{http_code}' "$url/v1/tenants" || true)
[ "$got" = 413 ] || die "a 2 MB body: HTTP $got, expected 413"
log "ok: a 2 MB body -> 413 $(jq -c .error.code out.json 2>/dev/null)"
expect 404 "an unknown path" monitor GET /v1/nothing

# --- slow clients ---------------------------------------------------------------------------
# A client that connects and never speaks holds a worker: it must be dropped after
# --client-timeout (2 s here).
start=$SECONDS
exec 3<>"/dev/tcp/127.0.0.1/$port"
timeout 10 cat <&3 >/dev/null || die "a silent client was not dropped within 10 s"
exec 3<&-
log "ok: a silent client was dropped after $((SECONDS - start)) s"

# --- the OpenAPI document -------------------------------------------------------------------
expect 200 "GET /v1/openapi.json" monitor GET /v1/openapi.json
cmp -s out.json "$src/api/openapi.json" || die "the served document is not api/openapi.json"
schema=${LAAS_OPENAPI_SCHEMA:-/usr/share/openapi-specification/schemas/v3.0/schema.json}
if [ -f "$schema" ]; then
  python3 "$src/tests/admin/openapi_valid.py" --schema "$schema" out.json ||
    die "/v1/openapi.json is not a valid OpenAPI 3.0 document"
else
  log "NOTE: $schema missing (package openapi-specification): the served document was not validated here"
fi

# --- laasctl --server: laasctl over the API ------------------------------------------------
remote() { # WHO laasctl-arguments...
  local who=$1
  shift
  "$LAASCTL" --server "$url" --cert "$who.crt" --key "$who.key" --ca ca.crt --timeout 30 "$@"
}
remote ops tenant add viaapi --hosts 2 >remote-add.out 2>&1 ||
  die "laasctl --server tenant add failed: $(cat remote-add.out)"
ctl --json tenant show viaapi | jq -S . >socket-show.json || die "viaapi is not on the socket"
remote monitor --json tenant show viaapi | jq -S . | cmp -s - socket-show.json ||
  die "laasctl --server --json tenant show differs from the socket's"
rc=0
remote monitor tenant remove viaapi >remote-rm.out 2>&1 || rc=$?
[ $rc = 77 ] || die "a reader's laasctl --server tenant remove: exit $rc, expected 77 (permission)"
rc=0
remote monitor audit >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || die "laasctl --server audit (not served by the API): exit $rc, expected 2"
rc=0
"$LAASCTL" --server "$url" --ca ca.crt tenant list >/dev/null 2>&1 || rc=$?
[ $rc = 69 ] || die "laasctl --server without a client certificate: exit $rc, expected 69"
remote ops tenant remove viaapi >/dev/null 2>&1 || die "laasctl --server tenant remove failed"
rc=0
ctl tenant show viaapi >/dev/null 2>&1 || rc=$?
[ $rc = 1 ] || die "viaapi is still there after laasctl --server tenant remove"
log "ok: laasctl --server: add, show (= the socket's), a reader's remove 77, audit 2, no certificate 69, remove"

# --- the event stream: a tenant's add and remove, in order ---------------------------------
curl -sN --cacert ca.crt --cert monitor.crt --key monitor.key --max-time 40 "$url/v1/events" \
  >events.txt 2>/dev/null &
EVENTS_PID=$!
LAAS_EXTRA_PIDS="${LAAS_EXTRA_PIDS:-} $EVENTS_PID"
sleep 1
expect 201 "writer POST /v1/tenants (evt)" ops POST /v1/tenants '{"name":"evt","hosts":2}'
expect 200 "writer DELETE /v1/tenants/evt" ops DELETE /v1/tenants/evt
for _ in $(seq 1 60); do
  grep -q '"tenant":"evt"' events.txt && [ "$(grep -c '^event: tenant\.' events.txt)" -ge 2 ] && break
  sleep 0.25
done
kill "$EVENTS_PID" 2>/dev/null || true
order=$(grep -E '^event: tenant\.(added|removed)' events.txt | tr '\n' ' ')
[ "$order" = "event: tenant.added event: tenant.removed " ] ||
  die "the event stream did not show evt's add then its remove: $(head -c 600 events.txt)"
first_id=$(sed -n 's/^id: //p' events.txt | head -1)
# Resumed after the first (Last-Event-ID), the stream starts with the remove.
curl -sN --cacert ca.crt --cert monitor.crt --key monitor.key --max-time 3 \
  -H "Last-Event-ID: $first_id" "$url/v1/events" >events2.txt 2>/dev/null || true
[ "$(grep -m1 '^event: ' events2.txt)" = "event: tenant.removed" ] ||
  die "resuming after id $first_id does not start with the remove: $(head -c 400 events2.txt)"
log "ok: /v1/events showed evt's add then its remove; Last-Event-ID $first_id resumes with the remove"

# --- docs/api.md's examples ---------------------------------------------------------------
# Each `curl` line of the page, with its host replaced by this test's; its comment gives the
# status it must answer ("# 201"). The page names its files as this test does (ca.crt, ops.crt,
# monitor.crt ...).
n=0
while IFS= read -r line; do
  want=$(sed -n 's/.*#[[:space:]]*\([0-9][0-9][0-9]\)[[:space:]]*$/\1/p' <<<"$line")
  [ -n "$want" ] || die "docs/api.md: a curl example without its status comment: $line"
  cmd=${line//https:\/\/sm1.example.com:8443/$url}
  rm -f out.json
  got=$(eval "${cmd%%#*} -s -o out.json -w '%{http_code}'" || true)
  [ "$got" = "$want" ] || die "docs/api.md: '$line' answered $got: $(head -c 300 out.json)"
  n=$((n + 1))
done < <(grep -E '^curl ' "$src/docs/api.md")
[ "$n" -gt 0 ] || die "no curl example found in docs/api.md"
log "ok: the $n curl examples of docs/api.md answered as they say"
grep -q ' CN=ops POST /v1/tenants 201' api.log || die "laas-api's log lacks the writer's POST"
log "PASS api"
