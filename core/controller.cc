#include "core/controller.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "core/store_config.h"
#include "routing/audit.h"
#include "routing/multicast.h"
#include "routing/routing.h"
#include "service/host_identity.h"
#include "service/physical_ids.h"
#include "service/state_store.h"
#include "service/topology_view.h"
#include "topology/recognize.h"
#include "topology/servers.h"

namespace laas::core {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// For the acceptance tests of failing closed: while the file LAAS_INJECT_ROUTING_FAILURE names
// exists, every routing computation throws, as a RoutingError or a port without a LID would.
void inject_routing_failure() {
  static const char* const path = std::getenv("LAAS_INJECT_ROUTING_FAILURE");
  struct stat st;
  if (path && *path && ::stat(path, &st) == 0)
    throw std::runtime_error(std::string("injected failure (") + path + " exists)");
}

// The routing log's line on how much this run computed.
std::string describe(const routing::IncrementalStats& s) {
  if (s.full) return "routes computed in full (" + s.why + ")";
  std::string line = "routes computed again to the hosts of " + std::to_string(s.leaves) + " of " +
                     std::to_string(s.of_leaves) + " leaves";
  if (s.level2_pods > 0)
    line += " (and to those of the other " + std::to_string(s.pod_rows_leaves) +
            " leaves at the switches of " + std::to_string(s.level2_pods) +
            " pod(s) whose level-2 links changed hands)";
  line += s.switches ? " and to " + std::to_string(s.switch_destinations) + " of " +
                           std::to_string(s.of_switches) + " switches"
                     : ", routes to switches kept";
  return line + " (only tenants changed)";
}

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
  s.etcd = etcd_settings(c);
  s.algorithm = c.placer;
  s.state_must_exist = c.state_must_exist;
  s.state_dir_unknown = c.state_dir_unknown;
  s.resume_check = c.resume_check;
  s.metrics_file = c.metrics_file;
  s.link_error_threshold = c.link_error_threshold;
  s.link_error_consecutive_readings = c.link_error_consecutive_readings;
  s.link_error_clean_readings = c.link_error_clean_readings;
  s.resume_check_timeout_ms = c.resume_check_timeout_s * 1000;
  s.exports.partitions_base_file = c.partitions_base;
  if (c.manage_partitions) s.exports.managed_partitions_file = c.managed_partitions_file;
  s.exports.slurm_node_names = c.slurm_node_names;
  s.servers = c.servers;
  s.subnet_managers = c.subnet_managers;
  s.free_pool_open = c.free_pool_open;
  s.whole_leaves = c.whole_leaves.value_or(false);
  for (const auto& p : c.problems) s.config_error += (s.config_error.empty() ? "" : "; ") + p;
  // An invalid laas.yaml rewrites nothing: OpenSM keeps reading the partitions.conf that holds
  // every tenant's P_Key.
  if (!c.problems.empty()) s.exports.managed_partitions_file.clear();
  s.exports.openstack_hosts = c.openstack_hosts;
  s.exports.openstack_projects = c.openstack_projects;
  return s;
}

// The SL2VL plan for the tables just computed (routing/sl2vl.h), summarized in the log.
// `mgmt_switch_nodes`: the fabric nodes of the switches an SM runs on (every SM's, so that
// the exemptions do not move at failover).
// `emb`: the recognized embedding without the unaccepted slots.
routing::Sl2VlTables first_hop_drop(const topology::Fabric& fabric,
                                    const topology::Recognition& rec,
                                    const topology::Embedding& emb,
                                    const routing::RoutingRequest& req,
                                    const std::vector<int>& mgmt_switch_nodes,
                                    const std::vector<topology::HostId>& unaccepted,
                                    const std::vector<int>& closed_attached, RouteOutcome& out) {
  routing::Sl2VlInput in;
  in.closed_attached = closed_attached;
  in.fabric = &fabric;
  in.embedding = &emb;
  in.unaccepted_hosts = unaccepted;
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

}  // namespace

Controller::Controller(Config config, service::Logger log)
    : config_(std::move(config)),
      log_(log),
      service_(service_config(config_), std::move(log)),
      tenants_file_(config_, service_, log_),
      files_(service_, log_),
      sent_(config_, service_, log_) {
  // A guessed directory is never read (Config::state_dir_unknown): nothing of it is routed.
  if (!config_.state_dir_unknown) read_shared_files(std::chrono::seconds(10));
  // Changes made inside a routing run (the tenants file) are routed by that run: the service
  // asks for no other (service::Caller::routes_itself).
  service_.set_reroute_hook([this] {
    if (reroute_) reroute_();
  });
}

namespace {

// Two layouts of the same tree name the same hosts (port GUID, name) and switches (name).
bool same_identities(const topology::Layout& a, const topology::Layout& b) {
  for (size_t h = 0; h < a.hosts.size(); ++h)
    if (a.hosts[h].port_guid != b.hosts[h].port_guid || a.hosts[h].name != b.hosts[h].name)
      return false;
  for (size_t l = 0; l < a.switches.size(); ++l)
    for (size_t i = 0; i < a.switches[l].size(); ++i)
      if (a.switches[l][i].name != b.switches[l][i].name) return false;
  return true;
}

}  // namespace

