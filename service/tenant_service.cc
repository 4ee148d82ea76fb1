#include "service/tenant_service.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "allocator/placer.h"
#include "export/names.h"
#include "export/openstack.h"
#include "export/partitions.h"
#include "service/request_error.h"
#include "service/request_params.h"
#include "service/resume_check.h"

namespace laas::service {
namespace {

using nlohmann::json;

const char* code_of(allocator::Status s) {
  switch (s) {
    case allocator::Status::kOk:
      return "";
    case allocator::Status::kBadRequest:
      return error::kBadRequest;
    case allocator::Status::kRefused:
      return error::kRefused;
    case allocator::Status::kNotFound:
      return error::kNotFound;
    case allocator::Status::kDuplicate:
      return error::kDuplicate;
  }
  return error::kInternal;
}

// Optional names given with a new tenant for the exports, checked with the exporters' rules.
std::vector<std::string> get_names(const json& params, const char* field, const char* format) {
  std::vector<std::string> out;
  if (!params.contains(field)) return out;
  if (!params[field].is_array())
    fail(error::kBadRequest, std::string("field '") + field + "' must be an array of names");
  for (const auto& v : params[field]) {
    if (!v.is_string())
      fail(error::kBadRequest, std::string("field '") + field + "' holds a non-string");
    out.push_back(v.get<std::string>());
    try {
      exports::check_name(out.back(), 64, format, std::string("field '") + field + "'", "name");
    } catch (const exports::ExportError& e) {
      fail(error::kBadRequest, e.what());
    }
  }
  return out;
}

}  // namespace

TenantService::TenantService(ServiceConfig config, Logger log)
    : st_(std::move(config), std::move(log)) {
  allocator::make_placer(st_.config.algorithm);  // fail early on a bad algorithm name
  // A check program others may change is never run; said at start, refused at each resume.
  if (!st_.config.resume_check.empty())
    if (const auto refusal = check_program_refusal(st_.config.resume_check); !refusal.empty())
      st_.log(LogLevel::kError,
              "laas: " + refusal + "; `laasctl host resume` is refused until it is fixed");
  st_.io = std::make_unique<StateIo>(st_.config.state_dir);
  st_.io->set_recovery_hook([this](double seconds) {
    st_.condition.hang_logged->store(false);
    char line[64];
    std::snprintf(line, sizeof line, " after %.0f s", seconds);
    st_.log(LogLevel::kInfo, "laas: state directory " + st_.config.state_dir + " answers again" +
                                 line +
                                 "; changes are accepted again, and what was not written is "
                                 "written at the next routing run");
    if (st_.hooks.reroute) st_.hooks.reroute();
  });
  if (const auto& etcd = st_.store.etcd())
    etcd->set_recovery_hook([this](double seconds) {
      st_.condition.hang_logged->store(false);
      char line[64];
      std::snprintf(line, sizeof line, " after %.1f s", seconds);
      st_.log(LogLevel::kInfo, "laas: " + st_.store.path() + " answers again" + line +
                                   "; changes are accepted again, and what was not written is "
                                   "written at the next routing run");
      if (st_.hooks.reroute) st_.hooks.reroute();
    });
  if (const auto& etcd = st_.store.etcd())
    etcd->set_log_hook([log = st_.log](bool error, const std::string& line) {
      log(error ? LogLevel::kError : LogLevel::kWarning, line);
    });
  if (st_.config.state_dir_unknown) {
    st_.condition.blocked = unknown_state_dir_text(st_.config);
    st_.log(LogLevel::kError, "laas: " + st_.condition.blocked);
    return;
  }
  try {
    const StateStore store = st_.store;
    auto loaded = st_.io->call(
        [store] {
          const FileStamp stamp = store.stamp();
          return std::make_pair(stamp, store.load());
        },
        std::chrono::seconds(10));
    st_.term.state_stamp = loaded.first;
    st_.term.polled->set(st_.term.state_stamp);
    st_.persisted = std::move(loaded.second);
    st_.condition.loaded = true;
    exports_.assign_missing_pkeys();
    st_.events.observe(st_.persisted);  // where the events start
    st_.log(LogLevel::kInfo, "laas: loaded " + std::to_string(st_.persisted.tenants.size()) +
                                 " tenants from " + st_.store.path());
  } catch (const std::exception& e) {
    st_.condition.blocked = e.what();
    st_.log(LogLevel::kError, std::string("laas: ") + e.what());
  }
}

void TenantService::set_reroute_hook(std::function<void()> hook) {
  st_.hooks.reroute = std::move(hook);
}
void TenantService::set_audit_hook(std::function<json()> hook) {
  st_.hooks.audit = std::move(hook);
}
void TenantService::set_adapter_report(std::function<json()> status,
                                       std::function<std::vector<MetricFamily>()> metrics) {
  std::lock_guard<std::mutex> lock(st_.mu);
  st_.hooks.adapter_status = std::move(status);
  st_.hooks.adapter_metrics = std::move(metrics);
}

// `laasctl reroute`: a routing run now (laas-sdn: discover the fabric again, rewrite what
// changed, reload the SM). Changes no tenant; only the writers may ask, since a run costs the SM
// a sweep.
json TenantService::reroute_now(const Caller& caller) {
  if (!caller.may_write)
    fail(error::kPermission, "uid " + std::to_string(caller.uid) + " may not ask for a re-route");
  if (!st_.hooks.reroute) fail(error::kUnavailable, "this process cannot start a routing run");
  st_.hooks.reroute();
  st_.log(LogLevel::kInfo, "laas: uid " + std::to_string(caller.uid) + " asked for a re-route");
  return {{"requested", true}};
}
void TenantService::set_switch_check(std::shared_ptr<SwitchCheck> check) {
  std::lock_guard<std::mutex> lock(st_.mu);
  st_.hooks.switch_check = std::move(check);
}

void TenantService::set_partitions_hook(std::function<void()> hook) {
  st_.hooks.partitions_hook = std::move(hook);
}

void TenantService::on_topology(std::shared_ptr<const TopologyView> view) {
  bool partitions_changed = false;
  {
    std::lock_guard<std::mutex> lock(st_.mu);
    st_.routing.topology_error.clear();
    const auto& was = st_.view ? st_.view->embedding : view->embedding;
    const auto& now = view->embedding;
    if (st_.view && st_.cluster && st_.view->fingerprint() == view->fingerprint() &&
        st_.view->management_hosts == view->management_hosts &&
        st_.view->outside_members == view->outside_members &&
        was.missing_links == now.missing_links && was.missing_hosts == now.missing_hosts &&
        was.missing_switches == now.missing_switches) {
      // Same cabling, same faults: the placed tenants stand as they are; the new view may carry
      // new LIDs.
      st_.view = std::move(view);
      st_.ids = std::make_unique<PhysicalIds>(st_.view->tree, st_.view->embedding, st_.view->fabric,
                                              true, &st_.view->known());
      group_servers();
      links_.forget_port_index();  // a new view: LinkMonitor::port_links() re-indexes
      if (!st_.condition.unsaved.empty() && holds_term(st_)) save_placed(st_.condition.unsaved);
      // A partitions.conf the worker could not write (the directory hung) is written now.
      if (exports_.unsynced()) partitions_changed = exports_.refresh_managed_partitions();
    } else {
      st_.view = std::move(view);
      rebuild_cluster();
      partitions_changed = exports_.refresh_managed_partitions();
    }
  }
  if (partitions_changed && st_.hooks.partitions_hook) st_.hooks.partitions_hook();
}

namespace {

// One log line per part that went down or came back since the last recognition.
void log_fault_changes(const PhysicalIds& ids, const topology::FatTree& tree,
                       const allocator::Faults& before, const allocator::Faults& after,
                       const Logger& log) {
  auto diff = [](auto a, auto b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::vector<typename decltype(a)::value_type> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
  };
  auto host = [&](topology::HostId h) {
    const auto id = ids.host(h);
    return (id.name.empty() ? tree.host_name(h) : id.name) + " (" +
           ids.switch_name(1, tree.leaf_of_host(h)) + " port " + std::to_string(id.port) + ")";
  };
  for (auto h : diff(after.hosts, before.hosts))
    log(LogLevel::kWarning, "laas: fault: host " + host(h) + " is down");
  for (auto h : diff(before.hosts, after.hosts))
    log(LogLevel::kInfo, "laas: fault cleared: host " + host(h) + " is back");
  for (auto l : diff(after.links, before.links))
    log(LogLevel::kWarning, "laas: fault: link " + ids.link_name(l) + " is down");
  for (auto l : diff(before.links, after.links))
    log(LogLevel::kInfo, "laas: fault cleared: link " + ids.link_name(l) + " is back");
  for (auto sw : diff(after.switches, before.switches))
    log(LogLevel::kWarning, "laas: fault: switch " + ids.switch_name(sw.first, sw.second) +
                                " (level " + std::to_string(sw.first) + ") is down");
  for (auto sw : diff(before.switches, after.switches))
    log(LogLevel::kInfo, "laas: fault cleared: switch " + ids.switch_name(sw.first, sw.second) +
                             " (level " + std::to_string(sw.first) + ") is back");
}

}  // namespace

// Maps every persisted tenant onto the current fabric by physical identity and re-validates its
// placement. Nothing is re-allocated: parts that are down stay the tenant's, a tenant
// that does not fit this fabric at all is reported and kept on disk. Then repairs are undone
// where their fault cleared and made where a free column allows, and the state is saved.
void TenantService::rebuild_cluster() {
  st_.cluster = std::make_unique<allocator::Cluster>(
      st_.view->tree,
      allocator::make_placer(st_.config.algorithm, st_.sm.first_hop_drop, st_.config.whole_leaves));
  st_.ids = std::make_unique<PhysicalIds>(st_.view->tree, st_.view->embedding, st_.view->fabric,
                                          true, &st_.view->known());
  st_.cluster->set_link_namer([this](topology::LinkId l) { return st_.ids->link_name(l); });
  st_.cluster->set_switch_namer(
      [this](int level, int index) { return st_.ids->switch_name(level, index); });
  group_servers();
  links_.forget_port_index();  // a new view: LinkMonitor::port_links() re-indexes
  log_fabric_faults();
  find_unaccepted_slots();
  st_.cluster->set_faults(
      links_.current_faults());  // with the links isolated and the slots unaccepted
  // A management port keeps its whole server out of tenants' hands. Reserved on an empty
  // cluster, before any tenant: a recorded tenant holding one of them is not restored
  // (restore_tenants says which and why), never the management host given away.
  st_.cluster->reserve(whole_servers(st_, st_.view->management_hosts));
  st_.routing.unplaced.clear();
  if (!st_.condition.blocked.empty()) return;
  restore_tenants();
  // Drained hosts stay out of service; those a tenant holds (restored above) leave when it
  // releases them.
  st_.cluster->reserve(whole_servers(st_, hosts_.drained_hosts()));
  for (const auto& line : st_.cluster->reconcile()) st_.log(LogLevel::kInfo, "laas: " + line);
  reserve_management_uplinks();
  save_as_found();
  log_placed();
}

// One line per change of what is down; up-links uncabled by design are never allocated, like
// faults, but are no fault: one line says so when the set changes, not one "down" line each.
void TenantService::log_fabric_faults() {
  const auto& emb = st_.view->embedding;
  if (warnings_.last_faults_spec != st_.view->tree.spec().text()) warnings_.last_faults = {};
  allocator::Faults down{{}, emb.missing_hosts, emb.missing_switches};
  std::set_difference(emb.missing_links.begin(), emb.missing_links.end(), emb.uncabled.begin(),
                      emb.uncabled.end(), std::back_inserter(down.links));
  log_fault_changes(*st_.ids, st_.view->tree, warnings_.last_faults, down, st_.log);
  warnings_.last_faults = down;
  if (emb.uncabled != warnings_.last_uncabled && !emb.uncabled.empty())
    st_.log(LogLevel::kInfo,
            "laas: " + std::to_string(emb.uncabled.size()) + " leaf up-link(s) of " +
                st_.view->tree.spec().text() +
                " are uncabled on every leaf of their pod: uneven cabling by design, never "
                "allocated, not reported as down (first: " +
                st_.ids->link_name(emb.uncabled.front()) + ")");
  warnings_.last_uncabled = emb.uncabled;
  warnings_.last_faults_spec = st_.view->tree.spec().text();
}

// Another port GUID in a tenant's slot is unaccepted: the slot stays the tenant's and counts
// as down for it until `laasctl host accept`.
void TenantService::find_unaccepted_slots() {
  st_.unaccepted.clear();
  if (st_.condition.blocked.empty())
    st_.unaccepted = find_unaccepted(st_.persisted.tenants, *st_.ids);
  for (const auto& q : st_.unaccepted)
    // The line's old tag stays for the log watchers that match it; the text says the new word.
    st_.log(LogLevel::kWarning,
            "laas: quarantined: " +
                describe(q, st_.ids->switch_name(1, st_.view->tree.leaf_of_host(q.host))) +
                ": unaccepted, no routes and no P_Key until `laasctl host accept`");
}

// Every recorded tenant back in the Cluster as recorded, or in `unplaced` with the reason.
void TenantService::restore_tenants() {
  for (const auto& t : st_.persisted.tenants) {
    std::string missing;
    const auto model = to_model(t, *st_.ids, &missing);
    if (!model) {
      st_.routing.unplaced[t.name] = "not on the fabric: " + missing;
      st_.log(LogLevel::kWarning,
              "laas: tenant '" + t.name + "' is not routed: " + st_.routing.unplaced[t.name]);
      continue;
    }
    auto r = st_.cluster->restore(t.name, t.requested, model->intended, model->repairs);
    if (!r.ok()) {
      st_.routing.unplaced[t.name] = r.message;
      // The only hosts reserved yet are management's: name the first the tenant holds, as
      // "already allocated" would not say to whom.
      for (auto h : model->intended.hosts)
        if (st_.cluster->state().host_owner(h) == allocator::kReserved) {
          st_.routing.unplaced[t.name] =
              "it holds host " + hosts_.host_label(h) +
              ", now a management host (laas.yaml management, or an SM's "
              "server); remove the tenant or take the host out of management";
          break;
        }
      st_.log(LogLevel::kError,
              "laas: tenant '" + t.name + "' is not routed: " + st_.routing.unplaced[t.name]);
    }
  }
}

// Repairs made or undone, GUIDs newly seen on a slot, a version-1 file, SMs seen, or other
// members of the partitions (for the standbys' partitions.conf): record them -- only the holder
// of the shared state's term.
void TenantService::save_as_found() {
  const bool members_changed = exports_.record_partition_members();
  bool changed = st_.persisted.loaded_version != kStateVersion || !st_.condition.unsaved.empty() ||
                 members_changed;
  for (const auto& t : st_.persisted.tenants)
    if (const auto* placed = st_.cluster->find(t.name))
      changed = changed || !(persist(*placed) == t);
  if (changed && holds_term(st_)) save_placed("the placements as found on this fabric");
}

void TenantService::log_placed() {
  size_t degraded = 0;
  for (const auto& [name, t] : st_.cluster->tenants()) {
    if (!st_.cluster->health(t).degraded()) continue;
    ++degraded;
    st_.log(LogLevel::kWarning, "laas: tenant '" + name + "' " + views_.health_text(t));
  }
  st_.log(LogLevel::kInfo,
          "laas: " + std::to_string(st_.cluster->tenants().size()) + " tenants placed on " +
              st_.view->tree.spec().text() +
              (degraded ? ", " + std::to_string(degraded) + " degraded" : "") +
              (st_.routing.unplaced.empty() ? ""
                                            : ", " + std::to_string(st_.routing.unplaced.size()) +
                                                  " not placed (see laasctl status)"));
}

// Every leaf with a management host keeps one up-link no tenant may take: with
// uneven cabling or faults a tenant could otherwise hold all of them, and management -- the
// SM's own host -- would reach other leaves only over that tenant's links.
void TenantService::reserve_management_uplinks() {
  std::set<int> leaves;
  for (auto h : st_.view->management_hosts) leaves.insert(st_.view->tree.leaf_of_host(h));
  for (int leaf : leaves) {
    bool reserved = false;  // one already (a drain re-applied): not a second
    for (int c = 0; c < st_.view->tree.up_columns(1) && !reserved; ++c) {
      const auto l = st_.view->tree.l1_link(leaf, c);
      reserved = st_.cluster->state().link_owner(l) == allocator::kReserved &&
                 !st_.cluster->state().link_faulty(l);
    }
    if (reserved) continue;
    if (!st_.view->switch_present(1, leaf) || st_.cluster->reserve_uplink(leaf)) continue;
    const std::string name = st_.ids->switch_name(1, leaf);
    if (warnings_.warned_mgmt_leaves.insert(name).second)
      st_.log(LogLevel::kWarning, "laas: management leaf " + name +
                                      " has no free working up-link: tenants hold them all, so "
                                      "management reaches other leaves only over their links");
  }
}

void TenantService::record_placed() {
  for (auto& t : st_.persisted.tenants)
    if (const auto* placed = st_.cluster->find(t.name)) t = persist(*placed);
}

void TenantService::save_placed(const std::string& why) {
  record_placed();
  try {
    save_or_throw();
    st_.persisted.loaded_version = kStateVersion;
  } catch (const FencedError& e) {
    st_.term.term_held = false;
    st_.term.fenced = e.what();
    st_.log(LogLevel::kError, "laas: cannot save " + why + ": " + e.what());
  } catch (const NotAnsweringError& e) {
    // Kept in memory and routed; written by the first routing run after the directory answers.
    if (!st_.condition.hang_logged->exchange(true))
      st_.log(LogLevel::kError, "laas: cannot save " + why + " yet: " + e.what() +
                                    "; routed from memory, written when it answers");
    st_.condition.unsaved = why;
  } catch (const std::exception& e) {
    st_.log(LogLevel::kError, "laas: cannot save " + why + ": " + e.what());
  }
}

void TenantService::on_topology_error(const std::string& reason) {
  std::lock_guard<std::mutex> lock(st_.mu);
  st_.routing.topology_error = reason;
  st_.cluster.reset();
  st_.ids.reset();  // it refers into view_
  st_.view.reset();
  st_.unaccepted.clear();
}

void TenantService::set_fail_closed(const std::string& reason) {
  std::lock_guard<std::mutex> lock(st_.mu);
  if (st_.routing.fail_closed == reason) return;
  st_.routing.fail_closed = reason;
  metrics_.write_metrics_file();
}

void TenantService::set_unaccepted_while_blocked(std::vector<UnacceptedHost> unaccepted) {
  std::lock_guard<std::mutex> lock(st_.mu);
  if (!st_.condition.blocked.empty() && st_.view && st_.ids) st_.unaccepted = std::move(unaccepted);
}

void TenantService::set_tenants_file_note(const std::string& note) {
  std::lock_guard<std::mutex> lock(st_.mu);
  st_.routing.tenants_file_note = note;
}

std::string TenantService::fail_closed() const {
  std::lock_guard<std::mutex> lock(st_.mu);
  return st_.routing.fail_closed;
}

// Routing keeps the tenants last routed (fail closed) because the fabric, the state or the
// configuration cannot be used as it is: a change now would be made on a guess.
void TenantService::refuse_changes_while_closed() const {
  std::lock_guard<std::mutex> lock(st_.mu);
  if (!st_.config.config_error.empty())
    fail(error::kUnavailable, "laas.yaml is invalid (" + st_.config.config_error +
                                  "); changes are refused until it is fixed and OpenSM "
                                  "restarted (check it with `laasctl config check`)");
  if (!st_.routing.fail_closed.empty())
    fail(error::kUnavailable, "failing closed: " + st_.routing.fail_closed +
                                  "; changes are refused until it is repaired");
}

RoutingSnapshot TenantService::snapshot() const {
  std::lock_guard<std::mutex> lock(st_.mu);
  RoutingSnapshot s;
  s.topology = st_.view;
  s.generation = st_.persisted.generation;
  s.blocked = st_.condition.blocked;
  s.config_error = st_.config.config_error;
  if (st_.cluster)
    for (const auto& [name, t] : st_.cluster->tenants()) s.tenants.emplace_back(name, t.placement);
  s.isolated_links = links_.isolated_links();
  // Drained links no tenant routes over any more are avoided like isolated ones: the
  // administrator may pull them.
  for (auto l : drains_.out_of_service_links()) s.isolated_links.push_back(l);
  std::sort(s.isolated_links.begin(), s.isolated_links.end());
  s.isolated_links.erase(std::unique(s.isolated_links.begin(), s.isolated_links.end()),
                         s.isolated_links.end());
  if (st_.cluster) s.unaccepted = st_.unaccepted;
  return s;
}

void TenantService::on_routing_done(std::uint64_t generation, const std::string& failure) {
  {
    std::lock_guard<std::mutex> lock(st_.mu);
    if (failure.empty()) {
      st_.routing.routed_generation = std::max(st_.routing.routed_generation, generation);
    } else {
      st_.routing.failed_generation = std::max(st_.routing.failed_generation, generation);
      st_.routing.apply_failure = failure;
      st_.log(LogLevel::kError, "laas: generation " + std::to_string(generation) +
                                    " is not in the fabric as it should be: " + failure);
    }
    metrics_.write_metrics_file();
  }
  routed_cv_.notify_all();
}

std::vector<std::string> TenantService::tenant_names() const {
  std::lock_guard<std::mutex> lock(st_.mu);
  std::vector<std::string> out;
  if (st_.cluster)
    for (const auto& [name, t] : st_.cluster->tenants()) out.push_back(name);
  return out;
}

bool TenantService::state_blocked() const {
  std::lock_guard<std::mutex> lock(st_.mu);
  return !st_.condition.blocked.empty();
}

PersistedTenant TenantService::persist(const allocator::Tenant& t) const {
  return to_persisted(t, *st_.ids, persisted_tenant(st_, t.name));
}

void TenantService::store_save() {
  if (st_.config.state_dir_unknown) throw std::runtime_error(unknown_state_dir_text(st_.config));
  // etcd without a quorum: refused at once, not after a deadline on every routing run (the
  // keeper's probe ends it, and its hook re-routes to write what was kept).
  if (const std::string lost = st_.store.unavailable(); !lost.empty())
    throw StoreUnavailableError(st_.store.path() + ": " + lost);
  // On the worker, with copies: after the deadline the write may still land (the reply then
  // says it is not confirmed), and it must not touch this service's memory meanwhile.
  struct Saved {
    FileStamp stamp;
    std::string not_durable;
  };
  const StateStore store = st_.store;
  auto polled = st_.term.polled;
  const Saved saved = st_.io->call(
      [store, polled, state = st_.persisted] {
        Saved out;
        try {
          out.stamp = store.save(state);
        } catch (const NotDurableError& e) {
          out.stamp = store.stamp();  // in place: what readers see is ours
          out.not_durable = e.what();
        }
        polled->set(out.stamp);
        return out;
      },
      kIoDeadline);
  st_.term.state_stamp = saved.stamp;
  st_.events.observe(st_.persisted);  // in place (durable or not): readers see it
  if (!saved.not_durable.empty()) throw NotDurableError(saved.not_durable);
  st_.condition.unsaved.clear();  // everything persisted_ holds is written
}

FileStamp TenantService::polled_stamp() const { return st_.term.polled->get(); }

void TenantService::probe_state_dir() {
  if (st_.config.state_dir_unknown) return;
  auto polled = st_.term.polled;
  st_.io->post("probe state.json", [polled, store = st_.store] { polled->set(store.stamp()); });
}

void TenantService::refuse_changes_while_not_answering() const {
  std::string why = st_.io->not_answering();
  if (why.empty()) why = st_.store.unavailable();  // etcd without a quorum
  if (!why.empty())
    fail(error::kBusy, why +
                           ": changes are refused until it answers (the fabric is routed from "
                           "the last state it gave); try again");
}

void TenantService::save_or_throw() {
  st_.persisted.topology = st_.view->tree.spec().text();
  store_save();
}

// `tenant add` as asked, every field checked before anything is locked or written.
struct TenantService::AddRequest {
  std::string name;
  std::vector<std::string> slurm_accounts, slurm_users;
  std::string project;
  bool dry_run = false;
  const json* host_list = nullptr;  // exactly these hosts (names or GUIDs)
  const char* count_field = "hosts";
  int count = 0;  // servers (one host each where a server has one port); 0: as many as host_list
  int wait = 0;
};

TenantService::AddRequest TenantService::parse_add(const json& params) const {
  AddRequest r;
  r.name = get_string(params, "name");
  // One name rule for every exporter, so an accepted tenant can always be written out.
  try {
    exports::check_tenant_name(r.name);
  } catch (const exports::ExportError& e) {
    fail(error::kBadRequest, e.what());
  }
  r.slurm_accounts = get_names(params, "slurm_accounts", "Slurm");
  r.slurm_users = get_names(params, "slurm_users", "Slurm");
  if (params.contains("openstack_project")) {
    r.project = get_string(params, "openstack_project");
    try {
      exports::check_name(r.project, exports::kMaxProjectId, "OpenStack",
                          "field 'openstack_project'", "project ID");
    } catch (const exports::ExportError& e) {
      fail(error::kBadRequest, e.what());
    }
  }
  r.dry_run = get_bool(params, "dry_run", false);
  if (params.contains("host_list")) {
    if (!params["host_list"].is_array())
      fail(error::kBadRequest, "field 'host_list' must be an array of host names or GUIDs");
    r.host_list = &params["host_list"];
  }
  // "servers" and "hosts" (its old name) both count servers: one host per server where servers
  // have one port. A client of this release sends both, one of the release before "hosts" only.
  r.count_field = params.contains("servers") ? "servers" : "hosts";
  r.count = r.host_list && !params.contains(r.count_field) ? 0 : get_int(params, r.count_field);
  if (params.contains("servers") && params.contains("hosts") && get_int(params, "hosts") != r.count)
    fail(error::kBadRequest, "fields 'servers' and 'hosts' (its old name) differ");
  r.wait = wait_ms(st_, params);  // validated before anything is written
  return r;
}

// An explicit placement: hosts by name or GUID, links chosen to satisfy Theorem 2. Named
// servers are placed rail by rail among themselves; where that fails, the host list as given,
// whose refusal names the host or condition at fault.
TenantService::AddPlan TenantService::plan_on_host_list(const AddRequest& r) {
  std::vector<topology::HostId> chosen = hosts_.resolve_hosts(*r.host_list, "host_list");
  for (auto h : chosen) {
    if (const auto* d = hosts_.drain_of(h))
      fail(error::kRefused, "host " + hosts_.host_label(h) + " is drained (" + d->reason + ", " +
                                d->by + ", " + d->at + "): `laasctl host resume` it first");
    if (const auto* d = leaf_drain_of(st_, h))
      fail(error::kRefused, "host " + hosts_.host_label(h) + " is on drained leaf '" + d->name +
                                "' (" + d->reason + ", " + d->by + ", " + d->at +
                                "): `laasctl switch resume` it first");
  }
  chosen = whole_servers(st_, chosen);  // every port of a named server's port too
  std::vector<int> named;
  for (auto h : chosen) named.push_back(st_.servers.server_of[h]);
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());
  const bool multi = st_.servers.multi_port();
  const int units = multi ? static_cast<int>(named.size()) : static_cast<int>(chosen.size());
  const int asked = r.count == 0 ? units : r.count;
  if (units != asked)
    fail(error::kBadRequest, "host_list has " + std::to_string(units) +
                                 (multi ? " servers" : " hosts") + " but '" + r.count_field +
                                 "' says " + std::to_string(asked));
  AddPlan plan;
  plan.hosts = asked;
  std::optional<allocator::Placement> on_rails;
  if (multi) {
    std::vector<std::vector<topology::HostId>> named_ports;
    for (int s : named) named_ports.push_back(st_.servers.ports[s]);
    on_rails = allocator::place_servers(st_.cluster->state(), named_ports, units).placement;
  }
  if (on_rails) {
    plan.placement = *on_rails;
    plan.outcome = st_.cluster->check_new_placement(
        r.name, static_cast<int>(plan.placement.hosts.size()), plan.placement);
  } else {
    plan.outcome = st_.cluster->add_on_hosts(r.name, chosen, true, &plan.placement);
  }
  return plan;
}

