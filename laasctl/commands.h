// laasctl's subcommands: one function registers each top-level subcommand (its options, its
// subcommands) with the handler that runs it. main adds them in the order --help lists them.
#pragma once

#include <CLI/CLI.hpp>

#include "laasctl/cli.h"

namespace laas::ctl {

// service_cmds.cc: the service itself.
void add_status_command(CLI::App& app, CommandTable& table);
void add_metrics_command(CLI::App& app, CommandTable& table);
void add_reroute_command(CLI::App& app, CommandTable& table);
void add_sm_commands(CLI::App& app, CommandTable& table);
void add_raw_command(CLI::App& app, CommandTable& table);
// event_cmds.cc: the tenant state's changes.
void add_events_command(CLI::App& app, CommandTable& table);
// tenant_cmds.cc
void add_tenant_commands(CLI::App& app, CommandTable& table);
// host_cmds.cc
void add_host_commands(CLI::App& app, CommandTable& table);
// fabric_cmds.cc: maintenance of links and switches.
void add_link_commands(CLI::App& app, CommandTable& table);
void add_switch_commands(CLI::App& app, CommandTable& table);
// view_cmds.cc: the fabric as the service sees it and the proof of isolation.
void add_topology_commands(CLI::App& app, CommandTable& table);
void add_audit_command(CLI::App& app, CommandTable& table);
// file_cmds.cc: files for the rest of the cluster, and offline checks of files.
void add_export_command(CLI::App& app, CommandTable& table);
void add_validate_command(CLI::App& app, CommandTable& table);
void add_config_commands(CLI::App& app, CommandTable& table);
void add_state_commands(CLI::App& app, CommandTable& table);

}  // namespace laas::ctl
