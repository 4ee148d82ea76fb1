// compute() for one routing run after another on the same tree: a tenant change recomputes
// only the columns (destinations) its tenants determine and keeps the rest of the previous
// run's tables. The result is compute()'s, table for table and warning for warning.
//  - Hosts' columns: those of the leaves holding hosts of tenants added, removed or changed,
//    hosts of another class, level-1 links of another owner, and management hosts; every
//    host's column when a management leaf's up-link changed hands.
//  - A level-2 link (level-2 switch -> top) of pod q changed hands: the columns of q's hosts
//    (the top switches' way down to them reads q's level-2 up-links); for every other host
//    only the entries at q's leaves and level-2 switches: the switch's own up choice reads its
//    links, and q's (management or tenant) source leaves read whether it still leads up; no
//    other entry of those columns reads a level-2 link of q (route_leaf, Job::only_pods).
//  - Switches' columns: kept when no link turned open or closed to management traffic; else
//    a destination switch's distances over open links are checked against the previous
//    run's (SwitchRoutesMemo): when they provably stay, only the entries of the switches whose
//    own links changed are chosen again, otherwise its column is computed again.
//  - Anything else changed (the tree, faulty links, management hosts or switches, which
//    up-links of a management leaf carry management traffic): everything is computed again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/routing.h"

namespace laas::routing {

// What an incremental run may recompute, as plan_incremental (incremental_plan.cc) decides it.
struct IncrementalPlan {
  bool full = true;
  std::string why;               // why everything is computed again (full)
  std::vector<char> dirty_leaf;  // [leaf] its hosts' columns are computed again
  // [pod] a level-2 switch of the pod has a link of another owner: the other hosts' columns
  // are computed again at this pod's switches only (its leaves are dirty_leaf).
  std::vector<char> level2_pod;
  bool switches = false;     // the switches' columns are computed again
  std::vector<int> same_as;  // [tenant] the same tenant in the previous request, or -1
};

// What the routes to switches were computed from, for the next run: per destination switch,
// every switch's distance to it over open links (and over every working link), and which
// arcs were open. A tenant change usually leaves these distances as they were; only the
// entries of the switches whose own links changed hands are then chosen again.
struct SwitchRoutesMemo {
  bool valid = false;
  std::vector<char> open, last;      // [arc, compute.cc's order]
  std::vector<std::uint8_t> strict;  // [destination * switches + switch]; 255: unreached
  // The same over open links and a tenant's link as the last hop (= strict when strict
  // reaches every switch), and over every working link (= strict when every one is open).
  std::vector<std::uint8_t> dist, whole;
  std::vector<char> reusable;  // [destination] its distances fit in a byte
};

struct IncrementalStats {
  bool full = true;
  std::string why;
  int leaves = 0;     // destination leaves recomputed
  int of_leaves = 0;  // of the tree's leaves
  // Pods whose leaves' and level-2 switches' entries for every other host were computed
  // again (a level-2 link of theirs changed hands), and the other leaves those hosts sit on.
  int level2_pods = 0;
  int pod_rows_leaves = 0;
  bool switches = false;  // the routes to switches recomputed
  // Destination switches whose routes were computed again in full (the others' entries only
  // at the switches whose own links changed hands).
  int switch_destinations = 0;
  int of_switches = 0;
};

class IncrementalRouting {
 public:
  // compute(tree, request), reusing the previous call's result where that is provably the
  // same. Throws RoutingError like compute(); the next call then computes in full.
  const RoutingResult& compute(const FatTree& tree, const RoutingRequest& request);
  const IncrementalStats& stats() const { return stats_; }
  // Forget the previous run: the next call computes in full.
  void reset() { valid_ = false; }

 private:
  bool valid_ = false;
  std::string spec_;
  RoutingRequest request_;
  RoutingResult result_;
  std::vector<std::vector<std::string>> tenant_warnings_;  // [tenant of request_]
  SwitchRoutesMemo switch_memo_;
  IncrementalStats stats_;
};

}  // namespace laas::routing
