// Routing chains for NVIDIA OpenSM / UFM (not in upstream OpenSM): a port groups policy file
// (pgrp_policy_file), a topologies policy file (topo_policy_file) and a routing chains policy
// file (rch_policy_file) that route each tenant's hosts over its own switches and ports.
#pragma once

#include <string>
#include <vector>

#include "export/records.h"

namespace laas::exports {

struct RoutingChainsOptions {
  enum class HostMatch { kGuid, kName };
  HostMatch host_match = HostMatch::kGuid;  // port-guid: 0x... or port-name: hostname=...
  std::string base_engine = "ftree";        // step 1, topology 0 (the whole fabric)
  std::string tenant_engine = "ftree";      // one step per tenant on its own topology
  // A fallback-to step per tenant step (the paper's release used updn); empty: none.
  std::string fallback_engine = "updn";
  std::string group_prefix = "laas_";  // groups <prefix><tenant>_hcas / _switches
};

struct RoutingChainsFiles {
  std::string port_groups;  // pgrp_policy_file
  std::string topologies;   // topo_policy_file
  std::string chains;       // rch_policy_file
};

// The files' names in the directory `laasctl export routing-chains -o DIR` writes.
inline constexpr const char* kPortGroupsFile = "port_groups.conf";
inline constexpr const char* kTopologiesFile = "topologies.conf";
inline constexpr const char* kChainsFile = "routing_chains.conf";
inline constexpr const char* kOpenSmSnippetFile = "opensm.conf.snippet";

// The opensm.conf lines that make NVIDIA OpenSM use the three files installed in `dir`.
std::string routing_chains_opensm_conf(const std::string& dir);

inline constexpr std::size_t kMaxGroupName = 64;  // LaaS's limit; the manual states none

// `tree`, when given, adds each tenant's host-facing leaf ports to its switch group (the
// records from `laasctl tenant show` list only up-links). Throws ExportError.
RoutingChainsFiles generate_routing_chains(const std::vector<TenantRecord>& tenants,
                                           const TreeRecord* tree,
                                           const RoutingChainsOptions& options);

}  // namespace laas::exports
