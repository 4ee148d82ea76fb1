// laasctl: the administrator's command line for LaaS, a client of the control socket that the
// OpenSM plugin serves.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <map>

#include "export/formats.h"
#include "export/output.h"
#include "export/partitions.h"
#include "export/routing_chains.h"
#include "laasctl/client.h"
#include "laasctl/fabric_cmds.h"
#include "laasctl/render.h"
#include "laasctl/switch_audit.h"
#include "opensm_plugin/config.h"

using laas::ctl::ClientError;
using nlohmann::json;

namespace {

struct Options {
  std::string socket = laas::service::kDefaultSocketPath;
  bool json_output = false;
  int timeout_s = 60;
};

// Sends a request; prints the error and returns its exit code when the reply says no.
int request(const Options& o, const std::string& method, const json& params, json& result) {
  const json reply = laas::ctl::call(o.socket, method, params, o.timeout_s * 1000);
  if (reply.value("ok", false)) {
    result = reply.value("result", json());
    return laas::ctl::kExitOk;
  }
  const json err = reply.value("error", json::object());
  const std::string code = err.value("code", "internal");
  if (o.json_output)
    std::cout << reply.dump(2) << "\n";
  else
    std::cerr << "laasctl: " << err.value("message", "request failed") << " (" << code << ")\n";
  return laas::ctl::exit_code_for(code);
}

std::string host_range(const json& hosts) {
  std::string s;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (i == 6 && hosts.size() > 8) {
      s += " ... " + hosts.back().value("name", "?");
      break;
    }
    s += (i ? " " : "") + hosts[i].value("name", "?");
  }
  return s;
}

