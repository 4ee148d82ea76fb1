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
    : config_(std::move(config)),
      log_(std::move(log)),
      store_(config_.state_dir),
      health_(config_.link_error_threshold, config_.link_error_clean_readings,
              config_.link_error_consecutive_readings) {
  allocator::make_placer(config_.algorithm);  // fail early on a bad algorithm name
  // A check program others may change is never run; said at start, refused at each resume.
  if (!config_.resume_check.empty())
    if (const auto refusal = check_program_refusal(config_.resume_check); !refusal.empty())
      log_(LogLevel::kError,
           "laas: " + refusal + "; `laasctl host resume` is refused until it is fixed");
  io_ = std::make_unique<StateIo>(config_.state_dir);
  io_->set_recovery_hook([this](double seconds) {
    hang_logged_->store(false);
    char line[64];
    std::snprintf(line, sizeof line, " after %.0f s", seconds);
    log_(LogLevel::kInfo, "laas: state directory " + config_.state_dir + " answers again" + line +
                              "; changes are accepted again, and what was not written is "
                              "written at the next routing run");
    if (reroute_) reroute_();
  });
  try {
    const StateStore store = store_;
    auto loaded = io_->call(
        [store] {
          const FileStamp stamp = stamp_of(store.path());
          return std::make_pair(stamp, store.load());
        },
        std::chrono::seconds(10));
    state_stamp_ = loaded.first;
    {
      std::lock_guard<std::mutex> lock(polled_->mu);
      polled_->stamp = state_stamp_;
    }
    persisted_ = std::move(loaded.second);
    loaded_ = true;
    assign_missing_pkeys();
    log_(LogLevel::kInfo, "laas: loaded " + std::to_string(persisted_.tenants.size()) +
                              " tenants from " + store_.path());
  } catch (const std::exception& e) {
    blocked_ = e.what();
    log_(LogLevel::kError, std::string("laas: ") + e.what());
  }
}

void TenantService::set_reroute_hook(std::function<void()> hook) { reroute_ = std::move(hook); }
void TenantService::set_audit_hook(std::function<json()> hook) { audit_ = std::move(hook); }
void TenantService::set_export_hook(std::function<json(const json&)> hook) {
  export_ = std::move(hook);
}
void TenantService::set_partitions_hook(std::function<void()> hook) {
  partitions_hook_ = std::move(hook);
}

// P_Keys are fixed when a tenant is created (in creation order, so a new tenant never moves an
// existing one's key); state written before P_Keys existed gets them here, in file order.
void TenantService::assign_missing_pkeys() {
  std::set<std::uint16_t> taken, reserved;
  for (const auto& t : persisted_.tenants)
    if (t.pkey) taken.insert(t.pkey);
  // New keys stay clear of the base file's explicit and auto-numbered keys. A base that cannot
  // be read or parsed reserves nothing here; writing partitions.conf then refuses the change.
  try {
    const auto base = partitions_base();
    if (base.text) reserved = exports::base_reserved_pkeys(*base.text, base.name);
  } catch (...) {  // ExportError, or RequestError for a base file that cannot be read
  }
  for (auto& t : persisted_.tenants) {
    if (t.pkey) continue;
    exports::TenantRecord r;
    r.name = t.name;
    std::set<std::uint16_t> avoid = taken;
    avoid.insert(reserved.begin(), reserved.end());
    t.pkey = exports::assign_pkeys({r}, avoid).front();
    taken.insert(t.pkey);
  }
}

