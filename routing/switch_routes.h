// The routes to switches, a phase of compute.cc's TableComputation: minimum-hop over the open
// switch-to-switch links (management traffic only; like ftree, switch-to-switch routes are not
// restricted to up*/down*), not over the management up-links of a shared management leaf;
// switches the open links cannot reach fall back to every non-faulty link. An incremental run
// reuses the previous run's distances (SwitchRoutesMemo) where they provably stay.
// Internal to routing/.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "routing/incremental.h"
#include "routing/route_input.h"

namespace laas::routing::phases {

class SwitchRoutes {
 public:
  // With `memo`, the distances are kept there for the next run, and with `reuse` as well the
  // memo's (the previous run's) are reused where they provably stay.
  SwitchRoutes(const RouteInput& in, const ManagementLinks& mgmt, ModelTables& out,
               SwitchRoutesMemo* memo, bool reuse);

  // Writes every switch's entries for every switch; returns how many destination switches'
  // routes were computed again in full (the others' only at the switches whose links changed).
  int run();

 private:
  // Distances over open links only (strict), over open links and a tenant's link as the last
  // hop (open), over every link but the management up-links of shared leaves (unblocked),
  // over every working link (all).
  enum Mode { kStrict, kOpen, kUnblocked, kAll };
  // One thread's distances, its BFS queue and the ports of a batch of destinations.
  struct Scratch {
    std::vector<int> strict, dist, dist_unblocked, dist_all, queue, whole;
    std::vector<std::uint8_t> ports;  // [destination in batch][switch]
  };

  // ---- the switch graph ----
  void build_graph();
  void add_up_arcs(int level, int index);
  void add_down_arcs(int level, int index);
  void bfs(Scratch& sc, int dst, Mode mode, std::vector<int>& d) const;

  // ---- choosing a port ----
  template <class Ok>
  int spread_arc(int u, int dst, Ok&& ok) const;
  std::uint8_t port_of(int a) const {
    return a < 0 ? kNoRoute : static_cast<std::uint8_t>(arcs_[a].second);
  }
  template <class S, class W>
  std::uint8_t strict_choice(int u, int dst, S&& strict, W&& whole) const;
  template <class D>
  std::uint8_t open_choice(int u, int dst, D&& dist) const;
  std::uint8_t wider_choice(const Scratch& sc, int u, int dst) const;
  void distances_to(Scratch& sc, int dst) const;
  void route_to(Scratch& sc, int dst, std::uint8_t* column);

  // ---- reusing the previous run's distances ----
  void remember(int dst, const std::vector<int>& strict, const std::vector<int>& dist,
                const std::vector<int>& whole);
  void prepare_memo();
  template <class Usable, class WasUsable>
  bool keeps(const std::uint8_t* d, Usable&& usable, WasUsable&& was_usable) const;
  bool keeps_distances(int dst) const;
  void route_tails(int dst);

  const RouteInput& in_;
  const ManagementLinks& mgmt_;
  const FatTree& t_;
  ModelTables& out_;
  SwitchRoutesMemo* memo_;
  bool reuse_;
  const int n_;  // switches
  // Adjacency in port order: arcs_[start_[u], start_[u + 1]) leave switch u, as (neighbour
  // switch number, local port).
  std::vector<int> start_;
  std::vector<std::pair<int, int>> arcs_;
  std::vector<char> open_;  // per arc: usable by everyone's management traffic
  // per arc: a tenant's link out of a non-leaf switch, usable as the last hop into the
  // destination switch (sl2vl.h: such a hop is an exemption; it can only end at a switch)
  std::vector<char> last_;
  std::vector<char> blocked_;  // per arc: a management up-link of a shared management leaf
  std::vector<int> tail_;      // per arc: the switch it leaves
  std::vector<std::vector<std::pair<int, int>>> into_;  // [switch] (from switch, arc)
  // Whether some working link is not open to everyone: only then can a tenant change move
  // routes to switches (see `whole`).
  bool restricted_ = false;
  // An incremental run: the arcs whose openness changed since the run the memo holds, and
  // the switches they leave.
  std::vector<int> changed_, tails_;
};

}  // namespace laas::routing::phases
