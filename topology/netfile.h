// Writes a fat-tree as an ibsim / ibnetdiscover net file, so that integration tests and demos
// run exactly the trees the allocator reasons about under the real OpenSM.
#pragma once

#include <ostream>

#include "topology/fat_tree.h"

namespace laas::topology {

// Switches first (top level down, so a switch port is the file's first port), then hosts.
// Node ids are the model's names (SW_L<level>_<index>, comp-<n>); ibsim uses them as node
// descriptions, which is how the plugin and the tests map LIDs back to model positions.
void write_netfile(const FatTree& tree, std::ostream& out);

}  // namespace laas::topology
