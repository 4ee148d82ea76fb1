// OpenStack: one host aggregate per tenant, tagged with the tenant's project ID
// (filter_tenant_id), so that Nova keeps other projects off the tenant's hosts
// (AggregateMultiTenancyIsolation) and the tenant's own instances on them
// ([scheduler] limit_tenants_to_placement_aggregate).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "export/records.h"

namespace laas::exports {

struct OpenStackOptions {
  // Tenant name -> project ID, for tenants created without --openstack-project. A tenant in
  // neither is looked up at run time: the project named like the tenant
  // (`openstack project show -f value -c id NAME`).
  std::map<std::string, std::string> projects;
  // Host name (first word of the node description, or the whole description) -> compute host.
  std::map<std::string, std::string> host_names;
  std::string aggregate_prefix = "laas-";  // aggregate <prefix><tenant>
};

inline constexpr std::size_t kMaxOpenStackName = 255;  // nova: aggregate and host names
inline constexpr std::size_t kMaxProjectId = 64;       // keystone: project IDs

// The nova.conf settings both scripts rely on (also written at the head of each).
extern const char* const kNovaSchedulerSettings;

// bash script: for each tenant, its aggregate created if missing, filter_tenant_id set to its
// project, hosts added/removed to be exactly the tenant's. Safe to run again.
std::string generate_openstack_add(const std::vector<TenantRecord>& tenants,
                                   const OpenStackOptions& options);
// bash script: each tenant's aggregate emptied and deleted, if it exists. Safe to run again.
std::string generate_openstack_remove(const std::vector<TenantRecord>& tenants,
                                      const OpenStackOptions& options);

}  // namespace laas::exports
