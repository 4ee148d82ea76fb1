#include "laasctl/fabric_cmds.h"

#include <iomanip>
#include <iostream>

namespace laas::ctl {

using nlohmann::json;

void add_fabric_commands(CLI::App& app, FabricCommands& c) {
  auto* link = app.add_subcommand(
      "link",
      "switch-to-switch links: list, drain for maintenance (tenants are moved off first), resume");
  link->require_subcommand(1);
  c.link_list = link->add_subcommand("list", "every link of the tree with its state and tenant");
  c.link_list->add_option("--state", c.state, "only links in this state")
      ->check(CLI::IsMember({"free", "allocated", "management", "drained", "draining", "down",
                             "isolated", "uncabled"}));
  c.link_drain = link->add_subcommand(
      "drain",
      "take a link out of service: tenants routing over it are moved to a free column and the "
      "routing avoids it; 'drained' when it may be pulled, 'draining' while a tenant that "
      "cannot be moved still uses it");
  c.link_resume = link->add_subcommand(
      "resume", "return a drained link to service: tenants moved off it return to it");
  for (auto* cmd : {c.link_drain, c.link_resume}) {
    cmd->add_option("LINK", c.target,
                    "SWITCH:PORT, either end: the switch by node GUID or recorded name, its "
                    "physical port")
        ->required();
    cmd->add_flag("--no-wait", c.no_wait, "reply once the state is saved, before OpenSM re-routes");
  }
  c.link_drain->add_option("--reason", c.reason, "why (shown by link list and in the log)")
      ->required();

  auto* sw = app.add_subcommand("switch",
                                "switches: list, drain for maintenance (every link of it), resume");
  sw->require_subcommand(1);
  c.switch_list = sw->add_subcommand("list", "every switch of the tree with its state");
  c.switch_list->add_option("--state", c.state, "only switches in this state")
      ->check(CLI::IsMember({"in_service", "drained", "draining", "down"}));
  c.switch_drain = sw->add_subcommand(
      "drain",
      "take a switch out of service: every link of it is drained, a leaf's hosts are placed no "
      "more; 'drained' when no tenant is left on it");
  c.switch_resume = sw->add_subcommand("resume", "return a drained switch to service");
  for (auto* cmd : {c.switch_drain, c.switch_resume}) {
    cmd->add_option("SWITCH", c.target, "node GUID (or the name the recorded layout gives it)")
        ->required();
    cmd->add_flag("--no-wait", c.no_wait, "reply once the state is saved, before OpenSM re-routes");
  }
  c.switch_drain->add_option("--reason", c.reason, "why (shown by switch list and in the log)")
      ->required();
}

namespace {

std::string drain_note(const json& j) {
  std::string note = j.value("tenant", "");
  if (j.value("idle", false)) note += " (held idle)";
  if (j.contains("tenants"))
    for (const auto& t : j["tenants"]) note += (note.empty() ? "" : ",") + t.get<std::string>();
  if (j.contains("drain")) {
    const auto& d = j["drain"];
    note += (note.empty() ? "" : "; ") + d.value("reason", "") + " (" + d.value("by", "") + ", " +
            d.value("at", "") + ")";
    if (d.contains("switch")) note += " with switch " + d.value("switch", "");
  }
  return note;
}

void print_link(const json& l) {
  const auto end = [](const json& e) {
    return e.value("name", "?") + " port " + std::to_string(e.value("port", 0));
  };
  std::cout << std::left << std::setw(36) << end(l["switch"]) << std::setw(36) << end(l["peer"])
            << std::setw(11) << l.value("state", "") << drain_note(l) << "\n";
}

void print_switch(const json& s) {
  std::cout << std::left << std::setw(24) << s.value("name", "") << std::setw(20)
            << s.value("guid", "") << std::setw(7) << s.value("level", 0) << std::setw(12)
            << s.value("state", "") << drain_note(s) << "\n";
}

const char* kWhatNext =
    "draining: a tenant still routes over it (no free column keeps its guarantees); it is "
    "drained when the tenant leaves or a column frees -- do not pull it yet";

}  // namespace

int run_fabric_commands(const FabricCommands& c, const Requester& request, bool json_output,
                        int wait_ms) {
  json result;
  int rc = 0;
  if (c.link_list->parsed() || c.switch_list->parsed()) {
    const bool links = c.link_list->parsed();
    json params = json::object();
    if (!c.state.empty()) params["state"] = c.state;
    if ((rc = request(links ? "link.list" : "switch.list", params, result))) return rc;
    if (json_output) return std::cout << result.dump(2) << "\n", 0;
    if (links)
      std::cout << std::left << std::setw(36) << "LOWER END" << std::setw(36) << "UPPER END"
                << std::setw(11) << "STATE"
                << "TENANT / DRAIN\n";
    else
      std::cout << std::left << std::setw(24) << "SWITCH" << std::setw(20) << "GUID" << std::setw(7)
                << "LEVEL" << std::setw(12) << "STATE"
                << "TENANTS / DRAIN\n";
    for (const auto& item : result) links ? print_link(item) : print_switch(item);
    return 0;
  }
  const bool link = c.link_drain->parsed() || c.link_resume->parsed();
  const bool drain = c.link_drain->parsed() || c.switch_drain->parsed();
  if (!link && !c.switch_drain->parsed() && !c.switch_resume->parsed()) return -1;
  const char* noun = link ? "link" : "switch";
  json params = {{noun, c.target}, {"wait", !c.no_wait}, {"timeout_ms", wait_ms}};
  if (drain) params["reason"] = c.reason;
  if ((rc = request(std::string(noun) + (drain ? ".drain" : ".resume"), params, result))) return rc;
  if (json_output) return std::cout << result.dump(2) << "\n", 0;
  const json& item = result[noun];
  const std::string state = item.value("state", "");
  std::cout << noun << " " << (link ? item.value("name", "") : item.value("name", "")) << ": "
            << state;
  if (drain && result["drained"].empty()) std::cout << " (drained before; the first reason stands)";
  std::cout << "\n";
  if (state == "draining") std::cout << kWhatNext << "\n";
  if (result.contains("routed") && !result["routed"].get<bool>())
    std::cerr << "laasctl: saved, but OpenSM has not re-routed yet: wait before pulling it\n";
  return 0;
}

}  // namespace laas::ctl
