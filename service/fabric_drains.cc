// The maintenance of links and switches: drained and resumed as hosts are
// (host_manager.cc), so that an administrator can pull a cable or power a switch off without
// touching a tenant. A drained link is never placed; a tenant routing over it is repaired onto a
// free column the way a fault is repaired (allocator::Cluster::reconcile), and once no tenant
// routes over it the routing avoids it like a link isolated for its errors -- then it is
// "drained" and can be pulled. A tenant that cannot be moved (no free column keeps Theorems
// 1-2) keeps routing over it, not degraded, and the link stays "draining" until a column frees
// or the tenant leaves. A drained switch drains every tree link it has; a drained leaf also
// keeps its hosts out of new placements. Drains are kept in state.json by node GUID and port,
// so they survive restarts and SM failover; resume undoes the repairs (the tenants return to
// their columns as placed, with the same routes as before).
#include "service/fabric_drains.h"

#include <algorithm>
#include <set>

#include "service/host_manager.h"
#include "service/port_counters.h"
#include "service/request_params.h"

namespace laas::service {

using nlohmann::json;

namespace {

// Every link a tenant routes over, with the tenant.
std::map<topology::LinkId, std::string> routed_links(const allocator::Cluster& cluster) {
  std::map<topology::LinkId, std::string> out;
  for (const auto& [name, t] : cluster.tenants())
    for (auto l : t.placement.links) out[l] = name;
  return out;
}

// The tenant holding a link (routed over or held idle after a repair), or "".
std::string holder(const allocator::Cluster& cluster, topology::LinkId l) {
  const auto owner = cluster.state().link_owner(l);
  if (owner < 0) return "";
  for (const auto& [name, t] : cluster.tenants())
    if (t.index == owner) return name;
  return "";
}

}  // namespace

const PersistedFabricDrain* FabricDrains::link_drain_of(topology::LinkId l) const {
  if (!st_.ids) return nullptr;
  const auto id = st_.ids->link(l);
  for (const auto& d : st_.persisted.drained_links)
    if (d.guid == id.switch_guid && d.port == id.port) return &d;
  const auto lo = st_.view->tree.link_lower(l), up = st_.view->tree.link_upper(l);
  if (const auto* d = switch_drain_of(st_, lo.level, lo.index)) return d;
  return switch_drain_of(st_, up.level, up.index);
}

std::vector<topology::LinkId> FabricDrains::out_of_service_links() const {
  std::vector<topology::LinkId> out;
  if (!st_.cluster) return out;
  const auto routed = routed_links(*st_.cluster);
  for (auto l : drained_links(st_))
    if (!routed.count(l)) out.push_back(l);
  return out;
}

// A switch by node GUID, or by the name the recorded layout gives it -- never by a node
// description seen now, which whoever manages the switch can set to anything.
std::pair<int, int> FabricDrains::resolve_switch(const std::string& text) const {
  const auto& tree = st_.view->tree;
  try {
    const auto guid = parse_guid(text);
    for (int level = 1; level <= tree.height(); ++level)
      for (int i = 0; i < tree.num_switches(level); ++i)
        if (st_.ids->switch_guid(level, i) == guid) return {level, i};
  } catch (const std::invalid_argument&) {
  }
  const auto& known = st_.view->known();
  if (static_cast<int>(known.switches.size()) != tree.height())
    fail(error::kBadRequest, "'" + text +
                                 "' is not the node GUID of a switch of the tree, and no layout "
                                 "is recorded yet to name switches by: use the node GUID "
                                 "(laasctl switch list)");
  std::vector<std::pair<int, int>> named;
  for (int level = 1; level <= tree.height(); ++level)
    for (int i = 0; i < static_cast<int>(known.switches[level - 1].size()); ++i)
      if (known.switches[level - 1][i].name == text) named.push_back({level, i});
  if (named.size() == 1) return named.front();
  if (named.size() > 1) {
    std::string guids;
    for (const auto& [level, i] : named)
      guids += (guids.empty() ? "" : ", ") + guid_hex(st_.ids->switch_guid(level, i));
    fail(error::kRefused, "switch name '" + text + "' is recorded for " +
                              std::to_string(named.size()) + " switches (" + guids +
                              "); name the switch by its node GUID");
  }
  fail(error::kBadRequest, "'" + text +
                               "' is neither the node GUID nor the recorded name of a switch of "
                               "the tree (laasctl switch list)");
}

// SWITCH:PORT, the switch by node GUID or recorded name, either end of the link.
topology::LinkId FabricDrains::resolve_link(const std::string& text) const {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size() ||
      text.find_first_not_of("0123456789", colon + 1) != std::string::npos ||
      text.size() - colon > 4)
    fail(error::kBadRequest, "link '" + text +
                                 "': name a link as SWITCH:PORT (the node GUID or recorded name "
                                 "of the switch at either end, and its physical port)");
  const auto [level, index] = resolve_switch(text.substr(0, colon));
  const int port = std::stoi(text.substr(colon + 1));
  const auto guid = st_.ids->switch_guid(level, index);
  const auto& links = links_.port_links();
  const auto it = links.find({guid, port});
  if (it == links.end())
    fail(error::kBadRequest, "port " + std::to_string(port) + " of switch '" +
                                 st_.ids->switch_name(level, index) + "' (" + guid_hex(guid) +
                                 ") is not a switch-to-switch link of the tree (a host port, a "
                                 "cable outside the tree or no port; laasctl link list)");
  return it->second;
}

