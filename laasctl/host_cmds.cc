// laasctl host list, show, drain, resume and accept.
#include <iomanip>
#include <iostream>
#include <memory>

#include "laasctl/commands.h"

namespace laas::ctl {

using nlohmann::json;

namespace {

struct HostArgs {
  std::string name;                     // host show
  std::vector<std::string> host_names;  // drain, resume, accept
  std::string state;                    // list --state
  std::string drain_reason;
  bool dry_run = false;  // accept
  bool no_wait = false;  // accept
};

int host_list(const Context& c, const HostArgs& a) {
  json params = json::object();
  if (!a.state.empty()) params["state"] = a.state;
  json result;
  if (const int rc = c.request("host.list", params, result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  std::cout << std::left << std::setw(24) << "HOST" << std::setw(20) << "GUID" << std::setw(6)
            << "LID" << std::setw(12) << "STATE"
            << "TENANT / DRAIN\n";
  for (const auto& h : result) {
    std::string note = h.value("tenant", "");
    if (h.contains("drain"))
      note += (note.empty() ? "" : "; ") + h["drain"].value("reason", "") + " (" +
              h["drain"].value("by", "") + ", " + h["drain"].value("at", "") + ")";
    if (h.contains("recorded"))
      note += (note.empty() ? "" : "; ") + std::string("not the recorded ") +
              h["recorded"].value("guid", "") + " '" + h["recorded"].value("name", "") +
              "' (laasctl host accept)";
    std::cout << std::left << std::setw(24) << h.value("name", "") << std::setw(20)
              << h.value("guid", "") << std::setw(6) << h.value("lid", 0) << std::setw(12)
              << h.value("state", "") << note << "\n";
  }
  return 0;
}

int host_show(const Context& c, const HostArgs& a) {
  json result;
  if (const int rc = c.request("host.get", {{"name", a.name}}, result)) return rc;
  return Context::print_json(result);
}

int host_drain(const Context& c, const HostArgs& a) {
  json result;
  if (const int rc =
          c.request("host.drain", {{"hosts", a.host_names}, {"reason", a.drain_reason}}, result))
    return rc;
  if (c.json_output()) return Context::print_json(result);
  for (const auto& h : result["hosts"])
    std::cout << h.value("name", "") << ": " << h.value("state", "")
              << (h.value("state", "") == "draining" ? " (held by tenant " + h.value("tenant", "") +
                                                           "; out of service when it is removed)"
                                                     : "")
              << "\n";
  return 0;
}

int host_resume(const Context& c, const HostArgs& a) {
  json result;
  if (const int rc = c.request("host.resume", {{"hosts", a.host_names}}, result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  std::cout << "resumed:";
  for (const auto& n : result["resumed"]) std::cout << " " << n.get<std::string>();
  std::cout << "\n";
  return 0;
}

int host_accept(const Context& c, const HostArgs& a) {
  json params = {{"hosts", a.host_names}};
  if (a.dry_run) params["dry_run"] = true;
  if (a.no_wait)
    params["wait"] = false;
  else
    params["timeout_ms"] = c.wait_ms();
  json result;
  if (const int rc = c.request("host.accept", params, result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  for (const auto& h : result["accepted"])
    std::cout << (a.dry_run ? "would accept " : "accepted ") << h.value("guid", "") << " '"
              << h.value("name", "") << "' as tenant " << h.value("tenant", "") << "'s host on "
              << h.value("leaf", "") << " port " << h.value("port", 0) << " (was "
              << h["was"].value("guid", "") << " '" << h["was"].value("name", "") << "')\n";
  if (result.contains("routed") && !result["routed"].get<bool>())
    std::cerr << "laasctl: saved, but OpenSM has not re-routed yet\n";
  return 0;
}

}  // namespace

void add_host_commands(CLI::App& app, CommandTable& table) {
  auto a = std::make_shared<HostArgs>();
  auto* host = add_group(
      app, "host", "host states: free, allocated, drained, draining, down, management, unaccepted");

  auto* list = host->add_subcommand("list", "every host with its state, tenant and drain");
  // "quarantined" is the old name of "unaccepted", accepted for one release.
  list->add_option("--state", a->state,
                   "only hosts in this state (quarantined: the old name of unaccepted)")
      ->check(CLI::IsMember({"free", "allocated", "drained", "draining", "down", "management",
                             "unaccepted", "quarantined"}));
  table.add(list, a, host_list);

  auto* show = host->add_subcommand("show", "one host (or every port of a server)");
  show->add_option("HOST", a->name, "host name, port GUID or server name")->required();
  table.add(show, a, host_show);

  auto* drain = host->add_subcommand(
      "drain",
      "take hosts out of service: a free host is never placed again until resumed; a tenant's "
      "host leaves service when its tenant is removed");
  auto* resume = host->add_subcommand(
      "resume", "return drained hosts to service (after the resume_check of laas.yaml, if any)");
  for (auto* cmd : {drain, resume})
    cmd->add_option("HOST", a->host_names, "host names, port GUIDs or server names")->required();
  drain->add_option("--reason", a->drain_reason, "why (shown by host list and in the log)")
      ->required();
  table.add(drain, a, host_drain);
  table.add(resume, a, host_resume);

  auto* accept = host->add_subcommand(
      "accept",
      "record the port GUID now in a tenant's slot as the tenant's host (a replaced server): "
      "until then it is unaccepted, with no routes and no P_Key");
  accept
      ->add_option("HOST", a->host_names,
                   "host names, port GUIDs (seen or recorded), server names or LEAF:PORT slots")
      ->required();
  accept->add_flag("--dry-run", a->dry_run, "say what would be accepted, change nothing");
  accept->add_flag("--no-wait", a->no_wait, "reply once the state is saved");
  table.add(accept, a, host_accept);
}

}  // namespace laas::ctl
