// The subnet OpenSM holds, read into the core's terms (opensm_plugin/ is the only code that
// knows OpenSM's structures): the Fabric, and whom each LID belongs to. Both are read with
// osm->lock held.
#pragma once

#include <vector>

#include "opensm_plugin/opensm_headers.h"
#include "routing/saved_tables.h"
#include "topology/fabric.h"

namespace laas::plugin {

topology::Fabric snapshot(osm_opensm_t* osm, std::vector<osm_switch_t*>* switches);
routing::LidOwners lid_owners(osm_opensm_t* osm);

}  // namespace laas::plugin