void TenantService::on_topology(std::shared_ptr<const TopologyView> view) {
  bool partitions_changed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    topology_error_.clear();
    const auto& was = view_ ? view_->embedding : view->embedding;
    const auto& now = view->embedding;
    if (view_ && cluster_ && !sm_ports_dirty_ && view_->fingerprint() == view->fingerprint() &&
        view_->management_hosts == view->management_hosts &&
        view_->outside_members == view->outside_members && was.missing_links == now.missing_links &&
        was.missing_hosts == now.missing_hosts && was.missing_switches == now.missing_switches) {
      // Same cabling, same faults: the placed tenants stand as they are; the new view may carry
      // new LIDs.
      view_ = std::move(view);
      ids_ = std::make_unique<PhysicalIds>(view_->tree, view_->embedding, view_->fabric, true,
                                           &view_->known());
      group_servers();
      ports_indexed_ = false;  // a new view: port_links() re-indexes
      if (!unsaved_.empty() && holds_term()) save_placed(unsaved_);
      // A partitions.conf the worker could not write (the directory hung) is written now.
      if (partitions_unsynced_) partitions_changed = refresh_managed_partitions();
    } else {
      view_ = std::move(view);
      rebuild_cluster();
      partitions_changed = refresh_managed_partitions();
    }
  }
  if (partitions_changed && partitions_hook_) partitions_hook_();
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
  cluster_ =
      std::make_unique<allocator::Cluster>(view_->tree, allocator::make_placer(config_.algorithm));
  ids_ = std::make_unique<PhysicalIds>(view_->tree, view_->embedding, view_->fabric, true,
                                       &view_->known());
  cluster_->set_link_namer([this](topology::LinkId l) { return ids_->link_name(l); });
  group_servers();
  ports_indexed_ = false;  // a new view: port_links() re-indexes
  const auto& emb = view_->embedding;
  allocator::Faults faults{emb.missing_links, emb.missing_hosts, emb.missing_switches};
  if (last_faults_spec_ != view_->tree.spec().text()) last_faults_ = {};
  // Up-links uncabled by design are never allocated, like faults, but are no fault:
  // one line says so when the set changes, not one "down" line each.
  allocator::Faults down = faults;
  down.links.clear();
  std::set_difference(emb.missing_links.begin(), emb.missing_links.end(), emb.uncabled.begin(),
                      emb.uncabled.end(), std::back_inserter(down.links));
  log_fault_changes(*ids_, view_->tree, last_faults_, down, log_);
  last_faults_ = down;
  if (emb.uncabled != last_uncabled_ && !emb.uncabled.empty())
    log_(LogLevel::kInfo,
         "laas: " + std::to_string(emb.uncabled.size()) + " leaf up-link(s) of " +
             view_->tree.spec().text() +
             " are uncabled on every leaf of their pod: uneven cabling by design, never "
             "allocated, not reported as down (first: " +
             ids_->link_name(emb.uncabled.front()) + ")");
  last_uncabled_ = emb.uncabled;
  last_faults_spec_ = view_->tree.spec().text();
  // Another port GUID in a tenant's slot is quarantined: the slot stays the tenant's
  // and counts as down for it until `laasctl host accept`.
  quarantine_.clear();
  if (blocked_.empty()) quarantine_ = find_quarantined(persisted_.tenants, *ids_);
  for (const auto& q : quarantine_)
    log_(LogLevel::kWarning,
         "laas: quarantined: " +
             describe(q, ids_->switch_name(1, view_->tree.leaf_of_host(q.host))) +
             "; no routes and no P_Key until `laasctl host accept`");
  cluster_->set_faults(current_faults());  // with the links isolated and the hosts quarantined
  // A management port keeps its whole server out of tenants' hands.
  auto skipped = cluster_->reserve(whole_servers(view_->management_hosts));
  (void)skipped;
  unplaced_.clear();
  if (!blocked_.empty()) return;
  for (const auto& t : persisted_.tenants) {
    std::string missing;
    const auto model = to_model(t, *ids_, &missing);
    if (!model) {
      unplaced_[t.name] = "not on the fabric: " + missing;
      log_(LogLevel::kWarning, "laas: tenant '" + t.name + "' is not routed: " + unplaced_[t.name]);
      continue;
    }
    auto r = cluster_->restore(t.name, t.requested, model->intended, model->repairs);
    if (!r.ok()) {
      unplaced_[t.name] = r.message;
      log_(LogLevel::kError, "laas: tenant '" + t.name + "' is not routed: " + r.message);
    }
  }
  // Drained hosts stay out of service; those a tenant holds (restored above) leave when it
  // releases them.
  cluster_->reserve(whole_servers(drained_hosts()));
  for (const auto& line : cluster_->reconcile()) log_(LogLevel::kInfo, "laas: " + line);
  reserve_management_uplinks();
  // Repairs made or undone, GUIDs newly seen on a slot, a version-1 file, SMs or management
  // hosts seen (for the standbys): record them -- only the holder of the shared state's term.
  std::vector<topology::Guid> management;
  for (auto h : view_->management_hosts)
    if (const auto g = view_->host_guid(h)) management.push_back(g);
  std::sort(management.begin(), management.end());
  bool changed = persisted_.loaded_version != kStateVersion || sm_ports_dirty_ ||
                 !unsaved_.empty() || management != persisted_.management;
  persisted_.management = std::move(management);
  for (const auto& t : persisted_.tenants)
    if (const auto* placed = cluster_->find(t.name)) changed = changed || !(persist(*placed) == t);
  if (changed && holds_term()) save_placed("the placements as found on this fabric");
  size_t degraded = 0;
  for (const auto& [name, t] : cluster_->tenants()) {
    if (!cluster_->health(t).degraded()) continue;
    ++degraded;
    log_(LogLevel::kWarning, "laas: tenant '" + name + "' " + health_text(t));
  }
  log_(LogLevel::kInfo, "laas: " + std::to_string(cluster_->tenants().size()) +
                            " tenants placed on " + view_->tree.spec().text() +
                            (degraded ? ", " + std::to_string(degraded) + " degraded" : "") +
                            (unplaced_.empty() ? ""
                                               : ", " + std::to_string(unplaced_.size()) +
                                                     " not placed (see laasctl status)"));
}

