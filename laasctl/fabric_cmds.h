// laasctl link and laasctl switch: maintenance of the fabric's links and switches (list,
// drain, resume), kept apart from the host and tenant commands of laasctl_main.cc.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace laas::ctl {

struct FabricCommands {
  CLI::App* link_list = nullptr;
  CLI::App* link_drain = nullptr;
  CLI::App* link_resume = nullptr;
  CLI::App* switch_list = nullptr;
  CLI::App* switch_drain = nullptr;
  CLI::App* switch_resume = nullptr;
  std::string target;  // SWITCH:PORT or a switch
  std::string reason;
  std::string state;
  bool no_wait = false;
};

// Adds `link` and `switch` to the command line; the options land in `c`.
void add_fabric_commands(CLI::App& app, FabricCommands& c);

// Sends one request; returns its exit code, `result` holding the reply's result when it is 0.
using Requester =
    std::function<int(const std::string& method, const nlohmann::json& params, nlohmann::json&)>;

// Runs the parsed command, if one of them was: its exit code; -1 when none was parsed.
int run_fabric_commands(const FabricCommands& c, const Requester& request, bool json_output,
                        int wait_ms);

}  // namespace laas::ctl
