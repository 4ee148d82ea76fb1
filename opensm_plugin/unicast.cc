#include "opensm_plugin/unicast.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "opensm_plugin/fabric_snapshot.h"
#include "opensm_plugin/multicast.h"
#include "opensm_plugin/options.h"
#include "opensm_plugin/plugin.h"
#include "opensm_plugin/sl2vl.h"

namespace laas::plugin {
namespace {

using topology::Fabric;

// Whether OpenSM has a record of what the switch holds: it starts with every entry unset.
bool holds_routes(const osm_switch_t* sw) {
  const size_t n = std::min<size_t>(sw->lft_size, static_cast<size_t>(sw->max_lid_ho) + 1);
  for (size_t lid = 1; lid < n; ++lid)
    if (sw->lft[lid] != OSM_NO_PATH) return true;
  return false;
}

// Failing closed with nothing computed: every switch keeps what it holds. OpenSM cleared
// new_lft before calling the engine; sw->lft is its record of what each switch was sent. A
// switch it has sent nothing since its start gets the table `saved` records for it (what this
// SM last sent it) where each LID still belongs to the port, at the place, it belonged to then
// (routing::restorable: a moved host gets no other port's routes), or nothing when there is
// none.
struct Kept {
  size_t held = 0, restored = 0, unknown = 0, repaired = 0;
  laas::routing::RestoreReport report;
};

Kept keep_switch_tables(Plugin* plugin, const std::vector<osm_switch_t*>& switches,
                        const laas::routing::SavedTables* saved) {
  Kept kept;
  std::shared_ptr<const laas::routing::SavedTables> fitted;
  if (saved) {
    fitted = std::make_shared<const laas::routing::SavedTables>(
        laas::routing::restorable(*saved, lid_owners(plugin->osm), &kept.report));
    saved = fitted.get();
  }
  for (osm_switch_t* sw : switches) {
    if (!sw || !sw->new_lft || !sw->lft) continue;
    if (holds_routes(sw)) {
      std::memcpy(sw->new_lft, sw->lft, sw->lft_size);
      // OpenSM's copy holds what the switch check read back: blocks it found rewritten get
      // what this SM sent instead.
      if (plugin->lft_check) kept.repaired += plugin->lft_check->restore_found(sw);
      ++kept.held;
      continue;
    }
    const laas::routing::SwitchTables* sent = nullptr;
    if (saved) {
      auto it = saved->switches.find(cl_ntoh64(osm_node_get_node_guid(sw->p_node)));
      if (it != saved->switches.end()) sent = &it->second;
    }
    if (!sent) {
      ++kept.unknown;
      continue;
    }
    const auto& lft = sent->lft;
    std::memset(sw->new_lft, OSM_NO_PATH, sw->lft_size);
    std::memcpy(sw->new_lft, lft.data(), std::min<size_t>(lft.size(), sw->lft_size));
    ++kept.restored;
  }
  if (saved) restore_sl2vl(plugin, switches, *saved);
  // What this start sent, under its own term: a second start failing closed takes it.
  if (kept.restored > 0) plugin->engine->keep_given_back_tables(std::move(fitted));
  return kept;
}

std::string kept_line(const Kept& kept) {
  std::string line = std::to_string(kept.held) + " switch(es) keep the forwarding tables they hold";
  if (kept.restored > 0)
    line += "; " + std::to_string(kept.restored) +
            " get the tables this SM last sent them (OpenSM has sent nothing since its start)";
  const auto& r = kept.report;
  if (kept.restored > 0 && !r.moved.empty()) {
    std::string lids;
    for (size_t i = 0; i < r.moved.size() && i < 8; ++i)
      lids += (i ? "," : "") + std::to_string(r.moved[i]);
    if (r.moved.size() > 8) lids += ",...";
    line += "; " + std::to_string(r.moved.size()) + " LID(s) (" + lids +
            ") belong to another port or place than when those were sent: their " +
            std::to_string(r.entries_dropped) + " entries are left unreachable" +
            (r.ports_cut ? ", and " + std::to_string(r.ports_cut) +
                               " switch port(s) where another host is cabled drop every SL"
                         : std::string());
  }
  if (kept.unknown > 0)
    line += "; " + std::to_string(kept.unknown) + " with no table known are left without routes";
  if (kept.repaired > 0)
    line += "; " + std::to_string(kept.repaired) +
            " LFT block(s) the switch check found rewritten get what this SM sent";
  return line;
}

int route_fabric(Plugin* plugin);

}  // namespace

// OpenSM's sweeper calls this with its lock held: nothing may escape into OpenSM's C code,
// and nothing may hand a fabric with tenants to the next engine by accident.
int build_fwd_tables(void* context) {
  auto* plugin = static_cast<Plugin*>(context);
  if (plugin->lft_check) plugin->lft_check->routing_started();
  try {
    return route_fabric(plugin);
  } catch (const std::exception& e) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             std::string("failing closed: routing failed in the plugin: ") + e.what() +
                 "; every switch keeps the tables it holds");
  } catch (...) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             "failing closed: routing failed in the plugin; every switch keeps the tables it "
             "holds");
  }
  try {
    std::vector<osm_switch_t*> switches;
    cl_qmap_t* tbl = &plugin->osm->subn.sw_guid_tbl;
    for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it))
      switches.push_back(reinterpret_cast<osm_switch_t*>(it));
    std::string why;
    std::shared_ptr<const laas::routing::SavedTables> saved;
    for (osm_switch_t* sw : switches)
      if (sw && sw->lft && !holds_routes(sw)) {
        saved = plugin->engine->sent_tables(&why);
        break;
      }
    if (!saved && !why.empty())
      log_line(plugin->osm, OSM_LOG_ERROR,
               "OpenSM has sent no table since its start and the tables last sent cannot be "
               "read (" +
                   why + ")");
    log_line(plugin->osm, OSM_LOG_ERROR,
             kept_line(keep_switch_tables(plugin, switches, saved.get())));
    plugin->engine->service().set_fail_closed("routing failed in the plugin (see OpenSM's log)");
  } catch (...) {
  }
  return 0;
}