// Read at start, and again when this SM takes the state over from another (which may have
// written them since): a directory that does not answer leaves memory as it is.
bool Controller::read_shared_files(std::chrono::milliseconds deadline) {
  auto applied = files_.read(deadline);
  if (!applied) return false;
  tenants_file_.adopt_applied(std::move(*applied));
  if (const auto& disk = files_.disk_allocations())
    for (const auto& [name, t] : disk->tenants) shapes_[name] = t.shape;
  return true;
}

void Controller::set_reroute_hook(std::function<void()> hook) { reroute_ = std::move(hook); }

void Controller::connect(AdapterHooks hooks) {
  set_reroute_hook(std::move(hooks.reroute));
  if (hooks.role) service_.set_role_provider(std::move(hooks.role));
  if (hooks.partitions_changed) service_.set_partitions_hook(std::move(hooks.partitions_changed));
  if (hooks.audit_live) service_.set_audit_hook(std::move(hooks.audit_live));
  if (hooks.switch_check) service_.set_switch_check(std::move(hooks.switch_check));
  if (hooks.status || hooks.metrics)
    service_.set_adapter_report(std::move(hooks.status), std::move(hooks.metrics));
}

std::string Controller::state_error() const { return service_.snapshot().blocked; }

bool Controller::claim_tenants_change() { return tenants_file_.claim_change(routed_once()); }

bool Controller::routed_once() const {
  std::lock_guard<std::mutex> lock(mu_);
  return routed_once_;
}

// One routing run's working set, handed from phase to phase. Each phase reads what the ones
// before it left here and adds its own part; none returns to route() for the next step.
struct RoutingRun {
  RoutingRun(const topology::Fabric& f, Guid sm, bool sl2vl, const std::vector<Guid>& sms,
             RouteOutcome& o)
      : fabric(f), sm_port_guid(sm), with_sl2vl(sl2vl), sm_ports(sms), out(o) {}
  const topology::Fabric& fabric;
  Guid sm_port_guid;
  bool with_sl2vl;
  const std::vector<Guid>& sm_ports;
  RouteOutcome& out;
  Clock::time_point t0 = Clock::now();
  topology::Recognition rec;
  // Why this run routes closed (the tenants last routed, changes refused); empty: it does not.
  std::string closed;
  // The host ports grouped by server (topology::group_servers, as the service and the audit
  // group them), once per run.
  topology::Servers servers;
  // Port GUIDs -> hosts cabled now, and (from the tenants chosen) whose each host is.
  routing::OwnerIndex owners;
  std::set<topology::HostId> mgmt;
  std::vector<std::pair<int, int>> mgmt_switches;
  std::vector<int> mgmt_switch_nodes;
  std::vector<Guid> outside_members;
  std::vector<Guid> trusted_sms;  // the SM ports the administrator trusts, read once per run
  std::shared_ptr<const service::TopologyView> view;
  service::RoutingSnapshot snap;
  std::vector<topology::HostId> unaccepted;
  topology::Embedding without_unaccepted;  // the embedding the tables are computed on
  routing::RoutingRequest req;
  routing::ClosedAttached closed_attached;  // unlisted hosts outside the slots: free hosts
  Allocations alloc;

  const topology::Embedding& emb() const { return rec.embedding; }
  const topology::FatTree& tree() const { return *rec.tree; }
  const topology::Embedding& routed_emb() const {
    return unaccepted.empty() ? rec.embedding : without_unaccepted;
  }
};

RouteOutcome Controller::route(const FabricSnapshot& snapshot) {
  lmc_ = snapshot.lmc;
  return route(snapshot.fabric, snapshot.sm_port_guid, snapshot.with_sl2vl, snapshot.sm_ports);
}

// The phases of a routing run, in the order OpenSM's ucast manager would name them. Any
// exception -- a routing error, a port without a LID, bad_alloc -- fails closed: the switches
// keep what they hold, and the next engine never takes a fabric that has tenants.
RouteOutcome Controller::route(const topology::Fabric& fabric, Guid sm_port_guid, bool with_sl2vl,
                               const std::vector<Guid>& sm_ports) {
  RouteOutcome out;
  RoutingRun run(fabric, sm_port_guid, with_sl2vl, sm_ports, out);
  try {
    take_over(run);
    if (!recognize(run)) return out;
    derive_management(run);
    publish_view(run);
    if (!choose_tenants(run)) return out;
    build_request(run);
    compute_and_publish(run);
  } catch (const std::exception& e) {
    fail_closed(fabric, std::string("routing failed: ") + e.what(), out);
  } catch (...) {
    fail_closed(fabric, "routing failed: an unknown exception", out);
  }
  // The next run learns from the worker whether another SM wrote state.json meanwhile.
  service_.probe_state_dir();
  return out;
}

