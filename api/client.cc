#include "api/client.h"

#include <httplib.h>
#include <signal.h>

#include "api/routes.h"
#include "laasctl/client.h"

namespace laas::api {

using nlohmann::json;

namespace {

// "https://HOST:PORT" (a bracketed IPv6 address too); the port defaults to 443.
void split_server(const std::string& server, std::string& host, int& port) {
  const std::string scheme = "https://";
  if (server.compare(0, scheme.size(), scheme) != 0)
    throw ctl::ClientError(service::kExitUsage, "--server " + server + ": not https://HOST:PORT");
  std::string rest = server.substr(scheme.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const size_t colon = rest.rfind(':');
  const bool has_port = colon != std::string::npos && rest.find(']', colon) == std::string::npos;
  host = has_port ? rest.substr(0, colon) : rest;
  port = 443;
  if (has_port) {
    const std::string digits = rest.substr(colon + 1);
    if (digits.empty() || digits.size() > 5 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      throw ctl::ClientError(service::kExitUsage, "--server " + server + ": bad port");
    port = std::stoi(digits);
  }
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) throw ctl::ClientError(service::kExitUsage, "--server " + server + ": no host");
}

}  // namespace

json call_api(const std::string& server, const ClientTls& tls, const std::string& method,
              const json& params, int timeout_ms) {
  const auto request = http_request_for(method, params);
  if (!request)
    throw ctl::ClientError(service::kExitUsage,
                           "'" + method +
                               "' is not served by the API (--server): run it on the "
                               "SM host, against the control socket");
  std::string host;
  int port = 0;
  split_server(server, host, port);
  // A server that ends the handshake (no or a wrong certificate) closes while laasctl writes:
  // an error to report (69), not a SIGPIPE that kills laasctl.
  ::signal(SIGPIPE, SIG_IGN);
  httplib::SSLClient client(host, port, tls.cert, tls.key);
  if (!tls.ca.empty()) client.set_ca_cert_path(tls.ca.c_str());
  client.enable_server_certificate_verification(true);
  const auto limit = std::chrono::milliseconds(timeout_ms);
  client.set_connection_timeout(limit);
  client.set_read_timeout(limit);
  client.set_write_timeout(limit);
  const auto started = std::chrono::steady_clock::now();
  httplib::Result res =
      request->method == "GET" ? client.Get(request->target.c_str())
      : request->method == "DELETE"
          ? client.Delete(request->target.c_str(), request->body, "application/json")
          : client.Post(request->target.c_str(), request->body, "application/json");
  if (!res) {
    const auto err = res.error();
    // With TLS 1.3 a refused client certificate shows at the first read, at once; a read that
    // gives up after the whole timeout is a server that did not answer in time.
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started)
                            .count();
    if (err == httplib::Error::Read && waited >= timeout_ms / 2)
      throw ctl::ClientError(service::kExitTimeout,
                             "no answer from " + server + " within " +
                                 std::to_string(timeout_ms / 1000) +
                                 " s (--timeout); a change may or may not have been made");
    throw ctl::ClientError(service::kExitUnreachable,
                           "cannot reach the LaaS API at " + server + ": " +
                               httplib::to_string(err) +
                               " (a client certificate the server's CA signed, --cert/--key, and "
                               "its CA, --ca?)");
  }
  return socket_reply_for(res->status, res->body);
}

}  // namespace laas::api
