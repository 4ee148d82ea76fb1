#include "opensm_plugin/engine.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <stdexcept>

#include "routing/audit.h"
#include "routing/multicast.h"
#include "routing/routing.h"
#include "service/state_store.h"
#include "service/topology_view.h"
#include "topology/recognize.h"
#include "topology/servers.h"

namespace laas::plugin {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// The SM as the discovered fabric names it (for the state file and the log).
service::SmIdentity sm_identity(const topology::Fabric& fabric, Guid sm_port_guid) {
  service::SmIdentity id;
  id.port_guid = sm_port_guid;
  for (size_t n = 0; n < fabric.nodes.size(); ++n)
    if (fabric.nodes[n].port_guid == sm_port_guid) {
      id.name = fabric.nodes[n].name;
      id.lid = fabric.lid_of(static_cast<int>(n));
      break;
    }
  return id;
}

service::ServiceConfig service_config(const Config& c) {
  service::ServiceConfig s;
  s.state_dir = c.state_dir;
  s.algorithm = c.placer;
  s.state_must_exist = c.state_must_exist;
  s.resume_check = c.resume_check;
  s.metrics_file = c.metrics_file;
  s.link_error_threshold = c.link_error_threshold;
  s.link_error_clean_readings = c.link_error_clean_readings;
  s.resume_check_timeout_ms = c.resume_check_timeout_s * 1000;
  s.exports.partitions_base_file = c.partitions_base;
  if (c.manage_partitions) s.exports.managed_partitions_file = c.managed_partitions_file;
  s.exports.slurm_node_names = c.slurm_node_names;
  s.servers = c.servers;
  s.exports.openstack_hosts = c.openstack_hosts;
  s.exports.openstack_projects = c.openstack_projects;
  return s;
}

// The tenants file acts with root's rights: it is as privileged as the state directory.
const service::Caller kFileCaller{0, true};

json request(const std::string& method, json params) {
  params["wait"] = false;
  return {{"v", service::kProtocolVersion}, {"method", method}, {"params", std::move(params)}};
}

std::string error_of(const json& response) {
  return response.contains("error") ? response["error"].value("message", "unknown error")
                                    : "unknown error";
}

// The SL2VL plan for the tables just computed (routing/sl2vl.h), summarized in the log.
// `mgmt_switch_nodes`: the fabric nodes of the switches an SM runs on (every SM's, so that
// the exemptions do not move at failover).
// `emb`: the recognized embedding without the quarantined slots (issue 24).
routing::Sl2VlTables first_hop_drop(const topology::Fabric& fabric,
                                    const topology::Recognition& rec,
                                    const topology::Embedding& emb,
                                    const routing::RoutingRequest& req,
                                    const std::vector<int>& mgmt_switch_nodes,
                                    const std::vector<topology::HostId>& quarantined,
                                    RouteOutcome& out) {
  routing::Sl2VlInput in;
  in.fabric = &fabric;
  in.embedding = &emb;
  in.quarantined_hosts = quarantined;
  in.tree = &*rec.tree;
  in.tables = &out.tables;
  for (const auto& t : req.tenants) in.tenants.push_back(t.placement);
  in.management_hosts = req.management_hosts;
  in.management_nodes = mgmt_switch_nodes;
  routing::Sl2VlPlan plan = routing::plan_sl2vl(in);
  out.info.push_back("first-hop drop: " + std::to_string(plan.dropped_pairs) +
                     " (in, out) port pairs send every SL to VL15; " +
                     std::to_string(plan.exemptions.size()) + " management exemption(s), " +
                     std::to_string(plan.mgmt_links.size()) + " management up-link(s)");
  return std::move(plan.tables);
}

// The tenants the file listed when it was last applied, kept next to state.json so that
// tenants dropped from the file while OpenSM was down are released at the next start.
std::string applied_file(const Config& c) { return c.state_dir + "/tenants.yaml.applied"; }

std::set<std::string> load_applied(const std::string& path) {
  std::set<std::string> names;
  std::ifstream in(path);
  if (!in) return names;
  try {
    const json doc = json::parse(in);
    for (const auto& n : doc.at("tenants")) names.insert(n.get<std::string>());
  } catch (const std::exception&) {
    // Unreadable: forget it, as before this file existed (nothing is removed on its word).
    names.clear();
  }
  return names;
}

}  // namespace