// Whole servers, rail by rail (allocator::place_servers), or hosts where servers have one port.
TenantService::AddPlan TenantService::plan_by_count(const AddRequest& r) {
  AddPlan plan;
  plan.hosts = r.count;
  if (!st_.servers.multi_port()) {
    plan.outcome = st_.cluster->plan(r.name, r.count, &plan.placement);
    return plan;
  }
  if (r.count <= 0)
    fail(error::kBadRequest, std::string("field '") + r.count_field + "' must be at least 1");
  const auto placed = allocator::place_servers(st_.cluster->state(), st_.servers.ports, r.count);
  if (!placed.placement)
    fail(error::kRefused, "tenant '" + r.name + "' of " + std::to_string(r.count) +
                              " servers refused: " + placed.reason + hosts_.drained_note());
  plan.placement = *placed.placement;
  plan.outcome = st_.cluster->check_new_placement(
      r.name, static_cast<int>(plan.placement.hosts.size()), plan.placement);
  return plan;
}

// The plan is what gets committed: add_explicit re-checks freeness and the LaaS conditions.
// The tenant is recorded and saved, or nothing is (RequestError).
json TenantService::commit_add(std::unique_lock<std::mutex>& lock, const AddRequest& r,
                               const AddPlan& plan, const Caller& caller) {
  const allocator::Outcome outcome = st_.cluster->add_explicit(r.name, plan.hosts, plan.placement);
  if (!outcome.ok()) fail(code_of(outcome.status), outcome.message);
  st_.persisted.tenants.push_back(persist(*outcome.tenant));
  st_.persisted.tenants.back().slurm_accounts = r.slurm_accounts;
  st_.persisted.tenants.back().slurm_users = r.slurm_users;
  st_.persisted.tenants.back().openstack_project = r.project;
  exports_.assign_missing_pkeys();
  ++st_.persisted.generation;
  bool partitions_changed = false;
  std::string not_durable;  // state.json holds the tenant, but the directory was not synced
  try {
    partitions_changed = commit(&not_durable);
  } catch (const RequestError& e) {
    st_.persisted.tenants.pop_back();
    --st_.persisted.generation;
    st_.cluster->remove(r.name);
    fail(e.code.c_str(), "tenant '" + r.name + "' not added: " + e.message);
  }
  st_.log(LogLevel::kInfo, "laas: uid " + std::to_string(caller.uid) + " added " + outcome.message);
  return finish_change(
      lock, partitions_changed, not_durable,
      "tenant '" + r.name + "' IS added (state.json holds it and it will be routed)",
      views_.tenant_json(*st_.cluster->find(r.name)), r.wait, !caller.routes_itself);
}

