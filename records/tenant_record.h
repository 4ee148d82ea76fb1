// A realized tenant by physical identity: the one record that allocations.json stores (the
// plugin writes it, laas-audit and the live audit read it), that `laasctl tenant show --json`
// prints and that every export generator (partitions, routing chains, Slurm, OpenStack) reads.
// Identities only -- port and node GUIDs, physical ports, names -- never model indices or OpenSM
// pointers, so a record survives re-discovery, renumbering and restarts. Data only: the readers
// and writers live with their formats (allocation/allocations.h, export/records.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace laas::records {

using Guid = std::uint64_t;

// A host port, or one end of a cable on a switch.
struct Endpoint {
  std::string name;  // node description, e.g. "comp-1" or "SW_L1_0"
  Guid guid = 0;     // port GUID for hosts (0: an absent host), node GUID for switches
  int port = 0;      // a switch's physical port (in SwitchRecord::down: the parent's port)
  int lid = 0;       // hosts: the port's LID when routed (0: unknown or absent)
  // Hosts: the slot that identifies them, the leaf switch's node GUID and port (0: not known).
  Guid slot_switch = 0;
  int slot_port = 0;
};

// An up-link: `lower` is the lower switch and its up-port (JSON "switch"), `upper` the parent and
// its down-port (JSON "peer").
struct LinkRecord {
  Endpoint lower;
  Endpoint upper;
};

struct TenantRecord {
  std::string name;
  int requested = 0;                    // hosts (ports) asked for; 0 where the source does not say
  std::string shape;                    // the placement's shape, e.g. "2 leaves x 4"; may be empty
  std::optional<std::uint16_t> pkey{};  // explicit P_Key (low 15 bits); else derived from name
  std::vector<Endpoint> hosts;
  std::vector<LinkRecord> links;   // routed over
  std::vector<LinkRecord> idle{};  // held but retired by a repair
  // Given when the tenant was created (laasctl tenant add --slurm-account/--slurm-user/
  // --openstack-project) and persisted with it; empty when not given.
  std::vector<std::string> slurm_accounts{};
  std::vector<std::string> slurm_users{};
  std::string openstack_project{};
};

// A host port's endpoint from its name, port GUID and LID.
inline Endpoint host_endpoint(std::string name, Guid guid, int lid) {
  Endpoint e;
  e.name = std::move(name);
  e.guid = guid;
  e.lid = lid;
  return e;
}

}  // namespace laas::records
