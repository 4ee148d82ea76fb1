// laasctl status, metrics, sm and raw: the service itself.
#include <iomanip>
#include <iostream>
#include <iterator>
#include <memory>

#include "laasctl/client.h"
#include "laasctl/commands.h"

namespace laas::ctl {

using nlohmann::json;

namespace {

// status: the fabric, the unaccepted hosts, what is down and what is in maintenance.
void print_fabric(const json& s) {
  if (s["topology"].is_null())
    std::cout << "fabric:     not a recognized fat-tree: " << s.value("topology_error", "") << "\n";
  else
    std::cout << "fabric:     " << s["topology"].get<std::string>() << ", " << s.value("hosts", 0)
              << " hosts, " << s.value("free_hosts", 0) << " free, " << s.value("faulty_links", 0)
              << " faulty links\n";
  // A service of the release before names them "quarantined_hosts" only.
  const char* unaccepted =
      s.contains("unaccepted_hosts") ? "unaccepted_hosts" : "quarantined_hosts";
  if (s.contains(unaccepted) && !s[unaccepted].empty()) {
    // The line keeps its old label for the scripts that match it.
    std::cout << "quarantined: " << s[unaccepted].size()
              << " host(s) unaccepted: in tenants' slots with another port GUID than recorded "
                 "(no routes, no P_Key; laasctl host accept):\n";
    for (const auto& q : s[unaccepted])
      std::cout << "            tenant " << q.value("tenant", "") << ", " << q.value("leaf", "")
                << " port " << q.value("port", 0) << ": " << q["seen"].value("guid", "") << " '"
                << q["seen"].value("name", "") << "', recorded " << q["recorded"].value("guid", "")
                << " '" << q["recorded"].value("name", "") << "'\n";
  }
  if (s.contains("down_hosts"))
    std::cout << "down:       " << s.value("down_hosts", 0) << " hosts, "
              << s.value("down_links", 0) << " links, " << s.value("down_switches", 0)
              << " switches (laasctl topology show lists them)\n";
  if (s.contains("maintenance")) {
    const json& m = s["maintenance"];
    const int links = m["links"].value("drained", 0) + m["links"].value("draining", 0);
    const int switches = m["switches"].value("drained", 0) + m["switches"].value("draining", 0);
    if (links || switches)
      std::cout << "maintenance: " << m["links"].value("drained", 0) << " link(s) drained, "
                << m["links"].value("draining", 0) << " draining; "
                << m["switches"].value("drained", 0) << " switch(es) drained, "
                << m["switches"].value("draining", 0)
                << " draining (laasctl link list, laasctl switch list)\n";
  }
}

// status: the SM's role: only the master changes tenants.
void print_sm_role(const json& s) {
  // The SM's role: only the master changes tenants.
  const json& sm = s["sm"];
  auto who = [](const json& id) {
    if (!id.is_object()) return std::string("none known");
    std::string out = id.value("guid", "?");
    if (!id.value("name", "").empty()) out += " '" + id.value("name", "") + "'";
    if (id.value("lid", 0)) out += " LID " + std::to_string(id.value("lid", 0));
    return out;
  };
  std::cout << "sm:         " << sm.value("role", "unknown") << ", this SM " << who(sm["self"]);
  if (sm.value("role", "") != "master") std::cout << "; master " << who(sm["master"]);
  if (!sm.value("master_trusted", true))
    std::cout << (sm["master"].is_object() ? " -- NOT TRUSTED" : " -- no trusted master");
  std::cout << "\n            "
            << (sm.value("holds_state", false)
                    ? "holds the tenant state (term " + std::to_string(s.value("term", 0)) +
                          "): changes are made here"
                    : "reads the shared tenant state (term " + std::to_string(s.value("term", 0)) +
                          ", taken by " +
                          (sm.value("state_master", "").empty() ? std::string("no SM yet")
                                                                : sm.value("state_master", "")) +
                          "): changes are refused here")
            << "\n";
}

// status: the tenants, the state file and what keeps changes from being made.
void print_state(const json& s) {
  std::cout << "tenants:    " << s.value("tenants", 0)
            << (s.contains("routed_generation") ? " routed" : " recorded");
  if (s.value("tenants_not_placed", 0) > 0)
    std::cout << ", " << s["tenants_not_placed"] << " NOT placed (laasctl tenant list)";
  std::cout << "\nstate:      " << s.value("state_file", "") << ", generation "
            << s.value("generation", 0);
  if (s.contains("routed_generation"))
    std::cout << " (routed " << s.value("routed_generation", 0) << ")";
  std::cout << "\n";
  if (s.contains("blocked")) std::cout << "BLOCKED:    " << s["blocked"].get<std::string>() << "\n";
  if (s.contains("config_error"))
    std::cout << "CONFIG:     laas.yaml is invalid: " << s["config_error"].get<std::string>()
              << "\n";
  if (s.contains("fail_closed"))
    std::cout << "FAIL CLOSED: " << s["fail_closed"].get<std::string>() << "\n";
  if (s.contains("state_dir_not_answering"))
    std::cout << "STATE DIRECTORY: " << s["state_dir_not_answering"].get<std::string>()
              << "; routing from the last state it gave, changes refused\n";
  if (s.contains("state_store_not_answering"))
    std::cout << "STATE STORE: " << s["state_store_not_answering"].get<std::string>()
              << "; routing from the last state it gave, changes refused (busy) until a quorum "
                 "answers\n";
  if (s.contains("tables_file_error"))
    std::cout << "TABLES FILE: " << s["tables_file_error"].get<std::string>() << " ("
              << s.value("tables_file_write_failures", 0)
              << " failed write(s) in all; a start that fails closed would give the switches "
                 "older tables)\n";
  else if (s.value("tables_file_write_failures", 0) > 0)
    std::cout << "tables file: written; " << s["tables_file_write_failures"]
              << " failed write(s) since the start\n";
  if (s.contains("free_pool"))
    std::cout << "free pool:  " << s["free_pool"].get<std::string>()
              << (s["free_pool"] == "open"
                      ? " (hosts without a tenant reach each other; close it with free_pool: "
                        "closed once tenants cover the running work)"
                      : " (hosts without a tenant reach management only)")
              << "\n";
}

// status: what the administrator should look at.
// laas-sdn's own lines (status's "adapter" section): its role, and what it could not do.
void print_adapter(const json& s) {
  if (!s.contains("adapter") || !s["adapter"].is_object()) return;
  const json& a = s["adapter"];
  std::cout << "ADAPTER:    " << a.value("adapter", "?") << ", " << a.value("role", "") << "\n";
  if (a.contains("warning"))
    std::cout << "SHARED LEAVES: " << a["warning"].get<std::string>() << "\n";
  if (a.contains("error")) std::cout << "SDN RUN:    " << a["error"].get<std::string>() << "\n";
  if (a.contains("readback") && !a["readback"].value("applied", true))
    std::cout << "NOT APPLIED: " << a["readback"].value("blocks_differing", 0L) << " of "
              << a["readback"].value("blocks", 0L)
              << " LFT block(s) read back after the last reload differ from the lfts_file\n";
}

void print_warnings(const json& s) {
  print_adapter(s);
  if (s.value("unaccepted_sms", 0) > 0)
    std::cout << "WARNING:    " << s["unaccepted_sms"]
              << " subnet manager(s) nobody trusts are on the fabric (laasctl sm list)\n";
  if (s.contains("switch_check") && s["switch_check"].value("mismatches", 0) > 0) {
    const json& check = s["switch_check"];
    const json by_table = check.value("mismatches_by_table", json::object());
    const long lft = by_table.value("lft", check.value("mismatches", 0L));
    const long ports = check.value("mismatches", 0L) - lft;
    if (lft > 0)
      std::cout << "WARNING:    " << lft
                << " LFT block(s) read back from the switches differed from what this SM sent "
                   "and were sent again (laasctl audit names the switches)\n";
    if (ports > 0)
      std::cout << "WARNING:    " << ports << " port table(s) read back (PortInfo "
                << by_table.value("port_info", 0L) << ", SL2VL " << by_table.value("sl2vl", 0L)
                << ", P_Key " << by_table.value("pkey", 0L)
                << ") differed from what this SM set and were set again (laasctl audit names "
                   "the ports)\n";
  }
  if (s.contains("duplicate_host_names")) {
    std::cout << "WARNING:    hosts share node descriptions (placement by these names is "
                 "refused; use GUIDs):\n";
    for (const auto& d : s["duplicate_host_names"]) {
      std::cout << "            " << d.value("name", "?") << ":";
      for (const auto& g : d["guids"]) std::cout << " " << g.get<std::string>();
      std::cout << "\n";
    }
  }
}

// status: what undoes everything else comes first -- weak keys, a master nobody trusts.
void print_alarms(const json& s) {
  if (s.contains("weak_keys"))
    std::cout << "WEAK KEYS:  OpenSM runs with " << s["weak_keys"].get<std::string>()
              << ": a tenant's root can undo its isolation (docs/security.md)\n";
  if (!s.contains("sm") || s["sm"].value("master_trusted", true)) return;
  const json& m = s["sm"]["master"];
  if (m.is_object())
    std::cout << "UNTRUSTED MASTER: " << m.value("guid", "?") << " '" << m.value("name", "")
              << "' is master and nobody trusts it: it programs the switches (laasctl sm list)\n";
  else
    std::cout << "NO MASTER:  no master SM is known to this SM\n";
}

int status(const Context& c) {
  json result;
  if (const int rc = c.request("status", json::object(), result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  print_alarms(result);
  print_fabric(result);
  if (result.contains("sm")) print_sm_role(result);
  print_state(result);
  print_warnings(result);
  return 0;
}

int metrics(const Context& c) {
  json result;
  if (const int rc = c.request("metrics", json::object(), result)) return rc;
  std::cout << result.value("text", "");
  return 0;
}

// A routing run now: laas-sdn discovers the fabric again and rewrites what changed; the plugin
// asks OpenSM for a re-route.
int reroute(const Context& c) {
  json result;
  if (const int rc = c.request("reroute", json::object(), result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  std::cout << "re-route requested\n";
  return 0;
}

int sm_list(const Context& c) {
  json result;
  if (const int rc = c.request("sm.list", json::object(), result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  for (const auto& s : result)
    std::cout << std::left << std::setw(20) << s.value("guid", "?") << std::setw(12)
              << s.value("state", "?") << std::setw(12) << s.value("role", "unknown")
              << std::setw(6) << (s.value("seen", false) ? "seen" : "-") << s.value("name", "")
              << "\n";
  return 0;
}

// sm accept and sm forget.
int sm_trust(const Context& c, const std::string& guid, bool accept) {
  const json params = {{"guid", guid}, {"timeout_ms", c.wait_ms()}};
  json result;
  if (const int rc = c.request(accept ? "sm.accept" : "sm.forget", params, result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  std::cout << (accept ? "accepted " : "forgot ") << result.value("guid", "") << " (now "
            << result.value("state", "") << ")\n";
  if (result.contains("routed") && !result["routed"].get<bool>())
    std::cerr << "laasctl: saved, but OpenSM has not re-routed yet\n";
  return 0;
}

int raw(const Context& c) {
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  std::cout << call_raw(c.options().socket, input, c.options().timeout_s * 1000);
  return 0;
}

}  // namespace

void add_status_command(CLI::App& app, CommandTable& table) {
  table.add(app.add_subcommand("status", "service, fabric and state summary"), status);
}

void add_reroute_command(CLI::App& app, CommandTable& table) {
  table.add(app.add_subcommand("reroute",
                               "a routing run now (laas-sdn: discover the fabric again, rewrite "
                               "the files that changed, reload the SM)"),
            reroute);
}

void add_metrics_command(CLI::App& app, CommandTable& table) {
  table.add(app.add_subcommand("metrics",
                               "Prometheus text exposition: tenants, hosts, links, capacity, "
                               "routing, changes"),
            metrics);
}

void add_sm_commands(CLI::App& app, CommandTable& table) {
  auto* sm = add_group(
      app, "sm",
      "subnet managers: only those laas.yaml lists or an administrator accepted are management");
  table.add(sm->add_subcommand("list", "every SM seen and every trusted SM, with its state"),
            sm_list);
  auto guid = std::make_shared<std::string>();
  auto* accept = sm->add_subcommand(
      "accept", "trust the SM on port GUID: its host becomes management (recorded in state.json)");
  auto* forget = sm->add_subcommand("forget", "stop trusting an SM accepted before");
  accept->add_option("GUID", *guid, "the SM's port GUID (or a switch's node GUID)")->required();
  forget->add_option("GUID", *guid, "the SM's port GUID")->required();
  table.add(accept, [guid](const Context& c) { return sm_trust(c, *guid, true); });
  table.add(forget, [guid](const Context& c) { return sm_trust(c, *guid, false); });
}

void add_raw_command(CLI::App& app, CommandTable& table) {
  table.add(app.add_subcommand(
                "raw", "debugging: send standard input to the socket verbatim, print the replies"),
            raw);
}

}  // namespace laas::ctl
