// The tenant service's read views: the status summary, the allocation map (`topology`), a
// tenant as `tenant show` prints it and its health under faults. Nothing here changes state.
#include "service/views.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "service/fabric_drains.h"
#include "service/host_manager.h"
#include "service/port_counters.h"
#include "service/protocol.h"
#include "service/request_error.h"
#include "service/request_params.h"
#include "service/switch_check.h"

namespace laas::service {

namespace {

const char* kRecorded = "recorded";

}  // namespace

using nlohmann::json;

void ServiceViews::add_troubles(json& s) const {
  if (!st_.condition.blocked.empty()) s["blocked"] = st_.condition.blocked;
  if (!st_.routing.fail_closed.empty()) s["fail_closed"] = st_.routing.fail_closed;
  if (!st_.config.config_error.empty()) s["config_error"] = st_.config.config_error;
  if (const std::string hung = st_.io->not_answering(); !hung.empty())
    s["state_dir_not_answering"] = hung;
  if (const std::string lost = st_.store.unavailable(); !lost.empty())
    s["state_store_not_answering"] = lost;
}

json ServiceViews::status() const {
  const SmRole sm = current_role(st_);
  std::lock_guard<std::mutex> lock(st_.mu);
  json s = {{"state_file", st_.store.path()},
            {"sm", role_json(st_, sm)},
            {"term", st_.persisted.term},
            {"generation", st_.persisted.generation},
            {"routed_generation", st_.routing.routed_generation},
            {"tenants", st_.cluster ? st_.cluster->tenants().size() : st_.persisted.tenants.size()},
            {"tenants_not_placed", st_.routing.unplaced.size()},
            {"algorithm", st_.config.algorithm}};
  // The placements (cluster, ids) exist only with the view they were made on; all three or none.
  if (st_.view && st_.cluster && st_.ids) {
    s["topology"] = st_.view->tree.spec().text();
    s["hosts"] = st_.view->tree.num_hosts();
    s["free_hosts"] = st_.cluster->state().free_hosts();
    // Drained links are faulty to the allocator but work: counted apart (maintenance).
    int faulty = 0;
    const auto drained = drained_links(st_);  // sorted; counted in "maintenance", down or not
    for (topology::LinkId l = 0; l < st_.view->tree.total_links(); ++l)
      faulty += st_.cluster->state().link_faulty(l) &&
                !std::binary_search(drained.begin(), drained.end(), l);
    s["faulty_links"] = faulty;
    s["maintenance"] = drains_.maintenance_counts();
    s["down_hosts"] = st_.cluster->state().down_hosts();
    s["missing_switches"] = st_.view->embedding.missing_switches.size();
    int degraded = 0, repairs = 0;
    for (const auto& [name, t] : st_.cluster->tenants()) {
      degraded += st_.cluster->health(t).degraded();
      repairs += static_cast<int>(t.repairs.size());
    }
    s["tenants_degraded"] = degraded;
    s["repairs"] = repairs;
    // Parts of the intended tree that are down now.
    s["down_links"] = st_.view->down_links();
    if (st_.view->uncabled_links()) s["uncabled_links"] = st_.view->uncabled_links();
    s["down_switches"] = st_.view->down_switches();
    s["host_states"] = hosts_.host_states();
    const auto outside = outside_tree_json(*st_.view);
    if (!outside["attached_hosts"].empty() || !outside["extra_cables"].empty())
      s["outside_tree"] = outside;
    json unaccepted = json::array();
    for (const auto& q : st_.unaccepted)
      unaccepted.push_back(
          {{"tenant", q.tenant},
           {"leaf", st_.ids->switch_name(1, st_.view->tree.leaf_of_host(q.host))},
           {"port", q.port},
           {"recorded", {{"guid", guid_hex(q.recorded_guid)}, {"name", q.recorded_name}}},
           {"seen", {{"guid", guid_hex(q.seen_guid)}, {"name", q.seen_name}}}});
    s["quarantined_hosts"] = unaccepted;  // the old name, for the readers of one release ago
    s["unaccepted_hosts"] = std::move(unaccepted);
  } else {
    s["topology"] = nullptr;
    s["topology_error"] = st_.routing.topology_error;
  }
  add_troubles(s);
  if (!st_.routing.tenants_file_note.empty()) s["tenants_file"] = st_.routing.tenants_file_note;
  s["tables_file_write_failures"] = st_.tables_file->write_failures.load();
  {
    std::lock_guard<std::mutex> tables_lock(st_.tables_file->mu);
    if (!st_.tables_file->last_error.empty()) s["tables_file_error"] = st_.tables_file->last_error;
  }
  s["free_pool"] = st_.config.free_pool_open ? "open" : "closed";
  if (st_.sm.unaccepted_sms > 0) s["unaccepted_sms"] = st_.sm.unaccepted_sms;
  if (!st_.sm.weak_keys.empty()) s["weak_keys"] = st_.sm.weak_keys;
  if (st_.hooks.adapter_status) s["adapter"] = st_.hooks.adapter_status();
  if (st_.hooks.switch_check && st_.hooks.switch_check->enabled()) {
    auto check = st_.hooks.switch_check->report(SwitchCheck::Clock::now());
    check.erase("switches");  // per switch: laasctl audit
    s["switch_check"] = check;
  }
  if (st_.view) {
    json shared = json::array();
    for (const auto& [name, guids] : shared_host_names(*st_.view)) {
      json list = json::array();
      for (auto g : guids) list.push_back(guid_hex(g));
      shared.push_back({{"name", name}, {"guids", list}});
    }
    if (!shared.empty()) s["duplicate_host_names"] = shared;
  }
  return s;
}

json ServiceViews::topology_info(const json& params) const {
  (void)params;
  std::lock_guard<std::mutex> lock(st_.mu);
  require_topology(st_);
  const auto& tree = st_.view->tree;
  const auto& state = st_.cluster->state();
  json leaves = json::array();
  // Owners by tenant name, so a client can draw the paper's leaf x spine table.
  std::map<allocator::TenantIndex, std::string> name_of;
  for (const auto& [name, t] : st_.cluster->tenants()) name_of[t.index] = name;
  auto owner = [&](allocator::TenantIndex i) -> json {
    if (i == allocator::kFree) return nullptr;
    if (i == allocator::kReserved) return "@management";
    return name_of[i];
  };
  // An up-link's three cells: as drawn (faulty, drained or its owner), faulty, and its owner.
  // A drained link a tenant still routes over (draining) is drawn as the tenant's.
  std::set<topology::LinkId> routed;
  for (const auto& [name, t] : st_.cluster->tenants())
    routed.insert(t.placement.links.begin(), t.placement.links.end());
  auto up_link = [&](topology::LinkId l, json& cells, json& faulty, json& owners) {
    const bool drained = st_.cluster->link_drained(l);
    cells.push_back(drained && !routed.count(l)        ? json("@drained")
                    : state.link_faulty(l) && !drained ? json("@faulty")
                                                       : owner(state.link_owner(l)));
    faulty.push_back(state.link_faulty(l) && !drained);
    owners.push_back(owner(state.link_owner(l)));
  };
  // Rail-optimized trees: each leaf's rail group and rail, for a map drawn rail by rail.
  const auto rails = st_.servers.multi_port() ? topology::leaf_rails(tree, st_.servers)
                                              : std::vector<std::pair<int, int>>{};
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    json hosts = json::array(), links = json::array();
    json down = json::array(), faulty = json::array(), link_owners = json::array();
    for (int s = 0; s < tree.hosts_per_leaf(); ++s) {
      const auto h = tree.host_at(leaf, s);
      // A drained host no tenant holds; one a tenant holds still shows its tenant.
      const bool out_of_service = state.host_owner(h) == allocator::kReserved &&
                                  (hosts_.drain_of(h) || leaf_drain_of(st_, h));
      hosts.push_back(out_of_service ? json("@drained") : owner(state.host_owner(h)));
      down.push_back(state.host_down(tree.host_at(leaf, s)));
    }
    for (int c = 0; c < tree.up_columns(1); ++c)
      up_link(tree.l1_link(leaf, c), links, faulty, link_owners);
    leaves.push_back({{"name", st_.ids->switch_name(1, leaf)},
                      {"guid", guid_hex(st_.ids->switch_guid(1, leaf))},
                      {"hosts", hosts},
                      {"hosts_down", down},
                      {"up_links", links},
                      {"up_links_faulty", faulty},
                      {"up_links_owner", link_owners}});
    if (!rails.empty()) {
      leaves.back()["rail_group"] = rails[leaf].first;
      leaves.back()["rail"] = rails[leaf].second;
    }
  }
  json spines = json::array();
  if (tree.height() == 3)
    for (int sw = 0; sw < tree.num_switches(2); ++sw) {
      json links = json::array(), faulty = json::array(), link_owners = json::array();
      for (int c = 0; c < tree.up_columns(2); ++c)
        up_link(tree.l2_link(sw, c), links, faulty, link_owners);
      spines.push_back({{"name", st_.ids->switch_name(2, sw)},
                        {"up_links", links},
                        {"up_links_faulty", faulty},
                        {"up_links_owner", link_owners}});
    }
  int faulty_count = 0;  // drained links work: not faulty
  for (topology::LinkId l = 0; l < tree.total_links(); ++l)
    faulty_count += state.link_faulty(l) && !st_.cluster->link_drained(l);
  return {{"topology", tree.spec().text()},
          {"hosts", tree.num_hosts()},
          {"free_hosts", state.free_hosts()},
          {"l1_links", tree.num_links(1)},
          {"l1_allocated", state.allocated_links(1)},
          {"l2_links", tree.height() == 3 ? tree.num_links(2) : 0},
          {"l2_allocated", tree.height() == 3 ? state.allocated_links(2) : 0},
          {"faulty_links", faulty_count},
          {"down_hosts", state.down_hosts()},
          {"leaves", leaves},
          {"level2", spines},
          {"down", down_parts()}};
}

