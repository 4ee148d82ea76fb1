// Slurm: a topology.conf for the tree, and scripts that create/update and delete one
// reservation (and optionally one partition) per tenant.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "export/records.h"

namespace laas::exports {

struct SlurmOptions {
  // Host name -> Slurm node name ("comp-1" -> "node001"). A host's name is the first word of
  // its node description (rdma-ndd writes "%h %d"); a key may also be the whole description.
  // Unmapped names pass through unchanged.
  std::map<std::string, std::string> node_names;
  std::string reservation_prefix = "laas-";  // ReservationName=<prefix><tenant>
  std::string switch_prefix = "ibsw-";       // SwitchName=<prefix><16 hex digits of the GUID>
  // Who may use a tenant's reservation when the tenant was created without --slurm-account /
  // --slurm-user: Users= (default root only) and Accounts=.
  std::vector<std::string> users = {"root"};
  std::vector<std::string> accounts;
  bool magnetic = false;  // Flags=MAGNETIC: eligible jobs land there without --reservation
  std::string start_time = "now";
  std::string duration = "infinite";
  // Also a Slurm partition per tenant, named like its reservation, on its hosts
  // (AllowAccounts= its accounts when it has some), created or updated with scontrol: users
  // submit with -p laas-<tenant> (with `magnetic`, such jobs land in the reservation). Made
  // with `scontrol create`, it lasts until slurmctld restarts or reconfigures: run the script
  // again then.
  bool partitions = false;
  // The reservations script also deletes <prefix>* reservations of tenants not listed (set
  // when exporting every tenant: a removed tenant's reservation would hold hosts that are
  // now another tenant's).
  bool prune = false;
};

inline constexpr std::size_t kMaxSlurmName = 64;  // LaaS's limit for node/switch/reservation names

// "SwitchName=<leaf> Nodes=<hostlist>" per leaf, "SwitchName=<sw> Switches=<list>" per higher
// switch, in tree order. Switch names derive from GUIDs: unique, stable, accepted by Slurm
// (a switch's node description, e.g. "MF0;sw01:MQM8700/U1", is often neither); a comment
// gives each one's description.
std::string generate_slurm_topology(const TreeRecord& tree, const SlurmOptions& options);

// A bash script (set -euo pipefail) that creates each tenant's reservation or, when it exists,
// updates it to the tenant's hosts and users: safe to run again after any tenant change.
std::string generate_slurm_reservations(const std::vector<TenantRecord>& tenants,
                                        const SlurmOptions& options);

// A slurm.conf include file (`Include laas-partitions.conf`): one partition per tenant, named
// like its reservation, on its nodes (AllowAccounts= its Slurm accounts when it has some; a
// partition has no user list), applied by `scontrol reconfigure`. laas-slurm(8) keeps it current.
std::string generate_slurm_partitions(const std::vector<TenantRecord>& tenants,
                                      const SlurmOptions& options);

// A bash script that deletes each tenant's reservation if it exists
// (`scontrol delete ReservationName=<prefix><tenant>`).
std::string generate_slurm_release(const std::vector<TenantRecord>& tenants,
                                   const SlurmOptions& options);

// The Slurm node name of a host record's name (node description).
std::string slurm_node_name(const SlurmOptions& options, const std::string& description);

}  // namespace laas::exports
