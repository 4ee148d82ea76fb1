// laasctl: the administrator's command line for LaaS, a client of the control socket that the
// OpenSM plugin serves. Each subcommand is registered and handled in its own function
// (commands.h) over the shared options and request path of cli.h.
#include "laasctl/cli.h"
#include "laasctl/commands.h"

int main(int argc, char** argv) {
  using namespace laas::ctl;
  CLI::App app{
      "laasctl: manage LaaS tenants (dedicated hosts and links on an InfiniBand\n"
      "fat-tree) through the OpenSM plugin's control socket.",
      "laasctl"};
  GlobalOptions options;
  add_global_options(app, options);
  CommandTable table;
  // In the order --help lists them.
  for (auto* add : {add_status_command, add_metrics_command, add_tenant_commands, add_host_commands,
                    add_link_commands, add_switch_commands, add_topology_commands,
                    add_audit_command, add_export_command, add_validate_command, add_sm_commands,
                    add_reroute_command, add_config_commands, add_state_commands, add_events_command,
                    add_raw_command})
    add(app, table);
  return parse_and_run(app, table, options, argc, argv);
}