std::string FabricDrains::link_state(topology::LinkId l,
                                     const std::map<topology::LinkId, std::string>& routed) const {
  const auto& uncabled = st_.view->embedding.uncabled;
  if (std::binary_search(uncabled.begin(), uncabled.end(), l)) return "uncabled";
  if (link_drain_of(l)) return routed.count(l) ? "draining" : "drained";
  if (!st_.view->link_present(l)) return "down";
  const auto isolated = links_.isolated_links();
  if (std::binary_search(isolated.begin(), isolated.end(), l)) return "isolated";
  const auto owner = st_.cluster->state().link_owner(l);
  if (owner == allocator::kReserved) return "management";
  return owner >= 0 ? "allocated" : "free";
}

std::string FabricDrains::switch_state(
    int level, int index, const std::map<topology::LinkId, std::string>& routed) const {
  if (switch_drain_of(st_, level, index)) {
    const auto& tree = st_.view->tree;
    for (const auto& [l, tenant] : routed)
      if (link_touches(tree, l, level, index)) return "draining";
    if (level == 1)
      for (int s = 0; s < tree.hosts_per_leaf(); ++s)
        if (st_.cluster->state().host_owner(tree.host_at(index, s)) >= 0) return "draining";
    return "drained";
  }
  return st_.view->switch_present(level, index) ? "in_service" : "down";
}

namespace {

json drain_json(const PersistedFabricDrain& d, bool with_switch) {
  json j = {{"reason", d.reason}, {"by", d.by}, {"at", d.at}};
  if (with_switch) j["switch"] = d.name.empty() ? guid_hex(d.guid) : d.name;
  return j;
}

}  // namespace

json FabricDrains::link_json(topology::LinkId l,
                             const std::map<topology::LinkId, std::string>& routed) const {
  json j = link_ends_json(l);
  j["name"] = st_.ids->link_name(l);
  j["level"] = st_.view->tree.link_lower(l).level;
  j["state"] = link_state(l, routed);
  j["present"] = st_.view->link_present(l);
  if (const auto t = holder(*st_.cluster, l); !t.empty()) {
    j["tenant"] = t;
    if (!routed.count(l)) j["idle"] = true;  // held after a repair, not routed over
  }
  if (const auto* d = link_drain_of(l)) {
    const auto id = st_.ids->link(l);
    j["drain"] = drain_json(*d, !(d->guid == id.switch_guid && d->port == id.port));
  }
  return j;
}

json FabricDrains::switch_json(int level, int index,
                               const std::map<topology::LinkId, std::string>& routed) const {
  const auto& tree = st_.view->tree;
  std::set<std::string> tenants;
  int links = 0;
  for (topology::LinkId l = 0; l < tree.total_links(); ++l) {
    if (!link_touches(tree, l, level, index)) continue;
    ++links;
    if (auto it = routed.find(l); it != routed.end()) tenants.insert(it->second);
  }
  std::map<allocator::TenantIndex, std::string> names;
  for (const auto& [name, t] : st_.cluster->tenants()) names[t.index] = name;
  if (level == 1)
    for (int s = 0; s < tree.hosts_per_leaf(); ++s)
      if (auto it = names.find(st_.cluster->state().host_owner(tree.host_at(index, s)));
          it != names.end())
        tenants.insert(it->second);
  json j = {{"name", st_.ids->switch_name(level, index)},
            {"guid", guid_hex(st_.ids->switch_guid(level, index))},
            {"level", level},
            {"state", switch_state(level, index, routed)},
            {"links", links},
            {"tenants", tenants}};
  if (const auto* d = switch_drain_of(st_, level, index)) j["drain"] = drain_json(*d, false);
  return j;
}

