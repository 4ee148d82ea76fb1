// Placement algorithms: given the current LinkState, choose hosts and links for a new tenant.
// A placer is a pure search; it never changes the state (Cluster commits what it returns).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/link_state.h"

namespace laas::allocator {

struct PlaceResult {
  std::optional<Placement> placement;
  std::string reason;  // why nothing was placed; empty on success
};

class Placer {
 public:
  virtual ~Placer() = default;
  virtual std::string name() const = 0;
  // Whether tenants placed by this algorithm get dedicated links (false: bare-metal only).
  virtual bool isolates() const = 0;
  // Whether it never leaves a leaf shared by two or more owners without a free up-link
  // (management_way.h). Then the Cluster holds host lists, whole servers and repairs to the
  // same rule.
  virtual bool keeps_management_way() const { return false; }
  // Precondition: 0 < hosts <= tree size.
  virtual PlaceResult place(const LinkState& state, int hosts) const = 0;
  // Refused calls in which a search bound (node budget) stopped a search that might still
  // have found a placement: how often the answer "no" was not proven.
  virtual long budget_cuts() const { return 0; }
  // A placer for opportunistic searches (a backfill candidate, a what-if reservation): it may
  // search less deeply than this one, which places the tenants that wait in line. nullptr:
  // use this placer for those too.
  virtual std::unique_ptr<Placer> for_candidates() const { return nullptr; }
};

// Links for a tenant whose hosts are given (an administrator's explicit host list): the hosts
// must be free and shaped as Theorem 1 demands; the columns are chosen as LaasPlacer would.
PlaceResult place_on_hosts(const LinkState& state, std::vector<HostId> hosts);

// Whole servers: `servers[s]` lists server s's host ports (one a rail leaf, for a
// multi-HCA or dual-port server). Places `count` servers, all their ports or none, so that the
// tenant's ports on every rail are a placement of Theorems 1-2 over the same spines: first on
// the rail projection (rail_projection.h; one remainder leaf per rail, inside a pod or across
// pods), else -- groups the projection cannot take -- the same number of servers from every
// rail group used (a rail group: the servers cabled to the same leaves), links chosen as
// place_on_hosts does, the fewest and fullest groups first.
PlaceResult place_servers(const LinkState& state, const std::vector<std::vector<HostId>>& servers,
                          int count);

// A placer of whole servers for the simulator: `servers[s]` as for place_servers;
// a request for `hosts` ports takes hosts / ports-per-server whole servers ("laas":
// place_servers; "unconstrained": any free servers, no links). Throws std::invalid_argument
// for another algorithm or servers of different port counts.
std::unique_ptr<Placer> make_server_placer(const std::string& algorithm,
                                           std::vector<std::vector<HostId>> servers);

// "laas" (paper Algorithms 1-2), "simple" (whole sub-trees), "unconstrained" (bare metal).
// Throws std::invalid_argument naming the known algorithms. `management_way`: "laas" keeps
// the management-way rule (management_way.h); "simple" and "unconstrained" never break it
// (whole leaves, or no links).
std::unique_ptr<Placer> make_placer(const std::string& name, bool management_way = false);

// `inner`, offered only leaves no tenant holds a host of: no two owners share a leaf
// (management hosts are no owner). For an SM that sets no SL2VL first-hop drop, where tenants on
// one leaf would be separated by P_Keys only. Explicit host lists (place_on_hosts) are the
// administrator's and not constrained.
std::unique_ptr<Placer> whole_leaves(std::unique_ptr<Placer> inner);
// make_placer(name, management_way), wrapped by whole_leaves when `whole`.
std::unique_ptr<Placer> make_placer(const std::string& name, bool management_way, bool whole);

}  // namespace laas::allocator
