#include "laasctl/cli.h"

#include <cstdlib>
#include <iostream>

#include "laasctl/client.h"
#ifdef LAAS_HAVE_API_CLIENT
#include "api/client.h"
#endif

namespace laas::ctl {

using nlohmann::json;

int Context::wait_ms() const { return server_wait_ms(o_.timeout_s * 1000); }

json Context::call_server(const std::string& method, const json& params) const {
#ifdef LAAS_HAVE_API_CLIENT
  return api::call_api(o_.server, {o_.cert, o_.key, o_.ca}, method, params, o_.timeout_s * 1000);
#else
  (void)method;
  (void)params;
  throw ClientError(kExitUsage, "this laasctl is built without the API client (cpp-httplib)");
#endif
}

int Context::request(const std::string& method, const json& params, json& result) const {
  const json reply = o_.server.empty() ? call(o_.socket, method, params, o_.timeout_s * 1000)
                                       : call_server(method, params);
  if (reply.value("ok", false)) {
    result = reply.value("result", json());
    // A change made, with what makes it fragile (weak keys, an untrusted master).
    if (!o_.json_output && result.is_object() && result.contains("warnings"))
      for (const auto& w : result["warnings"])
        if (w.is_string()) std::cerr << "laasctl: WARNING: " << w.get<std::string>() << "\n";
    return kExitOk;
  }
  const json err = reply.value("error", json::object());
  const std::string code = err.value("code", "internal");
  if (o_.json_output)
    std::cout << reply.dump(2) << "\n";
  else
    std::cerr << "laasctl: " << err.value("message", "request failed") << " (" << code << ")\n";
  return exit_code_for(code);
}

int Context::print_json(const json& result) {
  std::cout << result.dump(2) << "\n";
  return 0;
}

void CommandTable::add(CLI::App* command, Handler handler) {
  commands_.emplace_back(command, std::move(handler));
}

int CommandTable::run(const Context& context) const {
  for (const auto& [command, handler] : commands_)
    if (command->parsed()) return handler(context);
  return kExitUsage;
}

CLI::App* add_group(CLI::App& app, const std::string& name, const std::string& help) {
  auto* group = app.add_subcommand(name, help);
  group->require_subcommand(1);
  return group;
}

void add_global_options(CLI::App& app, GlobalOptions& o) {
  if (const char* env = std::getenv("LAAS_SOCKET")) o.socket = env;
  app.footer(exit_status_help());
  app.add_option("-s,--socket", o.socket, "control socket (env LAAS_SOCKET)")
      ->capture_default_str();
  app.add_flag("--json", o.json_output, "print the raw JSON reply");
  app.add_option("--timeout", o.timeout_s,
                 "seconds to wait for a reply; tenant add/remove ask the service to wait for "
                 "re-routing a second less")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  app.add_option("--server", o.server,
                 "send the request to laas-api at https://HOST:PORT instead of the socket (with "
                 "--cert, --key, --ca)");
  app.add_option("--cert", o.cert, "with --server: the client certificate (PEM)");
  app.add_option("--key", o.key, "with --server: the client certificate's key (PEM)");
  app.add_option("--ca", o.ca, "with --server: the CA of the server's certificate (PEM)");
  app.require_subcommand(1);
  // The global options are taken after a subcommand too (`laasctl tenant show bank --json`, as
  // the tools administrators use every day): every subcommand, added after this, inherits
  // fallthrough and hands an option it does not know up to its parent.
  app.fallthrough();
}

int parse_and_run(CLI::App& app, const CommandTable& table, const GlobalOptions& o, int argc,
                  char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  try {
    return table.run(Context(o));
  } catch (const ClientError& e) {
    std::cerr << "laasctl: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "laasctl: " << e.what() << "\n";
    return kExitRefused;
  }
}

}  // namespace laas::ctl
