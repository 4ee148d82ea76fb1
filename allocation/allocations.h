// The realized tenants of a routing run, as allocations.json records them: the plugin writes
// it after each run (it is the "last routed" memory the engine fails closed on), laas-audit and
// the live audit read it. Placements are kept by GUID -- host port GUIDs and (switch node GUID,
// physical port) for links -- never by model index or OpenSM pointer, so they survive
// re-discovery, renumbering and restarts, and are turned back into model placements against
// each newly recognized fabric.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "allocator/link_state.h"
#include "records/tenant_record.h"
#include "routing/audit.h"
#include "service/host_identity.h"
#include "topology/embedding.h"
#include "topology/fabric.h"
#include "topology/fat_tree.h"
#include "topology/recognize.h"

namespace laas::allocation {

using topology::Guid;

// The records are shared with laasctl's JSON and the exports (records/tenant_record.h).
using records::Endpoint;
using records::LinkRecord;
using records::TenantRecord;

// A tenant's slot holding a port GUID the tenant has not accepted: the slot stays the
// tenant's host (its record in the tenant names the recorded GUID), the newcomer is unrouted.
struct UnacceptedRecord {
  std::string tenant;
  Endpoint recorded;  // the tenant's host as recorded: name, port GUID, slot
  Endpoint seen;      // what the slot holds now: name, port GUID, LID
};

struct Allocations {
  std::string topology;              // the recognized tree's spec text
  Guid sm_port_guid = 0;             // the SM's port (a switch's port 0 or a host's port)
  std::vector<Endpoint> management;  // management hosts: reachable by all, never allocated
  std::map<std::string, TenantRecord> tenants;
  // Every SM's port recorded in the shared state: management on every SM, so the
  // audit exempts them all, as the routing does. Ports absent from the fabric are skipped.
  std::vector<Guid> sm_ports{};
  // Links isolated as faults for their error counters: the routing avoids them, so
  // the audit counts them as faulty too.
  std::vector<LinkRecord> isolated_links{};
  std::vector<UnacceptedRecord> unaccepted{};
  // laas.yaml's `servers:` map the tenants were placed with: the audit groups servers by it.
  std::map<std::string, std::string> servers{};
  // The hosts cabled outside the tree's slots that may talk to everyone (listed as management
  // or shared services, or every one while the free pool is open); every other attached host
  // is a free host for the audit. Absent (files from before the distinction): all are open.
  std::optional<std::vector<Guid>> attached_open{};
};

// JSON (see conf/laas.yaml and docs): {"version":1,"topology":..,"tenants":[{name, requested,
// shape, hosts:[{name,guid,lid,slot:{switch,port}}], links:[{switch:{name,guid,port},
// peer:{...}}], idle_links:[...]}]}. Hosts are found by slot (leaf GUID, port) when it is
// recorded, links by (switch GUID, port): physical identities, so the audit's allocations never
// shift when a cable or host is missing (files without slots fall back to host GUIDs).
std::string to_json(const Allocations& a);
Allocations allocations_from_json(const std::string& text);            // throws std::runtime_error
std::optional<Allocations> load_allocations(const std::string& path);  // nullopt: no file

// Model placement <-> GUID record on a recognized fabric. `known` (may be null): the recorded
// layout, which names the hosts that are down by the identity last seen in their slot.
TenantRecord make_record(const std::string& name, int requested,
                         const allocator::Placement& placement, const topology::FatTree& tree,
                         const topology::Embedding& emb, const topology::Fabric& fabric,
                         const topology::Layout* known = nullptr);
// Returns false (and the reason) when a host or link of the record is not in this fabric; a
// host or link that is merely absent (down) still maps.
bool to_placement(const TenantRecord& record, const topology::FatTree& tree,
                  const topology::Embedding& emb, const topology::Fabric& fabric,
                  allocator::Placement* out, std::string* why);

// Names the unaccepted slots in `a` (a.unaccepted) and makes their tenants' records
// name the host recorded for the slot (no LID), not the newcomer. `emb` is the recognized
// embedding (the newcomers present in it).
void record_unaccepted(Allocations& a, const std::vector<service::UnacceptedHost>& unaccepted,
                       const topology::Embedding& emb, const topology::Fabric& fabric);

// The audit's input: tables on a recognized fabric, the tenants of `alloc`; the SM's port,
// alloc.management and `extra_management` (port or node GUIDs) are management endpoints.
// Throws std::runtime_error naming the tenant or GUID that does not fit the fabric.
routing::AuditInput audit_input(const topology::Recognition& rec, const topology::Fabric& fabric,
                                const routing::LidTables& tables, const Allocations& alloc,
                                const std::vector<Guid>& extra_management = {});

}  // namespace laas::allocation
