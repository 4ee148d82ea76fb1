#include "opensm_plugin/multicast.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>

#include "opensm_plugin/plugin.h"

namespace laas::plugin {
namespace {

// Member port GUIDs of a multicast group (every MGID sharing the MLID), sorted, once each.
std::vector<laas::topology::Guid> members_of(const osm_mgrp_box_t* mbox) {
  std::vector<laas::topology::Guid> out;
  const cl_qlist_t* groups = &mbox->mgrp_list;
  for (const cl_list_item_t* li = cl_qlist_head(groups); li != cl_qlist_end(groups);
       li = cl_qlist_next(li)) {
    const auto* mgrp = reinterpret_cast<const osm_mgrp_t*>(reinterpret_cast<const char*>(li) -
                                                           offsetof(osm_mgrp_t, list_item));
    const cl_qmap_t* ports = &mgrp->mcm_port_tbl;
    for (const cl_map_item_t* mi = cl_qmap_head(ports); mi != cl_qmap_end(ports);
         mi = cl_qmap_next(mi)) {
      const auto* mcm = reinterpret_cast<const osm_mcm_port_t*>(mi);  // map_item comes first
      if (mcm->port) out.push_back(cl_ntoh64(mcm->port->guid));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

// The multicast tables OpenSM holds for the switches (sw->mcast_tbl) and every group's members.
// Called with osm->lock held.
void read_mfts(osm_opensm_t* osm, const std::vector<osm_switch_t*>& switches,
               laas::routing::Mfts* mfts,
               std::map<std::uint16_t, std::vector<laas::topology::Guid>>* members) {
  mfts->assign(switches.size(), {});
  for (size_t i = 0; i < switches.size(); ++i) {
    osm_switch_t* sw = switches[i];
    if (!sw) continue;
    const osm_mcast_tbl_t* tbl = &sw->mcast_tbl;
    if (!tbl->p_mask_tbl) continue;
    for (unsigned mlid = IB_LID_MCAST_START_HO; mlid <= tbl->max_mlid_ho; ++mlid)
      for (unsigned port = 0; port < tbl->num_ports; ++port)
        if (osm_mcast_tbl_is_port(tbl, static_cast<uint16_t>(mlid), static_cast<uint8_t>(port)))
          (*mfts)[i][static_cast<std::uint16_t>(mlid)].push_back(static_cast<int>(port));
  }
  const unsigned top = osm->subn.max_mcast_lid_ho - IB_LID_MCAST_START_HO;
  for (unsigned i = 0; i <= top; ++i)
    if (const auto* mbox = static_cast<const osm_mgrp_box_t*>(osm->subn.mboxes[i]))
      (*members)[static_cast<std::uint16_t>(i + IB_LID_MCAST_START_HO)] = members_of(mbox);
}

// A reroute-only sweep leaves multicast alone: ask for every group to be rebuilt under the new
// tenants (the sweeper does it once this sweep is over; a heavy sweep does it anyway).
void rebuild_multicast(osm_opensm_t* osm) {
  size_t groups = 0;
  const unsigned top = osm->subn.max_mcast_lid_ho - IB_LID_MCAST_START_HO;
  for (unsigned i = 0; i <= top; ++i)
    if (osm->subn.mboxes[i]) {
      osm_sm_reroute_mlid(&osm->sm, cl_hton16(static_cast<uint16_t>(i + IB_LID_MCAST_START_HO)));
      ++groups;
    }
  if (groups > 0)
    log_line(osm, OSM_LOG_INFO,
             "tenants changed: rebuilding " + std::to_string(groups) + " multicast group(s)");
}

namespace {

// OpenSM calls this for every multicast group it (re)builds -- on joins, leaves and sweeps --
// with osm->lock held, after clearing the group's MLID on every switch: set the MLID's ports
// in each switch's mcast_tbl; OpenSM then sends the changed MFT blocks. A group whose members
// are one tenant's hosts stays on that tenant's links (routing/multicast.h).
ib_api_status_t build_stree(Plugin* plugin, osm_mgrp_box_t* mbox) {
  osm_opensm_t* osm = plugin->osm;
  const auto members = members_of(mbox);
  const auto out = plugin->engine->multicast_tree(members, mbox->mlid);
  char head[64];
  std::snprintf(head, sizeof head, "multicast MLID 0x%04X: ", mbox->mlid);
  for (const auto& w : out.warnings) log_line(osm, OSM_LOG_ERROR, head + w);
  if (!out.ok) {
    log_line(osm, OSM_LOG_ERROR, head + out.error + "; the group gets no tree");
    return IB_ERROR;
  }
  size_t switches = 0;
  for (const auto& [guid, ports] : out.rows) {
    osm_switch_t* sw = osm_get_switch_by_guid(&osm->subn, cl_hton64(guid));
    if (!sw) continue;   // gone since the last routing run: the next sweep re-routes
    for (int p : ports)  // a port beyond the switch would write past its mask table
      if (p >= 0 && p < sw->num_ports)
        osm_mcast_tbl_set(&sw->mcast_tbl, mbox->mlid, static_cast<uint8_t>(p));
    ++switches;
  }
  log_line(osm, OSM_LOG_INFO,
           head + std::to_string(members.size()) + " member(s), " +
               (members.size() < 2 ? "no tree needed" : out.group) + ", " +
               std::to_string(switches) + " switch(es)");
  return IB_SUCCESS;
}

}  // namespace

ib_api_status_t mcast_build_stree(void* context, osm_mgrp_box_t* mbox) {
  auto* plugin = static_cast<Plugin*>(context);
  try {
    return build_stree(plugin, mbox);
  } catch (const std::exception& e) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             std::string("multicast group not built: ") + e.what() + "; it gets no tree");
  } catch (...) {
    log_line(plugin->osm, OSM_LOG_ERROR, "multicast group not built; it gets no tree");
  }
  return IB_ERROR;
}

}  // namespace laas::plugin