Engine::Engine(Config config, service::Logger log)
    : config_(std::move(config)), service_(service_config(config_), std::move(log)) {
  read_shared_files();
  service_.set_reroute_hook([this] {
    // Changes made inside a routing run (the tenants file) are routed by that run.
    if (routing_thread_.load() == std::this_thread::get_id()) return;
    if (reroute_) reroute_();
  });
}

// What the state directory holds besides state.json: the intended tree (layout.json), the
// shapes last routed (allocations.json) and the tenants file last applied. Read at start, and
// again when this SM takes the state over from another (which may have written them since).
void Engine::read_shared_files() {
  last_allocations_.clear();  // another SM may have written allocations.json since
  layout_.reset();
  layout_unreadable_ = false;
  {
    std::ifstream in(layout_file());
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      try {
        layout_ = topology::parse_layout(text.str());
      } catch (const std::exception& e) {
        layout_unreadable_ = true;
        layout_error_ = layout_file() + ": " + e.what() +
                        "; recognizing from laas.yaml or the cabling, the file is left as it is";
      }
    }
  }
  try {
    if (auto previous = load_allocations(config_.allocations_file()))
      for (const auto& [name, t] : previous->tenants) shapes_[name] = t.shape;
  } catch (const std::exception&) {
    // allocations.json is only an output; state.json is the state.
  }
  std::lock_guard<std::mutex> lock(mu_);
  file_tenants_ = load_applied(applied_file(config_));
}

void Engine::set_reroute_hook(std::function<void()> hook) { reroute_ = std::move(hook); }

std::string Engine::state_error() const { return service_.snapshot().blocked; }

bool Engine::tenants_changed() const {
  const FileStamp now = service::stamp_of(config_.tenants_file());
  std::lock_guard<std::mutex> lock(mu_);
  return routed_once_ && !(now == seen_stamp_);
}

bool Engine::claim_tenants_change() {
  const FileStamp now = service::stamp_of(config_.tenants_file());
  std::lock_guard<std::mutex> lock(mu_);
  if (!routed_once_ || now == seen_stamp_ || now == claimed_stamp_) return false;
  claimed_stamp_ = now;
  return true;
}

// Tenants the file lists and the service does not hold are added; tenants the previous
// version of the file listed and this one does not are removed. Tenants added through the
// socket are left alone.
void Engine::feed_tenants_file(RouteOutcome& out) {
  const FileStamp now = service::stamp_of(config_.tenants_file());
  {
    std::lock_guard<std::mutex> lock(mu_);
    seen_stamp_ = now;
    if (now == fed_stamp_) return;
    fed_stamp_ = now;
  }
  std::vector<TenantRequest> requests;
  try {
    requests = load_tenant_requests(config_.tenants_file());
  } catch (const std::exception& e) {
    out.warnings.push_back(std::string("tenants file ignored: ") + e.what());
    return;
  }
  out.info.push_back("read " + std::to_string(requests.size()) + " tenant(s) from " +
                     config_.tenants_file());
  const auto names = service_.tenant_names();
  const std::set<std::string> held(names.begin(), names.end());
  std::set<std::string> listed;
  for (const auto& r : requests) listed.insert(r.name);
  std::set<std::string> previous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    previous = file_tenants_;
    file_tenants_ = listed;
  }
  for (const auto& name : previous) {
    if (listed.count(name)) continue;
    const json r = service_.handle(request("tenant.remove", {{"name", name}}), kFileCaller);
    // Already gone (removed through the socket): nothing to release.
    if (!r.value("ok", false) && r["error"].value("code", "") != service::error::kNotFound)
      out.warnings.push_back("tenant " + name + " not removed: " + error_of(r));
  }
  if (listed != previous) {
    try {
      service::write_file_atomically(applied_file(config_),
                                     json({{"tenants", listed}}).dump() + "\n", 0640);
    } catch (const std::exception& e) {
      out.warnings.push_back(std::string("cannot record the applied tenants file: ") + e.what());
    }
  }
  for (const auto& t : requests) {
    if (held.count(t.name)) continue;
    json params = {{"name", t.name}};
    if (t.host_list.empty())
      params["hosts"] = t.hosts;
    else
      params["host_list"] = t.host_list;
    const json r = service_.handle(request("tenant.add", params), kFileCaller);
    if (!r.value("ok", false))
      out.warnings.push_back("tenant " + t.name + " refused: " + error_of(r));
    // The service logs the placement itself.
  }
}

