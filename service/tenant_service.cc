#include "service/tenant_service.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include "export/openstack.h"
#include "export/partitions.h"
#include "export/routing_chains.h"
#include "export/slurm.h"

namespace laas::service {
namespace {

using nlohmann::json;

struct RequestError {
  std::string code;
  std::string message;
};

[[noreturn]] void fail(const char* code, const std::string& message) {
  throw RequestError{code, message};
}

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

// Typed parameter access with errors that name the field.
std::string get_string(const json& params, const char* field) {
  if (!params.contains(field))
    fail(error::kBadRequest, std::string("missing field '") + field + "'");
  if (!params[field].is_string())
    fail(error::kBadRequest, std::string("field '") + field + "' must be a string");
  return params[field].get<std::string>();
}

int get_int(const json& params, const char* field) {
  if (!params.contains(field))
    fail(error::kBadRequest, std::string("missing field '") + field + "'");
  if (!params[field].is_number_integer())
    fail(error::kBadRequest, std::string("field '") + field + "' must be an integer");
  const auto v = params[field].get<long long>();
  if (v < -1000000000LL || v > 1000000000LL)
    fail(error::kBadRequest, std::string("field '") + field + "' is out of range");
  return static_cast<int>(v);
}

bool get_bool(const json& params, const char* field, bool fallback) {
  if (!params.contains(field)) return fallback;
  if (!params[field].is_boolean())
    fail(error::kBadRequest, std::string("field '") + field + "' must be true or false");
  return params[field].get<bool>();
}

// Host names (node descriptions) that several hosts share, with their GUIDs. A host's own
// root sets its node description, so a shared name cannot be trusted to mean one host.
std::map<std::string, std::vector<topology::Guid>> shared_host_names(const TopologyView& view) {
  std::map<std::string, std::vector<topology::Guid>> by_name;
  for (topology::HostId h = 0; h < view.tree.num_hosts(); ++h)
    if (const auto guid = view.host_guid(h)) by_name[view.host_name(h)].push_back(guid);
  for (auto it = by_name.begin(); it != by_name.end();)
    it = it->second.size() > 1 ? std::next(it) : by_name.erase(it);
  return by_name;
}

}  // namespace

TenantService::TenantService(ServiceConfig config, Logger log)
    : config_(std::move(config)), log_(std::move(log)), store_(config_.state_dir) {
  allocator::make_placer(config_.algorithm);  // fail early on a bad algorithm name
  try {
    persisted_ = store_.load();
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
  std::set<std::uint16_t> taken;
  for (const auto& t : persisted_.tenants)
    if (t.pkey) taken.insert(t.pkey);
  for (auto& t : persisted_.tenants) {
    if (t.pkey) continue;
    exports::TenantRecord r;
    r.name = t.name;
    t.pkey = exports::assign_pkeys({r}, taken).front();
    taken.insert(t.pkey);
  }
}

void TenantService::on_topology(std::shared_ptr<const TopologyView> view) {
  bool partitions_changed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    topology_error_.clear();
    if (view_ && cluster_ && view_->fingerprint() == view->fingerprint() &&
        view_->management_hosts == view->management_hosts) {
      // Same cabling: the placed tenants stand as they are; the new view may carry new LIDs.
      view_ = std::move(view);
      return;
    }
    view_ = std::move(view);
    rebuild_cluster();
    partitions_changed = refresh_managed_partitions();
  }
  if (partitions_changed && partitions_hook_) partitions_hook_();
}

// Maps every persisted tenant onto the current fabric by GUID and re-validates its placement.
// Nothing is re-allocated: a tenant that no longer fits is reported and kept on disk.
void TenantService::rebuild_cluster() {
  cluster_ =
      std::make_unique<allocator::Cluster>(view_->tree, allocator::make_placer(config_.algorithm));
  for (const auto& l : view_->embedding.missing_links) cluster_->set_faulty(l, true);
  auto skipped = cluster_->reserve(view_->management_hosts);
  (void)skipped;
  unplaced_.clear();
  if (!blocked_.empty()) return;
  for (const auto& t : persisted_.tenants) {
    allocator::Placement p;
    std::string missing;
    for (auto guid : t.hosts) {
      if (auto h = view_->host_by_guid(guid))
        p.hosts.push_back(*h);
      else
        missing += (missing.empty() ? "" : ", ") + guid_hex(guid);
    }
    for (const auto& l : t.links) {
      if (auto id = view_->link_by_port(l.switch_guid, l.port))
        p.links.push_back(*id);
      else
        missing += (missing.empty() ? "link " : ", link ") + guid_hex(l.switch_guid) + "/" +
                   std::to_string(l.port);
    }
    if (!missing.empty()) {
      unplaced_[t.name] = "not on the fabric: " + missing;
      log_(LogLevel::kWarning, "laas: tenant '" + t.name + "' is not routed: " + unplaced_[t.name]);
      continue;
    }
    auto r = cluster_->add_explicit(t.name, t.requested, p);
    if (!r.ok()) {
      unplaced_[t.name] = r.message;
      log_(LogLevel::kError, "laas: tenant '" + t.name + "' is not routed: " + r.message);
    }
  }
  log_(LogLevel::kInfo, "laas: " + std::to_string(cluster_->tenants().size()) +
                            " tenants placed on " + view_->tree.spec().text() +
                            (unplaced_.empty() ? ""
                                               : ", " + std::to_string(unplaced_.size()) +
                                                     " not placed (see laasctl status)"));
}

void TenantService::on_topology_error(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  topology_error_ = reason;
  view_.reset();
  cluster_.reset();
}

RoutingSnapshot TenantService::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  RoutingSnapshot s;
  s.topology = view_;
  s.generation = persisted_.generation;
  s.blocked = blocked_;
  if (cluster_)
    for (const auto& [name, t] : cluster_->tenants()) s.tenants.emplace_back(name, t.placement);
  return s;
}

