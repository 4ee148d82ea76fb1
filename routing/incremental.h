// compute() for one routing run after another on the same tree: a tenant change recomputes
// only the columns (destinations) its tenants determine and keeps the rest of the previous
// run's tables. The result is compute()'s, table for table and warning for warning; whatever
// else changed (the tree, faults, management, the links or host classes of a management
// leaf, any level-2 link) computes everything again.
#pragma once

#include <string>
#include <vector>

#include "routing/routing.h"

namespace laas::routing {

// What an incremental run may recompute, as compute.cc's Engine::plan decides it.
struct IncrementalPlan {
  bool full = true;
  std::string why;               // why everything is computed again (full)
  std::vector<char> dirty_leaf;  // [leaf] its hosts' columns are computed again
  bool switches = false;         // the switches' columns are computed again
  std::vector<int> same_as;      // [tenant] the same tenant in the previous request, or -1
};

struct IncrementalStats {
  bool full = true;
  std::string why;
  int leaves = 0;         // destination leaves recomputed
  int of_leaves = 0;      // of the tree's leaves
  bool switches = false;  // the routes to switches recomputed
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
  IncrementalStats stats_;
};

}  // namespace laas::routing