// The first routing run as master (or after another SM wrote the shared state) takes the
// tenant state over before anything is recognized or placed: every tenant is read, none
// re-computed, on the intended tree the previous master recorded. An invalid laas.yaml takes
// nothing over: it writes nothing to the state directory.
void Controller::take_over(RoutingRun& run) {
  if (!config_.problems.empty()) return;
  if (files_.unread() && service_.io().not_answering().empty())
    read_shared_files(service::kIoDeadline);
  // From memory: state.json as the worker last saw it, allocations.json as last read or written.
  bool state_expected = false;
  if (!service_.polled_stamp().exists) {
    std::lock_guard<std::mutex> lock(mu_);
    state_expected = !routed_.tenants.empty() || !files_.disk_allocations_error().empty() ||
                     (files_.disk_allocations() && !files_.disk_allocations()->tenants.empty());
  }
  if (auto line =
          service_.take_over_if_needed(sm_identity(run.fabric, run.sm_port_guid), state_expected)) {
    run.out.took_over = line->rfind("laas: took over", 0) == 0;
    (run.out.took_over ? run.out.info : run.out.warnings).push_back(*line);
    // Taken over: the parts as the previous master left them. Not taken (etcd without a quorum,
    // say): with etcd, the parts as this SM's watch last brought them -- the tenants last routed
    // by the previous master, which this run routes closed -- rather than its own older record.
    if (run.out.took_over || service_.store().etcd()) read_shared_files(service::kIoDeadline);
  }
  if (auto error = files_.take_layout_error(); !error.empty())
    run.out.warnings.push_back(std::move(error));
}

// The tree: the recorded layout, the declared spec or the cabling. A fabric that fits none of
// them while tenants exist is routed closed: the recorded tree with what does not fit set
// aside, or else every switch keeps the tables it holds. False: nothing more to do this run.
bool Controller::recognize(RoutingRun& run) {
  auto& out = run.out;
  bool reused = false;
  run.rec = recognize_now(run.fabric, run.sm_port_guid, /*set_aside_loops=*/false, &reused);
  out.ms_recognize = ms_since(run.t0);
  out.recognition_reused = reused;
  if (!run.rec.ok()) {
    const std::string error = run.rec.error;
    if (files_.layout() && routes_closed()) {
      auto tolerant = recognize_now(run.fabric, run.sm_port_guid, /*set_aside_loops=*/true);
      if (tolerant.ok()) {
        run.rec = std::move(tolerant);
        run.closed = "the fabric is not recognized: " + error +
                     "; the recorded tree is routed with what does not fit set aside";
        return true;
      }
    }
    last_source_note_.clear();
    service_.on_topology_error(error);
    out.not_fat_tree = true;
    out.error = error;
    fail_closed(run.fabric, "the fabric is not recognized: " + error, out);
    return false;
  }
  if (run.rec.source_note != last_source_note_) {
    out.info.push_back(run.rec.source_note);
    last_source_note_ = run.rec.source_note;
  }
  if (config_.problems.empty()) keep_layout(run.rec, run.fabric, out);
  return true;
}

// Management: this SM's host, the SMs the administrator trusts, laas.yaml's management and
// shared services. Privilege comes from GUIDs only: an SM nobody accepted is named and stays
// what its port was; a management port widens to the other ports of its own adapter (CA node
// GUID), never to ports that merely share a name, which the host's root writes.
void Controller::derive_management(RoutingRun& run) {
  run.servers = topology::group_servers(run.tree(), run.emb(), run.fabric, files_.layout().get(),
                                        config_.servers);
  run.owners = routing::OwnerIndex(run.tree(), run.emb(), run.fabric);
  if (run.rec.sm_host >= 0) run.mgmt.insert(run.rec.sm_host);
  note_subnet_managers(run);
  listed_management(run);
  management_switches(run);
  widen_management_to_adapters(run);
}

// Every SM OpenSM knows of, for `laasctl sm list`; one nobody trusts is said at every run.
void Controller::note_subnet_managers(RoutingRun& run) {
  const auto& fabric = run.fabric;
  std::vector<service::SmSeen> seen;
  for (Guid g : run.sm_ports) {
    service::SmSeen sm{g, "", 0};
    for (size_t n = 0; n < fabric.nodes.size(); ++n)
      if (fabric.nodes[n].port_guid == g) {
        sm.name = fabric.nodes[n].name;
        sm.lid = fabric.lid_of(static_cast<int>(n));
        break;
      }
    seen.push_back(std::move(sm));
  }
  for (const auto& sm : service_.note_subnet_managers(run.sm_port_guid, std::move(seen)))
    run.out.warnings.push_back(
        "subnet manager " + format_guid(sm.guid) + (sm.name.empty() ? "" : " ('" + sm.name + "')") +
        " is not trusted: laas.yaml's subnet_managers does not list it and "
        "nobody accepted it (laasctl sm accept); routed as what its port is, "
        "never as management");
}

// The administrator's word: laas.yaml's management and shared services and the trusted SMs.
// Hosts cabled outside the tree's slots among them join every tenant partition.
void Controller::listed_management(RoutingRun& run) {
  const auto& fabric = run.fabric;
  const auto& emb = run.emb();
  auto& out = run.out;
  std::set<Guid> attached_ports;
  for (const auto& a : emb.attached) attached_ports.insert(fabric.nodes[a.node].port_guid);
  run.trusted_sms = service_.sm_ports();
  for (Guid g : run.trusted_sms)  // a trusted SM's ports outside the slots (its host cabled twice)
    if (attached_ports.count(g)) run.outside_members.push_back(g);
  for (const auto* list : {&config_.management, &config_.shared_services})
    for (Guid g : *list) {
      if (const auto h = run.owners.host(g))
        run.mgmt.insert(*h);
      else if (attached_ports.count(g))
        run.outside_members.push_back(g);
      else
        out.warnings.push_back(
            std::string(list == &config_.management ? "management port " : "shared service port ") +
            format_guid(g) + " is not cabled to the tree");
    }
}