void TenantService::on_routing_done(std::uint64_t generation) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    routed_generation_ = std::max(routed_generation_, generation);
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

json TenantService::handle(const json& request, const Caller& caller) {
  json response = {{"v", kProtocolVersion}, {"id", nullptr}};
  try {
    if (!request.is_object()) fail(error::kBadRequest, "a request must be a JSON object");
    if (request.contains("id")) {
      if (!request["id"].is_string() && !request["id"].is_number_integer())
        fail(error::kBadRequest, "field 'id' must be a string or an integer");
      response["id"] = request["id"];
    }
    if (!request.contains("v") || !request["v"].is_number_integer())
      fail(error::kBadRequest, "field 'v' (protocol version) must be an integer");
    if (request["v"].get<long long>() != kProtocolVersion)
      fail(error::kBadRequest, "protocol version " + request["v"].dump() +
                                   " is not supported; this server speaks version 1");
    const std::string method = get_string(request, "method");
    json params = request.value("params", json::object());
    if (!params.is_object()) fail(error::kBadRequest, "field 'params' must be an object");
    response["ok"] = true;
    response["result"] = dispatch(method, params, caller);
  } catch (const RequestError& e) {
    response["ok"] = false;
    response["error"] = {{"code", e.code}, {"message", e.message}};
  } catch (const std::exception& e) {
    response["ok"] = false;
    response["error"] = {{"code", error::kInternal}, {"message", e.what()}};
  }
  return response;
}