RouteOutcome Engine::route(const topology::Fabric& fabric, Guid sm_port_guid, bool with_sl2vl,
                           const std::vector<Guid>& sm_ports) {
  RouteOutcome out;
  const auto t0 = Clock::now();
  routing_thread_ = std::this_thread::get_id();
  struct Reset {
    std::atomic<std::thread::id>& id;
    ~Reset() { id = std::thread::id(); }
  } reset{routing_thread_};

  // The first routing run as master (or after another SM wrote the shared state) takes the
  // tenant state over before anything is recognized or placed: every tenant is read, none
  // re-computed, on the intended tree the previous master recorded.
  if (auto line = service_.take_over_if_needed(sm_identity(fabric, sm_port_guid))) {
    out.took_over = line->rfind("laas: took over", 0) == 0;
    (out.took_over ? out.info : out.warnings).push_back(*line);
    if (out.took_over) read_shared_files();
  }
  if (!layout_error_.empty()) {
    out.warnings.push_back(layout_error_);
    layout_error_.clear();
  }
  topology::Recognition rec = recognize_now(fabric, sm_port_guid);
  out.ms_recognize = ms_since(t0);
  if (!rec.ok()) {
    last_source_note_.clear();
    service_.on_topology_error(rec.error);
    out.not_fat_tree = true;
    out.error = rec.error;
    return fail_closed(fabric, "the fabric is not recognized: " + rec.error, out);
  }
  const topology::FatTree& tree = *rec.tree;
  const auto& emb = rec.embedding;
  if (rec.source_note != last_source_note_) {
    out.info.push_back(rec.source_note);
    last_source_note_ = rec.source_note;
  }
  keep_layout(rec, fabric, out);

  service_.record_sm_ports(sm_ports);

  // Management hosts: every SM's host (this one's and every SM recorded in the shared state,
  // so that nothing moves at failover) and the configured port GUIDs.
  std::set<topology::HostId> mgmt;
  if (rec.sm_host >= 0) mgmt.insert(rec.sm_host);
  std::map<Guid, topology::HostId> host_by_guid;
  for (topology::HostId h = 0; h < tree.num_hosts(); ++h)
    if (emb.host_node[h] >= 0) host_by_guid[fabric.nodes[emb.host_node[h]].port_guid] = h;
  // Hosts cabled outside the tree's slots (issue 24): a leaf with one routes like a management
  // leaf (its attached hosts reach every host, as management does); those configured as
  // management or shared services join every tenant partition.
  std::set<Guid> attached_ports;
  for (const auto& a : emb.attached) attached_ports.insert(fabric.nodes[a.node].port_guid);
  std::vector<Guid> outside_members;
  // The SM's own ports outside the slots (its host cabled twice) serve everyone too.
  for (Guid g : service_.sm_ports())
    if (attached_ports.count(g)) outside_members.push_back(g);
  for (const auto* list : {&config_.management, &config_.shared_services})
    for (Guid g : *list) {
      auto it = host_by_guid.find(g);
      if (it != host_by_guid.end())
        mgmt.insert(it->second);
      else if (attached_ports.count(g))
        outside_members.push_back(g);
      else
        out.warnings.push_back(
            std::string(list == &config_.management ? "management port " : "shared service port ") +
            format_guid(g) + " is not cabled to the tree");
    }
  std::vector<std::pair<int, int>> mgmt_switches;
  std::vector<int> mgmt_switch_nodes;
  if (rec.sm_node >= 0 && fabric.nodes[rec.sm_node].is_switch) {
    mgmt_switches.push_back(emb.node_model[rec.sm_node]);
    mgmt_switch_nodes.push_back(rec.sm_node);
  }
  for (Guid g : service_.sm_ports()) {
    if (auto it = host_by_guid.find(g); it != host_by_guid.end()) {
      mgmt.insert(it->second);
      continue;
    }
    for (size_t n = 0; n < fabric.nodes.size(); ++n)  // an SM on a switch (port 0)
      if (fabric.nodes[n].is_switch && fabric.nodes[n].guid == g && emb.node_model[n].first > 0 &&
          std::find(mgmt_switches.begin(), mgmt_switches.end(), emb.node_model[n]) ==
              mgmt_switches.end()) {
        mgmt_switches.push_back(emb.node_model[n]);
        mgmt_switch_nodes.push_back(static_cast<int>(n));
      }
  }
  for (const auto& a : emb.attached) {
    if (a.level != 1 || emb.switch_node[0][a.index] < 0) continue;
    const std::pair<int, int> leaf{1, a.index};
    if (std::find(mgmt_switches.begin(), mgmt_switches.end(), leaf) != mgmt_switches.end())
      continue;
    mgmt_switches.push_back(leaf);
    mgmt_switch_nodes.push_back(emb.switch_node[0][a.index]);
  }
  std::sort(mgmt_switches.begin(), mgmt_switches.end());
  std::sort(mgmt_switch_nodes.begin(), mgmt_switch_nodes.end());
  // A management port makes its whole server management (issue 21): the SM or an
  // administrator's tool may use any port of that server (a dual-port HCA's second port).
  {
    std::vector<std::string> names(tree.num_hosts());
    std::vector<Guid> cas(tree.num_hosts(), 0);
    for (topology::HostId h = 0; h < tree.num_hosts(); ++h)
      if (const int node = emb.host_node[h]; node >= 0) {
        names[h] = fabric.nodes[node].name;
        cas[h] = fabric.nodes[node].ca_guid;
      }
    const auto servers = topology::group_servers(tree, names, cas, config_.servers);
    for (topology::HostId h : std::vector<topology::HostId>(mgmt.begin(), mgmt.end()))
      for (topology::HostId p : servers.ports[servers.server_of[h]])
        if (emb.host_node[p] >= 0) mgmt.insert(p);
    // And a port of a management server cabled outside the slots (an SM host cabled twice):
    // the same adapter, or the same server name.
    std::set<Guid> mgmt_cas;
    std::set<std::string> mgmt_names;
    for (topology::HostId h : mgmt) {
      if (cas[h]) mgmt_cas.insert(cas[h]);
      if (!names[h].empty()) mgmt_names.insert(names[h]);
    }
    for (const auto& a : emb.attached) {
      const auto& node = fabric.nodes[a.node];
      if ((node.ca_guid && mgmt_cas.count(node.ca_guid)) || mgmt_names.count(node.name))
        outside_members.push_back(node.port_guid);
    }
  }

  const auto t_place = Clock::now();
  auto fresh = std::make_shared<service::TopologyView>(
      tree, fabric, emb, std::vector<topology::HostId>(mgmt.begin(), mgmt.end()),
      layout_ ? *layout_ : topology::Layout{});
  std::sort(outside_members.begin(), outside_members.end());
  outside_members.erase(std::unique(outside_members.begin(), outside_members.end()),
                        outside_members.end());
  fresh->outside_members = std::move(outside_members);
  std::shared_ptr<const service::TopologyView> view = fresh;
  view_ = view;
  {
    // One line when what is cabled outside the tree changes (issue 24).
    const auto outside = service::outside_tree_json(*view);
    std::string line;
    for (const auto& a : outside["attached_hosts"])
      line += std::string(line.empty() ? "" : "; ") + a["name"].get<std::string>() + " (" +
              a["guid"].get<std::string>() + ") on " + a["switch"].get<std::string>() + " port " +
              std::to_string(a["switch_port"].get<int>()) +
              (a["role"] == "shared" ? ", management/shared service"
                                     : ", not listed: routed, in no tenant partition");
    for (const auto& c : outside["extra_cables"])
      line += std::string(line.empty() ? "" : "; ") + "extra cable " + c.get<std::string>() +
              " (never routed over)";
    if (line != last_outside_) {
      out.info.push_back(line.empty() ? "nothing is cabled outside the tree any more"
                                      : "outside the tree: " + line);
      last_outside_ = line;
    }
  }
  // The service logs one line per fault seen and cleared (log_fault_changes).
  service_.on_topology(view);
  feed_tenants_file(out);
  service::RoutingSnapshot snap = service_.snapshot();
  out.ms_place = ms_since(t_place);
  std::string closed;
  if (!snap.blocked.empty()) {
    out.error = "tenant state is unusable (" + snap.blocked +
                "); refusing to route tenants until it is repaired or removed";
    if (config_.fail_open)
      out.error += " (fail_open is set in laas.yaml: the next routing engine routes the fabric)";
    if (config_.fail_open || !tenants_known()) return out;
    // Fail closed: the tenants last routed keep their links (and nobody else gets them) until
    // the state can be read again; changes are refused meanwhile.
    closed = "the tenant state cannot be read (" + snap.blocked + ")";
    snap.tenants = last_routed_tenants(*view, out);
    out.error.clear();
  }
  if (emb.missing_links.size() > emb.uncabled.size() || !emb.missing_hosts.empty() ||
      !emb.missing_switches.empty())
    out.info.push_back("down: " + std::to_string(emb.missing_hosts.size()) + " host(s), " +
                       std::to_string(emb.missing_links.size() - emb.uncabled.size()) +
                       " link(s), " + std::to_string(emb.missing_switches.size()) +
                       " switch(es) of the tree; links down are treated as faulty");

  // Tenants' slots holding an unaccepted port GUID (issue 24) stay in their placements (their
  // routes and everyone else's are unchanged) but are routed like absent hosts: no switch has
  // an entry for the newcomer, its port is a free one for the first-hop drop, and it is in no
  // multicast tree.
  std::vector<topology::HostId> quarantined;
  for (const auto& q : snap.quarantined) quarantined.push_back(q.host);
  const topology::Embedding hidden =
      quarantined.empty() ? topology::Embedding{} : routing::without_hosts(emb, quarantined);
  const topology::Embedding& remb = quarantined.empty() ? emb : hidden;
  if (!quarantined.empty())
    out.warnings.push_back(std::to_string(quarantined.size()) +
                           " host(s) quarantined: another port GUID than recorded in a tenant's "
                           "slot, unrouted until `laasctl host accept` (laasctl host list)");

  routing::RoutingRequest req;
  Allocations alloc;
  alloc.topology = tree.spec().text();
  alloc.sm_port_guid = sm_port_guid;
  alloc.sm_ports = service_.sm_ports();
  for (const auto& [name, placement] : snap.tenants) {
    req.tenants.push_back({name, placement});
    // Hosts down now stay the tenant's, named by the identity last seen in their slot.
    auto record = make_record(name, static_cast<int>(placement.hosts.size()), placement, tree, emb,
                              fabric, layout_ ? &*layout_ : nullptr);
    // Placements restored from state.json carry no shape: keep the one recorded before.
    if (placement.shape.leaves.d == 0) {
      auto it = shapes_.find(name);
      record.shape = it == shapes_.end() ? "" : it->second;
    }
    shapes_[name] = record.shape;
    alloc.tenants[name] = std::move(record);
  }
  record_quarantine(alloc, snap.quarantined, emb, fabric);
  req.management_hosts.assign(mgmt.begin(), mgmt.end());
  req.management_switches = mgmt_switches;
  req.faulty_links = emb.missing_links;
  // Links isolated for their error counters (issue 23) are faults to the routing too, and
  // allocations.json names them for the audit.
  for (auto l : snap.isolated_links)
    if (std::find(req.faulty_links.begin(), req.faulty_links.end(), l) == req.faulty_links.end())
      req.faulty_links.push_back(l);
  if (!snap.isolated_links.empty())
    alloc.isolated_links = make_record("isolated", 0, {{}, snap.isolated_links, {}, {}}, tree, emb,
                                       fabric, layout_ ? &*layout_ : nullptr)
                               .links;
  req.threads = config_.routing_threads;
  for (topology::HostId h : mgmt) {
    const int node = emb.host_node[h];
    if (node < 0) continue;
    alloc.management.push_back(
        {fabric.nodes[node].name, fabric.nodes[node].port_guid, 0, fabric.lid_of(node)});
  }
  // allocations.json is complete here: it is serialized and staged (written and synced next
  // to the file) while the tables are computed, so the disk's latency hides behind the
  // routing; it replaces the file only once the routing succeeded.
  std::string save_error, staged_text;
  auto staging = std::async(std::launch::async, [this, &alloc, &save_error, &staged_text] {
    const auto t_save = Clock::now();
    try {
      std::string text = to_json(alloc);
      if (text != last_allocations_) {
        ::mkdir(config_.state_dir.c_str(), 0755);
        service::stage_file(config_.allocations_file(), text, 0644);
        staged_text = std::move(text);
      }
    } catch (const std::exception& e) {
      save_error = e.what();
    }
    return ms_since(t_save);
  });
  try {
    const auto t_compute = Clock::now();
    auto result = routing::compute(tree, req);
    out.ms_compute = ms_since(t_compute);
    for (auto& w : result.warnings) out.warnings.push_back(std::move(w));
    const auto t_tables = Clock::now();
    out.tables = routing::to_lid_tables(fabric, remb, tree, result.tables);
    routing::spread_lmc(fabric, lmc_, out.tables);
    if (with_sl2vl)
      out.sl2vl = first_hop_drop(fabric, rec, remb, req, mgmt_switch_nodes, quarantined, out);
    out.ms_tables = ms_since(t_tables);
  } catch (const std::exception& e) {
    out.error = std::string("routing failed: ") + e.what();
    staging.wait();
    if (!staged_text.empty()) service::discard_staged_file(config_.allocations_file());
    return out;
  }

  out.ms_save = staging.get();
  if (!staged_text.empty()) {
    const auto t_publish = Clock::now();
    try {
      service::publish_staged_file(config_.allocations_file());
      last_allocations_ = std::move(staged_text);
    } catch (const std::exception& e) {
      save_error = e.what();
    }
    out.ms_save += ms_since(t_publish);
  }
  if (!save_error.empty()) out.warnings.push_back("cannot write allocations: " + save_error);
  // Multicast trees are built between routing runs (joins), from what this run routed.
  auto mcast_tenants = req.tenants;  // quarantined newcomers are no tenant's members
  for (auto& t : mcast_tenants)
    t.placement.hosts.erase(std::remove_if(t.placement.hosts.begin(), t.placement.hosts.end(),
                                           [&](topology::HostId h) {
                                             return std::find(quarantined.begin(),
                                                              quarantined.end(),
                                                              h) != quarantined.end();
                                           }),
                            t.placement.hosts.end());
  auto mcast = std::make_shared<const McastContext>(
      tree, fabric, remb,
      routing::McastPolicy{std::move(mcast_tenants), req.management_hosts, req.faulty_links});
  {
    std::lock_guard<std::mutex> lock(mu_);
    out.multicast_changed = mcast_ && !same_policy(mcast_->policy, mcast->policy);
    mcast_ = std::move(mcast);
    routed_once_ = true;
    last_generation_ = snap.generation;
    routed_ = alloc;
  }
  out.ok = true;
  out.ms_total = ms_since(t0);
  if (!closed.empty()) {
    out.fail_closed = closed + "; routing the " + std::to_string(req.tenants.size()) +
                      " tenant(s) last routed, changes refused until it is repaired";
    fail_closed_ = out.fail_closed;
    service_.set_fail_closed(fail_closed_);
  } else {
    if (!fail_closed_.empty())
      out.info.push_back(
          "recovered: routing from the fabric and the tenant state again "
          "(was failing closed: " +
          fail_closed_ + ")");
    fail_closed_.clear();
    service_.set_fail_closed("");
  }
  remember_good(fabric, out);
  out.info.push_back("routed " + tree.spec().text() + " (" + std::to_string(tree.num_hosts()) +
                     " hosts, " + std::to_string(req.tenants.size()) + " tenants, " +
                     std::to_string(mgmt.size()) + " management hosts, generation " +
                     std::to_string(snap.generation) + ")");
  return out;
}

