#include "opensm_plugin/partitions.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "opensm_plugin/options.h"

namespace laas::plugin {

// LAAS_PARTITIONS_HEAVY_SWEEP=1, or an OpenSM without the partition manager's symbol: a
// changed partitions.conf is read by OpenSM at the start of a heavy sweep.
PartitionManager find_partition_manager() {
  if (env_switch_on("LAAS_PARTITIONS_HEAVY_SWEEP")) return nullptr;
  return reinterpret_cast<PartitionManager>(dlsym(RTLD_DEFAULT, "osm_pkey_mgr_process"));
}

void partitions_changed(Plugin* plugin) {
  osm_opensm_t* o = plugin->osm;
  if (plugin->pkey_mgr) {
    plugin->partitions_pending = true;
    request_reroute(o);
    return;
  }
  o->subn.force_heavy_sweep = TRUE;
  osm_sm_sweep(&o->sm);
}

// partitions.conf changed (a tenant change): OpenSM 3.3.23 reads it only in a heavy sweep,
// which rediscovers the whole fabric first -- most of a tenant change's time. Its partition
// manager (osm_pkey_mgr_process, exported by opensm but in no installed header: looked up at
// start) re-reads the file and sets every port's P_Key table by itself, taking OpenSM's lock,
// so the plugin runs it once the re-route's tables are on the switches and waits for the
// switches' and hosts' answers, as OpenSM's sweep does, before the change is reported routed.
// Called from the sweeper thread (UCAST_ROUTING_DONE), outside OpenSM's lock.
// Returns what failed ("" when the P_Key tables were set and answered in time).
std::string apply_partitions(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  const auto t0 = std::chrono::steady_clock::now();
  if (plugin->pkey_mgr(osm) != 0) {
    log_line(osm, OSM_LOG_ERROR, "partitions.conf not applied; asking for a heavy sweep");
    osm->subn.force_heavy_sweep = TRUE;
    osm_sm_sweep(&osm->sm);
    return "OpenSM's partition manager could not apply partitions.conf to the P_Key tables";
  }
  const auto deadline = t0 + std::chrono::seconds(30);
  while (osm->stats.qp0_mads_outstanding > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  char line[160];
  std::snprintf(
      line, sizeof line,
      "partitions.conf applied to the P_Key tables in %.1f ms (no heavy sweep)%s",
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
      osm->stats.qp0_mads_outstanding > 0 ? "; some answers still outstanding after 30 s" : "");
  log_line(osm, OSM_LOG_INFO, line);
  return osm->stats.qp0_mads_outstanding > 0
             ? "the P_Key tables' answers were still outstanding after 30 s"
             : "";
}

}  // namespace laas::plugin