// The switches that route like management: the SM's own (an SM on a switch), a trusted SM's,
// and a leaf holding a listed attached host (storage, a gateway).
void Controller::management_switches(RoutingRun& run) {
  const auto& fabric = run.fabric;
  const auto& emb = run.emb();
  auto add_switch = [&](int node) {
    const auto model = emb.node_model[node];
    if (std::find(run.mgmt_switches.begin(), run.mgmt_switches.end(), model) !=
        run.mgmt_switches.end())
      return;
    run.mgmt_switches.push_back(model);
    run.mgmt_switch_nodes.push_back(node);
  };
  if (run.rec.sm_node >= 0 && fabric.nodes[run.rec.sm_node].is_switch) add_switch(run.rec.sm_node);
  for (Guid g : run.trusted_sms) {
    if (const auto h = run.owners.host(g)) {
      run.mgmt.insert(*h);
      continue;
    }
    for (size_t n = 0; n < fabric.nodes.size(); ++n)  // an SM on a switch (port 0)
      if (fabric.nodes[n].is_switch && fabric.nodes[n].guid == g && emb.node_model[n].first > 0)
        add_switch(static_cast<int>(n));
  }
  // A leaf with a listed attached host (storage, a gateway) routes like a management leaf.
  std::set<Guid> listed_outside(run.outside_members.begin(), run.outside_members.end());
  for (const auto& a : emb.attached)
    if (a.level == 1 && emb.switch_node[0][a.index] >= 0 &&
        listed_outside.count(fabric.nodes[a.node].port_guid))
      add_switch(emb.switch_node[0][a.index]);
  std::sort(run.mgmt_switches.begin(), run.mgmt_switches.end());
  std::sort(run.mgmt_switch_nodes.begin(), run.mgmt_switch_nodes.end());
}

// The other ports of a management adapter (a dual-port HCA's second port) are management:
// by the adapter's GUID, never by a name.
void Controller::widen_management_to_adapters(RoutingRun& run) {
  const auto& fabric = run.fabric;
  const auto& tree = run.tree();
  const auto& emb = run.emb();
  const auto& adapter_of = run.servers.adapter_of;
  std::set<Guid> mgmt_cas;
  for (topology::HostId h : run.mgmt)
    if (const Guid ca = adapter_of[h]) mgmt_cas.insert(ca);
  for (topology::HostId h = 0; h < tree.num_hosts(); ++h)
    if (adapter_of[h] && mgmt_cas.count(adapter_of[h])) run.mgmt.insert(h);
  for (const auto& a : emb.attached)
    if (const Guid ca = fabric.nodes[a.node].ca_guid; ca && mgmt_cas.count(ca))
      run.outside_members.push_back(fabric.nodes[a.node].port_guid);
  std::sort(run.outside_members.begin(), run.outside_members.end());
  run.outside_members.erase(std::unique(run.outside_members.begin(), run.outside_members.end()),
                            run.outside_members.end());
}

// The topology view the service places tenants on, and one log line when what is cabled
// outside the tree changes.
void Controller::publish_view(RoutingRun& run) {
  const auto layout = files_.layout();
  auto fresh = std::make_shared<service::TopologyView>(
      run.tree(), run.fabric, run.emb(),
      std::vector<topology::HostId>(run.mgmt.begin(), run.mgmt.end()),
      layout ? *layout : topology::Layout{});
  fresh->outside_members = run.outside_members;
  run.view = fresh;
  view_ = run.view;
  log_outside_tree(run);
  // The service logs one line per fault seen and cleared (log_fault_changes).
  service_.on_topology(run.view);
}

void Controller::log_outside_tree(RoutingRun& run) {
  const auto& fabric = run.fabric;
  const auto& emb = run.emb();
  std::set<Guid> listed(run.outside_members.begin(), run.outside_members.end());
  std::string line;
  for (const auto& a : emb.attached) {
    const auto& node = fabric.nodes[a.node];
    const int sw = emb.switch_node[a.level - 1][a.index];
    line +=
        std::string(line.empty() ? "" : "; ") + node.name + " (" + format_guid(node.port_guid) +
        ") on " + (sw >= 0 ? fabric.nodes[sw].name : "?") + " port " +
        std::to_string(a.switch_port) +
        (listed.count(node.port_guid) ? ", management/shared service"
                                      : ", not listed: a free host (reached from management only)");
  }
  for (const auto& c : emb.extra_cables)
    line += std::string(line.empty() ? "" : "; ") + "extra cable " + fabric.nodes[c.node].name +
            " port " + std::to_string(c.port) + " - " + fabric.nodes[c.peer].name + " port " +
            std::to_string(c.peer_port) + " (never routed over)";
  if (line != last_outside_) {
    run.out.info.push_back(line.empty() ? "nothing is cabled outside the tree any more"
                                        : "outside the tree: " + line);
    last_outside_ = line;
  }
}