bool Engine::tenants_known() const {
  // The administrator said the shared state must be there (state_must_exist): an unmounted
  // share at a failover may hide tenants this SM has never seen, so never hand them over.
  if (config_.state_must_exist) return true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!routed_.tenants.empty()) return true;
  }
  if (!service_.tenant_names().empty()) return true;
  try {
    const auto previous = load_allocations(config_.allocations_file());
    return previous && !previous->tenants.empty();
  } catch (const std::exception&) {
    return true;  // something was routed and cannot be read back: assume tenants
  }
}

std::vector<std::pair<std::string, allocator::Placement>> Engine::last_routed_tenants(
    const service::TopologyView& view, RouteOutcome& out) const {
  Allocations last;
  {
    std::lock_guard<std::mutex> lock(mu_);
    last = routed_;
  }
  if (last.tenants.empty()) {
    try {
      if (auto previous = load_allocations(config_.allocations_file())) last = *previous;
    } catch (const std::exception& e) {
      out.warnings.push_back(std::string("cannot read the tenants last routed: ") + e.what());
    }
  }
  std::vector<std::pair<std::string, allocator::Placement>> tenants;
  for (const auto& [name, record] : last.tenants) {
    allocator::Placement p;
    std::string why;
    if (to_placement(record, view.tree, view.embedding, view.fabric, &p, &why))
      tenants.emplace_back(name, std::move(p));
    else
      out.warnings.push_back("tenant " + name + " last routed is not on this fabric: " + why +
                             "; its hosts are not routed (free hosts reach nobody)");
  }
  return tenants;
}