json FabricDrains::link_ends_json(topology::LinkId l) const {
  const auto lo = st_.view->tree.link_lower(l);
  const auto [upper, upper_port] = st_.ids->link_upper(l);
  return {{"switch",
           {{"name", st_.ids->switch_name(lo.level, lo.index)},
            {"guid", guid_hex(st_.ids->switch_guid(lo.level, lo.index))},
            {"port", st_.ids->link(l).port}}},
          {"peer",
           {{"name", st_.ids->switch_name(upper.first, upper.second)},
            {"guid", guid_hex(st_.ids->switch_guid(upper.first, upper.second))},
            {"port", upper_port}}}};
}

json FabricDrains::maintenance_counts() const {
  json out = {{"links", {{"drained", 0}, {"draining", 0}}},
              {"switches", {{"drained", 0}, {"draining", 0}}}};
  if (!st_.view || !st_.cluster) return out;
  if (st_.persisted.drained_links.empty() && st_.persisted.drained_switches.empty()) return out;
  const auto routed = routed_links(*st_.cluster);
  for (auto l : drained_links(st_)) {
    auto& n = out["links"][routed.count(l) ? "draining" : "drained"];
    n = n.get<int>() + 1;
  }
  const auto& tree = st_.view->tree;
  for (int level = 1; level <= tree.height(); ++level)
    for (int i = 0; i < tree.num_switches(level); ++i)
      if (switch_drain_of(st_, level, i)) {
        auto& n = out["switches"][switch_state(level, i, routed)];
        n = n.get<int>() + 1;
      }
  return out;
}

json FabricDrains::link_list(const json& params) const {
  static const std::set<std::string> states = {"free",     "allocated", "management", "drained",
                                               "draining", "down",      "isolated",   "uncabled"};
  std::string only;
  if (params.contains("state")) only = get_string(params, "state");
  if (!only.empty() && !states.count(only))
    fail(error::kBadRequest,
         "field 'state' must be one of free, allocated, management, drained, draining, down, "
         "isolated, uncabled");
  std::lock_guard<std::mutex> lock(st_.mu);
  require_topology(st_);
  const auto routed = routed_links(*st_.cluster);
  json out = json::array();
  for (topology::LinkId l = 0; l < st_.view->tree.total_links(); ++l) {
    if (!only.empty() && link_state(l, routed) != only) continue;
    out.push_back(link_json(l, routed));
  }
  return out;
}

json FabricDrains::switch_list(const json& params) const {
  static const std::set<std::string> states = {"in_service", "drained", "draining", "down"};
  std::string only;
  if (params.contains("state")) only = get_string(params, "state");
  if (!only.empty() && !states.count(only))
    fail(error::kBadRequest, "field 'state' must be one of in_service, drained, draining, down");
  std::lock_guard<std::mutex> lock(st_.mu);
  require_topology(st_);
  const auto routed = routed_links(*st_.cluster);
  json out = json::array();
  const auto& tree = st_.view->tree;
  for (int level = 1; level <= tree.height(); ++level)
    for (int i = 0; i < tree.num_switches(level); ++i)
      if (only.empty() || switch_state(level, i, routed) == only)
        out.push_back(switch_json(level, i, routed));
  return out;
}

void FabricDrains::apply_fabric_drains() {
  st_.cluster->set_faults(links_.current_faults());
  // Hosts out of placements: management servers, drained hosts and the hosts of drained
  // leaves; those no longer drained go back to the free pool.
  std::set<topology::HostId> keep;
  for (auto h : whole_servers(st_, hosts_.drained_hosts())) keep.insert(h);
  for (auto h : whole_servers(st_, st_.view->management_hosts)) keep.insert(h);
  std::vector<topology::HostId> release;
  for (topology::HostId h = 0; h < st_.view->tree.num_hosts(); ++h)
    if (st_.cluster->state().host_owner(h) == allocator::kReserved && !keep.count(h))
      release.push_back(h);
  st_.cluster->unreserve(release);
  st_.cluster->reserve(std::vector<topology::HostId>(keep.begin(), keep.end()));
  for (const auto& line : st_.cluster->reconcile()) st_.log(LogLevel::kInfo, "laas: " + line);
  rebuilder_.reserve_management_uplinks();
  placements_.record_placed();
}

