// laasctl export (files for the rest of the cluster), validate and config check (offline
// checks of files the plugin reads, no service needed), and state init (offline).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>

#include "core/config.h"
#include "core/store_config.h"
#include "export/formats.h"
#include "export/output.h"
#include "export/partitions.h"
#include "export/routing_chains.h"
#include "laasctl/client.h"
#include "laasctl/commands.h"
#include "service/state_store.h"

namespace laas::ctl {

using nlohmann::json;

namespace {

struct ExportArgs {
  std::string format, output, only_tenant;
  bool removal = false;
  bool magnetic = false;
  bool slurm_partitions = false;
};

// routing-chains -o DIR: three policy files and the opensm.conf lines naming them.
void write_routing_chains(const std::string& output, const json& result) {
  std::map<std::string, std::string> files;
  const json listed = result.value("files", json::object());
  for (const auto& [file, text] : listed.items()) files[file] = text.get<std::string>();
  char* abs = realpath(output.c_str(), nullptr);
  std::string dir = abs ? abs : output;
  free(abs);
  if (!abs) {
    exports::write_output_dir(output, {});
    abs = realpath(output.c_str(), nullptr);
    dir = abs ? abs : output;
    free(abs);
  }
  files[exports::kOpenSmSnippetFile] = exports::routing_chains_opensm_conf(dir);
  exports::write_output_dir(output, files);
  std::cerr << "laasctl: wrote ";
  for (const auto& f : files) std::cerr << f.first << " ";
  std::cerr << "into " << dir << "\n";
}

int export_files(const Context& c, const ExportArgs& a) {
  json params = {{"format", a.format}};
  if (!a.only_tenant.empty()) params["tenant"] = a.only_tenant;
  if (a.removal) params["remove"] = true;
  if (a.magnetic) params["magnetic"] = true;
  if (a.slurm_partitions) params["slurm_partitions"] = true;
  json result;
  if (const int rc = c.request("export", params, result)) return rc;
  const std::string body = result.value("content", "");
  if (a.output.empty()) {
    std::cout << body << std::flush;
    if (!std::cout) {
      std::cerr << "laasctl: cannot write the standard output\n";
      return kExitRefused;
    }
  } else if (a.format == "routing-chains") {
    write_routing_chains(a.output, result);
  } else {
    exports::write_output_file(a.output, body);
  }
  return 0;
}

// No service needed: the same validator the plugin runs before writing the file.
int validate(const std::string& file) {
  std::ifstream in(file);
  if (!in) {
    std::cerr << "laasctl: cannot read " << file << "\n";
    return kExitRefused;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto check = exports::validate_partitions(text);
  std::cerr << check.report(file);
  if (!check.ok()) return kExitRefused;
  std::cout << file << ": " << check.partitions.size() << " partition statements, no errors\n";
  return 0;
}

// Prints each problem and what they mean together; true when there is any.
bool report_problems(const std::vector<std::string>& problems, const std::string& meaning) {
  for (const auto& problem : problems) std::cerr << problem << "\n";
  if (!problems.empty())
    std::cerr << "laasctl: " << problems.size() << " problem(s)" << meaning << "\n";
  return !problems.empty();
}

// No service needed: the plugin's own reader. Any problem makes the plugin route closed at its
// next start, so say so before the restart. The api: section is laas-api's alone: the plugin
// routes as usual with a mistake there.
int config_check(const std::string& file) {
  const auto checked = core::check_config(file);
  const bool plugin = report_problems(
      checked.problems,
      ": with this file the plugin routes closed (the tenants last routed, nothing rewritten, "
      "changes refused) until it is fixed");
  const bool api = report_problems(checked.api_problems,
                                   " in the api: section: laas-api refuses to start with this "
                                   "file (the plugin is not affected)");
  if (plugin || api) return kExitRefused;
  std::cout << file << ": no problems (state_dir " << checked.state_dir << ", placer "
            << checked.placer << ", free_pool " << (checked.free_pool_open ? "open" : "closed")
            << ", " << checked.subnet_managers.size() << " subnet manager(s), "
            << checked.management.size() << " management port(s))\n";
  return 0;
}

// No service needed: the first tenant state of a new state directory, where laas.yaml puts it.
int state_init(const std::string& file) {
  const auto checked = core::check_config(file);
  if (!checked.problems.empty()) {
    for (const auto& problem : checked.problems) std::cerr << problem << "\n";
    std::cerr << "laasctl: " << file
              << " has problems: the state directory is not taken from it; fix it first "
                 "(laasctl config check)\n";
    return kExitRefused;
  }
  try {
    std::cout << core::offline_state_store(checked).init(checked.socket_group) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "laasctl: state init: " << e.what() << "\n";
    return kExitRefused;
  }
}

// No service needed: the shared state copied between laas.yaml's state_dir and its etcd, for
// an installation moving from one to the other (docs/ha.md, "Moving to etcd and back").
int state_migrate(const std::string& file, const std::string& to) {
  const auto checked = core::check_config(file);
  if (!checked.problems.empty()) {
    for (const auto& problem : checked.problems) std::cerr << problem << "\n";
    std::cerr << "laasctl: " << file << " has problems: fix it first (laasctl config check)\n";
    return kExitRefused;
  }
  if (checked.etcd.endpoints.empty()) {
    std::cerr << "laasctl: state migrate: " << file
              << " has no 'etcd: {endpoints: [...]}': it names where the state goes or comes "
                 "from\n";
    return kExitRefused;
  }
  try {
    auto with_etcd = checked;
    with_etcd.state_store = "etcd";
    const service::StateStore dir(checked.state_dir);
    const service::StateStore etcd = core::offline_state_store(with_etcd);
    const bool into_etcd = to == "etcd";
    std::cout << service::migrate_state(into_etcd ? dir : etcd, into_etcd ? etcd : dir) << "\n"
              << "next: 'state_store: " << (into_etcd ? "etcd" : "dir")
              << "' in laas.yaml on every SM host, then restart their OpenSMs (the master "
                 "takes the state over at its first routing run)\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "laasctl: state migrate: " << e.what() << "\n";
    return kExitRefused;
  }
}

}  // namespace

void add_export_command(CLI::App& app, CommandTable& table) {
  auto a = std::make_shared<ExportArgs>();
  auto* exporter = app.add_subcommand("export", "files for the rest of the cluster");
  exporter->add_option("FORMAT,--format", a->format, exports::formats_text(true))
      ->required()
      ->check(CLI::IsMember(exports::format_names()));
  exporter->add_option("--tenant", a->only_tenant, "only this tenant");
  exporter->add_flag("--remove", a->removal,
                     "slurm, openstack: the commands that undo a tenant; k8s-labels: its nodes' "
                     "tenant labels removed");
  exporter->add_flag("--magnetic", a->magnetic,
                     "slurm: Flags=MAGNETIC, eligible jobs land in the reservation without "
                     "--reservation");
  exporter->add_flag("--partitions", a->slurm_partitions,
                     "slurm: also a Slurm partition per tenant, on its hosts");
  exporter->add_option("-o,--output", a->output,
                       "write to FILE (a new file, renamed over it; a symbolic link is "
                       "refused) instead of standard output; routing-chains: into directory DIR");
  table.add(exporter, a, export_files);
}

void add_validate_command(CLI::App& app, CommandTable& table) {
  auto file = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("validate",
                                 "offline: check a partitions.conf the way OpenSM 3.3.23 reads it");
  cmd->add_option("FILE", *file, "partitions.conf to check")->required();
  table.add(cmd, [file](const Context&) { return validate(*file); });
}

void add_config_commands(CLI::App& app, CommandTable& table) {
  auto file = std::make_shared<std::string>("/etc/laas/laas.yaml");
  auto* config = add_group(app, "config", "offline: laas.yaml");
  auto* check = config->add_subcommand(
      "check", "check laas.yaml as the plugin reads it: every problem with its line");
  check->add_option("FILE", *file, "laas.yaml to check")->capture_default_str();
  table.add(check, [file](const Context&) { return config_check(*file); });
}

void add_state_commands(CLI::App& app, CommandTable& table) {
  auto file = std::make_shared<std::string>("/etc/laas/laas.yaml");
  auto* state = add_group(app, "state", "offline: the shared state (directory or etcd)");
  auto* init = state->add_subcommand(
      "init",
      "create the first, empty tenant state in laas.yaml's state_dir (a new HA share with "
      "state_must_exist: true); refused when a state is there");
  init->add_option("--config", *file, "laas.yaml naming state_dir")->capture_default_str();
  table.add(init, [file](const Context&) { return state_init(*file); });
  auto to = std::make_shared<std::string>();
  auto* migrate = state->add_subcommand(
      "migrate",
      "copy the shared tenant state from laas.yaml's state_dir to its etcd (--to etcd) or back "
      "(--to dir), with every OpenSM stopped; refused when the target holds another state");
  migrate->add_option("--to", *to, "where the state goes")
      ->required()
      ->check(CLI::IsMember({"etcd", "dir"}));
  migrate->add_option("--config", *file, "laas.yaml naming state_dir and etcd")
      ->capture_default_str();
  table.add(migrate, [file, to](const Context&) { return state_migrate(*file, *to); });
}

}  // namespace laas::ctl