// The tenants this run routes: the service's, or -- when the state or laas.yaml cannot be
// used, or the fabric only fits with parts set aside -- the tenants last routed (the memory of
// the last run, else allocations.json: the "last routed" record on disk). False: refused
// (fail_open, or nothing was ever routed), `out` says why.
bool Controller::choose_tenants(RoutingRun& run) {
  auto& out = run.out;
  const auto t_place = Clock::now();
  if (config_.problems.empty()) tenants_file_.feed(out.info, out.warnings);
  run.snap = service_.snapshot();
  out.ms_place = ms_since(t_place);
  std::string unusable;
  if (!run.snap.config_error.empty())
    unusable = "laas.yaml is invalid (" + run.snap.config_error + ")";
  else if (!run.snap.blocked.empty())
    unusable = "the tenant state cannot be read (" + run.snap.blocked + ")";
  if (!unusable.empty()) {
    if (!routes_closed()) {
      out.error = unusable + "; refusing to route tenants until it is repaired" +
                  (config_.fail_open ? " (fail_open is set in laas.yaml: the next routing "
                                       "engine routes the fabric)"
                                     : "");
      return false;
    }
    run.closed = run.closed.empty() ? unusable : run.closed + "; " + unusable;
    // The records place hosts by slot: a newcomer in a slot is unaccepted here, since the
    // service (which decides it from state.json) cannot while the state is blocked.
    run.snap.tenants = last_routed_tenants(*run.view, out, &run.snap.unaccepted);
    service_.set_unaccepted_while_blocked(run.snap.unaccepted);
    if (run.snap.tenants.empty() && !run.snap.blocked.empty()) {
      // A tenant state that cannot be read, and nothing records what was routed
      // (allocations.json lost too): the switches' own tables are the only record left of
      // the tenants' routes -- while OpenSM knows them. Since its start it knows nothing of
      // what the switches hold (keeping would send them empty tables): then no tenant is
      // routed, every host is a free host reaching management only, and P_Keys stay.
      const std::string lost =
          config_.state_dir_unknown
              ? std::string("; nothing records the tenants last routed (no state directory)")
              : "; nothing records the tenants last routed (" + config_.allocations_file() + ")";
      if (routed_once_ || sent_.give_back(out)) {
        fail_closed(run.fabric, unusable + lost, out);
        return false;
      }
      run.closed += lost +
                    ": routed with no tenant (every host free, reaching management only) "
                    "until state.json or allocations.json is restored";
    }
  }
  const auto& emb = run.emb();
  if (emb.missing_links.size() > emb.uncabled.size() || !emb.missing_hosts.empty() ||
      !emb.missing_switches.empty())
    out.info.push_back("down: " + std::to_string(emb.missing_hosts.size()) + " host(s), " +
                       std::to_string(emb.missing_links.size() - emb.uncabled.size()) +
                       " link(s), " + std::to_string(emb.missing_switches.size()) +
                       " switch(es) of the tree; links down are treated as faulty");
  return true;
}

// The routing request and allocations.json's record of it, in four steps.
void Controller::build_request(RoutingRun& run) {
  note_unaccepted(run);
  run.alloc.topology = run.tree().spec().text();
  run.alloc.sm_port_guid = run.sm_port_guid;
  run.alloc.sm_ports = service_.sm_ports();
  run.alloc.servers = config_.servers;
  const auto recorded = files_.layout();  // held for the run: names the hosts down by slot
  request_tenants(run, recorded.get());
  request_reach_all(run);
  request_faulty_links(run, recorded.get());
  run.req.threads = config_.routing_threads;
}

// Tenants' slots holding an unaccepted port GUID stay in their placements (their routes and
// everyone else's are unchanged) but are routed like absent hosts: no switch has an entry for
// the newcomer, its port is a free one for the first-hop drop, and it is in no multicast tree.
void Controller::note_unaccepted(RoutingRun& run) {
  for (const auto& q : run.snap.unaccepted) run.unaccepted.push_back(q.host);
  if (run.unaccepted.empty()) return;
  run.without_unaccepted = routing::without_hosts(run.emb(), run.unaccepted);
  // The old word too, for the log watchers that match it.
  run.out.warnings.push_back(std::to_string(run.unaccepted.size()) +
                             " host(s) unaccepted (quarantined): another port GUID than recorded "
                             "in a tenant's slot, unrouted until `laasctl host accept` (laasctl "
                             "host list)");
}

// Every tenant of the snapshot into the request, its record into allocations.json.
void Controller::request_tenants(RoutingRun& run, const topology::Layout* layout) {
  const auto& tree = run.tree();
  std::vector<const allocator::Placement*> placements;
  for (const auto& [name, placement] : run.snap.tenants) {
    run.req.tenants.push_back({name, placement});
    placements.push_back(&placement);
    // Hosts down now stay the tenant's, named by the identity last seen in their slot.
    auto record = make_record(name, static_cast<int>(placement.hosts.size()), placement, tree,
                              run.emb(), run.fabric, layout);
    // Placements restored from state.json carry no shape: keep the one recorded before.
    if (placement.shape.leaves.d == 0) {
      auto it = shapes_.find(name);
      record.shape = it == shapes_.end() ? "" : it->second;
    }
    shapes_[name] = record.shape;
    run.alloc.tenants[name] = std::move(record);
  }
  run.owners.set_tenants(placements, tree.num_hosts());
  record_unaccepted(run.alloc, run.snap.unaccepted, run.emb(), run.fabric);
}

// The hosts that reach and are reached by everyone: management, and every host without a
// tenant while the free pool is open (it talks as before LaaS until the administrator closes
// it). allocations.json names them for the audit.
void Controller::request_reach_all(RoutingRun& run) {
  const auto& emb = run.emb();
  std::set<topology::HostId> reach_all = run.mgmt;
  if (config_.free_pool_open)
    for (topology::HostId h = 0; h < run.tree().num_hosts(); ++h)
      if (run.owners.tenant_of(h) < 0 && emb.host_node[h] >= 0) reach_all.insert(h);
  run.req.management_hosts.assign(reach_all.begin(), reach_all.end());
  close_unlisted_attached(run);
  run.req.management_switches = run.mgmt_switches;
  for (topology::HostId h : reach_all) {
    const int node = emb.host_node[h];
    if (node < 0) continue;
    const auto& n = run.fabric.nodes[node];
    run.alloc.management.push_back(
        records::host_endpoint(n.name, n.port_guid, run.fabric.lid_of(node)));
  }
}

