// Slurm: a topology.conf fragment for the tree, and scontrol reservations per tenant.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "export/records.h"

namespace laas::exports {

struct SlurmOptions {
  // Fabric node description -> Slurm node name ("comp-1" -> "node001"); unmapped names pass
  // through unchanged.
  std::map<std::string, std::string> node_names;
  std::string reservation_prefix = "laas-";   // ReservationName=<prefix><tenant>
  std::vector<std::string> users = {"root"};  // Users=; may be empty when accounts are given
  std::vector<std::string> accounts;          // Accounts=, omitted when empty
  std::string flags = "IGNORE_JOBS";          // Flags=, omitted when empty
  std::string start_time = "now";
  std::string duration = "infinite";
};

inline constexpr std::size_t kMaxSlurmName = 64;  // LaaS's limit for node/switch/reservation names

// "SwitchName=<leaf> Nodes=<hostlist>" per leaf, "SwitchName=<sw> Switches=<list>" per higher
// switch, in tree order.
std::string generate_slurm_topology(const TreeRecord& tree, const SlurmOptions& options);

// A bash script (set -euo pipefail) with one `scontrol create reservation` per tenant.
std::string generate_slurm_reservations(const std::vector<TenantRecord>& tenants,
                                        const SlurmOptions& options);

// A bash script with `scontrol delete reservation ReservationName=<prefix><tenant>` per tenant.
std::string generate_slurm_release(const std::vector<TenantRecord>& tenants,
                                   const SlurmOptions& options);

}  // namespace laas::exports
