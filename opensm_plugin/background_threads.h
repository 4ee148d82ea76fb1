// The plugin's threads beside OpenSM's: the control socket, the watcher (SMs, the state
// directory, tenants.yaml) and the switch check. Each one that cannot start is logged and the
// plugin goes on without it.
#pragma once

#include "core/config.h"
#include "opensm_plugin/plugin.h"

namespace laas::plugin {

void start_socket(Plugin* plugin, const core::Config& config);
void start_watcher(Plugin* plugin);
void start_switch_check(Plugin* plugin);
void stop_threads(Plugin* plugin);

}  // namespace laas::plugin
