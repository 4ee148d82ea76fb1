// OpenSM's headers, as every file of the plugin includes them: osm_config.h first (it fixes
// the layout of osm_opensm_t), and osm_event_plugin.h with its member named `delete` renamed,
// which C++ would not parse.
#pragma once

// clang-format off
#include <opensm/osm_config.h>  // must come first: it fixes the layout of osm_opensm_t
#include <complib/cl_passivelock.h>
#define delete delete_cb
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_log.h>
#include <opensm/osm_mcast_tbl.h>
#include <opensm/osm_mcm_port.h>
#include <opensm/osm_multicast.h>
#include <opensm/osm_node.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_port.h>
#include <opensm/osm_subnet.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_version.h>
#undef delete
// clang-format on
