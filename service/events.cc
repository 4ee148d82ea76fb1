#include "service/events.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "service/request_error.h"
#include "service/request_params.h"

namespace laas::service {

using nlohmann::json;

namespace {

// At most this many events in one answer: the rest come with the next (`next` says where).
constexpr std::size_t kMaxEventsPerAnswer = 1000;

std::string pkey_text(std::uint16_t pkey) {
  if (!pkey) return "";
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%04x", pkey);
  return hex;
}

// A host as the reader knows it: its name, or its port GUID when it was never seen.
std::string host_text(const PersistedHost& h) { return h.name.empty() ? guid_hex(h.guid) : h.name; }

json tenant_event(const char* type, const PersistedTenant& t) {
  json hosts = json::array();
  for (const auto& h : t.hosts) hosts.push_back(host_text(h));
  return {{"type", type}, {"tenant", t.name}, {"hosts", hosts}, {"pkey", pkey_text(t.pkey)}};
}

void tenant_events(const PersistedState& before, const PersistedState& after,
                   std::vector<json>& out) {
  std::map<std::string, const PersistedTenant*> was, now;
  for (const auto& t : before.tenants) was[t.name] = &t;
  for (const auto& t : after.tenants) now[t.name] = &t;
  for (const auto& [name, t] : was)
    if (!now.count(name)) out.push_back(tenant_event("tenant.removed", *t));
  for (const auto& [name, t] : now)
    if (!was.count(name)) out.push_back(tenant_event("tenant.added", *t));
  // Its hosts or P_Key changed (a host accepted with a new GUID): what a scheduler must follow.
  for (const auto& [name, t] : now) {
    const auto it = was.find(name);
    if (it != was.end() && (it->second->hosts != t->hosts || it->second->pkey != t->pkey))
      out.push_back(tenant_event("tenant.changed", *t));
  }
}

void host_drain_events(const PersistedState& before, const PersistedState& after,
                       std::vector<json>& out) {
  auto find = [](const std::vector<PersistedDrain>& list, topology::Guid guid) {
    return std::find_if(list.begin(), list.end(),
                        [guid](const PersistedDrain& d) { return d.guid == guid; }) != list.end();
  };
  auto event = [](const char* type, const PersistedDrain& d) {
    json e = {{"type", type},
              {"host", d.name.empty() ? guid_hex(d.guid) : d.name},
              {"guid", guid_hex(d.guid)}};
    if (std::string(type) == "host.drained") e["reason"] = d.reason;
    return e;
  };
  for (const auto& d : after.drained)
    if (!find(before.drained, d.guid)) out.push_back(event("host.drained", d));
  for (const auto& d : before.drained)
    if (!find(after.drained, d.guid)) out.push_back(event("host.resumed", d));
}

// Links (`what` "link") and switches ("switch"): named as the service last saw them.
void fabric_drain_events(const char* what, const std::vector<PersistedFabricDrain>& before,
                         const std::vector<PersistedFabricDrain>& after, std::vector<json>& out) {
  auto find = [](const std::vector<PersistedFabricDrain>& list, const PersistedFabricDrain& d) {
    return std::find_if(list.begin(), list.end(), [&d](const PersistedFabricDrain& o) {
             return o.guid == d.guid && o.port == d.port;
           }) != list.end();
  };
  auto event = [what](const char* verb, const PersistedFabricDrain& d) {
    std::string name = d.name;
    if (name.empty())
      name = guid_hex(d.guid) + (d.port ? "/" + std::to_string(d.port) : std::string());
    json e = {{"type", std::string(what) + "." + verb}, {what, name}};
    if (std::string(verb) == "drained") e["reason"] = d.reason;
    return e;
  };
  for (const auto& d : after)
    if (!find(before, d)) out.push_back(event("drained", d));
  for (const auto& d : before)
    if (!find(after, d)) out.push_back(event("resumed", d));
}

}  // namespace

std::vector<json> state_events(const PersistedState& before, const PersistedState& after) {
  std::vector<json> out;
  tenant_events(before, after, out);
  host_drain_events(before, after, out);
  fabric_drain_events("link", before.drained_links, after.drained_links, out);
  fabric_drain_events("switch", before.drained_switches, after.drained_switches, out);
  return out;
}

EventLog::EventLog(std::size_t capacity, Now now)
    : capacity_(std::max<std::size_t>(capacity, 1)), now_(now ? std::move(now) : Now(utc_now)) {}

void EventLog::observe(const PersistedState& state) {
  const std::uint64_t generation_start = state.generation * kEventsPerGeneration;
  const std::uint64_t generation_end = generation_start + kEventsPerGeneration - 1;
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_) {
    started_ = true;
    last_ = state;
    position_ = floor_ = generation_end;
    return;
  }
  const auto events = state_events(last_, state);
  last_ = state;
  const std::string time = events.empty() ? std::string() : now_();
  for (const auto& body : events) {
    const std::uint64_t seq = std::max(generation_start, position_ + 1);
    json e = body;
    e["seq"] = seq;
    e["time"] = time;
    ring_.push_back({seq, std::move(e)});
    position_ = seq;
    if (ring_.size() > capacity_) {
      floor_ = ring_.front().seq;
      ring_.pop_front();
    }
  }
  position_ = std::max(position_, generation_end);
  if (!events.empty()) cv_.notify_all();
}

bool EventLog::has_after(std::uint64_t since) const {
  return !ring_.empty() && ring_.back().seq > since;
}

EventBatch EventLog::collect(std::uint64_t since) const {
  EventBatch b;
  b.lost = since < floor_ || since > position_;
  b.next = position_;
  auto it = std::upper_bound(ring_.begin(), ring_.end(), since,
                             [](std::uint64_t s, const Event& e) { return s < e.seq; });
  for (; it != ring_.end(); ++it) {
    if (b.events.size() == kMaxEventsPerAnswer) {
      b.next = b.events.back()["seq"].get<std::uint64_t>();  // the rest with the next answer
      break;
    }
    b.events.push_back(it->body);
  }
  return b;
}

EventBatch EventLog::read(std::optional<std::uint64_t> since, int wait_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  const std::uint64_t from = since ? *since : position_;
  EventBatch b = collect(from);
  if (b.lost || !b.events.empty() || wait_ms <= 0 || interrupted_) return b;
  cv_.wait_for(lock, std::chrono::milliseconds(wait_ms),
               [&] { return interrupted_ || has_after(from); });
  return collect(from);
}

void EventLog::interrupt() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    interrupted_ = true;
  }
  cv_.notify_all();
}

json answer_events(EventLog& log, const json& params) {
  std::optional<std::uint64_t> since;
  if (params.contains("since")) {
    const auto& v = params["since"];
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<long long>() >= 0))
      fail(error::kBadRequest, "field 'since' must be a non-negative integer (a 'next' of events)");
    since = v.get<std::uint64_t>();
  }
  int wait = 0;
  if (params.contains("wait_ms")) {
    wait = get_int(params, "wait_ms");
    if (wait < 0 || wait > kMaxEventWaitMs)
      fail(error::kBadRequest,
           "field 'wait_ms' is out of range (0-" + std::to_string(kMaxEventWaitMs) + ")");
  }
  const EventBatch b = log.read(since, wait);
  return {{"events", b.events}, {"next", b.next}, {"lost", b.lost}};
}

std::uint64_t EventLog::position() const {
  std::lock_guard<std::mutex> lock(mu_);
  return position_;
}

}  // namespace laas::service
