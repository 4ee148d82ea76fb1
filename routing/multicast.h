// Multicast isolation: the spanning tree of one multicast group (what goes into the switches'
// multicast forwarding tables, MFTs), and the audit of MFTs read back from the switches.
//
// Policy (the tree builder and the audit agree on it):
//  - A group is classified by its member hosts. Management members (management hosts, switches
//    joining themselves) never change the class.
//      tenant T   every member host belongs to tenant T (e.g. the IPoIB broadcast group of T's
//                 partition): T's members are joined over T's own links only; management
//                 members, if any, are attached to that tree over T's links and links no
//                 tenant holds (never another tenant's).
//      shared     member hosts of several tenants, or free hosts, or management members only
//                 (e.g. the default partition's broadcast group): joined over links no tenant
//                 holds where possible, then over links of the tenants that have members in
//                 the group. A shared tree is the management exemption of multicast: the
//                 audit lists every tenant link it uses.
//  - No group ever uses a link of a tenant without a member in it, nor a faulty link: a member
//    that cannot be reached that way is left out and reported.
//  - Trees are rooted at the lowest level that spans the members (the members' lowest common
//    ancestor level, as up*/down* routes are), at the root that reaches every member at the
//    lowest cost; `seed` (the MLID) spreads groups over equally good roots.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "routing/audit.h"
#include "routing/routing.h"

namespace laas::routing {

struct McastPolicy {
  std::vector<TenantRoutes> tenants;
  std::vector<HostId> management_hosts;
  std::vector<LinkId> faulty_links;  // and the embedding's missing links
};

struct McastGroup {
  std::vector<HostId> hosts;                  // member host ports
  std::vector<std::pair<int, int>> switches;  // member switches (level, index), port 0
  unsigned seed = 0;                          // e.g. the MLID
};

enum class McastClass { kTenant, kShared };

struct McastTree {
  McastClass cls = McastClass::kShared;
  int tenant = -1;  // index into McastPolicy::tenants when cls == kTenant
  // Model ports (0: the switch itself) per switch, keyed by (level, index); switches outside
  // the tree are absent. Ports are sorted.
  std::map<std::pair<int, int>, std::vector<int>> ports;
  std::vector<LinkId> links;          // the tree's switch-to-switch links, sorted
  std::vector<LinkId> exempt_links;   // tenant-held links a shared tree uses, sorted
  std::vector<HostId> unreached;      // member hosts the policy's links cannot join
  std::vector<std::string> warnings;  // one line per problem
};

// Throws RoutingError on inconsistent input (a host or link out of range, held twice).
McastTree build_multicast_tree(const FatTree& tree, const McastPolicy& policy,
                               const McastGroup& group);

std::string to_string(McastClass cls);

// The tree's ports as physical ports of fabric nodes: one (node, sorted ports) per switch of the
// tree, what goes into that switch's MFT row for the group. Switches absent from the embedding
// are skipped.
std::vector<std::pair<int, std::vector<int>>> physical_ports(const topology::Embedding& embedding,
                                                             const McastTree& tree);

// ---- the audit --------------------------------------------------------------------------------

// Multicast forwarding tables of one switch: MLID -> physical ports (0 = the switch itself).
using Mft = std::map<std::uint16_t, std::vector<int>>;
using Mfts = std::vector<Mft>;  // [fabric node]; empty for non-switches

enum class McastFindingKind {
  kEscapes,      // a one-tenant group on a link that is not the tenant's (or a free link when
                 // the group has no management receiver)
  kForeignLink,  // a shared group on a link of a tenant with no receiver in the group
  kLoop,         // the tables forward the group's packets around a cycle
  kUnreachable,  // a receiver of the group does not get another receiver's packets
  kNonMember,    // a host receives a group it has not joined (when membership is known)
  kExemption,    // (info) a shared or management group on a tenant's or a free link
};

const char* to_string(McastFindingKind kind);
bool is_violation(McastFindingKind kind);

struct McastFinding {
  McastFindingKind kind;
  std::uint16_t mlid = 0;
  std::string tenant;  // the group's tenant, or the tenant whose link is concerned
  std::string where;   // switch and port, or host
  std::string detail;
};

struct McastGroupReport {
  std::uint16_t mlid = 0;
  std::string cls;     // "tenant", "tenant+management", "shared", "management", "none"
  std::string tenant;  // for tenant classes
  int receivers = 0;   // host ports in the tables
  int switches = 0;    // switches with an entry
  int links = 0;       // switch-to-switch links the group uses
};

struct McastAuditReport {
  std::map<std::string, long> counts;  // by to_string(kind)
  std::vector<McastFinding> findings;  // at most max_findings_per_kind of each kind
  std::vector<McastGroupReport> groups;
  long violations() const;
  bool ok() const { return violations() == 0; }
  long count(McastFindingKind kind) const;
};

// Membership known from the SA (optional): MLID -> member hosts.
using McastMembership = std::map<std::uint16_t, std::vector<HostId>>;

// Audits `mfts` (one slot per fabric node) against the tenants of `input` (its LFTs are not
// used). Throws std::invalid_argument when the input does not match the tree.
McastAuditReport audit_multicast(const AuditInput& input, const Mfts& mfts,
                                 const McastMembership* membership = nullptr,
                                 int max_findings_per_kind = 10);

nlohmann::json to_json(const McastAuditReport& report);

}  // namespace laas::routing
