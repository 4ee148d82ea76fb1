// How a FatTree model sits on a real Fabric: which fabric node plays each model host and
// switch, and which physical port plays each model port. Recognition produces it from a
// discovered fabric; model_fabric builds a fabric that embeds trivially (tests, demos).
#pragma once

#include <utility>
#include <vector>

#include "topology/fabric.h"
#include "topology/fat_tree.h"

namespace laas::topology {

struct AttachedHost {
  int node = -1;  // the channel adapter's fabric node
  int port = 0;   // its cabled port
  int level = 0;  // the tree switch it is cabled to: level (1 = leaf) and index
  int index = -1;
  int switch_port = 0;  // that switch's physical port
};

struct ExtraCable {
  int node = -1, port = 0, peer = -1, peer_port = 0;  // node < peer, or the same node twice
};

// The intended tree is kept whatever is down: absent parts are listed, never a reason to
// re-derive a smaller tree. Identities are physical -- switch node GUIDs and port numbers --
// so a missing cable never renames another.
struct Embedding {
  std::vector<int> host_node;  // [HostId] -> fabric node, -1 when the host is absent
  std::vector<int> host_port;  // [HostId] -> the host's cabled physical port (0: absent)
  std::vector<std::vector<int>> switch_node;  // [level-1][index] -> fabric node, -1 when absent
  // [level-1][index] -> the switch's node GUID, kept for absent switches too (0: never seen)
  std::vector<std::vector<Guid>> switch_guid;
  // [level-1][index][model port] -> the intended physical port (index 0 unused, maps to 0).
  // Set for absent cables and absent switches too, so (switch GUID, port) always names the
  // same model host slot or link.
  std::vector<std::vector<std::vector<int>>> port_map;
  // fabric node -> (level, index); level 0 is a host, -1 a node outside the tree
  std::vector<std::pair<int, int>> node_model;
  // Absent parts. A link is missing when its cable is absent or either switch is; a host is
  // missing when its leaf port holds no host (or its leaf is absent).
  std::vector<LinkId> missing_links;                  // sorted; the allocator treats them as faulty
  std::vector<HostId> missing_hosts;                  // sorted
  std::vector<std::pair<int, int>> missing_switches;  // sorted (level, index)
  // Leaf up-links missing on every leaf of a pod whose parent is there (sorted, a subset of
  // missing_links): cabled unevenly by design -- 18 up-links over 12 spines leave 6 of the
  // 24 model columns uncabled on every leaf. Never allocated, like faults, but not
  // reported as down.
  std::vector<LinkId> uncabled;
  // Cables outside the tree: a channel adapter cabled to a tree switch at a port the
  // tree does not use (a storage or gateway host on a spine, an SM host's second cable) is an
  // attached host, routed like a destination on that switch; any other cable (between two
  // switches, to a switch outside the tree) is extra and never carries a route.
  std::vector<AttachedHost> attached;
  std::vector<ExtraCable> extra_cables;
};

// A fabric cabled exactly like the model (names comp-N / SW_L<l>_<i>, ports as laas-topogen
// writes them), with synthetic GUIDs and LIDs assigned like a subnet manager would.
std::pair<Fabric, Embedding> build_model_fabric(const FatTree& tree);

}  // namespace laas::topology
