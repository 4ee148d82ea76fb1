// Multicast as the routing engine `laas`: each group's spanning tree (Controller::multicast_tree)
// into the switches' mcast_tbl, every group rebuilt when the tenants change, and the MFTs read
// for the live audit.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "opensm_plugin/opensm_headers.h"
#include "routing/multicast.h"
#include "topology/fabric.h"

namespace laas::plugin {

// The routing engine's mcast_build_stree callback (context: the Plugin).
ib_api_status_t mcast_build_stree(void* context, osm_mgrp_box_t* mbox);
void rebuild_multicast(osm_opensm_t* osm);
void read_mfts(osm_opensm_t* osm, const std::vector<osm_switch_t*>& switches, routing::Mfts* mfts,
               std::map<std::uint16_t, std::vector<topology::Guid>>* members);

}  // namespace laas::plugin