json TenantService::dispatch(const std::string& method, const json& params, const Caller& caller) {
  if (method == "status") return status();
  if (method == "topology") return topology_info(params);
  if (method == "tenant.list") {
    std::lock_guard<std::mutex> lock(mu_);
    json list = json::array();
    if (cluster_)
      for (const auto& [name, t] : cluster_->tenants())
        list.push_back({{"name", name},
                        {"requested", t.requested},
                        {"hosts", t.placement.hosts.size()},
                        {"links", t.placement.links.size()},
                        {"shape", t.placement.shape.text()},
                        {"state", "routed"}});
    for (const auto& [name, why] : unplaced_)
      list.push_back({{"name", name}, {"state", "not placed"}, {"reason", why}});
    return list;
  }
  if (method == "tenant.get") {
    const std::string name = get_string(params, "name");
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = unplaced_.find(name); it != unplaced_.end())
      return {{"name", name}, {"state", "not placed"}, {"reason", it->second}};
    const auto* t = cluster_ ? cluster_->find(name) : nullptr;
    if (!t) fail(error::kNotFound, "no tenant named '" + name + "'");
    return tenant_json(*t);
  }
  if (method == "tenant.add") return add(params, caller);
  if (method == "tenant.plan") {
    json dry = params;
    dry["dry_run"] = true;
    return add(dry, caller);
  }
  if (method == "tenant.remove") return remove(params, caller);
  if (method == "audit") {
    if (!audit_) fail(error::kUnavailable, "no audit is available in this process");
    return audit_();
  }
  if (method == "export") {
    if (export_) return export_(params);
    std::lock_guard<std::mutex> lock(mu_);
    return export_files(params);
  }
  fail(error::kBadRequest,
       "unknown method '" + method +
           "'; methods: status, topology, tenant.add, tenant.remove, tenant.list, tenant.get, "
           "tenant.plan, audit, export");
}

json TenantService::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  json s = {{"state_file", store_.path()},
            {"generation", persisted_.generation},
            {"routed_generation", routed_generation_},
            {"tenants", cluster_ ? cluster_->tenants().size() : 0},
            {"tenants_not_placed", unplaced_.size()},
            {"algorithm", config_.algorithm}};
  if (view_) {
    s["topology"] = view_->tree.spec().text();
    s["hosts"] = view_->tree.num_hosts();
    s["free_hosts"] = cluster_->state().free_hosts();
    s["faulty_links"] = cluster_->state().faulty_links();
  } else {
    s["topology"] = nullptr;
    s["topology_error"] = topology_error_;
  }
  if (!blocked_.empty()) s["blocked"] = blocked_;
  if (view_) {
    json shared = json::array();
    for (const auto& [name, guids] : shared_host_names(*view_)) {
      json list = json::array();
      for (auto g : guids) list.push_back(guid_hex(g));
      shared.push_back({{"name", name}, {"guids", list}});
    }
    if (!shared.empty()) s["duplicate_host_names"] = shared;
  }
  return s;
}

void TenantService::require_topology() const {
  if (!blocked_.empty()) fail(error::kUnavailable, blocked_);
  if (!view_ || !cluster_)
    fail(error::kUnavailable, "no fat-tree is recognized: " + topology_error_);
}

json TenantService::topology_info(const json& params) const {
  (void)params;
  std::lock_guard<std::mutex> lock(mu_);
  require_topology();
  const auto& tree = view_->tree;
  const auto& state = cluster_->state();
  json leaves = json::array();
  // Owners by tenant name, so a client can draw the paper's leaf x spine table.
  std::map<allocator::TenantIndex, std::string> name_of;
  for (const auto& [name, t] : cluster_->tenants()) name_of[t.index] = name;
  auto owner = [&](allocator::TenantIndex i) -> json {
    if (i == allocator::kFree) return nullptr;
    if (i == allocator::kReserved) return "@management";
    return name_of[i];
  };
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    json hosts = json::array(), links = json::array();
    for (int s = 0; s < tree.hosts_per_leaf(); ++s)
      hosts.push_back(owner(state.host_owner(tree.host_at(leaf, s))));
    for (int c = 0; c < tree.up_columns(1); ++c) {
      const auto l = tree.l1_link(leaf, c);
      links.push_back(state.link_faulty(l) ? json("@faulty") : owner(state.link_owner(l)));
    }
    leaves.push_back({{"name", view_->switch_node(1, leaf).name},
                      {"guid", guid_hex(view_->switch_node(1, leaf).guid)},
                      {"hosts", hosts},
                      {"up_links", links}});
  }
  json spines = json::array();
  if (tree.height() == 3)
    for (int sw = 0; sw < tree.num_switches(2); ++sw) {
      json links = json::array();
      for (int c = 0; c < tree.up_columns(2); ++c) {
        const auto l = tree.l2_link(sw, c);
        links.push_back(state.link_faulty(l) ? json("@faulty") : owner(state.link_owner(l)));
      }
      spines.push_back({{"name", view_->switch_node(2, sw).name}, {"up_links", links}});
    }
  return {{"topology", tree.spec().text()},
          {"hosts", tree.num_hosts()},
          {"free_hosts", state.free_hosts()},
          {"l1_links", tree.num_links(1)},
          {"l1_allocated", state.allocated_links(1)},
          {"l2_links", tree.height() == 3 ? tree.num_links(2) : 0},
          {"l2_allocated", tree.height() == 3 ? state.allocated_links(2) : 0},
          {"leaves", leaves},
          {"level2", spines}};
}