// Every leaf with a management host keeps one up-link no tenant may take: with
// uneven cabling or faults a tenant could otherwise hold all of them, and management -- the
// SM's own host -- would reach other leaves only over that tenant's links.
void TenantService::reserve_management_uplinks() {
  std::set<int> leaves;
  for (auto h : view_->management_hosts) leaves.insert(view_->tree.leaf_of_host(h));
  for (int leaf : leaves) {
    bool reserved = false;  // one already (a drain re-applied): not a second
    for (int c = 0; c < view_->tree.up_columns(1) && !reserved; ++c) {
      const auto l = view_->tree.l1_link(leaf, c);
      reserved = cluster_->state().link_owner(l) == allocator::kReserved &&
                 !cluster_->state().link_faulty(l);
    }
    if (reserved) continue;
    if (!view_->switch_present(1, leaf) || cluster_->reserve_uplink(leaf)) continue;
    const std::string name = ids_->switch_name(1, leaf);
    if (warned_mgmt_leaves_.insert(name).second)
      log_(LogLevel::kWarning, "laas: management leaf " + name +
                                   " has no free working up-link: tenants hold them all, so "
                                   "management reaches other leaves only over their links");
  }
}

void TenantService::record_placed() {
  for (auto& t : persisted_.tenants)
    if (const auto* placed = cluster_->find(t.name)) t = persist(*placed);
}

void TenantService::save_placed(const std::string& why) {
  record_placed();
  try {
    save_or_throw();
    persisted_.loaded_version = kStateVersion;
    sm_ports_dirty_ = false;
  } catch (const FencedError& e) {
    term_held_ = false;
    fenced_ = e.what();
    log_(LogLevel::kError, "laas: cannot save " + why + ": " + e.what());
  } catch (const NotAnsweringError& e) {
    // Kept in memory and routed; written by the first routing run after the directory answers.
    if (!hang_logged_->exchange(true))
      log_(LogLevel::kError, "laas: cannot save " + why + " yet: " + e.what() +
                                 "; routed from memory, written when it answers");
    unsaved_ = why;
  } catch (const std::exception& e) {
    log_(LogLevel::kError, "laas: cannot save " + why + ": " + e.what());
  }
}

