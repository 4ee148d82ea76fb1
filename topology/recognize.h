// Recognition: a discovered Fabric -> the FatTree it is, and how the model sits on it.
//
// Levels are ranked from the hosts up: leaves are the switches with channel adapters, every
// other switch sits one level above the first switch level it is cabled to. The parameters
// m_i, w_i, p_i are read off the graph (pods are the connected leaf/level-2 components, p_i
// the largest number of parallel cables between two switches). Node and port numbering,
// GUIDs and names may be in any order. Model indices are chosen deterministically: leaves,
// hosts and switches in natural order of their node description (then GUID), subject to
// the tree's structure, so a fabric written by laas-topogen embeds as the identity.
//
// A fat-tree with some switch-to-switch cables absent is still recognized: the absent model
// links are listed in Embedding::missing_links (the allocator treats them as faulty) and
// their port_map entries are 0. Anything else that does not fit -- extra cables, nodes off
// the tree, unequal leaves or pods, more than three levels -- is refused with a reason.
#pragma once

#include <optional>
#include <string>

#include "topology/embedding.h"
#include "topology/fabric.h"
#include "topology/fat_tree.h"

namespace laas::topology {

struct Recognition {
  std::optional<FatTree> tree;  // set on success
  Embedding embedding;
  std::string error;    // why the fabric is not a fat-tree we recognize; empty on success
  int sm_node = -1;     // fabric node holding the SM's port (-1: not given or not found)
  HostId sm_host = -1;  // the model host running the SM, -1 when the SM is on a switch
  bool ok() const { return tree.has_value(); }
};

// `sm_port_guid` (0: unknown) is the port GUID the subnet manager runs on.
Recognition recognize(const Fabric& fabric, Guid sm_port_guid = 0);

// Checks that `emb` places `tree` on `fabric`: every host and every present model link maps to
// a real cable between the mapped ports, and every cable of the fabric is one of them. Returns
// an empty string when it does, else the first mismatch. Used by tests and as a self-check.
std::string verify_embedding(const FatTree& tree, const Embedding& emb, const Fabric& fabric);

// Natural order of names ("comp-2" < "comp-10"); used to number hosts and switches.
bool natural_less(const std::string& a, const std::string& b);

}  // namespace laas::topology
