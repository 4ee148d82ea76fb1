// laas-api's HTTPS side: cpp-httplib's SSLServer (OpenSSL), TLS 1.2 and 1.3 only, a client
// certificate required and verified against the client CA (no certificate, or another CA's: the
// handshake fails and no HTTP is spoken), the role from the certificate's subject CN, each
// request mapped by api/routes.h to one request on the control socket (laasctl's client).
#pragma once

#include <string>
#include <vector>

namespace laas::api {

struct ServerOptions {
  std::string socket;  // the plugin's control socket
  std::string host = "127.0.0.1";
  int port = 8443;
  std::string cert, key, client_ca;
  std::vector<std::string> writers, readers;
  int threads = 8;           // requests served at once (each holds one socket request)
  int max_connections = 64;  // accepted connections waiting for a thread; then accept waits
  int read_timeout_s = 10;   // a client silent this long (handshake, headers, body) is dropped
  int write_timeout_s = 10;  // a client not reading this long is dropped
  int wait_ms = 30000;       // how long a change waits for OpenSM to re-route
  std::string openapi;       // the document GET /v1/openapi.json serves
};

// Serves until SIGTERM or SIGINT; returns the exit status (0 after a signal, 1 when the
// certificates cannot be loaded or the address cannot be bound). Messages go to stderr.
int serve(const ServerOptions& options);

// "ADDR:PORT" ("[::1]:8443" for IPv6) into host and port; false when it is not that.
bool split_listen(const std::string& listen, std::string& host, int& port);

// The OpenAPI document built into laas-api (api/openapi.json).
const std::string& builtin_openapi();

}  // namespace laas::api