const PersistedTenant* TenantService::persisted(const std::string& name) const {
  for (const auto& p : persisted_.tenants)
    if (p.name == name) return &p;
  return nullptr;
}

void TenantService::on_topology_error(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  topology_error_ = reason;
  cluster_.reset();
  ids_.reset();  // it refers into view_
  view_.reset();
  quarantine_.clear();
}

void TenantService::set_fail_closed(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fail_closed_ == reason) return;
  fail_closed_ = reason;
  write_metrics_file();
}

std::string TenantService::fail_closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fail_closed_;
}

// Routing keeps the tenants last routed (fail closed) because the fabric, the state or the
// configuration cannot be used as it is: a change now would be made on a guess.
void TenantService::refuse_changes_while_closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!config_.config_error.empty())
    fail(error::kUnavailable, "laas.yaml is invalid (" + config_.config_error +
                                  "); changes are refused until it is fixed and OpenSM "
                                  "restarted (check it with `laasctl config check`)");
  if (!fail_closed_.empty())
    fail(error::kUnavailable,
         "failing closed: " + fail_closed_ + "; changes are refused until it is repaired");
}

RoutingSnapshot TenantService::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  RoutingSnapshot s;
  s.topology = view_;
  s.generation = persisted_.generation;
  s.blocked = blocked_;
  s.config_error = config_.config_error;
  if (cluster_)
    for (const auto& [name, t] : cluster_->tenants()) s.tenants.emplace_back(name, t.placement);
  s.isolated_links = isolated_links();
  // Drained links no tenant routes over any more are avoided like isolated ones: the
  // administrator may pull them.
  for (auto l : out_of_service_links()) s.isolated_links.push_back(l);
  std::sort(s.isolated_links.begin(), s.isolated_links.end());
  s.isolated_links.erase(std::unique(s.isolated_links.begin(), s.isolated_links.end()),
                         s.isolated_links.end());
  if (cluster_) s.quarantined = quarantine_;
  return s;
}

void TenantService::on_routing_done(std::uint64_t generation, const std::string& failure) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failure.empty()) {
      routed_generation_ = std::max(routed_generation_, generation);
    } else {
      failed_generation_ = std::max(failed_generation_, generation);
      apply_failure_ = failure;
      log_(LogLevel::kError, "laas: generation " + std::to_string(generation) +
                                 " is not in the fabric as it should be: " + failure);
    }
    write_metrics_file();
  }
  routed_cv_.notify_all();
}

std::vector<std::string> TenantService::tenant_names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  if (cluster_)
    for (const auto& [name, t] : cluster_->tenants()) out.push_back(name);
  return out;
}

bool TenantService::state_blocked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !blocked_.empty();
}

PersistedTenant TenantService::persist(const allocator::Tenant& t) const {
  return to_persisted(t, *ids_, persisted(t.name));
}

void TenantService::store_save() {
  // On the worker, with copies: after the deadline the write may still land (the reply then
  // says it is not confirmed), and it must not touch this service's memory meanwhile.
  struct Saved {
    FileStamp stamp;
    std::string not_durable;
  };
  const StateStore store = store_;
  auto polled = polled_;
  const Saved saved = io_->call(
      [store, polled, state = persisted_] {
        Saved out;
        try {
          out.stamp = store.save(state);
        } catch (const NotDurableError& e) {
          out.stamp = stamp_of(store.path());  // in place: what readers see is ours
          out.not_durable = e.what();
        }
        std::lock_guard<std::mutex> lock(polled->mu);
        polled->stamp = out.stamp;
        return out;
      },
      kIoDeadline);
  state_stamp_ = saved.stamp;
  if (!saved.not_durable.empty()) throw NotDurableError(saved.not_durable);
  unsaved_.clear();  // everything persisted_ holds is written
}

