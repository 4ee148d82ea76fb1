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

namespace {

// The enforcement bits (PortInfo's PartitionEnforcementInbound/Outbound) OpenSM's part_enforce
// asks of a switch port facing a host; 0 when it asks none.
std::uint8_t enforcement_bits(osm_partition_enforce_type_enum type) {
  switch (type) {
    case OSM_PARTITION_ENFORCE_TYPE_BOTH:
      return 0xc;
    case OSM_PARTITION_ENFORCE_TYPE_IN:
      return 0x8;
    case OSM_PARTITION_ENFORCE_TYPE_OUT:
      return 0x4;
    default:
      return 0;
  }
}

struct Enforcement {
  size_t host_ports = 0, without = 0;
};

// Host-facing ports of switches that can enforce, and how many of them answered OpenSM's last
// PortInfo without the bits it set. Such a port does not filter a host's P_Keys, and OpenSM sets
// the bits again at every partition run (one SMP a port: ibsim keeps none of them).
Enforcement read_enforcement(osm_opensm_t* osm) {
  Enforcement out;
  const std::uint8_t want = enforcement_bits(osm->subn.opt.part_enforce_enum);
  if (want == 0) return out;
  cl_plock_acquire(&osm->lock);
  cl_qmap_t* tbl = &osm->subn.sw_guid_tbl;
  for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it)) {
    auto* sw = reinterpret_cast<osm_switch_t*>(it);
    if (!sw->p_node || !sw->switch_info.enforce_cap) continue;
    for (std::uint8_t port = 1; port < sw->num_ports; ++port) {
      const osm_physp_t* physp = osm_node_get_physp_ptr(sw->p_node, port);
      if (!physp || !physp->p_remote_physp || !physp->p_remote_physp->p_node) continue;
      if (osm_node_get_type(physp->p_remote_physp->p_node) == IB_NODE_TYPE_SWITCH) continue;
      ++out.host_ports;
      out.without += (physp->port_info.vl_enforce & 0xc) != want;
    }
  }
  cl_plock_release(&osm->lock);
  return out;
}

}  // namespace

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
  using ms = std::chrono::duration<double, std::milli>;
  const auto t0 = std::chrono::steady_clock::now();
  // What else is on the wire as the manager starts (its wait below covers every SMP, not only
  // its own), and how many SMPs it queued: the line says where the time of a change went.
  const unsigned outstanding_before = osm->stats.qp0_mads_outstanding;
  const unsigned sent_before = osm->stats.qp0_mads_sent;
  if (plugin->pkey_mgr(osm) != 0) {
    log_line(osm, OSM_LOG_ERROR, "partitions.conf not applied; asking for a heavy sweep");
    osm->subn.force_heavy_sweep = TRUE;
    osm_sm_sweep(&osm->sm);
    return "OpenSM's partition manager could not apply partitions.conf to the P_Key tables";
  }
  const auto t_queued = std::chrono::steady_clock::now();
  const unsigned queued = osm->stats.qp0_mads_outstanding;
  const auto deadline = t0 + std::chrono::seconds(30);
  while (osm->stats.qp0_mads_outstanding > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto t_end = std::chrono::steady_clock::now();
  const Enforcement enforcement = read_enforcement(osm);
  char held[200] = "";
  if (enforcement.without > 0)
    std::snprintf(held, sizeof held,
                  "; %zu of %zu host-facing switch ports answered without the partition "
                  "enforcement OpenSM set (they do not filter P_Keys, and cost an SMP each "
                  "every run)",
                  enforcement.without, enforcement.host_ports);
  char line[520];
  std::snprintf(
      line, sizeof line,
      "partitions.conf applied to the P_Key tables in %.1f ms (no heavy sweep): the "
      "partition manager %.1f ms, then %u SMP(s) outstanding answered in %.1f ms (%u "
      "outstanding before it, %u sent meanwhile)%s%s",
      ms(t_end - t0).count(), ms(t_queued - t0).count(), queued, ms(t_end - t_queued).count(),
      outstanding_before, static_cast<unsigned>(osm->stats.qp0_mads_sent) - sent_before, held,
      osm->stats.qp0_mads_outstanding > 0 ? "; some answers still outstanding after 30 s" : "");
  log_line(osm, OSM_LOG_INFO, line);
  return osm->stats.qp0_mads_outstanding > 0
             ? "the P_Key tables' answers were still outstanding after 30 s"
             : "";
}

}  // namespace laas::plugin