json TenantService::tenant_json(const allocator::Tenant& t) const {
  json hosts = json::array(), links = json::array();
  for (auto h : t.placement.hosts)
    hosts.push_back({{"name", view_->host_name(h)},
                     {"guid", guid_hex(view_->host_guid(h))},
                     {"lid", view_->host_lid(h)}});
  for (auto l : t.placement.links) {
    const auto lo = view_->tree.link_lower(l);
    const auto up = view_->tree.link_upper(l);
    const auto& lower = view_->switch_node(lo.level, lo.index);
    const auto& upper = view_->switch_node(up.level, up.index);
    links.push_back({{"switch",
                      {{"name", lower.name},
                       {"guid", guid_hex(lower.guid)},
                       {"port", view_->physical_port(lo.level, lo.index, lo.port)}}},
                     {"peer",
                      {{"name", upper.name},
                       {"guid", guid_hex(upper.guid)},
                       {"port", view_->physical_port(up.level, up.index, up.port)}}}});
  }
  const auto& s = t.placement.shape;
  std::uint16_t pkey = 0;
  for (const auto& p : persisted_.tenants)
    if (p.name == t.name) pkey = p.pkey;
  char pkey_hex[8];
  std::snprintf(pkey_hex, sizeof pkey_hex, "0x%04x", pkey);
  return {{"name", t.name},
          {"pkey", pkey ? json(pkey_hex) : json(nullptr)},
          {"requested", t.requested},
          {"state", "routed"},
          {"hosts", hosts},
          {"links", links},
          {"shape",
           {{"text", s.text()},
            {"leaves", {{"q", s.leaves.q}, {"d", s.leaves.d}, {"r", s.leaves.r}}},
            {"pods", {{"q", s.pods.q}, {"d", s.pods.d}, {"r", s.pods.r}}}}}};
}

PersistedTenant TenantService::persist(const allocator::Tenant& t) const {
  PersistedTenant p{t.name, t.requested, {}, {}, t.placement.shape.text()};
  for (auto h : t.placement.hosts) p.hosts.push_back(view_->host_guid(h));
  for (auto l : t.placement.links) {
    const auto lo = view_->tree.link_lower(l);
    p.links.push_back({view_->switch_node(lo.level, lo.index).guid,
                       view_->physical_port(lo.level, lo.index, lo.port)});
  }
  return p;
}

void TenantService::save_or_throw() {
  persisted_.topology = view_->tree.spec().text();
  store_.save(persisted_);
}