std::string TenantService::read_text_io(const std::string& path, bool* exists) const {
  auto [text, found] = io_->call(
      [path] {
        bool e = false;
        std::string t = read_text(path, &e);
        return std::make_pair(std::move(t), e);
      },
      kIoDeadline);
  if (exists) *exists = found;
  return text;
}

FileStamp TenantService::polled_stamp() const {
  std::lock_guard<std::mutex> lock(polled_->mu);
  return polled_->stamp;
}

void TenantService::probe_state_dir() {
  auto polled = polled_;
  io_->post("probe state.json", [polled, path = store_.path()] {
    const FileStamp stamp = stamp_of(path);
    std::lock_guard<std::mutex> lock(polled->mu);
    polled->stamp = stamp;
  });
}

void TenantService::refuse_changes_while_not_answering() const {
  const std::string why = io_->not_answering();
  if (!why.empty())
    fail(error::kBusy, why +
                           ": changes are refused until it answers (the fabric is routed from "
                           "the last state it gave); try again");
}

void TenantService::save_or_throw() {
  persisted_.topology = view_->tree.spec().text();
  store_save();
}

json TenantService::add(const json& params, const Caller& caller) {
  const std::string name = get_string(params, "name");
  // One name rule for every exporter, so an accepted tenant can always be written out.
  try {
    exports::check_tenant_name(name);
  } catch (const exports::ExportError& e) {
    fail(error::kBadRequest, e.what());
  }
  const auto slurm_accounts = get_names(params, "slurm_accounts", "Slurm");
  const auto slurm_users = get_names(params, "slurm_users", "Slurm");
  std::string project;
  if (params.contains("openstack_project")) {
    project = get_string(params, "openstack_project");
    try {
      exports::check_name(project, exports::kMaxProjectId, "OpenStack", "field 'openstack_project'",
                          "project ID");
    } catch (const exports::ExportError& e) {
      fail(error::kBadRequest, e.what());
    }
  }
  const bool dry_run = get_bool(params, "dry_run", false);
  const bool has_list = params.contains("host_list");
  // "servers" and "hosts" both count servers: one host per server where servers have one port.
  const char* count_field = params.contains("servers") ? "servers" : "hosts";
  int hosts = has_list && !params.contains(count_field) ? 0 : get_int(params, count_field);
  const int wait = wait_ms(params);  // validated before anything is written
  std::unique_lock<std::mutex> lock(mu_);
  if (!dry_run && !caller.may_write)
    fail(error::kPermission, "uid " + std::to_string(caller.uid) +
                                 " may read but not change tenants (root or the laas group)");
  require_topology();
  if (unplaced_.count(name))
    fail(error::kDuplicate, "tenant '" + name + "' already exists (not placed)");
  allocator::Outcome outcome;
  allocator::Placement planned;
  if (has_list) {
    // An explicit placement: hosts by name or GUID, links chosen to satisfy Theorem 2.
    if (!params["host_list"].is_array())
      fail(error::kBadRequest, "field 'host_list' must be an array of host names or GUIDs");
    std::vector<topology::HostId> chosen = resolve_hosts(params["host_list"], "host_list");
    for (auto h : chosen) {
      if (const auto* d = drain_of(h))
        fail(error::kRefused, "host " + host_label(h) + " is drained (" + d->reason + ", " + d->by +
                                  ", " + d->at + "): `laasctl host resume` it first");
      if (const auto* d = leaf_drain_of(h))
        fail(error::kRefused, "host " + host_label(h) + " is on drained leaf '" + d->name + "' (" +
                                  d->reason + ", " + d->by + ", " + d->at +
                                  "): `laasctl switch resume` it first");
    }
    chosen = whole_servers(chosen);  // every port of a named server's port too
    std::vector<int> named;
    for (auto h : chosen) named.push_back(servers_.server_of[h]);
    std::sort(named.begin(), named.end());
    named.erase(std::unique(named.begin(), named.end()), named.end());
    const int units =
        servers_.multi_port() ? static_cast<int>(named.size()) : static_cast<int>(chosen.size());
    if (hosts == 0) hosts = units;
    if (units != hosts)
      fail(error::kBadRequest, "host_list has " + std::to_string(units) +
                                   (servers_.multi_port() ? " servers" : " hosts") + " but '" +
                                   count_field + "' says " + std::to_string(hosts));
    // Named servers are placed rail by rail among themselves; where that fails, the host
    // list as given, whose refusal names the host or condition at fault.
    std::optional<allocator::Placement> on_rails;
    if (servers_.multi_port()) {
      std::vector<std::vector<topology::HostId>> named_ports;
      for (int s : named) named_ports.push_back(servers_.ports[s]);
      on_rails = allocator::place_servers(cluster_->state(), named_ports, units).placement;
    }
    if (on_rails) {
      planned = *on_rails;
      outcome = cluster_->check_explicit(name, static_cast<int>(planned.hosts.size()), planned);
    } else {
      outcome = cluster_->add_on_hosts(name, chosen, true, &planned);
    }
  } else if (servers_.multi_port()) {
    // Whole servers, rail by rail (allocator::place_servers).
    if (hosts <= 0)
      fail(error::kBadRequest, std::string("field '") + count_field + "' must be at least 1");
    const auto placed = allocator::place_servers(cluster_->state(), servers_.ports, hosts);
    if (!placed.placement)
      fail(error::kRefused, "tenant '" + name + "' of " + std::to_string(hosts) +
                                " servers refused: " + placed.reason + drained_note());
    planned = *placed.placement;
    outcome = cluster_->check_explicit(name, static_cast<int>(planned.hosts.size()), planned);
  } else {
    outcome = cluster_->plan(name, hosts, &planned);
  }
  // The Cluster counts host ports: a tenant of N servers asked for all their ports.
  if (servers_.multi_port()) hosts = static_cast<int>(planned.hosts.size());
  if (!outcome.ok())
    fail(code_of(outcome.status),
         outcome.message + (outcome.status == allocator::Status::kRefused ? drained_note() : ""));
  if (dry_run) {
    allocator::Tenant preview{name, hosts, -1, planned};
    json r = tenant_json(preview);
    r["state"] = "planned";
    r["dry_run"] = true;
    return r;
  }
  // The plan is what gets committed: add_explicit re-checks freeness and the LaaS conditions.
  outcome = cluster_->add_explicit(name, hosts, planned);
  if (!outcome.ok()) fail(code_of(outcome.status), outcome.message);
  persisted_.tenants.push_back(persist(*outcome.tenant));
  persisted_.tenants.back().slurm_accounts = slurm_accounts;
  persisted_.tenants.back().slurm_users = slurm_users;
  persisted_.tenants.back().openstack_project = project;
  assign_missing_pkeys();
  ++persisted_.generation;
  bool partitions_changed = false;
  std::string not_durable;  // state.json holds the tenant, but the directory was not synced
  try {
    partitions_changed = commit(&not_durable);
  } catch (const RequestError& e) {
    persisted_.tenants.pop_back();
    --persisted_.generation;
    cluster_->remove(name);
    fail(e.code.c_str(), "tenant '" + name + "' not added: " + e.message);
  }
  log_(LogLevel::kInfo, "laas: uid " + std::to_string(caller.uid) + " added " + outcome.message);
  return finish_change(lock, partitions_changed, not_durable,
                       "tenant '" + name + "' IS added (state.json holds it and it will be routed)",
                       tenant_json(*cluster_->find(name)), wait, !caller.routes_itself);
}

