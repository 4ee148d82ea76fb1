// laas-api: the HTTPS API in front of the plugin's control socket (laas-api(8), docs/api.md).
#include <CLI/CLI.hpp>
#include <iostream>

#include "api/server.h"
#include "core/config.h"
#include "service/protocol.h"

namespace {

using laas::api::ServerOptions;

struct Flags {
  std::string config, socket, listen, cert, key, client_ca;
  std::vector<std::string> writers, readers;
  int threads = 0, max_connections = 0;
};

// laas.yaml first (its socket: and api: section), then what the command line gives.
bool settle(CLI::App& app, const Flags& f, ServerOptions& o, std::string& listen) {
  if (!f.config.empty()) {
    const auto c = laas::core::check_config(f.config);
    for (const auto& p : c.api_problems) std::cerr << "laas-api: " << p << "\n";
    if (!c.api_problems.empty()) return false;
    // The plugin's own problems are its business; a socket it cannot read is ours too.
    if (!c.socket.empty()) o.socket = c.socket;
    listen = c.api.listen;
    o.cert = c.api.cert;
    o.key = c.api.key;
    o.client_ca = c.api.client_ca;
    o.writers = c.api.writers;
    o.readers = c.api.readers;
    if (c.api.threads) o.threads = c.api.threads;
    if (c.api.max_connections) o.max_connections = c.api.max_connections;
  }
  const auto given = [&](const char* name) { return app.get_option(name)->count() > 0; };
  if (given("--socket")) o.socket = f.socket;
  if (given("--listen")) listen = f.listen;
  if (given("--cert")) o.cert = f.cert;
  if (given("--key")) o.key = f.key;
  if (given("--client-ca")) o.client_ca = f.client_ca;
  if (given("--writers")) o.writers = f.writers;
  if (given("--readers")) o.readers = f.readers;
  if (given("--threads")) o.threads = f.threads;
  if (given("--max-connections")) o.max_connections = f.max_connections;
  std::string missing;
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"--listen", &listen},
                                    {"--cert", &o.cert},
                                    {"--key", &o.key},
                                    {"--client-ca", &o.client_ca}})
    if (value->empty()) missing += std::string(missing.empty() ? "" : ", ") + name;
  if (!missing.empty()) {
    std::cerr << "laas-api: missing " << missing << " (or the api: section of --config)\n";
    return false;
  }
  if (o.writers.empty() && o.readers.empty()) {
    std::cerr << "laas-api: no --writers and no --readers: no client could do anything\n";
    return false;
  }
  if (!laas::api::split_listen(listen, o.host, o.port)) {
    std::cerr << "laas-api: --listen '" << listen << "' is not ADDR:PORT\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"laas-api: the LaaS HTTPS API (client certificates) in front of the control socket"};
  Flags f;
  ServerOptions o;
  o.socket = laas::service::kDefaultSocketPath;
  app.add_option("--config", f.config, "laas.yaml: its socket: and api: section")
      ->check(CLI::ExistingFile);
  app.add_option("--socket", f.socket, "the plugin's control socket")
      ->default_str(laas::service::kDefaultSocketPath);
  app.add_option("--listen", f.listen, "ADDR:PORT to serve HTTPS on ([::]:8443 for IPv6)");
  app.add_option("--cert", f.cert, "the server's certificate chain (PEM)");
  app.add_option("--key", f.key, "the server's private key (PEM)");
  app.add_option("--client-ca", f.client_ca, "CA certificate(s) client certificates must chain to");
  app.add_option("--writers", f.writers, "client certificate CNs that may read and change")
      ->delimiter(',');
  app.add_option("--readers", f.readers, "client certificate CNs that may only read")
      ->delimiter(',');
  app.add_option("--threads", f.threads, "requests served at once")
      ->check(CLI::Range(1, 256))
      ->default_str(std::to_string(o.threads));
  app.add_option("--max-connections", f.max_connections,
                 "accepted connections waiting for a thread (then new ones wait in the backlog)")
      ->check(CLI::Range(1, 65536))
      ->default_str(std::to_string(o.max_connections));
  app.add_option("--client-timeout", o.read_timeout_s,
                 "seconds a client may stay silent or not read (handshake, request, reply)")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--wait-ms", o.wait_ms, "how long a change waits for OpenSM to re-route")
      ->check(CLI::Range(0, laas::service::kMaxWaitMs))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is 0; every bad command line is 2, as laasctl's.
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  o.write_timeout_s = o.read_timeout_s;
  std::string listen;
  if (!settle(app, f, o, listen)) return 2;
  o.openapi = laas::api::builtin_openapi();
  return laas::api::serve(o);
}