// One line per part of the intended tree that is down, with the tenant holding it.
json ServiceViews::down_parts() const {
  const auto& tree = st_.view->tree;
  const auto& emb = st_.view->embedding;
  const auto& state = st_.cluster->state();
  std::map<allocator::TenantIndex, std::string> name_of;
  for (const auto& [name, t] : st_.cluster->tenants()) name_of[t.index] = name;
  auto held = [&](allocator::TenantIndex i) -> std::string {
    if (i == allocator::kFree) return "";
    if (i == allocator::kReserved) return " (management)";
    return " (held by " + name_of[i] + ")";
  };
  json out = json::array();
  for (const auto& [l, i] : emb.missing_switches)
    out.push_back("switch " + st_.view->switch_node(l, i).name);
  for (auto h : emb.missing_hosts)
    out.push_back("host " + st_.view->host_name(h) + held(state.host_owner(h)));
  for (auto l : emb.missing_links) {
    const auto lo = tree.link_lower(l);
    const auto up = tree.link_upper(l);
    out.push_back("link " + st_.view->switch_node(lo.level, lo.index).name + " port " +
                  std::to_string(st_.view->physical_port(lo.level, lo.index, lo.port)) + " - " +
                  st_.view->switch_node(up.level, up.index).name + " port " +
                  std::to_string(st_.view->physical_port(up.level, up.index, up.port)) +
                  held(state.link_owner(l)));
  }
  return out;
}

