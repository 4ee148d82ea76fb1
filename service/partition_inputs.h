// What a managed partitions.conf is made of (service/partition_inputs.cc), the master's and
// every standby's alike: the tenants with their P_Keys and host port GUIDs, and the ports that
// are full members beyond them. The master computes the members from the fabric it routes and
// records them in the shared state (PersistedState); a standby, which routes nothing, reads
// them there. Both files come out of managed_partitions_text, so a standby that becomes master
// starts from the very file the old master had.
#pragma once

#include <string>
#include <vector>

#include "export/partitions.h"
#include "export/records.h"
#include "service/state_store.h"

namespace laas::service {

struct PartitionMembers {
  // Full members of every tenant partition and of the default one, in this order.
  std::vector<topology::Guid> management;  // management hosts in the tree's slots
  std::vector<topology::Guid> outside;     // ports routed outside the tree (shared services)
  // The free hosts of an open free pool (free_pool: open): they reach everyone, as before LaaS.
  std::vector<topology::Guid> free_pool;
  // Recorded tenants the master does not route (not on its fabric): no partition.
  std::vector<std::string> unrouted;
  bool operator==(const PartitionMembers& o) const {
    return management == o.management && outside == o.outside && free_pool == o.free_pool &&
           unrouted == o.unrouted;
  }
};

// As the master recorded them (empty lists in a state written before they were recorded).
PartitionMembers recorded_members(const PersistedState& state);
// Records `members` in `state`; true when that changed it.
bool record_members(const PartitionMembers& members, PersistedState& state);

// A tenant as partitions.conf needs it: name, P_Key (0: assigned by hash) and host port GUIDs.
exports::TenantRecord partition_record(const PersistedTenant& tenant);
// The recorded tenants the master routes, in name order (the master's tenant order).
std::vector<exports::TenantRecord> recorded_partition_tenants(const PersistedState& state);

// The file. `tenants` in name order; `options` carries the administrator's base and SELF
// (ServiceExports::partition_options). Throws exports::ExportError.
std::string managed_partitions_text(const std::vector<exports::TenantRecord>& tenants,
                                    const PartitionMembers& members,
                                    exports::PartitionOptions options);

}  // namespace laas::service
