// Host states, as a scheduler's node states: free, allocated,
// drained (out of service, with reason, who and when), draining (drained while a tenant still
// holds it: it leaves service when the tenant releases it), down (absent from the fabric) and
// management. Drains are kept in state.json by port GUID, so they survive restarts and SM
// failover; a drained host is reserved in the allocator (never placed) and, being no tenant's,
// routed as a free host (reached from management only).
#include "service/host_manager.h"

#include <algorithm>
#include <ctime>
#include <set>

#include "service/port_counters.h"
#include "service/request_params.h"
#include "service/resume_check.h"

namespace laas::service {

using nlohmann::json;

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::vector<topology::HostId> HostManager::resolve_hosts(const json& names,
                                                         const char* field) const {
  if (!names.is_array() || names.empty())
    fail(error::kBadRequest,
         std::string("field '") + field + "' must be a non-empty array of host names or GUIDs");
  std::vector<topology::HostId> chosen;
  const auto shared = shared_host_names(*st_.view);
  for (const auto& item : names) {
    if (!item.is_string())
      fail(error::kBadRequest, std::string(field) + " entries must be strings");
    const auto text = item.get<std::string>();
    // A server's name stands for all its ports.
    if (const int s = st_.servers.multi_port() ? st_.servers.find(text) : -1; s >= 0) {
      chosen.insert(chosen.end(), st_.servers.ports[s].begin(), st_.servers.ports[s].end());
      continue;
    }
    // A GUID always names one port; a node description only when no other host shares it.
    std::optional<topology::HostId> h;
    try {
      h = st_.view->host_by_guid(parse_guid(text));
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
      h = st_.view->host_by_name(text);
    }
    if (!h) fail(error::kBadRequest, "host '" + text + "' is not a host of this fabric");
    chosen.push_back(*h);
  }
  return chosen;
}

const PersistedDrain* HostManager::drain_of(topology::HostId h) const {
  const auto guid = st_.view ? st_.view->host_guid(h) : 0;
  if (!guid) return nullptr;
  for (const auto& d : st_.persisted.drained)
    if (d.guid == guid) return &d;
  return nullptr;
}

std::string HostManager::host_label(topology::HostId h) const {
  const std::string name = st_.ids ? st_.ids->host(h).name : st_.view->host_name(h);
  return "'" + (name.empty() ? st_.view->tree.host_name(h) : name) + "' (" +
         guid_hex(st_.view->host_guid(h)) + ")";
}

std::vector<topology::HostId> HostManager::drained_hosts() const {
  std::vector<topology::HostId> out;
  if (!st_.view) return out;
  for (const auto& d : st_.persisted.drained)
    if (const auto h = st_.view->host_by_guid(d.guid)) out.push_back(*h);
  // The hosts of a drained leaf (fabric_drains.cc) are out of service with it.
  if (!st_.persisted.drained_switches.empty())
    for (topology::HostId h = 0; h < st_.view->tree.num_hosts(); ++h)
      if (!drain_of(h) && leaf_drain_of(st_, h)) out.push_back(h);
  return out;
}

std::string HostManager::drained_note() const {
  const auto hosts = drained_hosts();
  if (hosts.empty()) return "";
  std::string names;
  for (size_t i = 0; i < hosts.size() && i < 8; ++i)
    names += (names.empty() ? "" : ", ") + host_label(hosts[i]);
  if (hosts.size() > 8) names += ", ...";
  return "; " + std::to_string(hosts.size()) + " host(s) are drained (out of service): " + names;
}

json HostManager::host_json(topology::HostId h,
                            const std::map<allocator::TenantIndex, std::string>& tenants) const {
  const auto& emb = st_.view->embedding;
  const bool down =
      std::find(emb.missing_hosts.begin(), emb.missing_hosts.end(), h) != emb.missing_hosts.end();
  const bool management =
      std::find(st_.view->management_hosts.begin(), st_.view->management_hosts.end(), h) !=
      st_.view->management_hosts.end();
  const auto owner = st_.cluster ? st_.cluster->state().host_owner(h) : allocator::kFree;
  const auto tenant = tenants.find(owner);
  const auto* drained = drain_of(h);
  const auto* leaf_drained = drained ? nullptr : leaf_drain_of(st_, h);
  const auto id = st_.ids ? st_.ids->host(h) : PersistedHost{};
  json j = {{"name", id.name.empty() ? st_.view->host_name(h) : id.name},
            {"guid", guid_hex(st_.view->host_guid(h))},
            {"lid", st_.view->host_lid(h)},
            {"leaf", st_.ids ? st_.ids->switch_name(1, st_.view->tree.leaf_of_host(h)) : ""},
            {"port", id.port},
            {"down", down}};
  if (st_.servers.multi_port()) j["server"] = st_.servers.names[st_.servers.server_of[h]];
  const auto* unaccepted = unaccepted_of(h);
  std::string state;
  if (management)
    state = "management";
  else if (unaccepted)
    state = kUnacceptedStateJson;
  else if (tenant != tenants.end())
    state = drained || leaf_drained ? "draining" : "allocated";
  else if (drained || leaf_drained)
    state = "drained";
  else if (down)
    state = "down";
  else
    state = "free";
  j["state"] = state;
  if (tenant != tenants.end()) j["tenant"] = tenant->second;
  if (drained) j["drain"] = {{"reason", drained->reason}, {"by", drained->by}, {"at", drained->at}};
  if (leaf_drained)  // out of service with its leaf
    j["drain"] = {{"reason", leaf_drained->reason},
                  {"by", leaf_drained->by},
                  {"at", leaf_drained->at},
                  {"switch", leaf_drained->name}};
  if (unaccepted)
    j["recorded"] = {{"guid", guid_hex(unaccepted->recorded_guid)},
                     {"name", unaccepted->recorded_name}};
  return j;
}

json HostManager::host_states() const {
  json counts = {{"free", 0}, {"allocated", 0},  {"drained", 0},   {"draining", 0},
                 {"down", 0}, {"management", 0}, {"unaccepted", 0}};
  // The old name's count beside the new one's: status readers and the metric's old label value.
  const auto with_old_name = [](json c) {
    c[kUnacceptedStateJson] = c["unaccepted"];
    return c;
  };
  if (!st_.view) return with_old_name(counts);
  std::map<allocator::TenantIndex, std::string> tenants;
  if (st_.cluster)
    for (const auto& [name, t] : st_.cluster->tenants()) tenants[t.index] = name;
  for (topology::HostId h = 0; h < st_.view->tree.num_hosts(); ++h)
    if (st_.view->host_guid(h)) {
      auto state = host_json(h, tenants)["state"].get<std::string>();
      if (state == kUnacceptedStateJson) state = "unaccepted";
      auto& n = counts[state];
      n = n.get<int>() + 1;
    }
  return with_old_name(counts);
}

json HostManager::host_list(const json& params) const {
  std::lock_guard<std::mutex> lock(st_.mu);
  require_topology(st_);
  std::string only;
  if (params.contains("state")) only = get_string(params, "state");
  static const std::set<std::string> states = {"free", "allocated",  "drained",   "draining",
                                               "down", "management", "unaccepted"};
  if (only == "unaccepted" || only == kUnacceptedStateJson)
    only = kUnacceptedStateJson;  // both names select the one state
  else if (!only.empty() && !states.count(only))
    fail(error::kBadRequest,
         "field 'state' must be one of free, allocated, drained, draining, "
         "down, management, unaccepted (or quarantined, its old name)");
  std::map<allocator::TenantIndex, std::string> tenants;
  if (st_.cluster)
    for (const auto& [name, t] : st_.cluster->tenants()) tenants[t.index] = name;
  json out = json::array();
  for (topology::HostId h = 0; h < st_.view->tree.num_hosts(); ++h) {
    if (!st_.view->host_guid(h)) continue;  // a slot never seen: no host there
    json j = host_json(h, tenants);
    if (only.empty() || j["state"] == only) out.push_back(std::move(j));
  }
  return out;
}

json HostManager::host_show(const json& params) const {
  std::lock_guard<std::mutex> lock(st_.mu);
  require_topology(st_);
  const auto hosts = resolve_hosts(json::array({get_string(params, "name")}), "name");
  std::map<allocator::TenantIndex, std::string> tenants;
  if (st_.cluster)
    for (const auto& [name, t] : st_.cluster->tenants()) tenants[t.index] = name;
  if (hosts.size() == 1) return host_json(hosts.front(), tenants);
  json ports = json::array();  // a server: every port
  for (auto h : hosts) ports.push_back(host_json(h, tenants));
  return {{"server", get_string(params, "name")}, {"ports", ports}};
}

// The hosts a drain or resume names (every port of a named server), once the caller may
// change them and the fabric is known.
std::vector<topology::HostId> HostManager::hosts_to_change(const json& params, const Caller& caller,
                                                           const char* verb) const {
  if (!caller.may_write)
    fail(error::kPermission, "uid " + std::to_string(caller.uid) + " may read but not " + verb +
                                 " hosts (root or the laas group)");
  require_topology(st_);
  if (!params.contains("hosts")) fail(error::kBadRequest, "missing field 'hosts'");
  return whole_servers(st_, resolve_hosts(params["hosts"], "hosts"));
}

// Saves a change of persisted_.drained (a new generation) or, when it cannot, restores `saved`
// and fails the request: the drains in memory and on disk never differ.
void HostManager::commit_drains(const std::vector<PersistedDrain>& saved, const char* done) {
  ++st_.persisted.generation;
  std::string not_durable;
  try {
    lifecycle_.commit(&not_durable);
  } catch (const RequestError& e) {
    st_.persisted.drained = saved;
    --st_.persisted.generation;
    fail(e.code.c_str(), std::string("hosts not ") + done + ": " + e.message);
  }
  if (!not_durable.empty())
    st_.log(LogLevel::kWarning, std::string("laas: hosts ") + done +
                                    " but the state may not survive a crash: " + not_durable);
}

json HostManager::drain(const json& params, const Caller& caller) {
  const std::string reason = get_string(params, "reason");
  if (reason.find_first_not_of(" \t") == std::string::npos || reason.size() > 200)
    fail(error::kBadRequest, "field 'reason' must say why, in 1 to 200 characters");
  std::unique_lock<std::mutex> lock(st_.mu);
  const auto hosts = hosts_to_change(params, caller, "drain");
  for (auto h : hosts)
    if (std::find(st_.view->management_hosts.begin(), st_.view->management_hosts.end(), h) !=
        st_.view->management_hosts.end())
      fail(error::kRefused,
           "host " + host_label(h) + " is a management host: never placed, nothing to drain");
  const auto saved = st_.persisted.drained;
  const std::string by = "uid " + std::to_string(caller.uid), at = utc_now();
  json changed = json::array();
  for (auto h : hosts) {
    if (drain_of(h)) continue;  // drained already: the first reason stands
    const auto id = st_.ids ? st_.ids->host(h) : PersistedHost{};
    st_.persisted.drained.push_back({st_.view->host_guid(h), id.name, reason, by, at});
    changed.push_back(id.name.empty() ? guid_hex(st_.view->host_guid(h)) : id.name);
  }
  if (!changed.empty()) {
    commit_drains(saved, "drained");
    st_.cluster->reserve(whole_servers(st_, drained_hosts()));  // held ones leave with their tenant
    st_.log(LogLevel::kInfo, "laas: " + by + " drained " + changed.dump() + ": " + reason);
  }
  std::map<allocator::TenantIndex, std::string> tenants;
  for (const auto& [name, t] : st_.cluster->tenants()) tenants[t.index] = name;
  json out = json::array();
  for (auto h : hosts) out.push_back(host_json(h, tenants));
  return {{"drained", changed}, {"hosts", out}};
}

json HostManager::resume(const json& params, const Caller& caller) {
  std::vector<std::pair<std::string, std::string>> to_check;  // (name, GUID)
  {
    std::lock_guard<std::mutex> lock(st_.mu);
    for (auto h : hosts_to_change(params, caller, "resume")) {
      if (!drain_of(h)) {
        if (const auto* d = leaf_drain_of(st_, h))
          fail(error::kBadRequest, "host " + host_label(h) + " is out of service with its leaf '" +
                                       d->name + "' (drained): `laasctl switch resume` it");
        fail(error::kBadRequest, "host " + host_label(h) + " is not drained");
      }
      const auto id = st_.ids ? st_.ids->host(h) : PersistedHost{};
      to_check.push_back({id.name, guid_hex(st_.view->host_guid(h))});
    }
  }
  // The administrator's check runs outside the lock: it may take minutes (a burn-in).
  if (!st_.config.resume_check.empty()) {
    // Checked again at every resume, so that fixing the program's rights is enough.
    if (const auto refusal = check_program_refusal(st_.config.resume_check); !refusal.empty())
      fail(error::kRefused, refusal + "; no host is resumed until it is fixed");
    for (const auto& [name, guid] : to_check) {
      auto run = run_check(st_.config.resume_check, guid, check_host_name(name),
                           st_.config.resume_check_timeout_ms, &st_.stopping);
      if (run.cancelled)
        fail(error::kUnavailable, "host '" + name + "' (" + guid + "): resume check " + run.output +
                                      "; it stays drained");
      if (run.status == 0) continue;
      auto& output = run.output;
      while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
      fail(error::kRefused,
           "host '" + name + "' (" + guid + ") failed the resume check " + st_.config.resume_check +
               (run.status > 0 ? " (exit " + std::to_string(run.status) + ")" : "") + ": " +
               (output.empty() ? "no output" : output.substr(0, 400)) + "; it stays drained");
    }
  }
  std::unique_lock<std::mutex> lock(st_.mu);
  require_topology(st_);
  const auto saved = st_.persisted.drained;
  std::vector<topology::HostId> resumed;
  json names = json::array();
  for (const auto& [name, guid] : to_check) {
    const auto g = parse_guid(guid);
    const auto it = std::find_if(st_.persisted.drained.begin(), st_.persisted.drained.end(),
                                 [&](const PersistedDrain& d) { return d.guid == g; });
    if (it == st_.persisted.drained.end()) continue;  // resumed meanwhile by another request
    st_.persisted.drained.erase(it);
    if (const auto h = st_.view->host_by_guid(g)) resumed.push_back(*h);
    names.push_back(name.empty() ? guid : name);
  }
  if (!names.empty()) {
    commit_drains(saved, "resumed");
    st_.cluster->unreserve(resumed);
    st_.log(LogLevel::kInfo, "laas: uid " + std::to_string(caller.uid) + " resumed " +
                                 names.dump() +
                                 (st_.config.resume_check.empty() ? "" : " (resume check passed)"));
  }
  return {{"resumed", names}};
}

// ---- Identity is the host, not the slot -------------------------------------

const UnacceptedHost* HostManager::unaccepted_of(topology::HostId h) const {
  for (const auto& q : st_.unaccepted)
    if (q.host == h) return &q;
  return nullptr;
}

// Host names, port GUIDs (the one seen in a slot, or the one recorded for it), server names, and
// slots as "LEAF:PORT" (the leaf by name or node GUID, its physical port).
std::vector<topology::HostId> HostManager::resolve_slots(const json& names) const {
  if (!names.is_array() || names.empty())
    fail(error::kBadRequest,
         "field 'hosts' must be a non-empty array of host names, GUIDs, servers or LEAF:PORT");
  std::vector<topology::HostId> out;
  for (const auto& item : names) {
    if (!item.is_string()) fail(error::kBadRequest, "hosts entries must be strings");
    const auto text = item.get<std::string>();
    const auto colon = text.rfind(':');
    if (colon != std::string::npos && colon + 1 < text.size() &&
        text.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
      const std::string leaf = text.substr(0, colon);
      const int port = text.size() - colon > 4 ? -1 : std::stoi(text.substr(colon + 1));
      std::optional<topology::HostId> h;
      for (int i = 0; i < st_.view->tree.num_leaves() && !h; ++i) {
        bool match = st_.ids->switch_name(1, i) == leaf;
        try {
          match = match || st_.ids->switch_guid(1, i) == parse_guid(leaf);
        } catch (const std::invalid_argument&) {
        }
        if (match) h = st_.ids->host_at(st_.ids->switch_guid(1, i), port);
      }
      if (!h)
        fail(error::kBadRequest, "'" + text + "' is not a host slot (LEAF:PORT) of this tree");
      out.push_back(*h);
      continue;
    }
    std::optional<topology::HostId> recorded;  // a tenant's host by the GUID recorded for it
    try {
      const auto g = parse_guid(text);
      for (const auto& q : st_.unaccepted)
        if (q.recorded_guid == g) recorded = q.host;
    } catch (const std::invalid_argument&) {
    }
    if (recorded) {
      out.push_back(*recorded);
      continue;
    }
    const auto hosts = resolve_hosts(json::array({text}), "hosts");
    out.insert(out.end(), hosts.begin(), hosts.end());
  }
  return out;
}

// Records the port GUID seen in unaccepted slots as their tenant's host: saved (with the
// tenant's partitions.conf) before the reply, then re-routed.
json HostManager::accept(const json& params, const Caller& caller) {
  const bool dry_run = get_bool(params, "dry_run", false);
  const int wait = wait_ms(st_, params);  // validated before anything is written
  std::unique_lock<std::mutex> lock(st_.mu);
  if (!caller.may_write && !dry_run)
    fail(error::kPermission, "uid " + std::to_string(caller.uid) +
                                 " may read but not accept hosts (root or the laas group)");
  require_topology(st_);
  if (!params.contains("hosts")) fail(error::kBadRequest, "missing field 'hosts'");
  std::vector<UnacceptedHost> chosen;
  for (auto h : whole_servers(st_, resolve_slots(params["hosts"]))) {
    const auto* q = unaccepted_of(h);
    if (!q) continue;
    if (std::find(chosen.begin(), chosen.end(), *q) == chosen.end()) chosen.push_back(*q);
  }
  if (chosen.empty()) {
    std::string names;
    for (const auto& item : params["hosts"])
      names += (names.empty() ? "" : ", ") + item.get<std::string>();
    // "not quarantined" stays at the front for the scripts that match the old message.
    fail(error::kRefused, "not quarantined (no unaccepted port GUID): " + names +
                              " (no tenant's slot there holds another port GUID than the one "
                              "recorded; `laasctl host list --state unaccepted` lists them)");
  }
  // One port GUID is one tenant's host: a GUID recorded in another slot stays there.
  for (const auto& q : chosen)
    for (const auto& t : st_.persisted.tenants)
      for (const auto& was : t.hosts)
        if (was.guid == q.seen_guid && !(was.leaf_guid == q.leaf_guid && was.port == q.port))
          fail(error::kRefused, "port " + guid_hex(q.seen_guid) + " is recorded as tenant '" +
                                    t.name + "''s host in another slot (" +
                                    guid_hex(was.leaf_guid) + " port " + std::to_string(was.port) +
                                    "); not accepted");
  json accepted = json::array();
  for (const auto& q : chosen)
    accepted.push_back({{"tenant", q.tenant},
                        {"leaf", st_.ids->switch_name(1, st_.view->tree.leaf_of_host(q.host))},
                        {"port", q.port},
                        {"guid", guid_hex(q.seen_guid)},
                        {"name", q.seen_name},
                        {"was", {{"guid", guid_hex(q.recorded_guid)}, {"name", q.recorded_name}}}});
  if (dry_run) return {{"accepted", accepted}, {"dry_run", true}};
  const auto saved = st_.persisted.tenants;
  const auto saved_unaccepted = st_.unaccepted;
  for (const auto& q : chosen)
    for (auto& t : st_.persisted.tenants)
      if (t.name == q.tenant)
        for (auto& was : t.hosts)
          if (was.leaf_guid == q.leaf_guid && was.port == q.port) {
            was.guid = q.seen_guid;
            was.name = q.seen_name;
          }
  st_.unaccepted.erase(std::remove_if(st_.unaccepted.begin(), st_.unaccepted.end(),
                                      [&](const UnacceptedHost& q) {
                                        return std::find(chosen.begin(), chosen.end(), q) !=
                                               chosen.end();
                                      }),
                       st_.unaccepted.end());
  ++st_.persisted.generation;
  bool partitions_changed = false;
  std::string not_durable;
  try {
    partitions_changed = lifecycle_.commit(&not_durable);
  } catch (const RequestError& e) {
    st_.persisted.tenants = saved;
    st_.unaccepted = saved_unaccepted;
    --st_.persisted.generation;
    fail(e.code.c_str(), "hosts not accepted: " + e.message);
  }
  st_.cluster->set_faults(links_.current_faults());  // the slots are up for their tenants again
  std::string what;
  for (const auto& a : accepted)
    what += (what.empty() ? "" : ", ") + a["guid"].get<std::string>() + " ('" +
            a["name"].get<std::string>() + "') in tenant '" + a["tenant"].get<std::string>() +
            "''s slot " + a["leaf"].get<std::string>() + " port " +
            std::to_string(a["port"].get<int>()) + " (was " + a["was"]["guid"].get<std::string>() +
            ")";
  st_.log(LogLevel::kInfo, "laas: uid " + std::to_string(caller.uid) + " accepted " + what);
  return lifecycle_.finish_change(lock, partitions_changed, not_durable,
                                  "the hosts ARE accepted (state.json records them)",
                                  {{"accepted", accepted}}, wait);
}

}  // namespace laas::service
