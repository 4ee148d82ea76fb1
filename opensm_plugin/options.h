// What OpenSM's options mean for LaaS: laas.yaml (event_plugin_options) and the managed
// partitions file, and the options that weaken tenant isolation (keys, qos) or change routing
// (LMC), said in OpenSM's log.
#pragma once

#include "core/config.h"
#include "opensm_plugin/plugin.h"

namespace laas::plugin {

core::Config read_config(osm_opensm_t* osm);
// The keys and qos options, checked at start and at every routing run.
void check_qos(Plugin* plugin);
void note_lmc(Plugin* plugin);
// A switch in OpenSM's environment (LAAS_OPENSM_HOPS, LAAS_PARTITIONS_HEAVY_SWEEP, ...): set to
// anything but "" or "0".
bool env_switch_on(const char* name);

}  // namespace laas::plugin