json TenantService::add(const json& params, const Caller& caller) {
  const AddRequest r = parse_add(params);
  std::unique_lock<std::mutex> lock(st_.mu);
  if (!r.dry_run && !caller.may_write)
    fail(error::kPermission, "uid " + std::to_string(caller.uid) +
                                 " may read but not change tenants (root or the laas group)");
  require_topology(st_);
  if (st_.routing.unplaced.count(r.name))
    fail(error::kDuplicate, "tenant '" + r.name + "' already exists (not placed)");
  AddPlan plan = r.host_list ? plan_on_host_list(r) : plan_by_count(r);
  // The Cluster counts host ports: a tenant of N servers asked for all their ports.
  if (st_.servers.multi_port()) plan.hosts = static_cast<int>(plan.placement.hosts.size());
  if (!plan.outcome.ok())
    fail(code_of(plan.outcome.status),
         plan.outcome.message +
             (plan.outcome.status == allocator::Status::kRefused ? hosts_.drained_note() : ""));
  if (r.dry_run) {
    allocator::Tenant preview{r.name, plan.hosts, -1, plan.placement};
    json out = views_.tenant_json(preview);
    out["state"] = "planned";
    out["dry_run"] = true;
    return out;
  }
  return commit_add(lock, r, plan, caller);
}

