// OpenStack: one host aggregate per tenant, isolated to the tenant's project with the
// AggregateMultiTenancyIsolation filter's filter_tenant_id property.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "export/records.h"

namespace laas::exports {

struct OpenStackOptions {
  std::map<std::string, std::string> projects;    // tenant name -> project ID (default: the name)
  std::map<std::string, std::string> host_names;  // fabric node description -> compute host
  std::string aggregate_prefix = "laas-";         // aggregate <prefix><tenant>
};

inline constexpr std::size_t kMaxOpenStackName = 255;  // nova: aggregate and host names
inline constexpr std::size_t kMaxProjectId = 64;       // keystone: project IDs

// bash script: aggregate create, set --property filter_tenant_id=..., add host per host.
std::string generate_openstack_add(const std::vector<TenantRecord>& tenants,
                                   const OpenStackOptions& options);
// bash script: remove host per host, then aggregate delete.
std::string generate_openstack_remove(const std::vector<TenantRecord>& tenants,
                                      const OpenStackOptions& options);

}  // namespace laas::exports