namespace {

json pkey_json(std::uint16_t pkey) {
  if (!pkey) return nullptr;
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%04x", pkey);
  return hex;
}

// What a tenant was given for the exports, when it was.
void add_export_names(const PersistedTenant& record, json& out) {
  if (!record.slurm_accounts.empty()) out["slurm_accounts"] = record.slurm_accounts;
  if (!record.slurm_users.empty()) out["slurm_users"] = record.slurm_users;
  if (!record.openstack_project.empty()) out["openstack_project"] = record.openstack_project;
}

}  // namespace

// `tenant list`: one line a tenant with the same fields whatever its state and whichever SM
// answers (counts of host ports and links, the shape as text); "reason" says why it is not
// routed, when it is not.
json ServiceViews::tenant_line(const std::string& name, std::uint16_t pkey, int requested,
                               std::size_t hosts, std::size_t links, const std::string& shape,
                               const std::string& state, const std::string& reason) {
  json item = {{"name", name},   {"pkey", pkey_json(pkey)}, {"requested", requested},
               {"hosts", hosts}, {"links", links},          {"shape", shape},
               {"state", state}};
  if (!reason.empty()) item["reason"] = reason;
  return item;
}

json ServiceViews::tenant_line(const PersistedTenant& t, const std::string& state,
                               const std::string& reason) {
  return tenant_line(t.name, t.pkey, t.requested, t.hosts.size(), t.links.size(), t.shape, state,
                     reason);
}