json TenantService::remove(const json& params, const Caller& caller) {
  const std::string name = get_string(params, "name");
  const bool dry_run = get_bool(params, "dry_run", false);
  const int wait = wait_ms(params);  // validated before anything is written
  std::unique_lock<std::mutex> lock(mu_);
  if (!caller.may_write)
    fail(error::kPermission, "uid " + std::to_string(caller.uid) +
                                 " may read but not change tenants (root or the laas group)");
  if (!blocked_.empty()) fail(error::kUnavailable, blocked_);
  auto it = std::find_if(persisted_.tenants.begin(), persisted_.tenants.end(),
                         [&](const PersistedTenant& t) { return t.name == name; });
  if (it == persisted_.tenants.end()) fail(error::kNotFound, "no tenant named '" + name + "'");
  if (dry_run) return {{"name", name}, {"dry_run", true}};
  const PersistedTenant saved = *it;
  const size_t position = static_cast<size_t>(it - persisted_.tenants.begin());
  const allocator::Tenant* placed = cluster_ ? cluster_->find(name) : nullptr;
  const std::optional<allocator::Tenant> before =
      placed ? std::optional<allocator::Tenant>(*placed) : std::nullopt;
  persisted_.tenants.erase(it);
  ++persisted_.generation;
  if (before) cluster_->remove(name);
  // Its hosts are free for others only once partitions.conf no longer holds its key.
  bool partitions_changed = false;
  std::string not_durable;  // state.json no longer holds the tenant, directory not synced
  try {
    partitions_changed = commit(&not_durable);
  } catch (const RequestError& e) {
    persisted_.tenants.insert(persisted_.tenants.begin() + position, saved);
    --persisted_.generation;
    // Put it back as it was, repairs included, so that they can still be undone.
    if (before) {
      allocator::Placement intended = before->placement;
      intended.links = before->intended_links();
      intended.idle.clear();
      cluster_->restore(before->name, before->requested, intended, before->repairs);
    }
    fail(e.code.c_str(), "tenant '" + name + "' not removed: " + e.message);
  }
  unplaced_.erase(name);
  // Its quarantined slots are free now: a newcomer there is a free host like any other.
  const auto quarantined = quarantine_.size();
  quarantine_.erase(std::remove_if(quarantine_.begin(), quarantine_.end(),
                                   [&](const QuarantinedHost& q) { return q.tenant == name; }),
                    quarantine_.end());
  if (quarantine_.size() != quarantined && cluster_) cluster_->set_faults(current_faults());
  if (before && view_) cluster_->reserve(whole_servers(drained_hosts()));  // drained ones leave
  if (before && view_) {
    // Freed columns may repair a degraded tenant (nothing of any other tenant moves).
    const auto lines = cluster_->reconcile();
    for (const auto& line : lines) log_(LogLevel::kInfo, "laas: " + line);
    if (!lines.empty()) save_placed("the repairs made after removing '" + name + "'");
  }
  log_(LogLevel::kInfo,
       "laas: uid " + std::to_string(caller.uid) + " removed tenant '" + name + "'");
  return finish_change(lock, partitions_changed, not_durable,
                       "tenant '" + name + "' IS removed (state.json no longer holds it)",
                       {{"name", name}, {"removed", true}}, wait, !caller.routes_itself);
}

