// How a FatTree model sits on a real Fabric: which fabric node plays each model host and
// switch, and which physical port plays each model port. Recognition produces it from a
// discovered fabric; model_fabric builds a fabric that embeds trivially (tests, demos).
#pragma once

#include <utility>
#include <vector>

#include "topology/fabric.h"
#include "topology/fat_tree.h"

namespace laas::topology {

struct Embedding {
  std::vector<int> host_node;                 // [HostId] -> fabric node
  std::vector<int> host_port;                 // [HostId] -> the host's cabled physical port
  std::vector<std::vector<int>> switch_node;  // [level-1][index] -> fabric node
  // [level-1][index][model port] -> physical port (index 0 unused, maps to 0)
  std::vector<std::vector<std::vector<int>>> port_map;
  // fabric node -> (level, index); level 0 is a host, -1 a node outside the tree
  std::vector<std::pair<int, int>> node_model;
  std::vector<LinkId> missing_links;  // model up-links with no cable: treat as faulty
};

// A fabric cabled exactly like the model (names comp-N / SW_L<l>_<i>, ports as laas-topogen
// writes them), with synthetic GUIDs and LIDs assigned like a subnet manager would.
std::pair<Fabric, Embedding> build_model_fabric(const FatTree& tree);

}  // namespace laas::topology
