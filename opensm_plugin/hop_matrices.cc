#include "opensm_plugin/hop_matrices.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "opensm_plugin/options.h"
#include "opensm_plugin/plugin.h"
#include "routing/switch_hops.h"
#include "util/threads.h"

namespace laas::plugin {
namespace {

// The switches OpenSM knows, numbered, and the cabling between them; empty `why_not` when
// one distance per switch pair can stand for OpenSM's.
struct SwitchCabling {
  std::vector<osm_switch_t*> switches;
  laas::routing::SwitchGraph graph;
  std::string why_not;
};

SwitchCabling read_switch_cabling(osm_opensm_t* osm) {
  SwitchCabling c;
  std::unordered_map<const osm_switch_t*, int> number;
  cl_qmap_t* tbl = &osm->subn.sw_guid_tbl;
  for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it)) {
    auto* sw = reinterpret_cast<osm_switch_t*>(it);
    number[sw] = static_cast<int>(c.switches.size());
    c.switches.push_back(sw);
  }
  c.graph.peer.resize(c.switches.size());
  for (size_t i = 0; i < c.switches.size(); ++i) {
    osm_node_t* node = c.switches[i]->p_node;
    auto& peers = c.graph.peer[i];
    peers.assign(c.switches[i]->num_ports, -1);
    for (uint8_t p = 1; p < c.switches[i]->num_ports; ++p) {
      osm_physp_t* physp = osm_node_get_physp_ptr(node, p);
      if (!physp || !physp->p_remote_physp) continue;
      const osm_switch_t* remote = physp->p_remote_physp->p_node->sw;
      if (!remote) continue;
      auto found = number.find(remote);
      if (found == number.end()) {
        c.why_not = "a switch cabled to an unknown switch";
        return c;
      }
      // OpenSM learns distances only over valid, healthy links, but counts 1 hop to any
      // cabled neighbour: our single distance per switch pair cannot say both.
      if (!osm_physp_is_valid(physp) || !osm_link_is_healthy(physp)) {
        c.why_not = "a switch link is not healthy";
        return c;
      }
      peers[p] = found->second;
    }
  }
  return c;
}

// Writes every switch's hop rows from `hops`. Each switch's rows are its own
// (osm_switch_set_hops touches only that switch): the switches are filled on several threads
// while OpenSM's sweeper waits here. Returns the rows written, or -1 when a row could not be
// allocated.
long fill_hop_rows(const std::vector<osm_switch_t*>& sws, const laas::routing::HopMatrix& hops,
                   int threads_asked, unsigned* threads_used) {
  std::vector<uint16_t> lid(sws.size());
  for (size_t i = 0; i < sws.size(); ++i)
    lid[i] = cl_ntoh16(osm_node_get_base_lid(sws[i]->p_node, 0));
  std::atomic<long> rows{0};
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto fill = [&] {
    long mine = 0;
    for (size_t s; (s = next.fetch_add(1)) < sws.size() && !failed;) {
      osm_switch_t* sw = sws[s];
      for (size_t t = 0; t < sws.size(); ++t) {
        const uint16_t l = lid[t];
        const uint8_t least = hops.least(static_cast<int>(s), static_cast<int>(t));
        if (!l || l > sw->max_lid_ho || least == laas::routing::kNoPath) continue;
        // osm_switch_set_hops allocates the LID's row the way OpenSM frees it.
        if (!sw->hops[l] && osm_switch_set_hops(sw, l, 0, least) != 0) {
          failed = true;
          break;
        }
        hops.fill_row(static_cast<int>(s), static_cast<int>(t), sw->hops[l]);
        ++mine;
      }
    }
    rows += mine;
  };
  *threads_used = static_cast<unsigned>(
      laas::util::run_on_threads(laas::routing::routing_threads(threads_asked), fill));
  return failed ? -1 : rows.load();
}

// Whether OpenSM writes its routing dumps after this run (osm_dump_all: OSM_LOG_ROUTING in
// log_flags, or in the per-file flags of osm_dump.c), the one reader of the hop matrices left
// when laas routes.
bool routing_dumps_on(const osm_opensm_t* osm) {
  if (osm_log_is_active(&osm->log, OSM_LOG_ROUTING)) return true;
  for (const osm_log_level_t flags : osm->log.per_mod_log_tbl)
    if (flags & OSM_LOG_ROUTING) return true;
  return false;
}