// Links missing from the fabric, and links isolated for their error counters: faults to the
// routing; allocations.json names the isolated ones for the audit.
void Controller::request_faulty_links(RoutingRun& run, const topology::Layout* layout) {
  const auto& isolated = run.snap.isolated_links;
  auto& faulty = run.req.faulty_links;
  faulty = run.emb().missing_links;
  for (auto l : isolated)
    if (std::find(faulty.begin(), faulty.end(), l) == faulty.end()) faulty.push_back(l);
  if (!isolated.empty())
    run.alloc.isolated_links = make_record("isolated", 0, {{}, isolated, {}, {}}, run.tree(),
                                           run.emb(), run.fabric, layout)
                                   .links;
}

// Hosts cabled outside the tree's slots that nobody listed (an adapter on a spare switch port)
// are free hosts: reached from management only and dropped at their first switch, since
// nothing the administrator wrote vouches for them. An open free pool leaves them open too.
void Controller::close_unlisted_attached(RoutingRun& run) {
  const auto& fabric = run.fabric;
  const auto& emb = run.emb();
  std::vector<Guid> open = run.outside_members;
  for (const auto& a : emb.attached) {
    const Guid g = fabric.nodes[a.node].port_guid;
    if (config_.free_pool_open) open.push_back(g);
    if (!std::binary_search(run.outside_members.begin(), run.outside_members.end(), g) &&
        !config_.free_pool_open)
      run.closed_attached.nodes.push_back(a.node);
  }
  std::sort(open.begin(), open.end());
  open.erase(std::unique(open.begin(), open.end()), open.end());
  run.alloc.attached_open = std::move(open);
  if (run.closed_attached.nodes.empty()) return;
  auto& sources = run.closed_attached.management_sources;
  sources = run.mgmt_switch_nodes;
  for (topology::HostId h : run.req.management_hosts)
    if (emb.host_node[h] >= 0) sources.push_back(emb.switch_node[0][run.tree().leaf_of_host(h)]);
  const std::set<Guid> shared(config_.shared_services.begin(), config_.shared_services.end());
  for (const auto& a : emb.attached)  // management cabled outside the slots (an SM host's port)
    if (const Guid g = fabric.nodes[a.node].port_guid;
        !shared.count(g) &&
        std::binary_search(run.outside_members.begin(), run.outside_members.end(), g))
      sources.push_back(emb.switch_node[a.level - 1][a.index]);
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  sources.erase(std::remove(sources.begin(), sources.end(), -1), sources.end());
  std::vector<char> taken(run.tree().num_hosts(), 0);
  for (const auto& t : run.req.tenants)
    for (topology::HostId h : t.placement.hosts) taken[h] = 1;
  for (topology::HostId h : run.req.management_hosts) taken[h] = 1;
  for (topology::HostId h : run.unaccepted) taken[h] = 1;
  for (topology::HostId h = 0; h < run.tree().num_hosts(); ++h)
    if (!taken[h] && emb.host_node[h] >= 0) run.closed_attached.free_hosts.push_back(h);
}

// The tables, then allocations.json and the multicast context. allocations.json is serialized
// and written on the state directory's worker once the routing succeeded: the run never waits
// for it (UCAST_ROUTING_DONE does, briefly, outside OpenSM's lock: see on_routing_done).
void Controller::compute_and_publish(RoutingRun& run) {
  auto& out = run.out;
  const auto& fabric = run.fabric;
  const auto& tree = run.tree();
  const auto& remb = run.routed_emb();
  const auto t_compute = Clock::now();
  inject_routing_failure();
  // The previous run's tables are kept: a tenant change recomputes only the destinations it
  // determines (routing/incremental.h), the same tables a full compute gives.
  const auto& result = incremental_.compute(tree, run.req);
  out.ms_compute = ms_since(t_compute);
  out.info.push_back(describe(incremental_.stats()));
  for (const auto& w : result.warnings) out.warnings.push_back(w);
  const auto t_tables = Clock::now();
  out.tables = routing::to_lid_tables(fabric, remb, tree, result.tables, run.closed_attached);
  routing::spread_lmc(fabric, lmc_, out.tables);
  if (run.with_sl2vl)
    out.sl2vl = first_hop_drop(fabric, run.rec, remb, run.req, run.mgmt_switch_nodes,
                               run.unaccepted, run.closed_attached.nodes, out);
  out.ms_tables = ms_since(t_tables);
  const auto t_save = Clock::now();
  if (config_.problems.empty()) files_.queue_allocations(run.alloc);
  out.ms_save = ms_since(t_save);
  publish_multicast(run);
  out.ok = true;
  out.ms_total = ms_since(run.t0);
  note_closed(run);
  out.info.push_back("routed " + tree.spec().text() + " (" + std::to_string(tree.num_hosts()) +
                     " hosts, " + std::to_string(run.req.tenants.size()) + " tenants, " +
                     std::to_string(run.mgmt.size()) + " management hosts, generation " +
                     std::to_string(run.snap.generation) + ")");
}

