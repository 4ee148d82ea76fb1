// Multicast without a subnet manager: what the last routing run knew (tree, embedding,
// tenants, management hosts), kept so that an adapter's tree callback (the plugin's
// mcast_build_stree) -- called for every group on joins and sweeps, between routing runs -- can
// build a group's tree from its member port GUIDs and hand back MFT rows keyed by switch GUID.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "routing/multicast.h"
#include "routing/owners.h"
#include "topology/embedding.h"
#include "topology/fabric.h"
#include "topology/fat_tree.h"

namespace laas::core {

using topology::Guid;

struct McastContext {
  McastContext(const topology::FatTree& t, const topology::Fabric& fabric,
               const topology::Embedding& emb, routing::McastPolicy p);

  topology::FatTree tree;
  topology::Embedding embedding;
  routing::McastPolicy policy;
  routing::OwnerIndex owners;   // member port GUIDs -> hosts and switches of `embedding`
  std::vector<Guid> node_guid;  // [fabric node]
};

struct McastOutcome {
  bool ok = false;
  std::string error;
  std::string group;  // "tenant NAME" or "shared"
  // Switch node GUID -> the physical ports of its MFT row for the group (0: the switch).
  std::vector<std::pair<Guid, std::vector<int>>> rows;
  std::vector<std::string> warnings;
};

McastOutcome multicast_tree(const McastContext& ctx, const std::vector<Guid>& member_ports,
                            unsigned mlid);

// Whether two policies give every group the same tree (same tenants, hosts, links, management
// hosts, faulty links); when they differ after a routing run, every group must be rebuilt.
bool same_policy(const routing::McastPolicy& a, const routing::McastPolicy& b);

}  // namespace laas::core
