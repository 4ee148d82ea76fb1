// The audit: trace every relevant (source, destination) pair hop by hop through the real cables
// and LID-indexed tables (computed, or read back from the switches) and report what breaks the
// routing semantics of routing.h, plus each tenant's shift-permutation balance against the same
// tenant routed alone on the same tree.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "routing/routing.h"
#include "routing/sl2vl.h"
#include "topology/layout.h"

namespace laas::routing {

struct AuditTenant {
  std::string name;
  allocator::Placement placement;
};

// A tenant's slot holding a port GUID the tenant has not accepted: the slot is the
// tenant's, but no switch may route to the newcomer, and the audit reports it until accepted.
struct AuditUnaccepted {
  HostId host = -1;       // the slot's model host
  topology::Lid lid = 0;  // the newcomer's LID (0: it has none)
  std::string tenant;     // whose slot
  std::string name;       // the newcomer, as the fabric names it
  std::string detail;     // the slot, the recorded and the seen GUIDs
};

struct AuditInput {
  const topology::Fabric* fabric = nullptr;
  const topology::Embedding* embedding = nullptr;
  const FatTree* tree = nullptr;
  const LidTables* tables = nullptr;  // [fabric node] -> LID-indexed physical ports
  std::vector<AuditTenant> tenants;
  std::vector<HostId> management_hosts;
  // Fabric nodes that send management traffic (the SM's switch or host): they must reach every
  // host and every switch. A leaf switch among them may reach every host (like a management host).
  std::vector<int> management_nodes;
  std::vector<LinkId> faulty_links;
  // SL2VL tables (read back): when given, every (source host, destination) pair is traced
  // with them too, and they are compared with the first-hop drop plan (sl2vl.h).
  const Sl2VlTables* sl2vl = nullptr;
  // Unaccepted slots: audited as absent hosts of their tenants (the embedding is
  // taken without them when it still shows them), each reported (`unaccepted-host`), and every
  // switch's entry for the newcomer's LID must be empty (`unaccepted-host-routed`).
  std::vector<AuditUnaccepted> unaccepted{};
  // Attached hosts nobody listed (fabric nodes): free hosts, reached from management only and
  // dropped at their first switch (routing.h ClosedAttached, sl2vl.h rule 4).
  std::vector<int> closed_attached{};
  // What servers are made of (topology::group_servers, the grouping the service places by):
  // the recorded layout (may be null: the names the fabric shows) and laas.yaml's `servers:`.
  const topology::Layout* layout = nullptr;
  std::map<std::string, std::string> server_map{};
  // Keeps `embedding` alive when the input's maker built it (plugin::audit_input).
  std::shared_ptr<const topology::Embedding> owned_embedding{};
};

struct AuditOptions {
  int max_findings_per_kind = 10;  // findings kept in the report; counts are always complete
  int max_shifts = 1024;           // balance: above this many shifts, evenly spaced samples
  bool compare_private = true;     // also route each tenant alone and measure its balance
  // With SL2VL: every (source host, destination) pair is traced up to this many hosts; above,
  // sources are evenly spaced samples (every destination is still traced from each).
  int max_pair_sources = 2048;
};

enum class FindingKind {
  kTenantRouteEscapes,       // an intra-tenant route uses a link the tenant does not hold
  kFreeRouteOnTenantLink,    // a free-host route uses a link a tenant holds
  kIntraTenantUnreachable,   // two hosts of one tenant cannot reach each other
  kLoop,                     // a route revisits a switch, or leads to an uncabled port
  kOverlong,                 // a route longer than the minimal up*/down* path
  kCrossRoute,               // routing lets a host reach another tenant's / a free host
  kSharedLeaf,               // (info) only through a shared leaf: needs partition keys
  kManagementUnreachable,    // a management destination/source cannot reach/be reached
  kFreeUnreachable,          // (info, unused: free hosts need not reach each other)
  kBalanceWorseThanPrivate,  // a tenant's worst shift congestion exceeds its private routing's
  // With SL2VL tables:
  kCrossTenantSurvives,  // a packet from one owner to another tenant's host passes its first switch
  kSharedCable,          // a cable carries the own traffic of two owners
  kSl2VlMismatch,        // an (in, out) pair dropped where the plan passes, or the reverse
  kExemption,            // (info) a cross-owner (in, out) pair passed for management traffic
  kFreeHostReachable,    // a host other than management reaches a free host (the free
                         // pool is closed: free hosts are reached from management only)
  // (info) two hosts of one tenant cannot reach each other, and could not even if the tenant
  // were routed alone on the links it holds that are up: a tenant degraded by a fault
  kDegradedUnreachable,
  // (info) a management route is missing where the links and switches that are up leave no
  // up*/down* path at all (faults cut the tree; no routing of a fat-tree could do better)
  kManagementPartitioned,
  // A server (topology/servers.h) whose ports are not all its tenant's: one port held by a
  // tenant, another free, management or another tenant's
  kServerSplit,
  // A tenant's slot holds a port GUID the tenant has not accepted (`host accept`)
  kUnacceptedHost,
  // A switch routes to an unaccepted newcomer's LID (nobody may reach it)
  kUnacceptedHostRouted,
  // A host cabled outside the tree's slots (a storage host on a spine) and a tenant or
  // management host do not reach each other
  kAttachedUnreachable,
  // Traffic from a tenant's host to such a host crosses a link another tenant holds
  kAttachedCrossesTenant,
  // (info) Traffic from such a host on a spine to a tenant's host goes down a link another
  // tenant holds: the only link from that spine to the host's leaf (no routing can avoid it;
  // cable shared services to a leaf to keep it off tenants' links)
  kAttachedReplySharesLink,
  // an attached host nobody listed (a free host outside the slots) reached from a host that is
  // not management, or its traffic passing its first switch towards such a host
  kUnlistedAttachedReachable,
};

const char* to_string(FindingKind kind);
bool is_violation(FindingKind kind);

struct Finding {
  FindingKind kind;
  std::string tenant;       // the tenant concerned, empty if none
  std::string source;       // a node name (source leaf switch, or host)
  std::string destination;  // a node name
  std::string detail;
};

struct TenantBalance {
  std::string tenant;
  int hosts = 0;
  int shifts = 0;          // shift permutations evaluated
  bool sampled = false;    // fewer than all hosts - 1 shifts
  int worst = 0;           // max flows on one directed link, over the shifts evaluated
  int private_worst = -1;  // the same, tenant routed alone on the same tree (-1: not computed)
};

struct AuditReport {
  std::map<std::string, long> counts;  // by to_string(kind); kinds with no finding are absent
  std::vector<Finding> findings;       // at most max_findings_per_kind of each kind
  std::vector<TenantBalance> balance;
  long traces = 0;                      // (source switch, destination) paths followed
  std::map<std::string, long> figures;  // SL2VL checks: pairs traced, dropped, cables...
  std::vector<std::string> exemptions;  // every management exemption, one line each
  long violations() const;
  bool ok() const { return violations() == 0; }
  long count(FindingKind kind) const;
};

// Throws std::invalid_argument when the input pointers are missing or the embedding does not
// match the tree.
AuditReport audit(const AuditInput& input, const AuditOptions& options = {});

nlohmann::json to_json(const AuditReport& report);

}  // namespace laas::routing
