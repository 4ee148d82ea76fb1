// The isolating routing engine: from a fat-tree model and its tenants' placements to model-space
// forwarding tables (a pure function), and from those to LID-indexed tables for a real fabric.
//
// The semantics the engine guarantees:
//  - every route is a minimal up*/down* path of the tree (up to the lowest common ancestor level,
//    then down), so the tables are deadlock-free and a switch's direction for a destination never
//    depends on who owns which link; ownership only picks which up-column / parallel link;
//  - a tenant host's routes at the switches its own links reach use only the tenant's links,
//    spread D-mod-K by the destination's rank among the tenant's hosts, and depend only on that
//    tenant's placement and the faulty links (no churn when other tenants come and go);
//  - a leaf has an entry for host d only if some host on it may reach d (same tenant, or a
//    management host on the leaf / an SM on the leaf switch): leaves gate what enters;
//  - the free pool is closed: free hosts are reached from management only, never from tenants or
//    from each other, so a host being re-imaged between tenants is nobody's; management
//    destinations (switches, management hosts) are reached by everyone, and every non-leaf
//    switch routes to every host, over all non-faulty links;
//  - outside tenants' own routes, a destination keeps the route it has in a fabric without
//    tenants while that route stays usable (the others spread over what is usable), so a
//    tenant change rewrites few entries beyond the tenant's own and its hosts' gating.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "allocator/link_state.h"
#include "topology/embedding.h"
#include "topology/fabric.h"
#include "topology/fat_tree.h"

namespace laas::routing {

using topology::FatTree;
using topology::HostId;
using topology::LinkId;

constexpr std::uint8_t kNoRoute = 0xFF;  // as in an LFT
constexpr std::uint8_t kSelf = 0;        // the destination is this switch (port 0)

// Inconsistent input (a host or link held twice, out of range, a management host inside a
// tenant): the caller should refuse to route tenants and fall back to the next engine.
class RoutingError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct TenantRoutes {
  std::string key;  // tenant name (only used in messages)
  allocator::Placement placement;
};

struct RoutingRequest {
  std::vector<TenantRoutes> tenants;
  std::vector<HostId> management_hosts;  // never in a tenant; reach and are reached by all
  // Switches (level, index) an SM runs on. A leaf among them routes to every host (its own hosts
  // are then only separated by partitions, which the audit reports); other levels already do.
  std::vector<std::pair<int, int>> management_switches;
  std::vector<LinkId> faulty_links;  // and the embedding's missing links
  // Only tenants' entries (everything else kNoRoute): the "tenant alone" baseline of the audit.
  bool tenants_only = false;
  // Threads for the routes to switches (0: one per core, at most kMaxThreads); the tables are
  // the same whatever the count.
  int threads = 0;
};
constexpr int kMaxThreads = 8;
// The threads a request for `requested` gets (0: one per core), between 1 and kMaxThreads.
int routing_threads(int requested);

// Model-space forwarding tables: for every switch (level, index) and every endpoint, the model
// port (1-based as in FatTree), kSelf or kNoRoute. Endpoints are the hosts (endpoint == HostId)
// followed by the switches, level by level.
class ModelTables {
 public:
  ModelTables() = default;
  explicit ModelTables(const FatTree& tree);

  int num_hosts() const { return hosts_; }
  int num_switches() const { return switches_; }
  int num_endpoints() const { return hosts_ + switches_; }
  // Global switch number: leaves first, then level 2, then level 3.
  int switch_number(int level, int index) const { return level_offset_[level - 1] + index; }
  std::pair<int, int> switch_at(int number) const;  // (level, index)
  int endpoint_of_host(HostId host) const { return host; }
  int endpoint_of_switch(int level, int index) const {
    return hosts_ + switch_number(level, index);
  }

