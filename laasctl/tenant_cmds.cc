// laasctl tenant add, remove, list and show.
#include <iomanip>
#include <iostream>
#include <memory>

#include "laasctl/client.h"
#include "laasctl/commands.h"

namespace laas::ctl {

using nlohmann::json;

namespace {

struct TenantArgs {
  std::string name;
  int servers = 0;  // --servers, or its alias --hosts
  bool dry_run = false;
  bool no_wait = false;
  std::vector<std::string> slurm_accounts, slurm_users;
  std::string openstack_project;
};

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

int tenant_add(const Context& c, const TenantArgs& a) {
  if (a.servers == 0) {
    std::cerr << "laasctl: tenant add needs --servers N or --hosts N\n";
    return kExitUsage;
  }
  // "hosts" too, the field's old name, so that a service of the release before understands it.
  json params = {{"name", a.name},       {"servers", a.servers}, {"hosts", a.servers},
                 {"dry_run", a.dry_run}, {"wait", !a.no_wait},   {"timeout_ms", c.wait_ms()}};
  if (!a.slurm_accounts.empty()) params["slurm_accounts"] = a.slurm_accounts;
  if (!a.slurm_users.empty()) params["slurm_users"] = a.slurm_users;
  if (!a.openstack_project.empty()) params["openstack_project"] = a.openstack_project;
  json result;
  if (const int rc = c.request("tenant.add", params, result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  std::cout << (a.dry_run ? "would place" : "placed") << " tenant " << a.name << ": ";
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

int tenant_remove(const Context& c, const TenantArgs& a) {
  json params = {
      {"name", a.name}, {"dry_run", a.dry_run}, {"wait", !a.no_wait}, {"timeout_ms", c.wait_ms()}};
  json result;
  if (const int rc = c.request("tenant.remove", params, result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  std::cout << (a.dry_run ? "would remove" : "removed") << " tenant " << a.name << "\n";
  return 0;
}

int tenant_list(const Context& c) {
  json result;
  if (const int rc = c.request("tenant.list", json::object(), result)) return rc;
  if (c.json_output()) return Context::print_json(result);
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

int tenant_show(const Context& c, const TenantArgs& a) {
  json result;
  if (const int rc = c.request("tenant.get", {{"name", a.name}}, result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  print_tenant(result);
  return 0;
}

}  // namespace

void add_tenant_commands(CLI::App& app, CommandTable& table) {
  auto a = std::make_shared<TenantArgs>();
  auto* tenant = add_group(app, "tenant", "add, remove, list and show tenants");

  auto* add = tenant->add_subcommand("add", "place a tenant on dedicated hosts and links");
  add->add_option("NAME", a->name, "tenant name: letters, digits, '_', '.', '-'")->required();
  // A tenant holds whole servers. On a fabric where every server has one port (one host per
  // server) --hosts, the older name, counts those hosts, as it always did; where servers have
  // several HCAs or a dual-port HCA, both count servers, every port of each included. Two
  // options rather than an alias, so that a usage error names the one given.
  auto* servers_opt =
      add->add_option("--servers", a->servers,
                      "number of servers: a server with several ports (HCAs on rail leaves, a "
                      "dual-port HCA) counts once and comes with all its ports")
          ->check(CLI::Range(1, 1 << 20));
  auto* hosts_opt =
      add->add_option("--hosts", a->servers, "the same as --servers (one host per server)")
          ->check(CLI::Range(1, 1 << 20));
  hosts_opt->excludes(servers_opt);
  servers_opt->excludes(hosts_opt);
  add->add_flag("--dry-run", a->dry_run, "show the placement without making it");
  add->add_flag("--no-wait", a->no_wait, "reply once the state is saved, before OpenSM re-routes");
  add->add_option("--slurm-account", a->slurm_accounts,
                  "Slurm account whose jobs may use the tenant's reservation (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add->add_option("--slurm-user", a->slurm_users,
                  "Slurm user who may use the tenant's reservation (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add->add_option("--openstack-project", a->openstack_project,
                  "OpenStack project ID the tenant's host aggregate is isolated to");
  table.add(add, a, tenant_add);

  auto* remove = tenant->add_subcommand("remove", "release a tenant's hosts and links");
  remove->add_option("NAME", a->name, "tenant name")->required();
  remove->add_flag("--dry-run", a->dry_run, "check that the tenant exists, change nothing");
  remove->add_flag("--no-wait", a->no_wait, "reply once the state is saved");
  table.add(remove, a, tenant_remove);

  table.add(tenant->add_subcommand("list", "list tenants"), tenant_list);

  auto* show = tenant->add_subcommand("show", "hosts (name, GUID, LID) and links of a tenant");
  show->add_option("NAME", a->name, "tenant name")->required();
  table.add(show, a, tenant_show);
}

}  // namespace laas::ctl
