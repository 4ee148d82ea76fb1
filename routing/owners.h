// The ownership index of one routing run: which model host a port GUID is (cabled now, or the
// slot that last held it when it is down) and whose that host is (a tenant, or nobody). Built
// once from the recognized fabric and handed to whoever looks a port up -- the management
// derivation, the multicast groups, the audit's membership, the service's views -- so that
// every one of them resolves a GUID by the same rule: a port seen now wins over the same GUID
// remembered for a slot that is down (the host moved).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "allocator/link_state.h"
#include "topology/embedding.h"
#include "topology/fabric.h"
#include "topology/fat_tree.h"

namespace laas::routing {

class OwnerIndex {
 public:
  OwnerIndex() = default;
  // `host_guids[h]`: the port GUID of host h, cabled now or last seen in its slot (0: never
  // seen); `present[h]`: whether it is cabled now.
  OwnerIndex(const std::vector<topology::Guid>& host_guids, const std::vector<bool>& present);
  // The hosts and switches cabled now (hosts that are down are not indexed).
  OwnerIndex(const topology::FatTree& tree, const topology::Embedding& emb,
             const topology::Fabric& fabric);

  // The host a port GUID is: the one cabled with it now, else the slot that last held it.
  std::optional<topology::HostId> host(topology::Guid port_guid) const;
  // A switch cabled now by its node GUID: (level, index).
  std::optional<std::pair<int, int>> switch_at(topology::Guid node_guid) const;

  // Whose each host is: `tenants[t]` owns the hosts of its placement. Replaces what was set.
  void set_tenants(const std::vector<const allocator::Placement*>& tenants, int num_hosts);
  // The tenant (index into set_tenants' list) holding `host`; -1: none.
  int tenant_of(topology::HostId host) const {
    return host < static_cast<topology::HostId>(tenant_of_.size()) ? tenant_of_[host] : -1;
  }

 private:
  void add_host(topology::Guid guid, topology::HostId host, bool present);

  std::unordered_map<topology::Guid, topology::HostId> host_by_guid_;
  std::unordered_map<topology::Guid, std::pair<int, int>> switch_by_guid_;
  std::vector<int> tenant_of_;
};

}  // namespace laas::routing
