#include "sdn/plan.h"

#include "allocator/cluster.h"
#include "allocator/placer.h"
#include "export/partitions.h"

namespace laas::sdn {

namespace {

// The SM's host (never a tenant's) or the switch it runs on (a leaf among them routes to all).
void add_sm(const topology::Recognition& rec, routing::RoutingRequest& req) {
  if (rec.sm_host >= 0) req.management_hosts.push_back(rec.sm_host);
  if (rec.sm_node >= 0 && rec.sm_host < 0) {
    const auto model = rec.embedding.node_model[rec.sm_node];
    if (model.first >= 1) req.management_switches.push_back(model);
  }
}

allocation::Allocations record(const topology::Fabric& fabric, const topology::Recognition& rec,
                               const allocator::Cluster& cluster, const PlanRequest& request) {
  allocation::Allocations a;
  const auto& tree = *rec.tree;
  a.topology = tree.spec().text();
  a.sm_port_guid = request.sm_port_guid;
  for (const auto& t : request.tenants) {
    const auto* held = cluster.find(t.name);
    a.tenants[t.name] =
        allocation::make_record(t.name, t.hosts, held->placement, tree, rec.embedding, fabric);
  }
  return a;
}

}  // namespace

Plan make_plan(const topology::Fabric& fabric, const PlanRequest& request) {
  Plan plan;
  plan.rec = topology::recognize(fabric, request.sm_port_guid);
  if (!plan.rec.ok()) throw PlanError("the fabric is not a fat-tree: " + plan.rec.error);
  const auto& tree = *plan.rec.tree;
  const auto& emb = plan.rec.embedding;
  allocator::Cluster cluster(tree, allocator::make_placer(request.algorithm));
  allocator::Faults faults;
  faults.links = emb.missing_links;
  faults.hosts = emb.missing_hosts;
  faults.switches = emb.missing_switches;
  cluster.set_faults(faults);
  routing::RoutingRequest req;
  add_sm(plan.rec, req);
  cluster.reserve(req.management_hosts);
  for (const auto& t : request.tenants) {
    const auto outcome = cluster.add(t.name, t.hosts);
    if (!outcome.ok()) throw PlanError("tenant " + t.name + ": " + outcome.message);
    req.tenants.push_back({t.name, outcome.tenant->placement});
  }
  req.faulty_links = emb.missing_links;
  try {
    auto result = routing::compute(tree, req);
    plan.warnings = std::move(result.warnings);
    plan.tables = routing::to_lid_tables(fabric, emb, tree, result.tables);
  } catch (const routing::RoutingError& e) {
    throw PlanError(std::string("cannot compute the tables: ") + e.what());
  }
  plan.allocations = record(fabric, plan.rec, cluster, request);
  std::vector<exports::TenantRecord> records;
  for (const auto& t : request.tenants) records.push_back(plan.allocations.tenants.at(t.name));
  plan.partitions = exports::generate_partitions(records, exports::PartitionOptions{});
  return plan;
}

}  // namespace laas::sdn
