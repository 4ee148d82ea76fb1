// Physical identities of a tree's parts on one recognized fabric: a host slot is
// (leaf switch node GUID, physical port), an up-link is (lower switch node GUID, physical
// up-port). They come from the embedding's intended ports and switch GUIDs, which are kept for
// absent cables, hosts and switches too, so a part that is down keeps its name and never
// renames another.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "allocator/cluster.h"
#include "routing/owners.h"
#include "service/state_store.h"
#include "topology/embedding.h"
#include "topology/layout.h"

namespace laas::service {

class PhysicalIds {
 public:
  // The references must outlive this object. `index`: build the reverse lookups (host_at,
  // host_by_port_guid, link_at); without them only the forward identities work. `known` (may
  // be null; ignored when it records another tree) is the recorded layout: the names and port
  // GUIDs that parts now absent had when last seen.
  PhysicalIds(const topology::FatTree& tree, const topology::Embedding& emb,
              const topology::Fabric& fabric, bool index = true,
              const topology::Layout* known = nullptr);

  // Host slot and link identities; an absent host has the port GUID and name last seen in its
  // slot (GUID 0 and an empty name when never seen).
  PersistedHost host(topology::HostId h) const;
  PersistedLink link(topology::LinkId l) const;
  std::optional<topology::HostId> host_at(topology::Guid leaf_guid, int port) const;
  std::optional<topology::HostId> host_by_port_guid(topology::Guid port_guid) const;
  std::optional<topology::LinkId> link_at(topology::Guid switch_guid, int port) const;

  topology::Guid switch_guid(int level, int index) const;
  // The fabric's name of a switch; for an absent one its name when last seen, or a name made
  // from its GUID.
  std::string switch_name(int level, int index) const;
  // "<switch name> port <physical port>" of a link's lower end.
  std::string link_name(topology::LinkId l) const;
  // The upper end of a link: (switch level, index) and its physical down-port.
  std::pair<std::pair<int, int>, int> link_upper(topology::LinkId l) const;
  bool host_present(topology::HostId h) const { return emb_.host_node.at(h) >= 0; }

 private:
  int physical(int level, int index, int model_port) const;

  const topology::FatTree& tree_;
  const topology::Embedding& emb_;
  const topology::Fabric& fabric_;
  const topology::Layout* known_ = nullptr;
  std::map<std::pair<topology::Guid, int>, topology::HostId> host_at_;
  routing::OwnerIndex owners_;  // host port GUIDs, cabled now or last seen in their slots
  std::map<std::pair<topology::Guid, int>, topology::LinkId> link_at_;
};

// A saved tenant in model terms on one fabric: what Cluster::restore takes.
struct ModelTenant {
  allocator::Placement intended;  // hosts and links as placed
  std::vector<allocator::Repair> repairs;
};

// Maps a saved tenant onto the fabric by physical identity. nullopt when a part is not in this
// tree at all (`missing` then names each); a part that is merely down always maps.
std::optional<ModelTenant> to_model(const PersistedTenant& t, const PhysicalIds& ids,
                                    std::string* missing);

// The record to save for a placed tenant. `old` (its previous record, may be null) supplies the
// P_Key and the port GUID and name of every slot it recorded one for: of hosts that are down
// now, and of slots where another port GUID is seen (only `host accept` changes it).
PersistedTenant to_persisted(const allocator::Tenant& t, const PhysicalIds& ids,
                             const PersistedTenant* old);

}  // namespace laas::service
