// Unicast routing as the routing engine `laas`: the subnet in, Controller::route, the tables
// into sw->new_lft (or, failing closed, the tables the switches hold), and how many LFT blocks
// OpenSM then sends.
#pragma once

#include "opensm_plugin/opensm_headers.h"

namespace laas::plugin {

// The routing engine's ucast_build_fwd_tables callback (context: the Plugin): 0 when the
// tables are in sw->new_lft, -1 when the next routing engine routes.
int build_fwd_tables(void* context);
// At SUBNET UP: switches OpenSM has fully programmed are sent only changed blocks from then on.
void settle_new_switches(osm_opensm_t* osm);

}  // namespace laas::plugin