void print_tenant(const json& t) {
  std::cout << "tenant " << t.value("name", "?") << "  (" << t.value("requested", 0)
            << " hosts requested, " << t.value("state", "") << ")\n";
  if (t.contains("reason")) std::cout << "  reason: " << t["reason"].get<std::string>() << "\n";
  if (t.contains("shape")) std::cout << "  shape:  " << t["shape"].value("text", "") << "\n";
  if (t.contains("hosts")) {
    std::cout << "  hosts:\n";
    for (const auto& h : t["hosts"])
      std::cout << "    " << std::left << std::setw(14) << h.value("name", "?") << " guid "
                << h.value("guid", "?") << "  lid " << h.value("lid", 0) << "\n";
  }
  if (t.contains("links")) {
    std::cout << "  links:" << (t["links"].empty() ? " none (the tenant fits one leaf)" : "")
              << "\n";
    for (const auto& l : t["links"]) {
      // A link as state.json records it (a tenant not routed here) has no peer end.
      const json end = l.value("switch", json::object()), peer = l.value("peer", json::object());
      std::cout << "    " << std::left << std::setw(12) << end.value("name", end.value("guid", "?"))
                << " port " << std::setw(3) << end.value("port", 0) << " -> " << std::setw(12)
                << peer.value("name", "?") << " port " << peer.value("port", 0) << "\n";
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const char* env = std::getenv("LAAS_SOCKET")) o.socket = env;
  CLI::App app{
      "laasctl: manage LaaS tenants (dedicated hosts and links on an InfiniBand\n"
      "fat-tree) through the OpenSM plugin's control socket.",
      "laasctl"};
  app.footer(laas::ctl::exit_status_help());
  app.add_option("-s,--socket", o.socket, "control socket (env LAAS_SOCKET)")
      ->capture_default_str();
  app.add_flag("--json", o.json_output, "print the raw JSON reply");
  app.add_option("--timeout", o.timeout_s,
                 "seconds to wait for a reply; tenant add/remove ask the service to wait for "
                 "re-routing a second less")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  app.require_subcommand(1);

  auto* status = app.add_subcommand("status", "service, fabric and state summary");
  auto* metrics = app.add_subcommand(
      "metrics", "Prometheus text exposition: tenants, hosts, links, capacity, routing, changes");

  auto* tenant = app.add_subcommand("tenant", "add, remove, list and show tenants");
  tenant->require_subcommand(1);
  std::string name;
  int hosts = 0;
  bool dry_run = false, no_wait = false;
  auto* add = tenant->add_subcommand("add", "place a tenant on dedicated hosts and links");
  add->add_option("NAME", name, "tenant name: letters, digits, '_', '.', '-'")->required();
  // A tenant holds whole servers. On a fabric where every server has one port (one host per
  // server) --hosts counts those hosts, as it always did; where servers have several HCAs or a
  // dual-port HCA, it counts servers, every port of each included.
  auto* hosts_opt =
      add->add_option("--hosts", hosts,
                      "number of hosts, i.e. servers: a server with several ports (HCAs on "
                      "rail leaves, a dual-port HCA) counts once and comes with all its ports")
          ->check(CLI::Range(1, 1 << 20));
  auto* servers_opt = add->add_option("--servers", hosts, "the same as --hosts: whole servers")
                          ->check(CLI::Range(1, 1 << 20));
  hosts_opt->excludes(servers_opt);
  servers_opt->excludes(hosts_opt);
  add->add_flag("--dry-run", dry_run, "show the placement without making it");
  add->add_flag("--no-wait", no_wait, "reply once the state is saved, before OpenSM re-routes");
  std::vector<std::string> slurm_accounts, slurm_users;
  std::string openstack_project;
  add->add_option("--slurm-account", slurm_accounts,
                  "Slurm account whose jobs may use the tenant's reservation (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add->add_option("--slurm-user", slurm_users,
                  "Slurm user who may use the tenant's reservation (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add->add_option("--openstack-project", openstack_project,
                  "OpenStack project ID the tenant's host aggregate is isolated to");
  auto* remove = tenant->add_subcommand("remove", "release a tenant's hosts and links");
  remove->add_option("NAME", name, "tenant name")->required();
  remove->add_flag("--dry-run", dry_run, "check that the tenant exists, change nothing");
  remove->add_flag("--no-wait", no_wait, "reply once the state is saved");
  auto* list = tenant->add_subcommand("list", "list tenants");
  auto* show = tenant->add_subcommand("show", "hosts (name, GUID, LID) and links of a tenant");
  show->add_option("NAME", name, "tenant name")->required();

  auto* host = app.add_subcommand(
      "host", "host states: free, allocated, drained, draining, down, management, quarantined");
  host->require_subcommand(1);
  std::vector<std::string> host_names;
  std::string host_state, drain_reason;
  auto* host_list = host->add_subcommand("list", "every host with its state, tenant and drain");
  host_list->add_option("--state", host_state, "only hosts in this state")
      ->check(CLI::IsMember(
          {"free", "allocated", "drained", "draining", "down", "management", "quarantined"}));
  auto* host_show = host->add_subcommand("show", "one host (or every port of a server)");
  host_show->add_option("HOST", name, "host name, port GUID or server name")->required();
  auto* host_drain = host->add_subcommand(
      "drain",
      "take hosts out of service: a free host is never placed again until resumed; a tenant's "
      "host leaves service when its tenant is removed");
  host_drain->add_option("HOST", host_names, "host names, port GUIDs or server names")->required();
  host_drain->add_option("--reason", drain_reason, "why (shown by host list and in the log)")
      ->required();
  auto* host_resume = host->add_subcommand(
      "resume", "return drained hosts to service (after the resume_check of laas.yaml, if any)");
  host_resume->add_option("HOST", host_names, "host names, port GUIDs or server names")->required();
  auto* host_accept = host->add_subcommand(
      "accept",
      "record the port GUID now in a tenant's slot as the tenant's host (a replaced server): "
      "until then it is quarantined, with no routes and no P_Key");
  host_accept
      ->add_option("HOST", host_names,
                   "host names, port GUIDs (seen or recorded), server names or LEAF:PORT slots")
      ->required();
  bool accept_dry_run = false, accept_no_wait = false;
  host_accept->add_flag("--dry-run", accept_dry_run, "say what would be accepted, change nothing");
  host_accept->add_flag("--no-wait", accept_no_wait, "reply once the state is saved");

  laas::ctl::FabricCommands fabric;
  laas::ctl::add_fabric_commands(app, fabric);

  auto* topology = app.add_subcommand("topology", "the fabric as LaaS sees it");
  topology->require_subcommand(1);
  bool color = isatty(1);
  auto* topo_show = topology->add_subcommand("show", "leaf x up-link allocation map");
  topo_show->add_flag("--color,!--no-color", color, "colour tenants");
  bool svg = false;
  topo_show->add_flag("--svg", svg, "the map as an SVG document (tenants in colours)");

  auto* audit = app.add_subcommand("audit", "trace the live forwarding tables, prove isolation");
  bool from_switches = false;
  laas::ctl::SwitchAuditOptions switch_audit;
  audit->add_flag("--from-switches", from_switches,
                  "read the tables back from the switches (ibnetdiscover, dump_fts from this "
                  "host) and audit them with laas-audit, instead of OpenSM's copy: a table "
                  "changed behind OpenSM's back is seen");
  audit->add_option("--ca", switch_audit.ca, "--from-switches: the HCA to read through (-C)");
  audit->add_option("--ca-port", switch_audit.ca_port, "--from-switches: its port (-P)")
      ->check(CLI::Range(1, 254));
  audit->add_flag("--keep-dumps", switch_audit.keep,
                  "--from-switches: keep the tables read back even when the audit is clean");

  auto* exporter = app.add_subcommand("export", "files for the rest of the cluster");
  std::string format, output, only_tenant;
  bool removal = false;
  exporter->add_option("FORMAT", format, laas::exports::formats_text(true))
      ->required()
      ->check(CLI::IsMember(laas::exports::format_names()));
  exporter->add_option("--tenant", only_tenant, "only this tenant");
  exporter->add_flag("--remove", removal, "slurm, openstack: the commands that undo a tenant");
  bool magnetic = false, slurm_partitions = false;
  exporter->add_flag("--magnetic", magnetic,
                     "slurm: Flags=MAGNETIC, eligible jobs land in the reservation without "
                     "--reservation");
  exporter->add_flag("--partitions", slurm_partitions,
                     "slurm: also a Slurm partition per tenant, on its hosts");
  exporter->add_option("-o,--output", output,
                       "write to FILE (a new file, renamed over it; a symbolic link is "
                       "refused) instead of standard output; routing-chains: into directory DIR");

  auto* validate = app.add_subcommand(
      "validate", "offline: check a partitions.conf the way OpenSM 3.3.23 reads it");
  std::string validate_file;
  validate->add_option("FILE", validate_file, "partitions.conf to check")->required();

  auto* sm = app.add_subcommand(
      "sm",
      "subnet managers: only those laas.yaml lists or an administrator accepted are management");
  sm->require_subcommand(1);
  auto* sm_list = sm->add_subcommand("list", "every SM seen and every trusted SM, with its state");
  auto* sm_accept = sm->add_subcommand(
      "accept", "trust the SM on port GUID: its host becomes management (recorded in state.json)");
  auto* sm_forget = sm->add_subcommand("forget", "stop trusting an SM accepted before");
  std::string sm_guid;
  sm_accept->add_option("GUID", sm_guid, "the SM's port GUID (or a switch's node GUID)")
      ->required();
  sm_forget->add_option("GUID", sm_guid, "the SM's port GUID")->required();

  auto* config = app.add_subcommand("config", "offline: laas.yaml");
  config->require_subcommand(1);
  auto* config_check = config->add_subcommand(
      "check", "check laas.yaml as the plugin reads it: every problem with its line");
  std::string config_file = "/etc/laas/laas.yaml";
  config_check->add_option("FILE", config_file, "laas.yaml to check")->capture_default_str();

  auto* raw = app.add_subcommand(
      "raw", "debugging: send standard input to the socket verbatim, print the replies");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return laas::ctl::kExitUsage;
  }

  try {
    json result;
    int rc = 0;
    rc = laas::ctl::run_fabric_commands(
        fabric,
        [&](const std::string& method, const json& params, json& out) {
          return request(o, method, params, out);
        },
        o.json_output, laas::ctl::server_wait_ms(o.timeout_s * 1000));
    if (rc >= 0) return rc;
    rc = 0;
    if (validate->parsed()) {
      // No service needed: the same validator the plugin runs before writing the file.
      std::ifstream in(validate_file);
      if (!in) {
        std::cerr << "laasctl: cannot read " << validate_file << "\n";
        return laas::ctl::kExitRefused;
      }
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      const auto check = laas::exports::validate_partitions(text);
      std::cerr << check.report(validate_file);
      if (!check.ok()) return laas::ctl::kExitRefused;
      std::cout << validate_file << ": " << check.partitions.size()
                << " partition statements, no errors\n";
      return 0;
    }
    if (config_check->parsed()) {
      // No service needed: the plugin's own reader. Any problem makes the plugin route closed
      // at its next start, so say so before the restart.
      const auto checked = laas::plugin::check_config(config_file);
      for (const auto& problem : checked.problems) std::cerr << problem << "\n";
      if (!checked.problems.empty()) {
        std::cerr << "laasctl: " << checked.problems.size()
                  << " problem(s): with this file the plugin routes closed (the tenants last "
                     "routed, nothing rewritten, changes refused) until it is fixed\n";
        return laas::ctl::kExitRefused;
      }
      std::cout << config_file << ": no problems (state_dir " << checked.state_dir << ", placer "
                << checked.placer << ", free_pool " << (checked.free_pool_open ? "open" : "closed")
                << ", " << checked.subnet_managers.size() << " subnet manager(s), "
                << checked.management.size() << " management port(s))\n";
      return 0;
    }
    if (sm_list->parsed()) {
      if ((rc = request(o, "sm.list", json::object(), result))) return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
      for (const auto& s : result)
        std::cout << std::left << std::setw(20) << s.value("guid", "?") << std::setw(12)
                  << s.value("state", "?") << std::setw(6)
                  << (s.value("seen", false) ? "seen" : "-") << s.value("name", "") << "\n";
      return 0;
    }
    if (sm_accept->parsed() || sm_forget->parsed()) {
      const std::string method = sm_accept->parsed() ? "sm.accept" : "sm.forget";
      const json params = {{"guid", sm_guid},
                           {"timeout_ms", laas::ctl::server_wait_ms(o.timeout_s * 1000)}};
      if ((rc = request(o, method, params, result))) return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
      std::cout << (sm_accept->parsed() ? "accepted " : "forgot ") << result.value("guid", "")
                << " (now " << result.value("state", "") << ")\n";
      if (result.contains("routed") && !result["routed"].get<bool>())
        std::cerr << "laasctl: saved, but OpenSM has not re-routed yet\n";
      return 0;
    }
    if (status->parsed()) {
      if ((rc = request(o, "status", json::object(), result))) return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
      if (result["topology"].is_null())
        std::cout << "fabric:     not a recognized fat-tree: " << result.value("topology_error", "")
                  << "\n";
      else
        std::cout << "fabric:     " << result["topology"].get<std::string>() << ", "
                  << result.value("hosts", 0) << " hosts, " << result.value("free_hosts", 0)
                  << " free, " << result.value("faulty_links", 0) << " faulty links\n";
      if (result.contains("quarantined_hosts") && !result["quarantined_hosts"].empty()) {
        std::cout << "quarantined: " << result["quarantined_hosts"].size()
                  << " host(s) in tenants' slots with another port GUID than recorded (no routes, "
                     "no P_Key; laasctl host accept):\n";
        for (const auto& q : result["quarantined_hosts"])
          std::cout << "            tenant " << q.value("tenant", "") << ", " << q.value("leaf", "")
                    << " port " << q.value("port", 0) << ": " << q["seen"].value("guid", "") << " '"
                    << q["seen"].value("name", "") << "', recorded "
                    << q["recorded"].value("guid", "") << " '" << q["recorded"].value("name", "")
                    << "'\n";
      }
      if (result.contains("down_hosts"))
        std::cout << "down:       " << result.value("down_hosts", 0) << " hosts, "
                  << result.value("down_links", 0) << " links, " << result.value("down_switches", 0)
                  << " switches (laasctl topology show lists them)\n";
      if (result.contains("maintenance")) {
        const json& m = result["maintenance"];
        const int links = m["links"].value("drained", 0) + m["links"].value("draining", 0);
        const int switches = m["switches"].value("drained", 0) + m["switches"].value("draining", 0);
        if (links || switches)
          std::cout << "maintenance: " << m["links"].value("drained", 0) << " link(s) drained, "
                    << m["links"].value("draining", 0) << " draining; "
                    << m["switches"].value("drained", 0) << " switch(es) drained, "
                    << m["switches"].value("draining", 0)
                    << " draining (laasctl link list, laasctl switch list)\n";
      }
      if (result.contains("sm")) {
        // The SM's role: only the master changes tenants.
        const json& sm = result["sm"];
        auto who = [](const json& id) {
          if (!id.is_object()) return std::string("none known");
          std::string out = id.value("guid", "?");
          if (!id.value("name", "").empty()) out += " '" + id.value("name", "") + "'";
          if (id.value("lid", 0)) out += " LID " + std::to_string(id.value("lid", 0));
          return out;
        };
        std::cout << "sm:         " << sm.value("role", "unknown") << ", this SM "
                  << who(sm["self"]);
        if (sm.value("role", "") != "master") std::cout << "; master " << who(sm["master"]);
        std::cout << "\n            "
                  << (sm.value("holds_state", false)
                          ? "holds the tenant state (term " +
                                std::to_string(result.value("term", 0)) + "): changes are made here"
                          : "reads the shared tenant state (term " +
                                std::to_string(result.value("term", 0)) + ", taken by " +
                                (sm.value("state_master", "").empty()
                                     ? std::string("no SM yet")
                                     : sm.value("state_master", "")) +
                                "): changes are refused here")
                  << "\n";
      }
      std::cout << "tenants:    " << result.value("tenants", 0)
                << (result.contains("routed_generation") ? " routed" : " recorded");
      if (result.value("tenants_not_placed", 0) > 0)
        std::cout << ", " << result["tenants_not_placed"] << " NOT placed (laasctl tenant list)";
      std::cout << "\nstate:      " << result.value("state_file", "") << ", generation "
                << result.value("generation", 0);
      if (result.contains("routed_generation"))
        std::cout << " (routed " << result.value("routed_generation", 0) << ")";
      std::cout << "\n";
      if (result.contains("blocked"))
        std::cout << "BLOCKED:    " << result["blocked"].get<std::string>() << "\n";
      if (result.contains("config_error"))
        std::cout << "CONFIG:     laas.yaml is invalid: "
                  << result["config_error"].get<std::string>() << "\n";
      if (result.contains("fail_closed"))
        std::cout << "FAIL CLOSED: " << result["fail_closed"].get<std::string>() << "\n";
      if (result.contains("state_dir_not_answering"))
        std::cout << "STATE DIRECTORY: " << result["state_dir_not_answering"].get<std::string>()
                  << "; routing from the last state it gave, changes refused\n";
      if (result.contains("free_pool"))
        std::cout << "free pool:  " << result["free_pool"].get<std::string>()
                  << (result["free_pool"] == "open"
                          ? " (hosts without a tenant reach each other; close it with free_pool: "
                            "closed once tenants cover the running work)"
                          : " (hosts without a tenant reach management only)")
                  << "\n";
      if (result.value("unaccepted_sms", 0) > 0)
        std::cout << "WARNING:    " << result["unaccepted_sms"]
                  << " subnet manager(s) nobody trusts are on the fabric (laasctl sm list)\n";
      if (result.contains("duplicate_host_names")) {
        std::cout << "WARNING:    hosts share node descriptions (placement by these names is "
                     "refused; use GUIDs):\n";
        for (const auto& d : result["duplicate_host_names"]) {
          std::cout << "            " << d.value("name", "?") << ":";
          for (const auto& g : d["guids"]) std::cout << " " << g.get<std::string>();
          std::cout << "\n";
        }
      }
      return 0;
    }
    if (add->parsed()) {
      if (hosts == 0) {
        std::cerr << "laasctl: tenant add needs --hosts N or --servers N\n";
        return laas::ctl::kExitUsage;
      }
      json params = {{"name", name},
                     {"hosts", hosts},
                     {"dry_run", dry_run},
                     {"wait", !no_wait},
                     {"timeout_ms", laas::ctl::server_wait_ms(o.timeout_s * 1000)}};
      if (!slurm_accounts.empty()) params["slurm_accounts"] = slurm_accounts;
      if (!slurm_users.empty()) params["slurm_users"] = slurm_users;
      if (!openstack_project.empty()) params["openstack_project"] = openstack_project;
      if ((rc = request(o, "tenant.add", params, result))) return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
      std::cout << (dry_run ? "would place" : "placed") << " tenant " << name << ": ";
      if (result.contains("servers")) std::cout << result["servers"].size() << " servers, ";
      std::cout << result["hosts"].size() << " hosts (" << host_range(result["hosts"]) << "), "
                << result["links"].size() << " dedicated links, shape "
                << result["shape"].value("text", "") << "\n";
      if (result.contains("routed"))
        std::cout << (result["routed"].get<bool>()
                          ? "OpenSM has uploaded the new forwarding tables\n"
                          : "state saved; OpenSM has not re-routed yet (timed out waiting)\n");
      return 0;
    }
    if (remove->parsed()) {
      json params = {{"name", name},
                     {"dry_run", dry_run},
                     {"wait", !no_wait},
                     {"timeout_ms", laas::ctl::server_wait_ms(o.timeout_s * 1000)}};
      if ((rc = request(o, "tenant.remove", params, result))) return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
      std::cout << (dry_run ? "would remove" : "removed") << " tenant " << name << "\n";
      return 0;
    }
    if (list->parsed()) {
      if ((rc = request(o, "tenant.list", json::object(), result))) return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
      std::cout << std::left << std::setw(20) << "NAME" << std::setw(8) << "HOSTS" << std::setw(8)
                << "LINKS" << std::setw(40) << "SHAPE"
                << "STATE\n";
      for (const auto& t : result)
        std::cout << std::left << std::setw(20) << t.value("name", "") << std::setw(8)
                  << t.value("hosts", 0) << std::setw(8) << t.value("links", 0) << std::setw(40)
                  << t.value("shape", "-") << t.value("state", "")
                  << (t.contains("reason") ? ": " + t["reason"].get<std::string>() : "") << "\n";
      return 0;
    }
    if (show->parsed()) {
      if ((rc = request(o, "tenant.get", {{"name", name}}, result))) return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
      print_tenant(result);
      return 0;
    }
    if (metrics->parsed()) {
      if ((rc = request(o, "metrics", json::object(), result))) return rc;
      std::cout << result.value("text", "");
      return 0;
    }
    if (host_list->parsed()) {
      json params = json::object();
      if (!host_state.empty()) params["state"] = host_state;
      if ((rc = request(o, "host.list", params, result))) return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
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
    if (host_show->parsed()) {
      if ((rc = request(o, "host.get", {{"name", name}}, result))) return rc;
      std::cout << result.dump(2) << "\n";
      return 0;
    }
    if (host_drain->parsed()) {
      if ((rc =
               request(o, "host.drain", {{"hosts", host_names}, {"reason", drain_reason}}, result)))
        return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
      for (const auto& h : result["hosts"])
        std::cout << h.value("name", "") << ": " << h.value("state", "")
                  << (h.value("state", "") == "draining"
                          ? " (held by tenant " + h.value("tenant", "") +
                                "; out of service when it is removed)"
                          : "")
                  << "\n";
      return 0;
    }
    if (host_resume->parsed()) {
      if ((rc = request(o, "host.resume", {{"hosts", host_names}}, result))) return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
      std::cout << "resumed:";
      for (const auto& n : result["resumed"]) std::cout << " " << n.get<std::string>();
      std::cout << "\n";
      return 0;
    }
    if (host_accept->parsed()) {
      json params = {{"hosts", host_names}};
      if (accept_dry_run) params["dry_run"] = true;
      if (accept_no_wait)
        params["wait"] = false;
      else
        params["timeout_ms"] = laas::ctl::server_wait_ms(o.timeout_s * 1000);
      if ((rc = request(o, "host.accept", params, result))) return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
      for (const auto& a : result["accepted"])
        std::cout << (accept_dry_run ? "would accept " : "accepted ") << a.value("guid", "") << " '"
                  << a.value("name", "") << "' as tenant " << a.value("tenant", "") << "'s host on "
                  << a.value("leaf", "") << " port " << a.value("port", 0) << " (was "
                  << a["was"].value("guid", "") << " '" << a["was"].value("name", "") << "')\n";
      if (result.contains("routed") && !result["routed"].get<bool>())
        std::cerr << "laasctl: saved, but OpenSM has not re-routed yet\n";
      return 0;
    }
    if (topo_show->parsed()) {
      if ((rc = request(o, "topology", json::object(), result))) return rc;
      if (o.json_output) return std::cout << result.dump(2) << "\n", 0;
      const auto map = laas::ctl::map_from_json(result);
      std::cout << (svg ? laas::ctl::render_allocation_svg(map)
                        : laas::ctl::render_allocation_map(map, color));
      return 0;
    }
    if (audit->parsed() && from_switches)
      return laas::ctl::audit_from_switches(
          [&](json& status) { return request(o, "status", json::object(), status); }, switch_audit);
    if (audit->parsed()) {
      if ((rc = request(o, "audit", json::object(), result))) return rc;
      std::cout << result.dump(2) << "\n";
      const auto violations = result.value("violations", json(0));
      return violations.is_number() && violations.get<long>() > 0 ? laas::ctl::kExitRefused : 0;
    }
    if (raw->parsed()) {
      std::string input((std::istreambuf_iterator<char>(std::cin)),
                        std::istreambuf_iterator<char>());
      std::cout << laas::ctl::call_raw(o.socket, input, o.timeout_s * 1000);
      return 0;
    }
    if (exporter->parsed()) {
      json params = {{"format", format}};
      if (!only_tenant.empty()) params["tenant"] = only_tenant;
      if (removal) params["remove"] = true;
      if (magnetic) params["magnetic"] = true;
      if (slurm_partitions) params["slurm_partitions"] = true;
      if ((rc = request(o, "export", params, result))) return rc;
      const std::string body = result.value("content", "");
      if (output.empty()) {
        std::cout << body << std::flush;
        if (!std::cout) {
          std::cerr << "laasctl: cannot write the standard output\n";
          return laas::ctl::kExitRefused;
        }
      } else if (format == "routing-chains") {
        // Three policy files and the opensm.conf lines naming them, in a directory.
        std::map<std::string, std::string> files;
        const json listed = result.value("files", json::object());
        for (const auto& [file, text] : listed.items()) files[file] = text.get<std::string>();
        char* abs = realpath(output.c_str(), nullptr);
        std::string dir = abs ? abs : output;
        free(abs);
        if (!abs) {
          laas::exports::write_output_dir(output, {});
          abs = realpath(output.c_str(), nullptr);
          dir = abs ? abs : output;
          free(abs);
        }
        files[laas::exports::kOpenSmSnippetFile] = laas::exports::routing_chains_opensm_conf(dir);
        laas::exports::write_output_dir(output, files);
        std::cerr << "laasctl: wrote ";
        for (const auto& f : files) std::cerr << f.first << " ";
        std::cerr << "into " << dir << "\n";
      } else {
        laas::exports::write_output_file(output, body);
      }
      return 0;
    }
  } catch (const ClientError& e) {
    std::cerr << "laasctl: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "laasctl: " << e.what() << "\n";
    return laas::ctl::kExitRefused;
  }
  return laas::ctl::kExitUsage;
}