json TenantService::remove(const json& params, const Caller& caller) {
  const std::string name = get_string(params, "name");
  const bool dry_run = get_bool(params, "dry_run", false);
  const int wait = wait_ms(st_, params);  // validated before anything is written
  std::unique_lock<std::mutex> lock(st_.mu);
  if (!caller.may_write)
    fail(error::kPermission, "uid " + std::to_string(caller.uid) +
                                 " may read but not change tenants (root or the laas group)");
  if (!st_.condition.blocked.empty()) fail(error::kUnavailable, st_.condition.blocked);
  auto it = std::find_if(st_.persisted.tenants.begin(), st_.persisted.tenants.end(),
                         [&](const PersistedTenant& t) { return t.name == name; });
  if (it == st_.persisted.tenants.end()) fail(error::kNotFound, "no tenant named '" + name + "'");
  if (dry_run) return {{"name", name}, {"dry_run", true}};
  const PersistedTenant saved = *it;
  const size_t position = static_cast<size_t>(it - st_.persisted.tenants.begin());
  const allocator::Tenant* placed = st_.cluster ? st_.cluster->find(name) : nullptr;
  const std::optional<allocator::Tenant> before =
      placed ? std::optional<allocator::Tenant>(*placed) : std::nullopt;
  st_.persisted.tenants.erase(it);
  ++st_.persisted.generation;
  if (before) st_.cluster->remove(name);
  // Its hosts are free for others only once partitions.conf no longer holds its key.
  bool partitions_changed = false;
  std::string not_durable;  // state.json no longer holds the tenant, directory not synced
  try {
    partitions_changed = commit(&not_durable);
  } catch (const RequestError& e) {
    st_.persisted.tenants.insert(st_.persisted.tenants.begin() + position, saved);
    --st_.persisted.generation;
    // Put it back as it was, repairs included, so that they can still be undone.
    if (before) {
      allocator::Placement intended = before->placement;
      intended.links = before->intended_links();
      intended.idle.clear();
      st_.cluster->restore(before->name, before->requested, intended, before->repairs);
    }
    fail(e.code.c_str(), "tenant '" + name + "' not removed: " + e.message);
  }
  st_.routing.unplaced.erase(name);
  // Its unaccepted slots are free now: a newcomer there is a free host like any other.
  const auto unaccepted = st_.unaccepted.size();
  st_.unaccepted.erase(std::remove_if(st_.unaccepted.begin(), st_.unaccepted.end(),
                                      [&](const UnacceptedHost& q) { return q.tenant == name; }),
                       st_.unaccepted.end());
  if (st_.unaccepted.size() != unaccepted && st_.cluster)
    st_.cluster->set_faults(links_.current_faults());
  if (before && st_.view)
    st_.cluster->reserve(whole_servers(st_, hosts_.drained_hosts()));  // drained ones leave
  if (before && st_.view) {
    // Freed columns may repair a degraded tenant (nothing of any other tenant moves).
    const auto lines = st_.cluster->reconcile();
    for (const auto& line : lines) st_.log(LogLevel::kInfo, "laas: " + line);
    if (!lines.empty()) save_placed("the repairs made after removing '" + name + "'");
  }
  st_.log(LogLevel::kInfo,
          "laas: uid " + std::to_string(caller.uid) + " removed tenant '" + name + "'");
  return finish_change(lock, partitions_changed, not_durable,
                       "tenant '" + name + "' IS removed (state.json no longer holds it)",
                       {{"name", name}, {"removed", true}}, wait, !caller.routes_itself);
}

