// libosmlaas.so: the OpenSM 3.3.23 glue. OpenSM dlopens it for `event_plugin_name osmlaas`;
// create() reads laas.yaml (path in event_plugin_options) and registers the external routing
// engine "laas" (`routing_engine laas,ftree`). Routing callbacks run in OpenSM's sweeper
// thread with osm->lock held exclusively: they never take it, and they keep no OpenSM pointer
// past the callback. Everything but the subnet <-> Fabric / LFT conversion lives in
// core::Controller. This file is the plugin's start and stop, the engine's registration and
// OpenSM's events; each routing callback and each side job has a file of its own (README.md).
#include "opensm_plugin/plugin.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "opensm_plugin/background_threads.h"
#include "opensm_plugin/hop_matrices.h"
#include "opensm_plugin/live_audit.h"
#include "opensm_plugin/multicast.h"
#include "opensm_plugin/options.h"
#include "opensm_plugin/partitions.h"
#include "opensm_plugin/sl2vl.h"
#include "opensm_plugin/unicast.h"

namespace laas::plugin {

void log_line(osm_opensm_t* osm, osm_log_level_t level, const std::string& msg) {
  if (!osm_log_is_active(&osm->log, level)) return;
  const bool prefixed = msg.rfind("laas: ", 0) == 0;
  osm_log(&osm->log, level, "%s%s\n", prefixed ? "" : "laas: ", msg.c_str());
}

laas::service::Logger logger_for(osm_opensm_t* osm) {
  return [osm](laas::service::LogLevel level, const std::string& msg) {
    log_line(osm, level == laas::service::LogLevel::kInfo ? OSM_LOG_INFO : OSM_LOG_ERROR, msg);
  };
}

// Asks OpenSM for a re-route soon (from any thread but the sweeper's).
void request_reroute(osm_opensm_t* osm) {
  osm->subn.force_reroute = TRUE;
  osm_sm_sweep(&osm->sm);
}

namespace {

using core::Config;
using core::Controller;

void destroy_engine(void* /*context*/) {}

int setup_engine(osm_routing_engine_t* engine, osm_opensm_t* /*osm*/) {
  engine->build_lid_matrices = build_lid_matrices;
  engine->ucast_build_fwd_tables = build_fwd_tables;
  engine->mcast_build_stree = mcast_build_stree;
  engine->update_sl2vl = update_sl2vl;
  engine->destroy = destroy_engine;
  return 0;
}

void* start(osm_opensm_t* osm);

// OpenSM's loader: nothing may escape into its C code (a thread that cannot be created, an
// allocation that fails). Without the plugin OpenSM routes with its next engine: said loudly.
void* create(osm_opensm_t* osm) {
  try {
    return start(osm);
  } catch (const std::exception& e) {
    log_line(osm, OSM_LOG_ERROR, std::string("cannot start: ") + e.what());
  } catch (...) {
    log_line(osm, OSM_LOG_ERROR, "cannot start: an unknown exception");
  }
  return nullptr;
}

// What the tenant service asks of OpenSM: a re-route, the SM's role (only the master changes
// tenants; every SM reads them from the shared state), a live audit, and the application of a
// changed partitions.conf -- after the re-route's tables (apply_partitions), or read by OpenSM
// at the start of a heavy sweep (LAAS_PARTITIONS_HEAVY_SWEEP=1, or an OpenSM without the
// partition manager's symbol).
void connect_service(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  plugin->sms = std::make_unique<SubnetManagers>(osm);
  plugin->pkey_mgr = find_partition_manager();
  plugin->lft_check = std::make_unique<LftCheck>(
      osm, plugin->engine->config().switch_check_interval_s,
      [osm](bool error, const std::string& line) {
        log_line(osm, error ? OSM_LOG_ERROR : OSM_LOG_INFO, line);
      },
      [osm](bool heavy) {
        if (!heavy) return request_reroute(osm);
        osm->subn.force_heavy_sweep = TRUE;
        osm_sm_sweep(&osm->sm);
      },
      [plugin](std::uint64_t guid, int in, int out) {  // OpenSM's lock held
        auto it = plugin->node_of_guid.find(guid);
        return plugin->sl2vl && it != plugin->node_of_guid.end() &&
               static_cast<size_t>(it->second) < plugin->sl2vl->drops.size() &&
               plugin->sl2vl->mask(it->second, in, out) == laas::routing::kAllSls;
      });
  laas::core::AdapterHooks hooks;
  hooks.reroute = [osm] { request_reroute(osm); };
  hooks.role = [plugin] { return plugin->sms->role(); };
  hooks.partitions_changed = [plugin] { partitions_changed(plugin); };
  hooks.audit_live = [plugin] { return audit_live(plugin); };
  hooks.switch_check = plugin->lft_check->bookkeeping();
  plugin->engine->connect(std::move(hooks));
}

void* start(osm_opensm_t* osm) {
  auto plugin = std::make_unique<Plugin>();
  plugin->osm = osm;
  const Config config = read_config(osm);
  try {
    plugin->engine = std::make_unique<Controller>(config, logger_for(osm));
  } catch (const std::exception& e) {
    // Only the state directory itself can make this fail (the configuration was checked).
    log_line(osm, OSM_LOG_ERROR, std::string("cannot start: ") + e.what());
    return nullptr;
  }
  if (!plugin->engine->state_error().empty())
    log_line(osm, OSM_LOG_ERROR,
             "tenant state unusable: " + plugin->engine->state_error() +
                 "; tenants will not be routed until it is repaired or removed");
  connect_service(plugin.get());
  external_routing_engine_module_t module = {"laas", setup_engine, plugin.get()};
  if (osm_register_external_routing_engine(osm, &module, plugin.get()) != CL_SUCCESS) {
    log_line(osm, OSM_LOG_ERROR, "cannot register the routing engine 'laas'");
    return nullptr;
  }
  log_line(osm, OSM_LOG_INFO, "routing engine 'laas' registered");
  check_qos(plugin.get());
  start_socket(plugin.get(), config);
  // The engine is registered with OpenSM by now: whatever fails here, the plugin must live.
  start_watcher(plugin.get());
  start_switch_check(plugin.get());
  return plugin.release();
}

void remove_plugin(void* data) {
  auto* plugin = static_cast<Plugin*>(data);
  if (!plugin) return;
  stop_threads(plugin);
  delete plugin;
}

// The tables of the run that took the tenant state over are in the switches: say how long
// this SM took from the start of that run, and from when it was last seen standby (the
// master's death is noticed polling_retry_number x sminfo_polling_timeout after it happened).
// Until then the switches kept the old master's tables, tenants' isolation included; the gap
// is time without a subnet manager, not time without isolation, when the tables are identical.
void report_failover(Plugin* plugin) {
  using ms = std::chrono::duration<double, std::milli>;
  const auto now = std::chrono::steady_clock::now();
  const auto standby = plugin->took_over_last_standby;
  const auto tenants = plugin->engine->service().tenant_names().size();
  char line[400];
  if (standby.time_since_epoch().count() == 0) {
    std::snprintf(line, sizeof line,
                  "started as master: tables with %zu tenant(s) applied %.0f ms after this SM "
                  "began routing (it was never seen standby)",
                  tenants, ms(now - plugin->took_over_run_start).count());
  } else {
    std::snprintf(line, sizeof line,
                  "failover: tables with %zu tenant(s) applied %.0f ms after this SM began "
                  "routing as master, %.0f ms after it was last seen standby; a standby declares "
                  "its master dead %d-%d ms after the master's last answer",
                  tenants, ms(now - plugin->took_over_run_start).count(), ms(now - standby).count(),
                  plugin->sms->detection_ms(1), plugin->sms->detection_ms(2));
  }
  log_line(plugin->osm, OSM_LOG_INFO, line);
}

// OpenSM reports UCAST_ROUTING_DONE once the new tables have reached the switches: the line
// tests and operators wait for before reading tables back.
void handle_event(Plugin* plugin, osm_epi_event_id_t event, void* event_data);

void report(void* data, osm_epi_event_id_t event, void* event_data) {
  auto* plugin = static_cast<Plugin*>(data);
  try {
    handle_event(plugin, event, event_data);
  } catch (const std::exception& e) {
    log_line(plugin->osm, OSM_LOG_ERROR, std::string("event not handled: ") + e.what());
  } catch (...) {
    log_line(plugin->osm, OSM_LOG_ERROR, "event not handled: an unknown exception");
  }
}

void handle_event(Plugin* plugin, osm_epi_event_id_t event, void* event_data) {
  if (event == OSM_EVENT_ID_UCAST_ROUTING_DONE) {
    std::string failure;
    if (plugin->pkey_mgr && plugin->partitions_pending.exchange(false))
      failure = apply_partitions(plugin);
    if (plugin->osm->subn.subnet_initialization_error)
      failure += std::string(failure.empty() ? "" : "; ") +
                 "OpenSM saw errors while programming the switches (see its log)";
    plugin->engine->on_routing_done(failure);
    if (plugin->lft_check) plugin->lft_check->sweep_done();
    log_line(plugin->osm, OSM_LOG_INFO, "forwarding tables applied to the switches");
    if (plugin->took_over_pending) {
      plugin->took_over_pending = false;
      report_failover(plugin);
    }
  } else if (event == OSM_EVENT_ID_STATE_CHANGE || event == OSM_EVENT_ID_HEAVY_SWEEP_DONE) {
    if (event == OSM_EVENT_ID_HEAVY_SWEEP_DONE && plugin->lft_check)
      plugin->lft_check->sweep_done();
    // This SM's role may have changed (standby, discovering) or a sweep found another SM:
    // the watcher looks now rather than at its next tick.
    plugin->cv.notify_all();
  } else if (event == OSM_EVENT_ID_HEAVY_SWEEP_START && plugin->lft_check) {
    plugin->lft_check->sweep_started();
  } else if (event == OSM_EVENT_ID_LFT_CHANGE && event_data && plugin->lft_check) {
    // OpenSM's LFT receiver stored a block a switch answered (a Get of the switch check, or a
    // Set's answer, which the check ignores), its lock held: compare, never take it here.
    const auto* lft = static_cast<const osm_epi_lft_change_event_t*>(event_data);
    if (lft->flags & LFT_CHANGED_BLOCK) plugin->lft_check->on_block(lft->p_sw, lft->block_num);
  } else if (event == OSM_EVENT_ID_SUBNET_UP) {
    plugin->cv.notify_all();  // master now, or still: the watcher looks at once
    log_line(plugin->osm, OSM_LOG_INFO, "subnet up");
    if (plugin->lft_check) plugin->lft_check->sweep_done();
    settle_new_switches(plugin->osm);
  } else if (event == OSM_EVENT_ID_PORT_ERRORS && event_data) {
    // The performance manager's reading of one port (perfmgr TRUE), differences since the
    // last one, GUID in host order: the health of the tenants' links.
    const auto* pe = static_cast<const osm_epi_pe_event_t*>(event_data);
    laas::service::PortCounters d;
    d.symbol_errors = pe->symbol_err_cnt;
    d.link_error_recovery = pe->link_err_recover;
    d.link_downed = pe->link_downed;
    d.rcv_errors = pe->rcv_err;
    d.rcv_remote_physical_errors = pe->rcv_rem_phys_err;
    d.local_link_integrity_errors = pe->link_integrity;
    d.excessive_buffer_overruns = pe->buffer_overrun;
    d.xmit_discards = pe->xmit_discards;
    d.xmit_wait = pe->xmit_wait;
    plugin->engine->service().on_port_counters(pe->port_id.node_guid, pe->port_id.port_num, d);
  }
}

}  // namespace
}  // namespace laas::plugin

extern "C" {
#if OSM_EVENT_PLUGIN_INTERFACE_VER != 2
#error OpenSM plugin interface version mismatch
#endif
__attribute__((visibility("default"))) osm_event_plugin_t osm_event_plugin = {
    OSM_VERSION, laas::plugin::create, laas::plugin::remove_plugin, laas::plugin::report};
}
