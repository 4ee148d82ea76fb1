#include "sdn/report.h"

#include "util/guid.h"

namespace laas::sdn {

using nlohmann::json;

namespace {

service::MetricFamily one(const char* name, const char* help, const char* type, double value) {
  return {name, help, type, {{{}, value}}};
}

}  // namespace

std::string shared_leaf_warning(const core::Config& config) {
  if (config.whole_leaves.value_or(true)) return "";
  return "whole_leaves is off: tenants that share a leaf are separated by P_Keys only (the SM "
         "sets no SL2VL first-hop drop without the plugin, so a tenant's host can still send to "
         "another tenant's host on its leaf, which drops it by P_Key)";
}

json report_json(const core::Config& config, const SdnReport& r) {
  json j = {
      {"adapter", "laas-sdn"},
      {"role",
       "master of its own state directory (laas-sdn takes part in no SM election: run "
       "one per fabric)"},
      {"sl2vl_first_hop_drop", false},
      {"whole_leaves", config.whole_leaves.value_or(true)},
      {"lfts_file", config.sdn.lfts_file},
      {"partitions_file", config.sdn.partitions_file},
      {"reload", config.sdn.reload},
      {"discover_interval_s", config.sdn.discover_interval_s},
      {"runs", r.runs},
      {"run_failures", r.run_failures},
      {"reloads", r.reloads},
      {"reload_failures", r.reload_failures},
      {"files_written", r.files_written},
      {"mad_port_opens", r.mad_port_opens},
  };
  if (const auto w = shared_leaf_warning(config); !w.empty()) j["warning"] = w;
  if (r.runs > 0)
    j["last_run"] = {
        {"unix_time", r.last_run_unix},   {"seconds", r.last_run_seconds},
        {"fabric_nodes", r.fabric_nodes}, {"sm_port_guid", util::guid_hex(r.sm_port_guid)},
        {"lfts_changed", r.lfts_changed}, {"partitions_changed", r.partitions_changed}};
  if (!r.last_error.empty()) j["error"] = r.last_error;
  if (!r.fail_closed.empty()) j["fail_closed"] = r.fail_closed;
  if (!r.last_reload.empty()) j["last_reload"] = r.last_reload;
  if (r.readback) {
    const auto& c = *r.readback;
    json rb = {{"applied", c.applied()},
               {"switches", c.switches},
               {"switches_differing", c.switches_differing},
               {"blocks", c.blocks},
               {"blocks_differing", c.blocks_differing},
               {"seconds", r.readback_seconds}};
    if (!c.lines.empty()) rb["differences"] = c.lines;
    if (!r.readback_error.empty()) rb["error"] = r.readback_error;
    j["readback"] = rb;
  }
  return j;
}

std::vector<service::MetricFamily> report_metrics(const core::Config& config, const SdnReport& r) {
  std::vector<service::MetricFamily> f;
  f.push_back(one("laas_sdn_runs_total",
                  "laas-sdn routing runs (discover, route, write, reload when changed)", "counter",
                  double(r.runs)));
  f.push_back(one("laas_sdn_run_failures_total",
                  "laas-sdn runs that failed (discovery, routing, a file not written)", "counter",
                  double(r.run_failures)));
  f.push_back(one("laas_sdn_reloads_total", "Reloads of the SM laas-sdn ran (sdn.reload)",
                  "counter", double(r.reloads)));
  f.push_back(one("laas_sdn_reload_failures_total",
                  "Reloads that did not start, timed out or exited non-zero", "counter",
                  double(r.reload_failures)));
  f.push_back(one("laas_sdn_mad_port_opens_total",
                  "Times laas-sdn opened its MAD port (kept open: more than 1 means it stopped "
                  "answering and was reopened)",
                  "counter", double(r.mad_port_opens)));
  f.push_back(one("laas_sdn_whole_leaves",
                  "1 while no two owners share a leaf (0: shared leaves are separated by P_Keys "
                  "only, there being no SL2VL first-hop drop without the plugin)",
                  "gauge", config.whole_leaves.value_or(true) ? 1 : 0));
  if (r.readback) {
    const auto& c = *r.readback;
    f.push_back(one("laas_sdn_tables_applied",
                    "1 when the switches read back after the last reload hold the tables "
                    "laas-sdn wrote (0: the SM did not apply them)",
                    "gauge", c.applied() ? 1 : 0));
    f.push_back(one("laas_sdn_readback_switches", "Switches read back after the last reload",
                    "gauge", c.switches));
    f.push_back(one("laas_sdn_readback_switches_differing",
                    "Of those, switches holding a block other than written", "gauge",
                    c.switches_differing));
    f.push_back(one("laas_sdn_readback_blocks", "LFT blocks read back after the last reload",
                    "gauge", double(c.blocks)));
    f.push_back(one("laas_sdn_readback_blocks_differing",
                    "LFT blocks read back that differ from the file", "gauge",
                    double(c.blocks_differing)));
  }
  return f;
}

}  // namespace laas::sdn