// The end of a committed add or remove, outside the lock: OpenSM is told (partitions.conf,
// then the re-route unless the caller routes the change itself), a change saved but not synced is
// reported as the error it is (the change stands), and the reply waits for the routing when asked
// to.
json TenantService::finish_change(std::unique_lock<std::mutex>& lock, bool partitions_changed,
                                  const std::string& not_durable, const std::string& done,
                                  json result, int wait, bool reroute) {
  const auto generation = persisted_.generation;
  lock.unlock();
  if (partitions_changed && partitions_hook_) partitions_hook_();
  if (reroute && reroute_) reroute_();
  if (!not_durable.empty())
    fail(error::kInternal, done + " but the change may not survive a crash: " + not_durable);
  result["generation"] = generation;
  if (wait >= 0) {
    result["routed"] = wait_routed(generation, wait);
    // "Routed" is said only of tables and P_Keys applied without error: otherwise the reply
    // names what failed, and that the state holds the change.
    std::lock_guard<std::mutex> relock(mu_);
    if (!result["routed"].get<bool>() && failed_generation_ >= generation)
      fail(error::kInternal, done + ", but the fabric does not have it yet: " + apply_failure_ +
                                 "; OpenSM tries again at its next sweep");
  }
  return result;
}

// -1: do not wait. Both fields are checked whether or not they are used.
int TenantService::wait_ms(const json& params) const {
  const bool wait = get_bool(params, "wait", true);
  int timeout_ms = config_.default_wait_ms;
  if (params.contains("timeout_ms")) {
    timeout_ms = get_int(params, "timeout_ms");
    if (timeout_ms < 0 || timeout_ms > kMaxWaitMs)
      fail(error::kBadRequest,
           "field 'timeout_ms' must be between 0 and " + std::to_string(kMaxWaitMs));
  }
  return wait ? timeout_ms : -1;
}