// Multicast trees are built between routing runs (joins), from what this run routed.
void Controller::publish_multicast(RoutingRun& run) {
  auto mcast_tenants = run.req.tenants;  // unaccepted newcomers are no tenant's members
  const auto& q = run.unaccepted;
  for (auto& t : mcast_tenants)
    t.placement.hosts.erase(std::remove_if(t.placement.hosts.begin(), t.placement.hosts.end(),
                                           [&](topology::HostId h) {
                                             return std::find(q.begin(), q.end(), h) != q.end();
                                           }),
                            t.placement.hosts.end());
  auto mcast = std::make_shared<const McastContext>(
      run.tree(), run.fabric, run.routed_emb(),
      routing::McastPolicy{std::move(mcast_tenants), run.req.management_hosts,
                           run.req.faulty_links});
  std::lock_guard<std::mutex> lock(mu_);
  run.out.multicast_changed = mcast_ && !same_policy(mcast_->policy, mcast->policy);
  mcast_ = std::move(mcast);
  routed_once_ = true;
  last_generation_ = run.snap.generation;
  routed_ = run.alloc;
}

// Status, the metrics and the audit say whether this run routed closed, and the log says when
// it recovers.
void Controller::note_closed(RoutingRun& run) {
  auto& out = run.out;
  if (!run.closed.empty()) {
    out.fail_closed = run.closed + "; routing the " + std::to_string(run.req.tenants.size()) +
                      " tenant(s) last routed, changes refused until it is repaired";
    fail_closed_ = out.fail_closed;
    service_.set_fail_closed(fail_closed_);
    return;
  }
  if (!fail_closed_.empty())
    out.info.push_back(
        "recovered: routing from the fabric and the tenant state again (was failing closed: " +
        fail_closed_ + ")");
  fail_closed_.clear();
  service_.set_fail_closed("");
}

// Whether a refusal keeps the tenants' routes (fail closed) rather than handing the fabric to
// OpenSM's next engine: always while laas.yaml is invalid (its fail_open included), else
// unless fail_open is set, whenever tenants exist or may exist.
bool Controller::routes_closed() const {
  if (!config_.problems.empty()) return true;
  return !config_.fail_open && tenants_known();
}

bool Controller::tenants_known() const {
  // The administrator said the shared state must be there (state_must_exist): an unmounted
  // share at a failover may hide tenants this SM has never seen, so never hand them over.
  if (config_.state_must_exist || !config_.problems.empty()) return true;
  if (service_.state_blocked()) return true;  // recorded, and cannot be read back
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!routed_.tenants.empty()) return true;
  }
  if (!service_.tenant_names().empty()) return true;
  // allocations.json as last read (from memory): something routed that cannot be read back,
  // or a directory that never answered, counts as tenants.
  if (!files_.disk_allocations_error().empty() || files_.unread()) return true;
  return files_.disk_allocations() && !files_.disk_allocations()->tenants.empty();
}

