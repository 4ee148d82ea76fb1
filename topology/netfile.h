// Writes a fat-tree as an ibsim / ibnetdiscover net file, so that integration tests and demos
// run exactly the trees the allocator reasons about under the real OpenSM.
#pragma once

#include <ostream>

#include "topology/fat_tree.h"

namespace laas::topology {

// Switches first (top level down, so a switch port is the file's first port), then hosts.
// Node ids are the model's names (SW_L<level>_<index>, comp-<n>); ibsim uses them as node
// descriptions, which is how the plugin and the tests map LIDs back to model positions.
//
// Servers with several ports: with `rails` R > 1, leaf i serves rail i % R of server
// group i / R (R consecutive leaves per group: a rail-optimized tree), and the host in slot k of
// a group's leaves is one server, "srv<n>", with one port on each of its R rail leaves: an HCA
// per rail ("srv<n> mlx5_<r>", the GPU server's layout) or, with `multi_port`, one HCA with R
// ports ("srv<n>", the dual-port HCA). The number of leaves per pod must be a multiple of R.
struct NetfileOptions {
  int rails = 1;
  bool multi_port = false;
};
void write_netfile(const FatTree& tree, std::ostream& out, const NetfileOptions& options = {});

}  // namespace laas::topology
