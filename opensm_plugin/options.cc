#include "opensm_plugin/options.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace laas::plugin {
namespace {

// Every barrier LaaS sets -- forwarding tables, SL2VL drops, P_Key tables -- is a switch or
// port attribute a tenant's root can rewrite with its own SMPs unless the ports are protected
// by an M_Key (protection level 2: reads of it are hidden too, with a lease so a dead SM's key
// expires) and other SMs are kept out by an SM_Key. Said at every routing run, like qos.
void check_keys(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  const auto& opt = osm->subn.opt;
  std::string missing;
  if (opt.m_key == 0)
    missing += "no m_key (a tenant's root can rewrite any switch's tables)";
  else if (opt.m_key_protect_bits < 2)
    missing += "m_key_protection_level " + std::to_string(opt.m_key_protect_bits) +
               " (below 2 a tenant's root can read the M_Key and use it)";
  if (opt.m_key && opt.m_key_lease_period == 0)
    missing += std::string(missing.empty() ? "" : "; ") +
               "m_key_lease_period 0 (a key set by a dead SM never expires)";
  if (opt.sm_key == 0 || cl_ntoh64(opt.sm_key) == 1)
    missing += std::string(missing.empty() ? "" : "; ") + "sm_key " +
               (opt.sm_key == 0 ? "0" : "1, OpenSM's default,") +
               " (any SM can join the fabric's SM negotiation and win it by priority)";
  if (cl_ntoh64(opt.sa_key) == 1)
    missing += std::string(missing.empty() ? "" : "; ") +
               "sa_key 1, OpenSM's default (an SA query with that key is trusted and is "
               "answered every port's M_Key)";
  plugin->engine->service().set_weak_keys(missing);
  if (missing.empty()) return;
  log_line(osm, OSM_LOG_ERROR,
           "WARNING: OpenSM runs with " + missing +
               ": tenants with root can undo their isolation. Set m_key, "
               "m_key_protection_level 2, m_key_lease_period and sm_key in opensm.conf "
               "(see opensm.conf.snippet and docs/security.md in the laas documentation).");
}

}  // namespace

// Without `qos TRUE` OpenSM never calls update_sl2vl: no switch drops anything, and tenants
// that share a leaf are separated by partition keys only. Say so at every routing run.
void check_qos(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  check_keys(plugin);
  plugin->engine->service().set_first_hop_drop(osm->subn.opt.qos);
  if (osm->subn.opt.qos) return;
  osm_log(&osm->log, OSM_LOG_ERROR,
          "laas: WARNING: 'qos' is FALSE in OpenSM's options: SL2VL tables are not programmed, "
          "so the switches do NOT drop packets between tenants that share a leaf. Set 'qos TRUE' "
          "in opensm.conf (see opensm.conf.snippet in the laas documentation).\n");
}

// laas.yaml as event_plugin_options names it, checked, each problem logged. A wrong value
// never means defaults: the engine registers anyway and routes closed (the tenants last
// routed, partitions.conf and the state left alone, changes refused).
core::Config read_config(osm_opensm_t* osm) {
  const char* options = osm->subn.opt.event_plugin_options;
  const std::string path = options ? options : "";
  core::Config config = core::check_config(path);
  if (path.empty())
    log_line(osm, OSM_LOG_INFO, "no event_plugin_options: using built-in defaults");
  else if (config.problems.empty())
    log_line(osm, OSM_LOG_INFO, "configuration read from " + path);
  for (const auto& problem : config.problems)
    log_line(osm, OSM_LOG_ERROR,
             "laas.yaml is invalid: " + problem +
                 (config.state_dir_unknown
                      ? "; routing closed (nothing read, nothing rewritten, changes refused) "
                      : "; routing closed (tenants last routed, nothing rewritten, changes "
                        "refused) ") +
                 "until it is fixed and OpenSM restarted");
  if (config.state_dir_unknown)
    log_line(osm, OSM_LOG_ERROR,
             "state directory not known (laas.yaml cannot be read as a whole, or its state_dir "
             "is wrong): nothing is read from " +
                 config.state_dir +
                 "; every host is routed as a free host (reaching management only) until it is "
                 "fixed and OpenSM restarted");
  else
    log_line(osm, OSM_LOG_INFO,
             "state directory " + config.state_dir + ", placer " + config.placer);
  if (config.manage_partitions) {
    const char* file = osm->subn.opt.partition_config_file;
    config.managed_partitions_file = file ? file : "";
    if (config.managed_partitions_file.empty()) {
      log_line(osm, OSM_LOG_ERROR, "manage_partitions: OpenSM has no partition_config_file");
      config.manage_partitions = false;
    } else {
      log_line(osm, OSM_LOG_INFO, "managing partitions in " + config.managed_partitions_file);
    }
  }
  return config;
}

// LMC > 0: each port's extra LIDs take its base LID's route (one path per destination keeps
// tenants apart); said once, not refused.
void note_lmc(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  if (osm->subn.opt.lmc > 0 && !plugin->lmc_logged) {
    log_line(osm, OSM_LOG_INFO,
             "LMC " + std::to_string(osm->subn.opt.lmc) +
                 ": every LID of a port is routed like its base LID (tenant isolation routes "
                 "one path per destination)");
    plugin->lmc_logged = true;
  }
}

bool env_switch_on(const char* name) {
  const char* value = std::getenv(name);
  return value && *value && std::strcmp(value, "0") != 0;
}

}  // namespace laas::plugin