// What every change's reply warns of: keys that let a tenant's root undo isolation, a master
// nobody trusts. Takes mu.
json TenantService::change_warnings() const {
  std::lock_guard<std::mutex> lock(st_.mu);
  json warnings = json::array();
  if (!st_.sm.weak_keys.empty())
    warnings.push_back("OpenSM runs with " + st_.sm.weak_keys +
                       ": a tenant's root can undo its isolation (docs/security.md)");
  if (!st_.sm.master_trusted && st_.sm.fabric_master)
    warnings.push_back("the master SM " + st_.sm.fabric_master->text() +
                       " is not trusted (laasctl sm list)");
  return warnings;
}

// The end of a committed add or remove, outside the lock: OpenSM is told (partitions.conf,
// then the re-route unless the caller routes the change itself), a change saved but not synced is
// reported as the error it is (the change stands), and the reply waits for the routing when asked
// to.
json TenantService::finish_change(std::unique_lock<std::mutex>& lock, bool partitions_changed,
                                  const std::string& not_durable, const std::string& done,
                                  json result, int wait, bool reroute) {
  const auto generation = st_.persisted.generation;
  lock.unlock();
  if (partitions_changed && st_.hooks.partitions_hook) st_.hooks.partitions_hook();
  if (reroute && st_.hooks.reroute) st_.hooks.reroute();
  if (!not_durable.empty())
    fail(error::kInternal, done + " but the change may not survive a crash: " + not_durable);
  result["generation"] = generation;
  // The change is made, but on a fabric whose keys let a tenant's root undo it: every reply
  // says so, not only the log at start.
  if (const auto warnings = change_warnings(); !warnings.empty()) result["warnings"] = warnings;
  if (wait >= 0) {
    result["routed"] = wait_routed(generation, wait);
    // "Routed" is said only of tables and P_Keys applied without error: otherwise the reply
    // names what failed, and that the state holds the change.
    std::lock_guard<std::mutex> relock(st_.mu);
    if (!result["routed"].get<bool>() && st_.routing.failed_generation >= generation)
      fail(error::kInternal,
           done + ", but the fabric does not have it yet: " + st_.routing.apply_failure +
               "; OpenSM tries again at its next sweep");
  }
  return result;
}