json TenantService::wait_routed(std::uint64_t generation, int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  // A failed application is not the end: OpenSM tries again at its next sweep, and a success
  // before the timeout is a success.
  routed_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return routed_generation_ >= generation || interrupted_; });
  return routed_generation_ >= generation;
}

void TenantService::interrupt_waits() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    interrupted_ = true;
  }
  routed_cv_.notify_all();
  stopping_.cancel();  // a `host resume` inside its check
}

// Saves the state and, when partitions are managed, partitions.conf for it: both or neither.
// The file goes first (generated, validated, replaced atomically); if the state cannot be
// saved after it, the previous file is put back. Returns true when partitions.conf changed.
// Throws RequestError (the caller restores its in-memory state).
bool TenantService::commit(std::string* not_durable) {
  const auto& path = config_.exports.managed_partitions_file;
  const bool managed = !path.empty() && view_ && cluster_;
  std::string text, previous;
  bool existed = false, changed = false;
  if (managed) {
    try {
      text = partitions_text();
    } catch (const exports::ExportError& e) {
      fail(error::kRefused, std::string("partitions.conf would not be valid: ") + e.what());
    }
    try {
      previous = read_text_io(path, &existed);
    } catch (const NotAnsweringError& e) {
      fail(error::kUnavailable, std::string(e.what()) + ": nothing was changed");
    }
    changed = !existed || text != previous;
    if (changed) try {
        write_managed_partitions(text);
      } catch (const std::exception& e) {
        fail(error::kInternal, std::string("partitions.conf not written: ") + e.what());
      }
  }
  try {
    if (view_)
      save_or_throw();
    else
      store_save();
  } catch (const NotDurableError& e) {
    // The new state.json is in place (memory and file agree): keep the change, say so.
    *not_durable = e.what();
  } catch (const std::exception& e) {
    const bool fenced = dynamic_cast<const FencedError*>(&e) != nullptr;
    if (changed) try {
        io_->call(
            [path, previous, existed] {
              if (existed)
                write_file_atomically(path, previous, 0644);
              else
                std::remove(path.c_str());
            },
            kIoDeadline);
      } catch (const std::exception& e2) {
        log_(LogLevel::kError, "laas: " + path + " could not be put back: " + e2.what());
      }
    if (fenced) {
      // Another SM took the shared state over: this one is no longer the master's service.
      term_held_ = false;
      fenced_ = e.what();
      fail(error::kNotMaster, std::string("this SM no longer holds the tenant state: ") + e.what());
    }
    if (dynamic_cast<const NotAnsweringError*>(&e))
      fail(error::kUnavailable, std::string(e.what()) +
                                    ": the change is not confirmed and is not made here; the "
                                    "write may still land when the directory answers (then the "
                                    "next routing run reads it back: check `laasctl tenant list`)");
    fail(error::kInternal, std::string("the state could not be saved: ") + e.what());
  }
  if (changed) {
    last_partitions_ = text;
    log_(LogLevel::kInfo, "laas: wrote " + path + " (" +
                              std::to_string(cluster_->tenants().size()) + " tenant partitions)");
  }
  return changed;
}

}  // namespace laas::service