std::vector<std::pair<std::string, allocator::Placement>> Controller::last_routed_tenants(
    const service::TopologyView& view, RouteOutcome& out,
    std::vector<service::UnacceptedHost>* unaccepted) const {
  Allocations last;
  {
    std::lock_guard<std::mutex> lock(mu_);
    last = routed_;
  }
  if (last.tenants.empty()) {  // allocations.json as read at start or at the take-over
    if (files_.disk_allocations()) last = *files_.disk_allocations();
    if (!files_.disk_allocations_error().empty())
      out.warnings.push_back("cannot read the tenants last routed: " +
                             files_.disk_allocations_error());
  }
  std::vector<std::pair<std::string, allocator::Placement>> tenants;
  // The slots as recorded (leaf, port, the port GUID routed there), compared with the fabric by
  // the service's own rule.
  std::vector<service::PersistedTenant> slots;
  for (const auto& [name, record] : last.tenants) {
    service::PersistedTenant t;
    t.name = name;
    for (const auto& h : record.hosts)
      t.hosts.push_back({h.slot_switch, h.slot_port, h.guid, h.name});
    slots.push_back(std::move(t));
  }
  unaccepted->clear();
  if (!slots.empty())
    *unaccepted = service::find_unaccepted(
        slots, service::PhysicalIds(view.tree, view.embedding, view.fabric));
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

// The one way a run that cannot route fails closed: every switch keeps the forwarding tables
// (and SL2VL drops) it holds -- the plugin copies them from OpenSM's record of what each switch
// was sent -- so no good run pays for a copy kept "just in case". Without tenants, or with
// fail_open in a valid laas.yaml, `out` stays the refusal it is and OpenSM's next engine routes.
RouteOutcome& Controller::fail_closed(const topology::Fabric& fabric, const std::string& why,
                                      RouteOutcome& out) {
  (void)fabric;
  out.tables.clear();
  out.sl2vl = routing::Sl2VlTables(0);
  out.ok = false;
  if (!routes_closed()) {
    if (out.error.empty()) out.error = why;
    if (config_.fail_open)
      out.error += " (fail_open is set in laas.yaml: the next routing engine routes the fabric)";
    return out;
  }
  out.keep_switch_tables = true;
  if (!routed_once_) sent_.give_back(out);
  out.fail_closed = why + "; every switch keeps the tables it holds until it is fixed";
  fail_closed_ = out.fail_closed;
  service_.set_fail_closed(fail_closed_);
  out.ok = true;
  return out;
}

std::shared_ptr<const routing::SavedTables> Controller::sent_tables(std::string* why) const {
  return sent_.load(why);
}

void Controller::keep_sent_tables(routing::LidOwners lids, std::vector<Guid> switch_guids,
                                  std::vector<std::vector<std::uint8_t>> tables,
                                  std::shared_ptr<const routing::Sl2VlTables> sl2vl) {
  sent_.keep(std::move(lids), std::move(switch_guids), std::move(tables), std::move(sl2vl));
}

void Controller::keep_given_back_tables(std::shared_ptr<const routing::SavedTables> given) {
  sent_.keep_given_back(std::move(given));
}

topology::Recognition Controller::recognize_now(const topology::Fabric& fabric, Guid sm_port_guid,
                                                bool set_aside_loops, bool* reused) {
  topology::RecognizeOptions options;
  options.set_aside_loops = set_aside_loops;
  options.sm_port_guid = sm_port_guid;
  options.declared = config_.topology;
  return recognitions_.recognize(fabric, options, files_.layout(), reused);
}

void Controller::keep_layout(const topology::Recognition& rec, const topology::Fabric& fabric,
                             RouteOutcome& out) {
  if (files_.layout_unreadable()) return;
  std::string why;
  auto now = layout_to_record(rec, fabric, out, &why);
  if (now) files_.record_layout(std::move(*now), why);
}

// What layout.json should hold after this recognition (nullopt: keep it as it is), and why
// (empty: a rewrite nobody needs to read about, such as a retry).
std::optional<topology::Layout> Controller::layout_to_record(const topology::Recognition& rec,
                                                             const topology::Fabric& fabric,
                                                             RouteOutcome& out, std::string* why) {
  const auto recorded = files_.layout();
  const bool retry = files_.take_layout_retry() && recorded;
  const auto& emb = rec.embedding;
  const bool complete =
      emb.missing_hosts.empty() && emb.missing_links.empty() && emb.missing_switches.empty();
  const topology::Layout* previous = rec.grown ? &*rec.grown : recorded.get();
  topology::Layout now = topology::layout_of(*rec.tree, emb, fabric, previous);
  if (rec.source == topology::TreeSource::kGrown && recorded) {
    // Staged build-out: the recorded switches keep their model indices and ports.
    out.info.push_back(rec.growth);  // the decision; the worker logs the write
    *why = "re-recorded the grown tree " + now.spec + " in " + files_.layout_file();
  } else if (!recorded) {
    *why = "recorded the intended tree " + now.spec + " in " + files_.layout_file();
  } else if (rec.source == topology::TreeSource::kLayout) {
    // Same tree: only host identities may have changed (a host replaced in its slot).
    if (!same_identities(now, *recorded) || retry) return now;
    return std::nullopt;
  } else if (complete || !config_.topology.empty()) {
    // The fabric no longer fits the recorded layout (recabled, a switch replaced, grown) and
    // shows a whole tree, or the administrator declared one: that is the intended tree now.
    *why = "re-recorded the intended tree " + now.spec + " in " + files_.layout_file() +
           " (the previous layout does not fit the fabric)";
  } else if (retry) {
    return *recorded;  // the recorded layout, which could not be written
  } else {
    return std::nullopt;  // keep the recorded layout until the fabric fits it or shows a whole tree
  }
  return now;
}

bool Controller::wait_for_writes(std::chrono::milliseconds timeout) {
  return files_.wait_for_writes(timeout);
}

void Controller::on_routing_done(const std::string& failure) {
  // The files this run queued land before the tables are reported applied, for the tools that
  // read them then. OpenSM calls this outside its lock.
  wait_for_writes(service::kIoDeadline);
  std::uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation = last_generation_;
  }
  service_.on_routing_done(generation, failure);
}

}  // namespace laas::core

namespace laas::core {

nlohmann::json Controller::audit(const topology::Fabric& fabric,
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
  const auto recorded = files_.layout();  // the names servers are grouped by
  input.layout = recorded.get();
  input.sl2vl = sl2vl;
  const auto report = routing::audit(input);
  nlohmann::json j = routing::to_json(report);
  j["violations"] = report.violations();
  if (mfts) {
    routing::McastMembership membership;
    if (members) {
      // On the audited embedding: unaccepted newcomers are no members.
      const routing::OwnerIndex owners(*rec.tree, *input.embedding, fabric);
      for (const auto& [mlid, guids] : *members) {
        auto& hosts = membership[mlid];
        for (Guid g : guids)
          if (const auto h = owners.host(g)) hosts.push_back(*h);
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
  // An SM nobody trusts is a tenant's root trying to become management, or an administrator's
  // SM not listed yet: either way someone must decide.
  nlohmann::json unaccepted = nlohmann::json::array();
  for (const auto& sm : service_.sm_list())
    if (sm.value("state", "") == "unaccepted") unaccepted.push_back(sm);
  if (!unaccepted.empty()) {
    j["unaccepted_sms"] = unaccepted;
    j["violations"] = j["violations"].get<long>() + static_cast<long>(unaccepted.size());
    j["ok"] = false;
  }
  j["topology"] = rec.tree->spec().text();
  j["sl2vl_checked"] = sl2vl != nullptr;
  return j;
}

}  // namespace laas::core