json TenantService::wait_routed(std::uint64_t generation, int timeout_ms) {
  std::unique_lock<std::mutex> lock(st_.mu);
  // A failed application is not the end: OpenSM tries again at its next sweep, and a success
  // before the timeout is a success.
  routed_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return st_.routing.routed_generation >= generation || interrupted_; });
  return st_.routing.routed_generation >= generation;
}

void TenantService::interrupt_waits() {
  {
    std::lock_guard<std::mutex> lock(st_.mu);
    interrupted_ = true;
  }
  routed_cv_.notify_all();
  st_.stopping.cancel();  // a `host resume` inside its check
  st_.events.interrupt();
}

// Saves the state and, when partitions are managed, partitions.conf for it: both or neither.
// The file goes first (generated, validated, replaced atomically); if the state cannot be
// saved after it, the previous file is put back. Returns true when partitions.conf changed.
// Throws RequestError (the caller restores its in-memory state).
bool TenantService::commit(std::string* not_durable) {
  // Saved with the change: the standbys' partitions.conf names the members the master's does.
  // A change refused takes its members back with it (the callers restore the rest).
  struct KeepOnSuccess {
    PersistedState& state;
    const PartitionMembers before;
    bool kept = false;
    ~KeepOnSuccess() {
      if (!kept) record_members(before, state);
    }
  } members{st_.persisted, recorded_members(st_.persisted)};
  exports_.record_partition_members();
  const auto& path = st_.config.exports.managed_partitions_file;
  const bool managed = !path.empty() && st_.view && st_.cluster;
  std::string text, previous;
  bool existed = false, changed = false;
  if (managed) {
    try {
      text = exports_.partitions_text();
    } catch (const exports::ExportError& e) {
      fail(error::kRefused, std::string("partitions.conf would not be valid: ") + e.what());
    }
    try {
      previous = read_text_io(st_, path, &existed);
    } catch (const NotAnsweringError& e) {
      fail(error::kUnavailable, std::string(e.what()) + ": nothing was changed");
    }
    changed = !existed || text != previous;
    if (changed) try {
        exports_.write_managed_partitions(text);
      } catch (const std::exception& e) {
        fail(error::kInternal, std::string("partitions.conf not written: ") + e.what());
      }
  }
  try {
    if (st_.view)
      save_or_throw();
    else
      store_save();
  } catch (const NotDurableError& e) {
    // The new state.json is in place (memory and file agree): keep the change, say so.
    *not_durable = e.what();
  } catch (const std::exception& e) {
    const bool fenced = dynamic_cast<const FencedError*>(&e) != nullptr;
    if (changed) try {
        st_.io->call(
            [path, previous, existed] {
              if (existed)
                write_file_atomically(path, previous, kFileMode);
              else
                std::remove(path.c_str());
            },
            kIoDeadline);
      } catch (const std::exception& e2) {
        st_.log(LogLevel::kError, "laas: " + path + " could not be put back: " + e2.what());
      }
    if (fenced) {
      // Another SM took the shared state over: this one is no longer the master's service.
      st_.term.term_held = false;
      st_.term.fenced = e.what();
      fail(error::kNotMaster, std::string("this SM no longer holds the tenant state: ") + e.what());
    }
    if (dynamic_cast<const StoreUnavailableError*>(&e))
      fail(error::kBusy, std::string(e.what()) +
                             ": changes are refused until etcd answers with a quorum (the fabric "
                             "is routed from the last state it gave); this one is not confirmed "
                             "(check `laasctl tenant list` once etcd answers) -- try again");
    if (dynamic_cast<const NotAnsweringError*>(&e))
      fail(error::kUnavailable, std::string(e.what()) +
                                    ": the change is not confirmed and is not made here; the "
                                    "write may still land when the directory answers (then the "
                                    "next routing run reads it back: check `laasctl tenant list`)");
    fail(error::kInternal, std::string("the state could not be saved: ") + e.what());
  }
  if (changed) {
    exports_.note_written(text);
    st_.log(LogLevel::kInfo, "laas: wrote " + path + " (" +
                                 std::to_string(st_.cluster->tenants().size()) +
                                 " tenant partitions)");
  }
  members.kept = true;
  return changed;
}

