// What a managed partitions.conf is made of (service/partition_inputs.h).
#include "service/partition_inputs.h"

#include <algorithm>
#include <set>

namespace laas::service {

PartitionMembers recorded_members(const PersistedState& state) {
  return {state.management, state.outside_members, state.free_pool_members, state.unrouted_tenants};
}

bool record_members(const PartitionMembers& members, PersistedState& state) {
  if (recorded_members(state) == members) return false;
  state.management = members.management;
  state.outside_members = members.outside;
  state.free_pool_members = members.free_pool;
  state.unrouted_tenants = members.unrouted;
  return true;
}

exports::TenantRecord partition_record(const PersistedTenant& tenant) {
  exports::TenantRecord r;
  r.name = tenant.name;
  if (tenant.pkey) r.pkey = tenant.pkey;
  r.hosts.reserve(tenant.hosts.size());
  for (const auto& h : tenant.hosts) r.hosts.push_back(records::host_endpoint(h.name, h.guid, 0));
  return r;
}

std::vector<exports::TenantRecord> recorded_partition_tenants(const PersistedState& state) {
  const std::set<std::string> unrouted(state.unrouted_tenants.begin(),
                                       state.unrouted_tenants.end());
  std::vector<const PersistedTenant*> routed;
  for (const auto& t : state.tenants)
    if (!unrouted.count(t.name)) routed.push_back(&t);
  std::sort(routed.begin(), routed.end(),
            [](const PersistedTenant* a, const PersistedTenant* b) { return a->name < b->name; });
  std::vector<exports::TenantRecord> out;
  out.reserve(routed.size());
  for (const auto* t : routed) out.push_back(partition_record(*t));
  return out;
}

std::string managed_partitions_text(const std::vector<exports::TenantRecord>& tenants,
                                    const PartitionMembers& members,
                                    exports::PartitionOptions options) {
  for (const auto* list : {&members.management, &members.outside, &members.free_pool})
    for (auto g : *list) options.management.push_back({guid_hex(g), exports::Membership::kFull});
  return exports::generate_partitions(tenants, options);
}

}  // namespace laas::service
