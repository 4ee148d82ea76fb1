// The first-hop drop in OpenSM's SL2VL tables: what update_sl2vl answers for each switch port
// pair, from the last good routing run or, at a start failing closed, from the tables last
// sent.
#pragma once

#include <vector>

#include "opensm_plugin/plugin.h"
#include "routing/saved_tables.h"

namespace laas::plugin {

void restore_sl2vl(Plugin* plugin, const std::vector<osm_switch_t*>& switches,
                   const routing::SavedTables& saved);
// The routing engine's update_sl2vl callback (context: the Plugin).
void update_sl2vl(void* context, osm_physp_t* port, uint8_t in_port, uint8_t out_port,
                  ib_slvl_table_t* table);

}  // namespace laas::plugin
