// routing::compute and IncrementalRouting: the phases of table_computation.h, in turn.
#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "routing/incremental.h"
#include "routing/routing.h"
#include "routing/switch_routes.h"
#include "routing/table_computation.h"

namespace laas::routing {

ModelTables::ModelTables(const FatTree& tree) : hosts_(tree.num_hosts()) {
  for (int level = 1; level <= tree.height(); ++level) {
    level_offset_.push_back(switches_);
    switches_ += tree.num_switches(level);
  }
  data_.assign(static_cast<std::size_t>(switches_) * static_cast<std::size_t>(hosts_ + switches_),
               kNoRoute);
}

std::pair<int, int> ModelTables::switch_at(int number) const {
  int level = static_cast<int>(level_offset_.size());
  while (level > 1 && number < level_offset_[level - 1]) --level;
  return {level, number - level_offset_[level - 1]};
}

namespace phases {

TableComputation::TableComputation(const FatTree& tree, const RoutingRequest& request,
                                   RoutingResult& result)
    : out_(result.tables),
      warnings_(result.warnings),
      in_(tree, request, result.warnings),
      hosts_(in_, mgmt_, result.tables) {}

void TableComputation::prepare() {
  if (!in_.req.tenants_only) mgmt_ = choose_management_links(in_);
}

void TableComputation::run() {
  prepare();
  if (!in_.req.tenants_only) {
    route_switches(false);
    std::vector<int> every_leaf(in_.t.num_leaves());
    for (int i = 0; i < in_.t.num_leaves(); ++i) every_leaf[i] = i;
    hosts_.route_ordinary_hosts(every_leaf);
  }
  for (int t = 0; t < static_cast<int>(in_.req.tenants.size()); ++t)
    hosts_.route_tenant(t, nullptr);
  flush_tenant_warnings();
}

void TableComputation::run_partial(const IncrementalPlan& plan,
                                   const std::vector<std::vector<std::string>>& warnings_before) {
  std::vector<int> dirty, rest;
  const bool pods =
      std::find(plan.level2_pod.begin(), plan.level2_pod.end(), 1) != plan.level2_pod.end();
  for (int leaf = 0; leaf < in_.t.num_leaves(); ++leaf)
    if (plan.dirty_leaf[leaf])
      dirty.push_back(leaf);
    else if (pods)
      rest.push_back(leaf);
  hosts_.clear_host_columns(dirty);
  if (pods) hosts_.clear_host_columns(rest, &plan.level2_pod);
  if (plan.switches) route_switches(true);
  hosts_.route_ordinary_hosts(dirty);
  if (pods) hosts_.route_ordinary_hosts(rest, &plan.level2_pod);
  auto& tenant_warnings = hosts_.tenant_warnings();
  for (int t = 0; t < static_cast<int>(in_.req.tenants.size()); ++t) {
    const int same = plan.same_as[t];
    hosts_.route_tenant(t, same >= 0 ? &plan.dirty_leaf : nullptr,
                        pods ? &plan.level2_pod : nullptr);
    if (same >= 0) tenant_warnings[t] = warnings_before[same];
  }
  flush_tenant_warnings();
}

IncrementalPlan TableComputation::plan(const TableComputation& before) const {
  return plan_incremental(in_, mgmt_, before.in_, before.mgmt_);
}

void TableComputation::route_switches(bool reuse) {
  SwitchRoutes switches(in_, mgmt_, out_, switch_memo, reuse);
  switches_recomputed = switches.run();
}

// What each tenant's own routes warned, appended in tenant order.
void TableComputation::flush_tenant_warnings() {
  for (auto& list : hosts_.tenant_warnings())
    for (auto& w : list) warnings_.push_back(w);
}

}  // namespace phases

int routing_threads(int requested) {
  const int wanted =
      requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, std::min(wanted, kMaxThreads));
}

RoutingResult compute(const FatTree& tree, const RoutingRequest& request) {
  RoutingResult result;
  result.tables = ModelTables(tree);
  phases::TableComputation computation(tree, request, result);
  computation.run();
  return result;
}

const RoutingResult& IncrementalRouting::compute(const FatTree& tree,
                                                 const RoutingRequest& request) {
  const bool had = valid_;
  valid_ = false;  // until this run succeeds: its tables are changed in place
  stats_ = IncrementalStats();
  stats_.of_leaves = tree.num_leaves();
  stats_.of_switches = tree.total_switches();
  result_.warnings.clear();
  IncrementalPlan plan;
  if (!had) {
    plan.why = "no previous run";
  } else if (spec_ != tree.spec().text()) {
    plan.why = "another tree";
  }
  std::unique_ptr<phases::TableComputation> now;
  switch_memo_.valid = switch_memo_.valid && had;
  if (!plan.why.empty()) {
    now = std::make_unique<phases::TableComputation>(tree, request, result_);
  } else {
    RoutingResult unused;
    phases::TableComputation before(tree, request_, unused);
    before.prepare();
    now = std::make_unique<phases::TableComputation>(tree, request, result_);
    now->prepare();
    plan = now->plan(before);
  }
  now->switch_memo = &switch_memo_;
  if (plan.full) {
    result_.tables = ModelTables(tree);
    now->run();
    stats_.leaves = tree.num_leaves();
    stats_.switches = true;
    stats_.switch_destinations = tree.total_switches();
  } else {
    now->run_partial(plan, tenant_warnings_);
    stats_.leaves = static_cast<int>(
        std::count(plan.dirty_leaf.begin(), plan.dirty_leaf.end(), static_cast<char>(1)));
    stats_.switches = plan.switches;
    stats_.switch_destinations = plan.switches ? now->switches_recomputed : 0;
    stats_.level2_pods = static_cast<int>(
        std::count(plan.level2_pod.begin(), plan.level2_pod.end(), static_cast<char>(1)));
    if (stats_.level2_pods > 0) stats_.pod_rows_leaves = stats_.of_leaves - stats_.leaves;
  }
  stats_.full = plan.full;
  stats_.why = plan.why;
  tenant_warnings_ = now->take_tenant_warnings();
  spec_ = tree.spec().text();
  request_ = request;
  valid_ = true;
  return result_;
}

RoutingResult compute(const FatTree& tree, const std::vector<TenantRoutes>& tenants,
                      const std::vector<HostId>& management_hosts,
                      const std::vector<LinkId>& faulty_links) {
  RoutingRequest request;
  request.tenants = tenants;
  request.management_hosts = management_hosts;
  request.faulty_links = faulty_links;
  return compute(tree, request);
}

}  // namespace laas::routing