json TenantService::add(const json& params, const Caller& caller) {
  const std::string name = get_string(params, "name");
  const bool dry_run = get_bool(params, "dry_run", false);
  const bool has_list = params.contains("host_list");
  int hosts = has_list && !params.contains("hosts") ? 0 : get_int(params, "hosts");
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
    std::vector<topology::HostId> chosen;
    const auto shared = shared_host_names(*view_);
    for (const auto& item : params["host_list"]) {
      if (!item.is_string()) fail(error::kBadRequest, "host_list entries must be strings");
      const auto text = item.get<std::string>();
      // A GUID always names one port; a node description only when no other host shares it.
      std::optional<topology::HostId> h;
      try {
        h = view_->host_by_guid(parse_guid(text));
      } catch (const std::invalid_argument&) {
      }
      if (!h) {
        if (auto it = shared.find(text); it != shared.end()) {
          std::string guids;
          for (auto g : it->second) guids += (guids.empty() ? "" : ", ") + guid_hex(g);
          fail(error::kRefused, "host name '" + text + "' is the node description of " +
                                    std::to_string(it->second.size()) + " hosts (" + guids +
                                    "); name the host by its port GUID");
        }
        h = view_->host_by_name(text);
      }
      if (!h) fail(error::kBadRequest, "host '" + text + "' is not a host of this fabric");
      chosen.push_back(*h);
    }
    if (hosts == 0) hosts = static_cast<int>(chosen.size());
    if (static_cast<int>(chosen.size()) != hosts)
      fail(error::kBadRequest, "host_list has " + std::to_string(chosen.size()) +
                                   " hosts but 'hosts' says " + std::to_string(hosts));
    outcome = cluster_->add_on_hosts(name, chosen, true, &planned);
  } else {
    outcome = cluster_->plan(name, hosts, &planned);
  }
  if (!outcome.ok()) fail(code_of(outcome.status), outcome.message);
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
  assign_missing_pkeys();
  ++persisted_.generation;
  std::string not_durable;
  try {
    save_or_throw();
  } catch (const NotDurableError& e) {
    // state.json already holds the tenant: keep it (memory and file agree) and say so.
    not_durable = e.what();
  } catch (const std::exception& e) {
    persisted_.tenants.pop_back();
    --persisted_.generation;
    cluster_->remove(name);
    fail(error::kInternal,
         std::string("tenant not added, the state could not be saved: ") + e.what());
  }
  log_(LogLevel::kInfo, "laas: uid " + std::to_string(caller.uid) + " added " + outcome.message);
  json result = tenant_json(*cluster_->find(name));
  const auto generation = persisted_.generation;
  const bool partitions_changed = refresh_managed_partitions();
  lock.unlock();
  if (partitions_changed && partitions_hook_) partitions_hook_();
  if (reroute_) reroute_();
  if (!not_durable.empty())
    fail(error::kInternal, "tenant '" + name +
                               "' IS added (state.json holds it and it will be routed) but the "
                               "change may not survive a crash: " +
                               not_durable);
  result["generation"] = generation;
  if (wait >= 0) result["routed"] = wait_routed(generation, wait);
  return result;
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
  std::string not_durable;
  try {
    if (view_)
      save_or_throw();
    else
      store_.save(persisted_);
  } catch (const NotDurableError& e) {
    not_durable = e.what();  // state.json no longer holds the tenant
  } catch (const std::exception& e) {
    persisted_.tenants.insert(persisted_.tenants.begin() + position, saved);
    --persisted_.generation;
    fail(error::kInternal,
         std::string("tenant not removed, the state could not be saved: ") + e.what());
  }
  if (before) cluster_->remove(name);
  unplaced_.erase(name);
  log_(LogLevel::kInfo,
       "laas: uid " + std::to_string(caller.uid) + " removed tenant '" + name + "'");
  const auto generation = persisted_.generation;
  const bool partitions_changed = refresh_managed_partitions();
  lock.unlock();
  if (partitions_changed && partitions_hook_) partitions_hook_();
  if (reroute_) reroute_();
  if (!not_durable.empty())
    fail(error::kInternal, "tenant '" + name +
                               "' IS removed (state.json no longer holds it) but the change may "
                               "not survive a crash: " +
                               not_durable);
  json result = {{"name", name}, {"removed", true}, {"generation", generation}};
  if (wait >= 0) result["routed"] = wait_routed(generation, wait);
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
}