RouteOutcome& Engine::fail_closed(const topology::Fabric& fabric, const std::string& why,
                                  RouteOutcome& out) {
  if (config_.fail_open) {
    out.error += " (fail_open is set in laas.yaml: the next routing engine routes the fabric)";
    return out;
  }
  if (!tenants_known()) return out;  // nothing to keep: the next engine may route the fabric
  out.tables.assign(fabric.nodes.size(), {});
  routing::Sl2VlTables sl2vl(fabric.nodes.size());
  size_t kept = 0, unknown = 0;
  for (size_t n = 0; n < fabric.nodes.size(); ++n) {
    const auto& node = fabric.nodes[n];
    if (!node.is_switch) continue;
    auto it = good_lfts_.find(node.guid);
    if (it == good_lfts_.end()) {
      ++unknown;
      continue;
    }
    out.tables[n] = it->second;
    ++kept;
    auto s = good_sl2vl_.find(node.guid);
    if (s != good_sl2vl_.end() && s->second.first == static_cast<int>(node.ports.size())) {
      sl2vl.ports[n] = s->second.first;
      sl2vl.drops[n] = s->second.second;
    }
  }
  out.sl2vl = std::move(sl2vl);
  out.fail_closed =
      why + "; the last good tables stay on " + std::to_string(kept) + " switch(es)" +
      (unknown ? ", " + std::to_string(unknown) + " switch(es) never routed get no routes"
               : std::string()) +
      " until it is fixed";
  fail_closed_ = out.fail_closed;
  service_.set_fail_closed(fail_closed_);
  out.ok = true;
  return out;
}