  std::uint8_t port(int level, int index, int endpoint) const {
    return data_[row_start(switch_number(level, index)) + endpoint];
  }
  void set_port(int level, int index, int endpoint, std::uint8_t port) {
    data_[row_start(switch_number(level, index)) + endpoint] = port;
  }
  const std::uint8_t* row(int number) const { return data_.data() + row_start(number); }
  std::uint8_t* row(int number) { return data_.data() + row_start(number); }

  bool operator==(const ModelTables& o) const {
    return hosts_ == o.hosts_ && switches_ == o.switches_ && data_ == o.data_;
  }

 private:
  std::size_t row_start(int number) const {
    return static_cast<std::size_t>(number) * static_cast<std::size_t>(hosts_ + switches_);
  }
  int hosts_ = 0;
  int switches_ = 0;
  std::vector<int> level_offset_;
  std::vector<std::uint8_t> data_;
};

struct RoutingResult {
  ModelTables tables;
  // Non-fatal problems, one line each: a tenant pair with no path on its own links (faulty
  // links), a tenant holding a faulty link.
  std::vector<std::string> warnings;
};

// Throws RoutingError on inconsistent input.
RoutingResult compute(const FatTree& tree, const RoutingRequest& request);
RoutingResult compute(const FatTree& tree, const std::vector<TenantRoutes>& tenants,
                      const std::vector<HostId>& management_hosts,
                      const std::vector<LinkId>& faulty_links);

// LID-indexed tables of physical ports, one per fabric node (empty for non-switches and
// switches outside the tree): what goes into OpenSM's sw->new_lft.
using LidTable = std::vector<std::uint8_t>;
using LidTables = std::vector<LidTable>;  // [fabric node]

// The embedding with `hosts` absent (host_node -1, listed in missing_hosts): what a tenant's slot
// holding an unaccepted port GUID is to the tables: no switch routes to it, like a
// host that is down, while its tenant keeps the slot in its placement.
topology::Embedding without_hosts(const topology::Embedding& embedding,
                                  const std::vector<HostId>& hosts);

// Hosts cabled outside the tree's slots (Embedding::attached) that nobody listed as management
// or shared service: free hosts, reached from management only. An adapter on a spare port has
// no identity the administrator vouched for, so no tenant may reach it.
struct ClosedAttached {
  std::vector<int> nodes;               // fabric nodes of the unlisted attached hosts
  std::vector<int> management_sources;  // switch nodes management traffic starts from
  // Free hosts in the tree's slots: a management leaf reaches them over its management
  // up-links only (which drop every other host's packets, sl2vl.h rule 3), so an unlisted
  // host leaves a management leaf the way one of them does.
  std::vector<HostId> free_hosts;
};

// Every table has max LID + 1 entries (kNoRoute where nothing is routed; LID 0 unused). Throws
// RoutingError if the embedding does not match the tree or an endpoint has no LID.
// Hosts attached outside the tree's slots take the routes of the switch they are cabled to, and
// that switch forwards them on their port: traffic to a storage host on a spine goes where
// management traffic to the spine goes, over links no tenant holds wherever they lead there.
// Their own traffic follows their switch's entries. Those in `closed` are routed only on the
// management sources' way to their switch: every other switch has no entry for them, so a
// tenant's packet to one dies at the tenant's own leaf. A management leaf sends them up a
// management up-link towards their switch (none: no entry, only the SM's directed routes reach
// them from there); no way passes through another leaf.
LidTables to_lid_tables(const topology::Fabric& fabric, const topology::Embedding& embedding,
                        const FatTree& tree, const ModelTables& tables,
                        const ClosedAttached& closed = {});

// With LMC > 0 every port answers 2^lmc LIDs from its base LID: each channel adapter port's
// extra LIDs take its base LID's entry in every table. Tenant isolation needs one path per
// destination, so LMC's extra paths are given up, not its addressing.
void spread_lmc(const topology::Fabric& fabric, int lmc, LidTables& tables);

}  // namespace laas::routing
