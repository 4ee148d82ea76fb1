// laasctl link and laasctl switch: maintenance of the fabric's links and switches (list,
// drain, resume).
#include <iomanip>
#include <iostream>
#include <memory>

#include "laasctl/commands.h"

namespace laas::ctl {

using nlohmann::json;

namespace {

struct FabricArgs {
  std::string target;  // SWITCH:PORT or a switch
  std::string reason;
  std::string state;
  bool no_wait = false;
};

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

// link list and switch list.
int list_items(const Context& c, const FabricArgs& a, bool links) {
  json params = json::object();
  if (!a.state.empty()) params["state"] = a.state;
  json result;
  if (const int rc = c.request(links ? "link.list" : "switch.list", params, result)) return rc;
  if (c.json_output()) return Context::print_json(result);
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

// link drain/resume and switch drain/resume: `noun` is "link" or "switch".
int drain_or_resume(const Context& c, const FabricArgs& a, const std::string& noun, bool drain) {
  json params = {{noun, a.target}, {"wait", !a.no_wait}, {"timeout_ms", c.wait_ms()}};
  if (drain) params["reason"] = a.reason;
  json result;
  if (const int rc = c.request(noun + (drain ? ".drain" : ".resume"), params, result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  const json& item = result[noun];
  const std::string state = item.value("state", "");
  std::cout << noun << " " << item.value("name", "") << ": " << state;
  if (drain && result["drained"].empty()) std::cout << " (drained before; the first reason stands)";
  std::cout << "\n";
  if (state == "draining") std::cout << kWhatNext << "\n";
  if (result.contains("routed") && !result["routed"].get<bool>())
    std::cerr << "laasctl: saved, but OpenSM has not re-routed yet: wait before pulling it\n";
  return 0;
}

// The drain and resume subcommands of `parent`, on the `target` their positional names.
void add_drain_resume(CLI::App* parent, CommandTable& table, const std::shared_ptr<FabricArgs>& a,
                      const std::string& noun, const char* drain_help, const char* resume_help,
                      const char* target_name, const char* target_help) {
  auto* drain = parent->add_subcommand("drain", drain_help);
  auto* resume = parent->add_subcommand("resume", resume_help);
  for (auto* cmd : {drain, resume}) {
    cmd->add_option(target_name, a->target, target_help)->required();
    cmd->add_flag("--no-wait", a->no_wait,
                  "reply once the state is saved, before OpenSM re-routes");
  }
  drain->add_option("--reason", a->reason, "why (shown by " + noun + " list and in the log)")
      ->required();
  table.add(drain, [a, noun](const Context& c) { return drain_or_resume(c, *a, noun, true); });
  table.add(resume, [a, noun](const Context& c) { return drain_or_resume(c, *a, noun, false); });
}

}  // namespace

void add_link_commands(CLI::App& app, CommandTable& table) {
  auto a = std::make_shared<FabricArgs>();
  auto* link = add_group(
      app, "link",
      "switch-to-switch links: list, drain for maintenance (tenants are moved off first), resume");
  auto* list = link->add_subcommand("list", "every link of the tree with its state and tenant");
  list->add_option("--state", a->state, "only links in this state")
      ->check(CLI::IsMember({"free", "allocated", "management", "drained", "draining", "down",
                             "isolated", "uncabled"}));
  table.add(list, [a](const Context& c) { return list_items(c, *a, true); });
  add_drain_resume(link, table, a, "link",
                   "take a link out of service: tenants routing over it are moved to a free "
                   "column and the routing avoids it; 'drained' when it may be pulled, "
                   "'draining' while a tenant that cannot be moved still uses it",
                   "return a drained link to service: tenants moved off it return to it", "LINK",
                   "SWITCH:PORT, either end: the switch by node GUID or recorded name, its "
                   "physical port");
}

void add_switch_commands(CLI::App& app, CommandTable& table) {
  auto a = std::make_shared<FabricArgs>();
  auto* sw =
      add_group(app, "switch", "switches: list, drain for maintenance (every link of it), resume");
  auto* list = sw->add_subcommand("list", "every switch of the tree with its state");
  list->add_option("--state", a->state, "only switches in this state")
      ->check(CLI::IsMember({"in_service", "drained", "draining", "down"}));
  table.add(list, [a](const Context& c) { return list_items(c, *a, false); });
  add_drain_resume(sw, table, a, "switch",
                   "take a switch out of service: every link of it is drained, a leaf's hosts "
                   "are placed no more; 'drained' when no tenant is left on it",
                   "return a drained switch to service", "SWITCH",
                   "node GUID (or the name the recorded layout gives it)");
}

}  // namespace laas::ctl