// `tenant show` of a tenant no routing run placed (not placed, not routed, or on an SM that is
// not the master): its hosts and links as state.json records them, which is all that is known
// without the fabric -- no LID, no peer port, no health.
json ServiceViews::recorded_tenant_json(const PersistedTenant& t, const std::string& state,
                                        const std::string& reason) {
  json hosts = json::array(), links = json::array();
  for (const auto& h : t.hosts)
    hosts.push_back({{"name", h.name},
                     {"guid", guid_hex(h.guid)},
                     {"leaf", {{"guid", guid_hex(h.leaf_guid)}, {"port", h.port}}}});
  for (const auto& l : t.links)
    links.push_back({{"switch", {{"guid", guid_hex(l.switch_guid)}, {"port", l.port}}}});
  json out = {{"name", t.name},           {"pkey", pkey_json(t.pkey)},
              {"requested", t.requested}, {"state", state},
              {"reason", reason},         {"hosts", hosts},
              {"links", links},           {"shape", {{"text", t.shape}}}};
  add_export_names(t, out);
  return out;
}

json ServiceViews::tenant_json(const allocator::Tenant& t) const {
  json hosts = json::array(), links = json::array();
  const PersistedTenant* record = persisted_tenant(st_, t.name);
  for (auto h : t.placement.hosts) {
    PersistedHost id = st_.ids->host(h);
    const auto* unaccepted = hosts_.unaccepted_of(h);
    const bool down = st_.cluster && st_.cluster->state().host_down(h);
    // The GUID recorded for the slot is the tenant's host: for a host that is down
    // (not the one the layout last saw there) and for an unaccepted slot.
    if (record)
      for (const auto& was : record->hosts)
        if (was.leaf_guid == id.leaf_guid && was.port == id.port &&
            (!id.guid || (was.guid && (was.guid != id.guid || !st_.ids->host_present(h))))) {
          id.guid = was.guid;
          id.name = was.name;
        }
    json host = {{"name", id.name.empty() ? st_.view->host_name(h) : id.name},
                 {"guid", guid_hex(id.guid)},
                 {"lid", unaccepted ? 0 : st_.view->host_lid(h)},
                 {"leaf", {{"guid", guid_hex(id.leaf_guid)}, {"port", id.port}}}};
    if (down) host["down"] = true;
    // What is in the slot now is not the tenant's host (no P_Key, no routes).
    if (unaccepted) {
      host["unaccepted"] = {{"guid", guid_hex(unaccepted->seen_guid)},
                            {"name", unaccepted->seen_name}};
      host["quarantined"] = host["unaccepted"];  // the old name, for one release
    }
    hosts.push_back(std::move(host));
  }
  for (auto l : t.placement.links) {
    json link = drains_.link_ends_json(l);
    if (st_.cluster && st_.cluster->link_drained(l))
      link["drained"] = true;  // draining: no free column to move to yet
    else if (st_.cluster && st_.cluster->state().link_faulty(l))
      link["faulty"] = true;
    links.push_back(std::move(link));
  }
  const auto& s = t.placement.shape;
  json extra = json::object();
  if (record) add_export_names(*record, extra);
  json out = {{"name", t.name},
              {"pkey", pkey_json(record ? record->pkey : 0)},
              {"requested", t.requested},
              {"state", "routed"},
              {"hosts", hosts},
              {"links", links},
              {"shape",
               {{"text", s.text()},
                {"leaves", {{"q", s.leaves.q}, {"d", s.leaves.d}, {"r", s.leaves.r}}},
                {"pods", {{"q", s.pods.q}, {"d", s.pods.d}, {"r", s.pods.r}}}}}};
  if (t.index >= 0 && st_.cluster && st_.cluster->find(t.name)) {
    out["health"] = health_json(t);
    if (st_.cluster->health(t).degraded()) {
      out["state"] = "degraded";
      out["reason"] = health_text(t);
    }
  }
  if (st_.servers.multi_port()) out["servers"] = servers_json(t);
  if (!links_.health().totals().empty()) out["link_health"] = links_.link_health_json(t);
  out.update(extra);
  return out;
}

