#include "opensm_plugin/engine.h"

#include <sys/stat.h>

#include <chrono>
#include <map>
#include <set>
#include <stdexcept>

#include "allocator/cluster.h"
#include "routing/routing.h"
#include "topology/recognize.h"

namespace laas::plugin {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

constexpr const char* kManagementPrefix = "_mgmt_";

}  // namespace

Engine::Engine(Config config) : config_(std::move(config)) {}

Engine::FileStamp Engine::stamp(const std::string& path) {
  FileStamp s;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return s;
  s.exists = true;
  s.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  s.size = st.st_size;
  s.inode = st.st_ino;
  return s;
}

void Engine::load_state() {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    if (auto a = load_allocations(config_.allocations_file())) allocations_ = std::move(*a);
    state_error_.clear();
  } catch (const std::exception& e) {
    state_error_ = e.what();
  }
}

std::string Engine::state_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_error_;
}

bool Engine::tenants_changed() const {
  const FileStamp now = stamp(config_.tenants_file());
  std::lock_guard<std::mutex> lock(mu_);
  return routed_once_ && !(now == used_stamp_);
}

RouteOutcome Engine::route(const topology::Fabric& fabric, Guid sm_port_guid) {
  RouteOutcome out;
  const auto t0 = Clock::now();
  const topology::Recognition rec = topology::recognize(fabric, sm_port_guid);
  out.ms_recognize = ms_since(t0);
  if (!rec.ok()) {
    out.not_fat_tree = true;
    out.error = rec.error;
    return out;
  }
  const topology::FatTree& tree = *rec.tree;
  const auto& emb = rec.embedding;
  if (!config_.topology.empty()) {
    std::string expected;
    try {
      expected = topology::parse_spec(config_.topology).text();
    } catch (const topology::SpecError& e) {
      out.error = "laas.yaml topology '" + config_.topology + "' is invalid: " + e.what();
      return out;
    }
    if (expected != tree.spec().text()) {
      out.not_fat_tree = true;
      out.error = "the fabric is " + tree.spec().text() + " but laas.yaml expects " + expected;
      return out;
    }
  }

  std::lock_guard<std::mutex> lock(mu_);
  if (!state_error_.empty()) {
    out.error = "state file is unusable (" + state_error_ +
                "); refusing to route tenants until it is repaired or removed";
    return out;
  }
  const auto t_place = Clock::now();
  const FileStamp now_stamp = stamp(config_.tenants_file());
  if (!routed_once_ || !(now_stamp == used_stamp_)) {
    try {
      requests_ = load_tenant_requests(config_.tenants_file());
      requests_error_.clear();
      out.info.push_back("read " + std::to_string(requests_.size()) + " tenant request(s) from " +
                         config_.tenants_file());
    } catch (const std::exception& e) {
      requests_error_ = e.what();
      out.warnings.push_back(std::string("tenants file ignored, keeping the previous requests: ") +
                             e.what());
    }
  }
  std::map<std::string, int> wanted;
  for (const auto& r : requests_) wanted[r.name] = r.hosts;

  std::unique_ptr<allocator::Placer> placer;
  try {
    placer = allocator::make_placer(config_.placer);
  } catch (const std::exception& e) {
    out.error = std::string("laas.yaml placer: ") + e.what();
    return out;
  }
  allocator::Cluster cluster(tree, std::move(placer));

  // Management hosts: the SM's host and the configured GUIDs, held by reserved pseudo-tenants.
  std::set<topology::HostId> mgmt;
  if (rec.sm_host >= 0) mgmt.insert(rec.sm_host);
  std::map<Guid, topology::HostId> host_by_guid;
  for (topology::HostId h = 0; h < tree.num_hosts(); ++h)
    host_by_guid[fabric.nodes[emb.host_node[h]].port_guid] = h;
  for (Guid g : config_.management) {
    auto it = host_by_guid.find(g);
    if (it == host_by_guid.end())
      out.warnings.push_back("management port " + format_guid(g) + " is not a host of the tree");
    else
      mgmt.insert(it->second);
  }
  for (topology::HostId h : mgmt) {
    allocator::Placement p;
    p.hosts.push_back(h);
    auto o = cluster.add_explicit(kManagementPrefix + std::to_string(h), 1, p);
    if (!o.ok()) out.warnings.push_back("cannot reserve management host: " + o.message);
  }
  std::vector<std::pair<int, int>> mgmt_switches;
  if (rec.sm_node >= 0 && fabric.nodes[rec.sm_node].is_switch)
    mgmt_switches.push_back(emb.node_model[rec.sm_node]);

  // Restore existing tenants exactly; release those no longer requested.
  Allocations next;
  next.topology = tree.spec().text();
  std::set<std::string> failed;
  for (const auto& [name, record] : allocations_.tenants) {
    if (!wanted.count(name)) {
      out.info.push_back("tenant " + name + " released (" + std::to_string(record.hosts.size()) +
                         " hosts, " + std::to_string(record.links.size()) + " links)");
      continue;
    }
    allocator::Placement p;
    std::string why;
    if (to_placement(record, tree, emb, fabric, &p, &why)) {
      const auto o = cluster.add_explicit(name, record.requested, p);
      if (o.ok()) continue;
      why = o.message;
    }
    failed.insert(name);
    next.tenants[name] = record;
    out.warnings.push_back("tenant " + name + " cannot be restored (" + why +
                           "); it is not routed and its record is kept");
  }
  for (topology::LinkId l : emb.missing_links) cluster.set_faulty(l, true);
  if (!emb.missing_links.empty())
    out.info.push_back(std::to_string(emb.missing_links.size()) +
                       " switch-to-switch cable(s) of the tree are absent and treated as faulty");
  for (const auto& r : requests_) {
    if (failed.count(r.name)) continue;
    if (const auto* t = cluster.find(r.name)) {
      if (t->requested != r.hosts)
        out.warnings.push_back("tenant " + r.name + " asks for " + std::to_string(r.hosts) +
                               " hosts but holds " + std::to_string(t->requested) +
                               "; resizing is not supported: remove it, then add it again");
      continue;
    }
    auto o = cluster.add(r.name, r.hosts);
    if (o.ok())
      out.info.push_back("tenant " + r.name + " placed: " + std::to_string(r.hosts) +
                         " hosts, shape " + o.tenant->placement.shape.text() + ", " +
                         std::to_string(o.tenant->placement.links.size()) + " dedicated links");
    else
      out.warnings.push_back("tenant " + r.name + " refused: " + o.message);
  }
  out.ms_place = ms_since(t_place);

  routing::RoutingRequest request;
  for (const auto& [name, t] : cluster.tenants()) {
    if (name.rfind(kManagementPrefix, 0) == 0) continue;
    request.tenants.push_back({name, t.placement});
    auto record = make_record(name, t.requested, t.placement, tree, emb, fabric);
    auto old = allocations_.tenants.find(name);
    if (old != allocations_.tenants.end() && !old->second.shape.empty())
      record.shape = old->second.shape;  // restored placements do not carry their shape
    next.tenants[name] = std::move(record);
  }
  request.management_hosts.assign(mgmt.begin(), mgmt.end());
  next.sm_port_guid = sm_port_guid;
  for (topology::HostId h : mgmt) {
    const int node = emb.host_node[h];
    next.management.push_back(
        {fabric.nodes[node].name, fabric.nodes[node].port_guid, 0, fabric.lid_of(node)});
  }
  request.management_switches = mgmt_switches;
  request.faulty_links = emb.missing_links;
  try {
    const auto t_compute = Clock::now();
    auto result = routing::compute(tree, request);
    out.ms_compute = ms_since(t_compute);
    for (auto& w : result.warnings) out.warnings.push_back(std::move(w));
    const auto t_tables = Clock::now();
    out.tables = routing::to_lid_tables(fabric, emb, tree, result.tables);
    out.ms_tables = ms_since(t_tables);
  } catch (const std::exception& e) {
    out.error = std::string("routing failed: ") + e.what();
    return out;
  }

  const auto t_save = Clock::now();
  const std::string text = to_json(next);
  if (text != to_json(allocations_) || !stamp(config_.allocations_file()).exists) {
    try {
      ::mkdir(config_.state_dir.c_str(), 0755);
      write_file_atomically(config_.allocations_file(), text);
      out.info.push_back("wrote " + config_.allocations_file() + " (" +
                         std::to_string(next.tenants.size()) + " tenants)");
    } catch (const std::exception& e) {
      out.warnings.push_back(std::string("cannot save allocations: ") + e.what());
    }
  }
  out.ms_save = ms_since(t_save);
  allocations_ = std::move(next);
  used_stamp_ = now_stamp;
  routed_once_ = true;
  out.ok = true;
  out.ms_total = ms_since(t0);
  out.info.push_back("routed " + tree.spec().text() + " (" + std::to_string(tree.num_hosts()) +
                     " hosts, " + std::to_string(request.tenants.size()) + " tenants, " +
                     std::to_string(mgmt.size()) + " management hosts)");
  return out;
}

}  // namespace laas::plugin
