# Helpers for laas-api's tests (api.sh) and its load benchmark (scripts/bench-api-load.sh), on
# top of lib.sh: certificates made with openssl, laas-api started in front of $WORK/laas.sock.

# make_ca NAME: a self-signed CA (NAME.crt, NAME.key).
make_ca() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=$1" -keyout "$1.key" -out "$1.crt" 2>/dev/null
}

# make_cert NAME CN CA [EXTENSIONS]: NAME.crt and NAME.key, subject CN, signed by CA (a client
# certificate unless EXTENSIONS say otherwise).
make_cert() {
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$2" \
    -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf '%s\n' "${4:-extendedKeyUsage=clientAuth}" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" -CAcreateserial -days 2 \
    -extfile "$1.ext" -out "$1.crt" 2>/dev/null
}

# make_api_certs: a CA and the server's certificate (127.0.0.1, localhost), a writer (CN ops) and
# a reader (CN monitor), in the working directory.
make_api_certs() {
  make_ca ca
  make_cert server localhost ca \
    $'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth'
  make_cert ops ops ca
  make_cert monitor monitor ca
}

# start_api [laas-api options...]: laas-api on 127.0.0.1 ($API_URL) in front of the plugin's
# socket, writer ops, reader monitor, its log in api.log, killed at teardown. API_AT_SOCKET,
# API_AT_PORT and API_AT_LOG put another one elsewhere (two SMs: one laas-api each).
start_api() {
  ip link set lo up 2>/dev/null || true # a fresh network namespace has its loopback down
  API_PORT=${API_AT_PORT:-18443}
  [ "${LAAS_IN_NS:-}" = 1 ] || API_PORT=$((20000 + ($$ + ${API_AT_PORT:-18443}) % 20000)) # no namespace of its own
  API_URL="https://127.0.0.1:$API_PORT"
  local log=${API_AT_LOG:-api.log}
  "$LAAS_API" --socket "${API_AT_SOCKET:-${LAAS_SOCKET_PATH:-$WORK/laas.sock}}" \
    --listen "127.0.0.1:$API_PORT" --cert server.crt --key server.key --client-ca ca.crt \
    --writers ops --readers monitor "$@" >"$log" 2>&1 &
  API_PID=$!
  LAAS_EXTRA_PIDS="${LAAS_EXTRA_PIDS:-} $API_PID"
  for _ in $(seq 1 50); do
    grep -q 'listening on' "$log" && return 0
    kill -0 "$API_PID" 2>/dev/null || die "laas-api exited: $(cat "$log")"
    sleep 0.1
  done
  die "laas-api does not listen: $(cat "$log")"
}
