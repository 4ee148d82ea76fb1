// The option layer every laasctl subcommand shares (as infiniband-diags' tools share theirs):
// the global options, the one request path to the control socket with its error printing and
// exit codes, and the table that runs the one subcommand the command line named. Each
// subcommand is registered by one function (commands.h) and handled by one function.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "service/protocol.h"

namespace laas::ctl {

// The options before the subcommand.
struct GlobalOptions {
  std::string socket = laas::service::kDefaultSocketPath;
  bool json_output = false;
  int timeout_s = 60;
  // laas-api instead of the socket (--server https://HOST:PORT), with a client certificate.
  std::string server, cert, key, ca;
};

// What a subcommand's handler talks to the service through.
class Context {
 public:
  explicit Context(const GlobalOptions& o) : o_(o) {}

  const GlobalOptions& options() const { return o_; }
  bool json_output() const { return o_.json_output; }
  // How long the service may wait for OpenSM to re-route (the request's timeout_ms).
  int wait_ms() const;
  // Sends a request; returns its exit code, `result` holding the reply's result when it is 0.
  // When the reply says no, prints its error (the whole reply with --json) first.
  int request(const std::string& method, const nlohmann::json& params,
              nlohmann::json& result) const;
  // Prints `result` as JSON (what --json shows); returns 0.
  static int print_json(const nlohmann::json& result);

 private:
  // The request through laas-api (--server): the reply as the socket gives it.
  nlohmann::json call_server(const std::string& method, const nlohmann::json& params) const;

  const GlobalOptions& o_;
};

using Handler = std::function<int(const Context&)>;

// The subcommands registered so far and their handlers.
class CommandTable {
 public:
  // `handler` runs when `command` is the subcommand the command line named.
  void add(CLI::App* command, Handler handler);
  // The same for a handler of the options `args` holds (bound to the command's options).
  template <class Args>
  void add(CLI::App* command, std::shared_ptr<Args> args,
           int (*handler)(const Context&, const Args&)) {
    add(command, [args, handler](const Context& c) { return handler(c, *args); });
  }
  // Runs the parsed subcommand's handler: its exit code; the usage code when none was parsed.
  int run(const Context& context) const;

 private:
  std::vector<std::pair<CLI::App*, Handler>> commands_;
};

// A subcommand that only groups others (tenant, host, ...): one of them must follow it.
CLI::App* add_group(CLI::App& app, const std::string& name, const std::string& help);

// Adds the global options (LAAS_SOCKET from the environment) and the exit status footer.
void add_global_options(CLI::App& app, GlobalOptions& o);

// Parses the command line and runs the subcommand: laasctl's exit code. Errors of the service,
// the socket or the handler are printed with their exit codes here, once for every subcommand.
int parse_and_run(CLI::App& app, const CommandTable& table, const GlobalOptions& o, int argc,
                  char** argv);

}  // namespace laas::ctl
