#include "routing/owners.h"

namespace laas::routing {

void OwnerIndex::add_host(topology::Guid guid, topology::HostId host, bool present) {
  if (guid == 0) return;
  if (present)
    host_by_guid_[guid] = host;
  else
    host_by_guid_.emplace(guid, host);
}

OwnerIndex::OwnerIndex(const std::vector<topology::Guid>& host_guids,
                       const std::vector<bool>& present) {
  // Present ports first: a GUID seen now wins over the same GUID remembered for an absent slot.
  for (topology::HostId h = 0; h < static_cast<topology::HostId>(host_guids.size()); ++h)
    if (present[h]) add_host(host_guids[h], h, true);
  for (topology::HostId h = 0; h < static_cast<topology::HostId>(host_guids.size()); ++h)
    if (!present[h]) add_host(host_guids[h], h, false);
}

OwnerIndex::OwnerIndex(const topology::FatTree& tree, const topology::Embedding& emb,
                       const topology::Fabric& fabric) {
  for (topology::HostId h = 0; h < tree.num_hosts(); ++h)
    if (const int node = emb.host_node[h]; node >= 0)
      add_host(fabric.nodes[node].port_guid, h, true);
  for (int level = 1; level <= tree.height(); ++level)
    for (int i = 0; i < tree.num_switches(level); ++i)
      if (const int node = emb.switch_node[level - 1][i]; node >= 0)
        switch_by_guid_[fabric.nodes[node].guid] = {level, i};
}

std::optional<topology::HostId> OwnerIndex::host(topology::Guid port_guid) const {
  const auto it = host_by_guid_.find(port_guid);
  if (it == host_by_guid_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::pair<int, int>> OwnerIndex::switch_at(topology::Guid node_guid) const {
  const auto it = switch_by_guid_.find(node_guid);
  if (it == switch_by_guid_.end()) return std::nullopt;
  return it->second;
}

void OwnerIndex::set_tenants(const std::vector<const allocator::Placement*>& tenants,
                             int num_hosts) {
  tenant_of_.assign(num_hosts, -1);
  for (int t = 0; t < static_cast<int>(tenants.size()); ++t)
    for (topology::HostId h : tenants[t]->hosts) tenant_of_[h] = t;
}

}  // namespace laas::routing
