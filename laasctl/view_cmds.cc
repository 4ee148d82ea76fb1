// laasctl topology show and laasctl audit: the fabric as the service sees it, and the proof of
// isolation on its tables (OpenSM's copy, or read back from the switches).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "laasctl/client.h"
#include "laasctl/commands.h"
#include "laasctl/render.h"
#include "laasctl/switch_audit.h"

namespace laas::ctl {

using nlohmann::json;

namespace {

struct TopologyArgs {
  bool color = isatty(1);
  bool svg = false;
};

struct AuditArgs {
  bool from_switches = false;
  bool via_diags = false;
  SwitchAuditOptions switch_audit;
};

int topology_show(const Context& c, const TopologyArgs& a) {
  json result;
  if (const int rc = c.request("topology", json::object(), result)) return rc;
  if (c.json_output()) return Context::print_json(result);
  const auto map = map_from_json(result);
  std::cout << (a.svg ? render_allocation_svg(map) : render_allocation_map(map, a.color));
  return 0;
}

// --from-switches: the SM's switch check reads every table back now (with OpenSM's M_Key) and
// the audit runs on what the switches answered; --via-diags (or a diags option): infiniband-
// diags read them from this host instead, for when the SM itself is in doubt.
int audit(const Context& c, const AuditArgs& a) {
  const bool diags = a.via_diags || !a.switch_audit.ca.empty() || a.switch_audit.ca_port > 0 ||
                     !a.switch_audit.m_key.empty() || a.switch_audit.keep;
  if (a.from_switches && diags)
    return audit_from_switches(
        [&](json& status) { return c.request("status", json::object(), status); }, a.switch_audit);
  json params = json::object();
  // The read-back pass ends within laasctl's own --timeout (default 60 s; a fabric at the LID
  // limit needs about 1,800).
  if (a.from_switches)
    params = {{"read_back", true}, {"timeout_s", std::max(1, c.options().timeout_s - 2)}};
  json result;
  if (const int rc = c.request("audit", params, result)) return rc;
  std::cout << result.dump(2) << "\n";
  const auto violations = result.value("violations", json(0));
  const long differing =
      result.contains("read_back") ? result["read_back"].value("mismatches", 0L) : 0L;
  if (differing > 0)
    std::cerr << "laasctl: " << differing
              << " table(s) read back from the switches differed from what this SM sent (sent "
                 "again; see switch_check in the report)\n";
  return (violations.is_number() && violations.get<long>() > 0) || differing > 0 ? kExitRefused : 0;
}

}  // namespace

void add_topology_commands(CLI::App& app, CommandTable& table) {
  auto a = std::make_shared<TopologyArgs>();
  auto* topology = add_group(app, "topology", "the fabric as LaaS sees it");
  auto* show = topology->add_subcommand("show", "leaf x up-link allocation map");
  // Two flags, not "--color,!--no-color": CLI11 prints that pair as "--no-color{false}", which
  // reads as "off by default" while the default follows the terminal.
  show->add_flag("--color", a->color,
                 "colour tenants (the default when standard output is a terminal)");
  show->add_flag_callback(
      "--no-color", [a] { a->color = false; }, "no colours (the default in a pipe)");
  show->add_flag("--svg", a->svg, "the map as an SVG document (tenants in colours)");
  table.add(show, a, topology_show);
}

void add_audit_command(CLI::App& app, CommandTable& table) {
  auto a = std::make_shared<AuditArgs>();
  auto* audit_cmd =
      app.add_subcommand("audit", "trace OpenSM's copy of the forwarding tables, prove isolation");
  audit_cmd->add_flag("--from-switches", a->from_switches,
                      "audit the tables as the switches hold them: the SM's switch check reads "
                      "every LFT block and port table back now (with OpenSM's M_Key), sends "
                      "again what differs and the audit runs on what they answered; exit 1 if "
                      "any differed. The pass must end within --timeout (a fabric at the LID "
                      "limit needs about 1800 s)");
  audit_cmd->add_flag("--via-diags", a->via_diags,
                      "--from-switches: read the tables from this host with infiniband-diags "
                      "(ibnetdiscover, dump_fts) and audit them with laas-audit, not through the "
                      "SM (implied by --ca, --ca-port, --m-key, --keep-dumps)");
  audit_cmd->add_option("--ca", a->switch_audit.ca,
                        "--from-switches: the HCA to read through (-C)");
  audit_cmd->add_option("--ca-port", a->switch_audit.ca_port, "--from-switches: its port (-P)")
      ->check(CLI::Range(1, 254));
  audit_cmd
      ->add_option("--m-key", a->switch_audit.m_key,
                   "--from-switches: the M_Key (opensm.conf's m_key) the tools put in their SMPs "
                   "(-y); needed at m_key_protection_level 2 or more")
      ->transform(CLI::Validator(
          [](std::string& key) -> std::string {
            char* end = nullptr;
            errno = 0;
            const unsigned long long v = std::strtoull(key.c_str(), &end, 0);
            if (key.empty() || key[0] == '-' || errno != 0 || *end != '\0')
              return "an M_Key is a 64-bit number (0x... or decimal)";
            char text[24];
            std::snprintf(text, sizeof text, "0x%016llx", v);
            key = text;
            return "";
          },
          "KEY"));
  audit_cmd
      ->add_option("--config", a->switch_audit.config,
                   "--via-diags with the state in etcd: the SM's laas.yaml, naming its etcd "
                   "(the recorded allocations and layout are read from there)")
      ->capture_default_str();
  audit_cmd->add_flag("--keep-dumps", a->switch_audit.keep,
                      "--from-switches: keep the tables read back even when the audit is clean");
  table.add(audit_cmd, a, audit);
}

}  // namespace laas::ctl