namespace {

// The run's own lines; false when it refuses to route (OpenSM falls back to the next engine).
bool log_outcome(osm_opensm_t* osm, const laas::core::RouteOutcome& outcome) {
  for (const auto& line : outcome.info) log_line(osm, OSM_LOG_INFO, line);
  for (const auto& line : outcome.warnings) log_line(osm, OSM_LOG_ERROR, line);
  if (!outcome.fail_closed.empty())
    log_line(osm, OSM_LOG_ERROR, "failing closed: " + outcome.fail_closed);
  if (outcome.ok) return true;
  const auto fallback = "; falling back to the next routing engine";
  if (outcome.not_fat_tree)
    log_line(osm, OSM_LOG_INFO, "fabric is not a fat-tree: " + outcome.error + fallback);
  else
    log_line(osm, OSM_LOG_ERROR, outcome.error + fallback);
  return false;
}

// The computed tables into OpenSM's new_lft; returns the switches filled.
size_t fill_new_lfts(const std::vector<osm_switch_t*>& switches,
                     const std::vector<std::vector<std::uint8_t>>& tables) {
  size_t filled = 0;
  for (size_t i = 0; i < switches.size() && i < tables.size(); ++i) {
    osm_switch_t* sw = switches[i];
    const auto& table = tables[i];
    if (!sw || table.empty() || sw->lft_size == 0) continue;
    // LIDs 1..top: every switch's whole table each run (OpenSM cleared new_lft), 200 MB at the
    // LID limit, so one memcpy a switch rather than a byte at a time.
    const size_t top = std::min<size_t>({static_cast<size_t>(sw->max_lid_ho), table.size() - 1,
                                         static_cast<size_t>(sw->lft_size) - 1});
    if (top >= 1) std::memcpy(sw->new_lft + 1, table.data() + 1, top);
    ++filled;
  }
  return filled;
}

// What OpenSM will send (set_lft_block): every block of a switch that needs an update, else the
// blocks that differ from what the switch holds. A tenant change should send few.
struct BlocksToSend {
  size_t blocks = 0, switches = 0;
};

BlocksToSend blocks_to_send(osm_opensm_t* osm, const std::vector<osm_switch_t*>& switches) {
  BlocksToSend out;
  for (osm_switch_t* sw : switches) {
    if (!sw || !sw->new_lft || !sw->lft) continue;
    const size_t n =
        std::min<size_t>(sw->max_lid_ho / IB_SMP_DATA_SIZE + 1, sw->lft_size / IB_SMP_DATA_SIZE);
    const bool all = sw->need_update || osm->subn.need_update;
    size_t here = 0;
    for (size_t b = 0; b < n; ++b)
      if (all || std::memcmp(sw->new_lft + b * IB_SMP_DATA_SIZE, sw->lft + b * IB_SMP_DATA_SIZE,
                             IB_SMP_DATA_SIZE) != 0)
        ++here;
    out.blocks += here;
    out.switches += here > 0;
  }
  return out;
}

// The tables go to the state directory's worker (handed over, not copied): a later start that
// must fail closed gives them back to the switches.
void hand_over_sent_tables(Plugin* plugin, const Fabric& fabric,
                           std::vector<std::vector<std::uint8_t>> tables) {
  std::vector<laas::topology::Guid> switch_guids(fabric.nodes.size(), 0);
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (fabric.nodes[i].is_switch) switch_guids[i] = fabric.nodes[i].guid;
  plugin->engine->keep_sent_tables(lid_owners(plugin->osm), std::move(switch_guids),
                                   std::move(tables), plugin->sl2vl);
}

int route_fabric(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  note_lmc(plugin);
  using ms = std::chrono::duration<double, std::milli>;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<osm_switch_t*> switches;
  laas::core::FabricSnapshot snap;
  snap.fabric = snapshot(osm, &switches);
  const Fabric& fabric = snap.fabric;
  plugin->sms->refresh_locked(/*routing=*/true);
  snap.sm_port_guid = cl_ntoh64(osm->subn.sm_port_guid);
  snap.sm_ports = plugin->sms->ports();
  snap.with_sl2vl = osm->subn.opt.qos;
  snap.lmc = osm->subn.opt.lmc;
  const double ms_snapshot = ms(std::chrono::steady_clock::now() - t0).count();
  auto outcome = plugin->engine->route(snap);
  if (outcome.took_over) {
    plugin->took_over_pending = true;
    plugin->took_over_run_start = t0;
    plugin->took_over_last_standby = plugin->sms->last_not_master();
  }
  const auto t_fill = std::chrono::steady_clock::now();
  if (!log_outcome(osm, outcome)) return -1;
  if (outcome.keep_switch_tables) {
    // The SL2VL drops of the last good run stay too (plugin->sl2vl is left as it was).
    log_line(osm, OSM_LOG_ERROR,
             kept_line(keep_switch_tables(plugin, switches, outcome.saved_tables.get())));
    return 0;
  }
  if (outcome.multicast_changed) rebuild_multicast(osm);
  check_qos(plugin);
  plugin->sl2vl = std::make_shared<const laas::routing::Sl2VlTables>(std::move(outcome.sl2vl));
  plugin->node_of_guid.clear();
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (fabric.nodes[i].is_switch) plugin->node_of_guid[fabric.nodes[i].guid] = static_cast<int>(i);
  const size_t filled = fill_new_lfts(switches, outcome.tables);
  if (plugin->lft_check) plugin->lft_check->tables_computed();
  const auto sent = blocks_to_send(osm, switches);
  const auto t_end = std::chrono::steady_clock::now();
  char timing[400];
  std::snprintf(timing, sizeof timing,
                "routing done in %.1f ms (snapshot %.1f, recognize %.1f%s, place %.1f, compute "
                "%.1f, tables %.1f, save %.1f, fill %.1f) on %zu switches; %zu LFT blocks to send "
                "to %zu switches",
                ms(t_end - t0).count(), ms_snapshot, outcome.ms_recognize,
                outcome.recognition_reused ? " kept" : "", outcome.ms_place, outcome.ms_compute,
                outcome.ms_tables, outcome.ms_save, ms(t_end - t_fill).count(), filled, sent.blocks,
                sent.switches);
  log_line(osm, OSM_LOG_INFO, timing);
  plugin->engine->record_routing_run(ms(t_end - t0).count() / 1000.0,
                                     static_cast<long>(sent.blocks));
  hand_over_sent_tables(plugin, fabric, std::move(outcome.tables));
  return 0;
}

}  // namespace