json FabricDrains::fabric_drain(const json& params, const Caller& caller, bool link, bool drain) {
  const char* noun = link ? "link" : "switch";
  std::string reason;
  if (drain) {
    reason = get_string(params, "reason");
    if (reason.find_first_not_of(" \t") == std::string::npos || reason.size() > 200)
      fail(error::kBadRequest, "field 'reason' must say why, in 1 to 200 characters");
  }
  const int wait = wait_ms(st_, params);  // validated before anything is written
  const std::string text = get_string(params, noun);
  std::unique_lock<std::mutex> lock(st_.mu);
  if (!caller.may_write)
    fail(error::kPermission, "uid " + std::to_string(caller.uid) + " may read but not " +
                                 (drain ? "drain" : "resume") +
                                 " links and switches (root or the laas group)");
  require_topology(st_);
  const auto& tree = st_.view->tree;
  PersistedFabricDrain key;
  std::string label;
  topology::LinkId l = -1;
  std::pair<int, int> sw{0, 0};
  if (link) {
    l = resolve_link(text);
    const auto id = st_.ids->link(l);
    const auto [upper, upper_port] = st_.ids->link_upper(l);
    key.guid = id.switch_guid;
    key.port = id.port;
    key.name = st_.ids->link_name(l) + " - " + st_.ids->switch_name(upper.first, upper.second) +
               " port " + std::to_string(upper_port);
    label = "link " + key.name;
  } else {
    sw = resolve_switch(text);
    key.guid = st_.ids->switch_guid(sw.first, sw.second);
    key.name = st_.ids->switch_name(sw.first, sw.second);
    label = "switch '" + key.name + "' (" + guid_hex(key.guid) + ")";
  }
  auto& list = link ? st_.persisted.drained_links : st_.persisted.drained_switches;
  const auto it = std::find_if(list.begin(), list.end(), [&](const PersistedFabricDrain& d) {
    return d.guid == key.guid && d.port == key.port;
  });
  auto reply = [&](bool changed) {
    const auto now = routed_links(*st_.cluster);
    json r = {{noun, link ? link_json(l, now) : switch_json(sw.first, sw.second, now)},
              {drain ? "drained" : "resumed", changed ? json::array({label}) : json::array()}};
    return r;
  };
  if (drain) {
    if (it != list.end()) return reply(false);  // drained already: the first reason stands
    const auto& uncabled = st_.view->embedding.uncabled;
    if (link && std::binary_search(uncabled.begin(), uncabled.end(), l))
      fail(error::kRefused, label + " is uncabled by design: nothing to drain");
    if (!link && sw.first == 1)
      for (auto h : st_.view->management_hosts)
        if (tree.leaf_of_host(h) == sw.second)
          fail(error::kRefused, label + " holds management host " + hosts_.host_label(h) +
                                    ": draining it would cut management off the fabric");
  } else if (it == list.end()) {
    if (link)
      if (const auto* d = link_drain_of(l))
        fail(error::kBadRequest, label + " is out of service with its switch '" + d->name +
                                     "' (drained): `laasctl switch resume` it");
    fail(error::kBadRequest, label + " is not drained");
  }
  const PersistedState saved = st_.persisted;  // the repairs change the tenants' records too
  if (drain) {
    key.reason = reason;
    key.by = "uid " + std::to_string(caller.uid);
    key.at = utc_now();
    list.push_back(key);
  } else {
    list.erase(it);
  }
  apply_fabric_drains();
  ++st_.persisted.generation;
  std::string not_durable;
  try {
    lifecycle_.commit(&not_durable);
  } catch (const RequestError& e) {
    st_.persisted = saved;
    rebuilder_.rebuild_cluster();  // the tenants as they were, from the records put back
    fail(e.code.c_str(), label + " not " + (drain ? "drained" : "resumed") + ": " + e.message);
  }
  st_.log(LogLevel::kInfo, "laas: uid " + std::to_string(caller.uid) +
                               (drain ? " drained " : " resumed ") + label +
                               (drain ? ": " + reason : ""));
  json result = reply(true);
  return lifecycle_.finish_change(
      lock, false, not_durable,
      label + " IS " + (drain ? "drained" : "resumed") + " (state.json says so)", std::move(result),
      wait);
}

}  // namespace laas::service
