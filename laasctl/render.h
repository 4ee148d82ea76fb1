// Text views of an allocation for administrators: the paper's leaf x spine link table.
#pragma once

#include <map>
#include <string>

#include "allocator/cluster.h"

namespace laas::ctl {

// One row per leaf (and per level-2 switch on 3-level trees): its hosts as tenant letters and
// its up-link columns as tenant letters, '.' free, 'X' faulty. `color` adds ANSI colours.
std::string render_allocation_map(const allocator::Cluster& cluster, bool color);

}  // namespace laas::ctl