void TenantService::record_routing(double seconds, long lft_blocks) {
  metrics_.record_routing(seconds, lft_blocks);
}

void TenantService::on_port_counters(topology::Guid switch_guid, int port,
                                     const PortCounters& delta) {
  links_.on_port_counters(switch_guid, port, delta);
}

// The SM's role and the shared state: service/shared_state.h.
void TenantService::set_role_provider(std::function<SmRole()> provider) {
  shared_.set_role_provider(std::move(provider));
}

SmRole TenantService::role() const { return current_role(st_); }

void TenantService::set_weak_keys(const std::string& what) {
  std::lock_guard<std::mutex> lock(st_.mu);
  st_.sm.weak_keys = what;
}

void TenantService::set_first_hop_drop(bool on) {
  std::lock_guard<std::mutex> lock(st_.mu);
  if (st_.sm.first_hop_drop == on) return;
  st_.sm.first_hop_drop = on;
  if (st_.cluster) st_.cluster->set_placer(allocator::make_placer(st_.config.algorithm, on));
  st_.log(LogLevel::kInfo,
          on ? "laas: the switches drop packets between owners (qos TRUE): placements keep an "
               "open up-link on every shared leaf for management traffic"
             : "laas: no first-hop drop (qos FALSE): placements as the paper makes them");
}

std::uint64_t TenantService::state_term(bool* held) const {
  std::lock_guard<std::mutex> lock(st_.mu);
  *held = holds_term(st_);
  return st_.persisted.term;
}

std::optional<std::string> TenantService::take_over_if_needed(const SmIdentity& self,
                                                              bool state_expected) {
  return shared_.take_over_if_needed(self, state_expected);
}

void TenantService::follow_shared_state() { shared_.follow(); }

// Subnet managers: answered by SmTrust (service/sm_trust.h).
std::vector<topology::Guid> TenantService::sm_ports() const { return sm_trust_.sm_ports(); }

std::vector<SmSeen> TenantService::note_subnet_managers(topology::Guid self,
                                                        std::vector<SmSeen> seen) {
  return sm_trust_.note_subnet_managers(self, std::move(seen));
}

void TenantService::note_fabric_sms(const SmRole& role, std::vector<SmSeen> seen) {
  sm_trust_.note_fabric_sms(role, std::move(seen));
}

json TenantService::sm_list() const { return sm_trust_.sm_list(); }

}  // namespace laas::service