// Everything about one tenant's faults, for tenant show / list: down hosts, faulty links it routes
// over, host pairs without a dedicated path, repairs in force, links held idle.
json ServiceViews::health_json(const allocator::Tenant& t) const {
  const auto h = st_.cluster->health(t);
  const auto& tree = st_.view->tree;
  auto host_name = [&](topology::HostId id) {
    if (const auto* q = hosts_.unaccepted_of(id); q && !q->recorded_name.empty())
      return q->recorded_name;
    const PersistedHost p = st_.ids->host(id);
    if (!p.name.empty()) return p.name;
    if (const auto* record = persisted_tenant(st_, t.name))
      for (const auto& was : record->hosts)
        if (was.leaf_guid == p.leaf_guid && was.port == p.port && !was.name.empty())
          return was.name;
    return st_.view->host_name(id);
  };
  json down = json::array(), faulty = json::array(), pairs = json::array(), repairs = json::array();
  json unaccepted = json::array();  // down for the tenant, a newcomer in the slot
  for (auto id : h.down_hosts)
    if (const auto* q = hosts_.unaccepted_of(id))
      unaccepted.push_back({{"name", host_name(id)},
                            {"guid", guid_hex(q->recorded_guid)},
                            {"seen", guid_hex(q->seen_guid)}});
    else
      down.push_back(host_name(id));
  for (auto l : h.faulty_links) faulty.push_back(st_.ids->link_name(l));
  constexpr size_t kMaxPairs = 64;
  size_t total = 0;
  for (const auto& [a, b] : h.lost_leaf_pairs)
    for (auto x : t.placement.hosts) {
      if (tree.leaf_of_host(x) != a) continue;
      for (auto y : t.placement.hosts) {
        if (tree.leaf_of_host(y) != b) continue;
        if (++total <= kMaxPairs) pairs.push_back({host_name(x), host_name(y)});
      }
    }
  for (const auto& r : t.repairs) {
    json retired = json::array(), added = json::array();
    for (auto l : r.retired) retired.push_back(st_.ids->link_name(l));
    for (auto l : r.added) added.push_back(st_.ids->link_name(l));
    repairs.push_back({{"retired", retired}, {"added", added}});
  }
  return {{"degraded", h.degraded()},
          {"down_hosts", down},
          {"unaccepted_hosts", unaccepted},
          {"quarantined_hosts", unaccepted},  // the old name, for one release
          {"faulty_links", faulty},
          {"lost_pairs", pairs},
          {"lost_pairs_total", total},
          {"repairs", repairs},
          {"idle_links", t.placement.idle.size()}};
}

std::string ServiceViews::health_text(const allocator::Tenant& t) const {
  const json h = health_json(t);
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  for (const auto& name : h["down_hosts"]) add("host " + name.get<std::string>() + " down");
  for (const auto& q : h["unaccepted_hosts"])
    add("host " + q["name"].get<std::string>() + " unaccepted (quarantined: " +
        q["seen"].get<std::string>() + " in its slot, not accepted)");
  for (const auto& name : h["faulty_links"]) add("link " + name.get<std::string>() + " faulty");
  const auto total = h["lost_pairs_total"].get<size_t>();
  if (total > 0) {
    std::string pairs;
    size_t shown = 0;
    for (const auto& p : h["lost_pairs"]) {
      if (++shown > 4) break;
      pairs +=
          (pairs.empty() ? "" : ", ") + p[0].get<std::string>() + "<->" + p[1].get<std::string>();
    }
    add(std::to_string(total) + " host pair(s) without a dedicated path (" + pairs +
        (total > 4 ? ", ..." : "") + ")");
  }
  if (out.empty()) return "routed";
  return "degraded: " + out;
}

// A tenant's servers with each port's leaf (its rail), LID and GUID, for tenant show.
json ServiceViews::servers_json(const allocator::Tenant& t) const {
  json out = json::array();
  std::vector<int> seen;
  for (auto h : t.placement.hosts) {
    const int s = st_.servers.server_of[h];
    if (std::find(seen.begin(), seen.end(), s) != seen.end()) continue;
    seen.push_back(s);
    json ports = json::array();
    for (auto p : st_.servers.ports[s]) {
      const PersistedHost id = st_.ids->host(p);
      ports.push_back({{"name", id.name.empty() ? st_.view->host_name(p) : id.name},
                       {"guid", guid_hex(id.guid)},
                       {"lid", st_.view->host_lid(p)},
                       {"leaf", st_.ids->switch_name(1, st_.view->tree.leaf_of_host(p))},
                       {"leaf_port", id.port}});
    }
    out.push_back({{"name", st_.servers.names[s]}, {"ports", ports}});
  }
  return out;
}