// OpenSM's min-hop matrices (sw->hops). With `laas` routing only OpenSM's dumps
// (opensm-lid-matrix.dump, opensm.fdbs) read them: our multicast trees come from
// mcast_build_stree, the SA's path records walk the LFTs, and an engine after laas (when laas
// declines) or OpenSM's default routing builds its own (ucast_mgr_route runs the next
// engine's build_lid_matrices or OpenSM's pass; ftree sets its own hops). So with the dumps
// off they are left as OpenSM cleared them (osm_switch_clear_hops, before every routing run):
// no fabric-wide fill for a tenant change, and rows never allocated cost OpenSM's clear
// nothing either. With the dumps on, the same values as OpenSM's own pass
// (osm_ucast_mgr_build_lid_matrices, which relaxes neighbours round after round, seconds on
// big trees) are filled from breadth-first distances (routing/switch_hops.h). Returns 1
// (OpenSM's pass) where that pass would weigh hops differently -- a hop weights file, an
// unhealthy or half-known switch link -- or when LAAS_OPENSM_HOPS is set (to compare both in
// tests). LAAS_FILL_HOP_MATRICES fills them with the dumps off too (the "before" of
// scripts/bench-routing.sh's "-hops" rounds).
int fill_lid_matrices(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  if (env_switch_on("LAAS_OPENSM_HOPS")) return 1;
  if (!routing_dumps_on(osm) && !env_switch_on("LAAS_FILL_HOP_MATRICES")) {
    if (plugin->hop_matrices_filled || !plugin->hop_matrices_skip_logged)
      log_line(osm, OSM_LOG_INFO,
               "hop matrices not filled: nothing reads them while laas routes and OpenSM's "
               "routing dumps are off (log_flags without 0x40)");
    plugin->hop_matrices_filled = false;
    plugin->hop_matrices_skip_logged = true;
    return 0;
  }
  plugin->hop_matrices_filled = true;
  const auto own = [osm](const std::string& why) {
    log_line(osm, OSM_LOG_INFO, "hop matrices left to OpenSM: " + why);
    return 1;
  };
  if (osm->subn.opt.hop_weights_file && *osm->subn.opt.hop_weights_file)
    return own("hop_weights_file is set");
  const auto t0 = std::chrono::steady_clock::now();
  SwitchCabling cabling = read_switch_cabling(osm);
  if (!cabling.why_not.empty()) return own(cabling.why_not);
  const auto t_graph = std::chrono::steady_clock::now();
  // A tenant change leaves the cabling as it was: the distances of the last run still hold.
  if (!plugin->hop_matrix || cabling.graph.peer != plugin->hop_graph.peer) {
    plugin->hop_matrix = std::make_unique<laas::routing::HopMatrix>(cabling.graph);
    plugin->hop_graph = std::move(cabling.graph);
  }
  const auto t_bfs = std::chrono::steady_clock::now();
  unsigned threads = 0;
  const long rows = fill_hop_rows(cabling.switches, *plugin->hop_matrix,
                                  plugin->engine->config().routing_threads, &threads);
  if (rows < 0) {
    log_line(osm, OSM_LOG_ERROR, "cannot allocate hop matrices; OpenSM builds them");
    return 1;
  }
  using ms = std::chrono::duration<double, std::milli>;
  char line[200];
  std::snprintf(line, sizeof line,
                "hop matrices filled in %.1f ms (graph %.1f, distances %.1f, fill %.1f): %zu "
                "switches, %ld rows, %u thread(s)",
                ms(std::chrono::steady_clock::now() - t0).count(), ms(t_graph - t0).count(),
                ms(t_bfs - t_graph).count(), ms(std::chrono::steady_clock::now() - t_bfs).count(),
                cabling.switches.size(), rows, threads);
  log_line(osm, OSM_LOG_INFO, line);
  return 0;
}

}  // namespace

int build_lid_matrices(void* context) {
  auto* plugin = static_cast<Plugin*>(context);
  // The first callback of every unicast routing pass (whichever engine then routes): reads
  // of the switch check sent before it are not compared.
  if (plugin->lft_check) plugin->lft_check->routing_started();
  try {
    return fill_lid_matrices(plugin);
  } catch (const std::exception& e) {
    log_line(plugin->osm, OSM_LOG_ERROR, std::string("hop matrices left to OpenSM: ") + e.what());
  } catch (...) {
    log_line(plugin->osm, OSM_LOG_ERROR, "hop matrices left to OpenSM: an unknown exception");
  }
  return 1;
}

}  // namespace laas::plugin
