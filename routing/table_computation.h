// One routing computation (routing::compute, IncrementalRouting) as named phases, each in its
// own unit and owning its data, the way OpenSM's ftree engine runs its phases in turn:
//   1. RouteInput            the request checked, every host's class and link's owner
//   2. ManagementLinks       which up-links of management leaves carry management traffic
//   3. SwitchRoutes          every switch's entries for the switches (minimum-hop)
//   4. HostRoutes            every switch's entries for the hosts: ordinary jobs per leaf,
//                            then each tenant over its own links
// plan_incremental compares two computations' inputs for an incremental run.
// Internal to routing/.
#pragma once

#include <string>
#include <vector>

#include "routing/host_routes.h"
#include "routing/incremental.h"
#include "routing/route_input.h"

namespace laas::routing::phases {

class TableComputation {
 public:
  TableComputation(const FatTree& tree, const RoutingRequest& request, RoutingResult& result);

  // Every table and warning of the request.
  void run();
  // What run() derives before routing anything: enough to compare two requests (plan()).
  void prepare();
  // run()'s tables and warnings from the tables of `before`'s request (already in the
  // output), recomputing only what plan.dirty_leaf and plan.switches name; tenants unchanged
  // since `before` (plan.same_as) keep the warnings they had then.
  void run_partial(const IncrementalPlan& plan,
                   const std::vector<std::vector<std::string>>& warnings_before);
  // Which destination leaves' columns (and whether the switches' columns) can differ between
  // `before`'s request and this one (both prepared).
  IncrementalPlan plan(const TableComputation& before) const;
  std::vector<std::vector<std::string>> take_tenant_warnings() {
    return std::move(hosts_.tenant_warnings());
  }

  // Where the routes to switches keep their distances for the next run (an incremental run;
  // the memo is then the previous run's).
  SwitchRoutesMemo* switch_memo = nullptr;
  int switches_recomputed = 0;  // destination switches whose routes were computed again

 private:
  void route_switches(bool reuse);
  void flush_tenant_warnings();

  ModelTables& out_;
  std::vector<std::string>& warnings_;
  RouteInput in_;
  ManagementLinks mgmt_;
  HostRoutes hosts_;
};

// plan(): the request's inputs compared with `before`'s, in incremental_plan.cc.
IncrementalPlan plan_incremental(const RouteInput& now, const ManagementLinks& now_mgmt,
                                 const RouteInput& before, const ManagementLinks& before_mgmt);

}  // namespace laas::routing::phases