std::string TenantService::partitions_text() const {
  std::vector<exports::TenantRecord> records;
  if (cluster_) {
    json all = json::array();
    for (const auto& [name, t] : cluster_->tenants()) all.push_back(tenant_json(t));
    records = exports::tenants_from_json(all);
    for (auto& r : records)
      for (const auto& p : persisted_.tenants)
        if (p.name == r.name && p.pkey) r.pkey = p.pkey;
  }
  exports::PartitionOptions options;
  const auto& base = config_.exports.partitions_base_file;
  if (!base.empty()) {
    std::ifstream in(base);
    if (!in) fail(error::kUnavailable, "cannot read the base partitions file " + base);
    std::stringstream text;
    text << in.rdbuf();
    options.base_text = text.str();
    options.base_name = base;
  }
  return exports::generate_partitions(records, options);
}

// Writes the managed partitions.conf when its content changes. A generation error leaves the
// previous file in place: OpenSM would otherwise fall back to "everyone full member".
bool TenantService::refresh_managed_partitions() {
  const auto& path = config_.exports.managed_partitions_file;
  if (path.empty() || !view_) return false;
  try {
    const std::string text = partitions_text();
    if (text == last_partitions_) return false;
    write_file_atomically(path, text, 0644);
    last_partitions_ = text;
    log_(LogLevel::kInfo, "laas: wrote " + path + " (" +
                              std::to_string(cluster_ ? cluster_->tenants().size() : 0) +
                              " tenant partitions)");
    return true;
  } catch (const RequestError& e) {
    log_(LogLevel::kError, "laas: " + path + " not updated: " + e.message);
  } catch (const std::exception& e) {
    log_(LogLevel::kError, "laas: " + path + " not updated: " + e.what());
  }
  return false;
}

json TenantService::export_files(const json& params) const {
  const std::string format = get_string(params, "format");
  require_topology();
  json all = json::array();
  if (params.contains("tenant")) {
    const std::string only = get_string(params, "tenant");
    const auto* t = cluster_->find(only);
    if (!t) fail(error::kNotFound, "no tenant named '" + only + "'");
    all.push_back(tenant_json(*t));
  } else {
    for (const auto& [name, t] : cluster_->tenants()) all.push_back(tenant_json(t));
  }
  const bool removal = get_bool(params, "remove", false);
  try {
    auto records = exports::tenants_from_json(all);
    for (auto& r : records)
      for (const auto& p : persisted_.tenants)
        if (p.name == r.name && p.pkey) r.pkey = p.pkey;
    const auto& cfg = config_.exports;
    if (format == "partitions") return {{"format", format}, {"content", partitions_text()}};
    if (format == "routing-chains") {
      const auto tree = exports::tree_from_fabric(view_->tree, view_->fabric, view_->embedding);
      const auto files = exports::generate_routing_chains(records, &tree, {});
      return {{"format", format},
              {"files",
               {{"pgrp_policy_file", files.port_groups},
                {"topo_policy_file", files.topologies},
                {"rch_policy_file", files.chains}}},
              {"content", "# ---- pgrp_policy_file ----\n" + files.port_groups +
                              "# ---- topo_policy_file ----\n" + files.topologies +
                              "# ---- rch_policy_file ----\n" + files.chains}};
    }
    if (format == "slurm" || format == "slurm-topology") {
      exports::SlurmOptions options;
      options.node_names = cfg.slurm_node_names;
      if (format == "slurm-topology") {
        const auto tree = exports::tree_from_fabric(view_->tree, view_->fabric, view_->embedding);
        return {{"format", format}, {"content", exports::generate_slurm_topology(tree, options)}};
      }
      return {{"format", format},
              {"content", removal ? exports::generate_slurm_release(records, options)
                                  : exports::generate_slurm_reservations(records, options)}};
    }
    if (format == "openstack") {
      exports::OpenStackOptions options;
      options.projects = cfg.openstack_projects;
      options.host_names = cfg.openstack_hosts;
      return {{"format", format},
              {"content", removal ? exports::generate_openstack_remove(records, options)
                                  : exports::generate_openstack_add(records, options)}};
    }
  } catch (const exports::ExportError& e) {
    fail(error::kRefused, e.what());
  }
  fail(error::kBadRequest, "unknown export format '" + format +
                               "'; formats: partitions, routing-chains, slurm, slurm-topology, "
                               "openstack");
}

}  // namespace laas::service