void Engine::remember_good(const topology::Fabric& fabric, const RouteOutcome& out) {
  good_lfts_.clear();
  good_sl2vl_.clear();
  for (size_t n = 0; n < fabric.nodes.size() && n < out.tables.size(); ++n) {
    if (!fabric.nodes[n].is_switch || out.tables[n].empty()) continue;
    good_lfts_[fabric.nodes[n].guid] = out.tables[n];
    if (n < out.sl2vl.drops.size() && !out.sl2vl.drops[n].empty())
      good_sl2vl_[fabric.nodes[n].guid] = {out.sl2vl.ports[n], out.sl2vl.drops[n]};
  }
}

topology::Recognition Engine::recognize_now(const topology::Fabric& fabric,
                                            Guid sm_port_guid) const {
  topology::RecognizeOptions options;
  options.sm_port_guid = sm_port_guid;
  options.layout = layout_ ? &*layout_ : nullptr;
  options.declared = config_.topology;
  return topology::recognize(fabric, options);
}

void Engine::keep_layout(const topology::Recognition& rec, const topology::Fabric& fabric,
                         RouteOutcome& out) {
  if (layout_unreadable_) return;
  const auto& emb = rec.embedding;
  const bool complete =
      emb.missing_hosts.empty() && emb.missing_links.empty() && emb.missing_switches.empty();
  const topology::Layout* previous = rec.grown ? &*rec.grown : layout_ ? &*layout_ : nullptr;
  topology::Layout now = topology::layout_of(*rec.tree, emb, fabric, previous);
  std::string why;
  if (rec.source == topology::TreeSource::kGrown && layout_) {
    // Staged build-out (issue 24): the recorded switches keep their model indices and ports.
    why = rec.growth + " (re-recorded in " + layout_file() + ")";
  } else if (!layout_) {
    why = "recorded the intended tree " + now.spec + " in " + layout_file();
  } else if (rec.source == topology::TreeSource::kLayout) {
    // Same tree: only host identities may have changed (a host replaced in its slot).
    bool changed = false;
    for (size_t h = 0; h < now.hosts.size() && !changed; ++h)
      changed = now.hosts[h].port_guid != layout_->hosts[h].port_guid ||
                now.hosts[h].name != layout_->hosts[h].name;
    for (size_t l = 0; l < now.switches.size() && !changed; ++l)
      for (size_t i = 0; i < now.switches[l].size() && !changed; ++i)
        changed = now.switches[l][i].name != layout_->switches[l][i].name;
    if (!changed) return;
  } else if (complete || !config_.topology.empty()) {
    // The fabric no longer fits the recorded layout (recabled, a switch replaced, grown) and
    // shows a whole tree, or the administrator declared one: that is the intended tree now.
    why = "re-recorded the intended tree " + now.spec + " in " + layout_file() +
          " (the previous layout does not fit the fabric)";
  } else {
    return;  // keep the recorded layout until the fabric fits it or shows a whole tree
  }
  try {
    ::mkdir(config_.state_dir.c_str(), 0755);
    service::write_file_atomically(layout_file(), topology::layout_to_json(now), 0644);
    layout_ = std::move(now);
    if (!why.empty()) out.info.push_back(why);
  } catch (const std::exception& e) {
    out.warnings.push_back(std::string("cannot record the layout: ") + e.what());
  }
}

