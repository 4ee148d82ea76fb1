// laasctl --server: the control socket's requests sent to laas-api over HTTPS with a client
// certificate instead (api/routes.h maps them both ways), answered as the socket would answer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace laas::api {

struct ClientTls {
  std::string cert, key;  // the client's certificate and key (PEM)
  std::string ca;         // the CA the server's certificate must chain to (PEM)
};

// Sends the socket request (method, params) to the API at `server` ("https://HOST:PORT") and
// returns the reply as the socket gives it ({"ok", "result"} or {"ok", "error"}). Throws
// ctl::ClientError: usage (a method the API does not serve, a server that is not https://),
// unreachable (no TLS connection: refused, no certificate, another CA), timeout.
nlohmann::json call_api(const std::string& server, const ClientTls& tls, const std::string& method,
                        const nlohmann::json& params, int timeout_ms);

}  // namespace laas::api
