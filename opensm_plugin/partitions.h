// A changed partitions.conf applied by OpenSM's partition manager right after the re-route's
// tables, instead of in a heavy sweep that rediscovers the whole fabric.
#pragma once

#include <string>

#include "opensm_plugin/plugin.h"

namespace laas::plugin {

// osm_pkey_mgr_process: exported by opensm, but in no installed header.
using PartitionManager = int (*)(osm_opensm_t*);
// OpenSM's partition manager, null when a partitions change must take a heavy sweep.
PartitionManager find_partition_manager();
// The service's partitions_changed hook.
void partitions_changed(Plugin* plugin);
std::string apply_partitions(Plugin* plugin);

}  // namespace laas::plugin
