// The live audit (laasctl audit): the tables the switches hold now, as OpenSM's copies say,
// checked by the core against the tenants.
#pragma once

#include <nlohmann/json.hpp>

#include "opensm_plugin/plugin.h"

namespace laas::plugin {

// Takes OpenSM's lock: never call it from the sweeper thread.
nlohmann::json audit_live(Plugin* plugin);

}  // namespace laas::plugin