// OpenSM marks a switch it discovers for a full update (need_update 2): every LFT block is
// sent, whatever the switch holds. It lowers the mark only in a later heavy sweep, so until
// then each re-route (a tenant change without a partitions change) re-sends every block of
// every switch -- 337,000 blocks at 11,664 hosts. At SUBNET UP without errors, OpenSM has
// written every block of such a switch and holds what it wrote (a block whose Set failed is
// zeroed in its copy and differs next time), so only changed blocks need sending from then on.
// Called from the sweeper thread, outside OpenSM's lock.
void settle_new_switches(osm_opensm_t* osm) {
  size_t settled = 0;
  cl_plock_excl_acquire(&osm->lock);
  // (The unicast cache reads the mark as "no cached table": leave it alone there.)
  if (!osm->subn.subnet_initialization_error && !osm->subn.opt.use_ucast_cache) {
    cl_qmap_t* tbl = &osm->subn.sw_guid_tbl;
    for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it)) {
      auto* sw = reinterpret_cast<osm_switch_t*>(it);
      if (sw->need_update == 2 && sw->lft && sw->new_lft) {
        sw->need_update = 0;
        ++settled;
      }
    }
  }
  cl_plock_release(&osm->lock);
  if (settled > 0)
    log_line(osm, OSM_LOG_INFO,
             std::to_string(settled) +
                 " switch(es) fully programmed: later re-routes send only changed LFT blocks");
}

}  // namespace laas::plugin