json ServiceViews::tenant_list() const {
  std::lock_guard<std::mutex> lock(st_.mu);
  json list = json::array();
  if (!st_.cluster) {
    // No fat-tree (or no routing run yet): every tenant on disk is listed, none is lost.
    for (const auto& t : st_.persisted.tenants)
      list.push_back(tenant_line(t, "not routed", unrouted()));
    return list;
  }
  for (const auto& [name, t] : st_.cluster->tenants()) {
    const auto* record = persisted_tenant(st_, name);
    const bool degraded = st_.cluster->health(t).degraded();
    list.push_back(tenant_line(name, record ? record->pkey : 0, t.requested,
                               t.placement.hosts.size(), t.placement.links.size(),
                               t.placement.shape.text(), degraded ? "degraded" : "routed",
                               degraded ? health_text(t) : ""));
  }
  for (const auto& [name, why] : st_.routing.unplaced)
    if (const auto* record = persisted_tenant(st_, name))
      list.push_back(tenant_line(*record, "not placed", why));
  return list;
}

json ServiceViews::tenant_get(const json& params) const {
  const std::string name = get_string(params, "name");
  std::lock_guard<std::mutex> lock(st_.mu);
  const auto* record = persisted_tenant(st_, name);
  if (auto it = st_.routing.unplaced.find(name); it != st_.routing.unplaced.end() && record)
    return recorded_tenant_json(*record, "not placed", it->second);
  if (!st_.cluster && record) return recorded_tenant_json(*record, "not routed", unrouted());
  const auto* t = st_.cluster ? st_.cluster->find(name) : nullptr;
  if (!t) fail(error::kNotFound, "no tenant named '" + name + "'");
  return tenant_json(*t);
}

// Why no tenant is routed now (no fat-tree recognized, or the state blocked).
std::string ServiceViews::unrouted() const {
  return "not routed: " +
         (st_.condition.blocked.empty() ? st_.routing.topology_error : st_.condition.blocked);
}

// An SM that is not the master shows the tenants as the shared state records them.
json ServiceViews::recorded_answer(const std::string& asked, const json& params,
                                   const SmRole& sm) const {
  const std::string why =
      sm.may_change_tenants()
          ? "this SM is becoming master; the tenants are as the shared state records them"
          : "this SM is " + sm.name() + ": the tenants are as the shared state records them; " +
                (sm.master && sm.master->port_guid != sm.self.port_guid
                     ? "the master SM " + sm.master->text() + " routes them"
                     : std::string("no master is known to this SM"));
  if (asked == method::kStatus) {
    json s = {
        {"state_file", st_.store.path()},
        {"sm", role_json(st_, sm)},
        {"term", st_.persisted.term},
        {"generation", st_.persisted.generation},
        {"tenants", st_.persisted.tenants.size()},
        {"algorithm", st_.config.algorithm},
        {"topology", st_.persisted.topology.empty() ? json(nullptr) : json(st_.persisted.topology)},
        {"topology_error", why}};
    add_troubles(s);
    s["free_pool"] = st_.config.free_pool_open ? "open" : "closed";
    return s;
  }
  if (!st_.condition.blocked.empty()) fail(error::kUnavailable, st_.condition.blocked);
  if (asked == method::kTenantList) {
    json list = json::array();
    for (const auto& t : st_.persisted.tenants) list.push_back(tenant_line(t, kRecorded, why));
    return list;
  }
  // tenant.get
  const auto name_it = params.find("name");
  if (name_it == params.end() || !name_it->is_string())
    fail(error::kBadRequest, "field 'name' must be a string");
  const std::string name = name_it->get<std::string>();
  for (const auto& t : st_.persisted.tenants)
    if (t.name == name) return recorded_tenant_json(t, kRecorded, why);
  fail(error::kNotFound, "no tenant named '" + name + "'");
}

}  // namespace laas::service