void Engine::on_routing_done() {
  std::uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation = last_generation_;
  }
  service_.on_routing_done(generation);
}

}  // namespace laas::plugin

namespace laas::plugin {

nlohmann::json Engine::audit(const topology::Fabric& fabric,
                             const std::vector<std::vector<std::uint8_t>>& tables,
                             Guid sm_port_guid, const routing::Sl2VlTables* sl2vl,
                             const routing::Mfts* mfts,
                             const std::map<std::uint16_t, std::vector<Guid>>* members) {
  const auto rec = recognize_now(fabric, sm_port_guid);
  if (!rec.ok())
    throw std::runtime_error("the fabric is not a fat-tree: " + rec.error +
                             (service_.fail_closed().empty()
                                  ? std::string()
                                  : "; failing closed: " + service_.fail_closed()));
  Allocations alloc;
  {
    std::lock_guard<std::mutex> lock(mu_);
    alloc = routed_;
  }
  routing::AuditInput input = audit_input(rec, fabric, tables, alloc);
  input.sl2vl = sl2vl;
  const auto report = routing::audit(input);
  nlohmann::json j = routing::to_json(report);
  j["violations"] = report.violations();
  if (mfts) {
    routing::McastMembership membership;
    if (members) {
      std::map<Guid, topology::HostId> host_of;
      for (std::size_t n = 0; n < fabric.nodes.size(); ++n)
        if (input.embedding->node_model[n].first == 0)  // quarantined newcomers are not
          host_of[fabric.nodes[n].port_guid] = input.embedding->node_model[n].second;
      for (const auto& [mlid, guids] : *members) {
        auto& hosts = membership[mlid];
        for (Guid g : guids)
          if (auto it = host_of.find(g); it != host_of.end()) hosts.push_back(it->second);
      }
    }
    const auto mreport = routing::audit_multicast(input, *mfts, members ? &membership : nullptr);
    j["multicast"] = routing::to_json(mreport);
    j["violations"] = report.violations() + mreport.violations();
    if (!mreport.ok()) j["ok"] = false;
  }
  j["tenants"] = input.tenants.size();
  if (const std::string closed = service_.fail_closed(); !closed.empty()) {
    // The tables may be isolated, but the system is not working as configured: say so.
    j["fail_closed"] = closed;
    j["violations"] = j["violations"].get<long>() + 1;
    j["ok"] = false;
  }
  j["topology"] = rec.tree->spec().text();
  j["sl2vl_checked"] = sl2vl != nullptr;
  return j;
}

}  // namespace laas::plugin
