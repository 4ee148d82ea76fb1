// Change events (service/events.h): the difference between tenant states, numbered from the
// state's generation, kept in a bounded ring and long-polled without the service's lock; served
// by a standby following the shared state as by the master.
#include "service/events.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "demo_views.h"
#include "service/sm_role.h"
#include "service/tenant_service.h"
#include "temp_files.h"

using namespace laas::service;
using laas::test::demo_view;
using laas::test::TempDir;
using nlohmann::json;

namespace {

PersistedTenant persisted_tenant(const std::string& name, std::uint16_t pkey,
                                 std::vector<std::string> hosts) {
  PersistedTenant t;
  t.name = name;
  t.pkey = pkey;
  int port = 1;
  for (auto& h : hosts) t.hosts.push_back({0x100, port++, 0x200u + port, h});
  return t;
}

PersistedState at(std::uint64_t generation, std::vector<PersistedTenant> tenants = {}) {
  PersistedState s;
  s.generation = generation;
  s.tenants = std::move(tenants);
  return s;
}

EventLog::Now fixed_time() {
  return [] { return std::string("2026-11-28T06:00:00Z"); };
}

std::vector<std::string> types(const std::vector<json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e["type"]);
  return out;
}

}  // namespace

TEST(StateEvents, TenantsAddedRemovedAndChanged) {
  const auto before =
      at(1, {persisted_tenant("a", 0x8001, {"h1"}), persisted_tenant("b", 0x8002, {"h2"})});
  const auto after =
      at(2, {persisted_tenant("b", 0x8002, {"h2", "h3"}), persisted_tenant("c", 0x8003, {"h4"})});
  const auto events = state_events(before, after);
  EXPECT_EQ(types(events),
            (std::vector<std::string>{"tenant.removed", "tenant.added", "tenant.changed"}));
  EXPECT_EQ(events[0]["tenant"], "a");
  EXPECT_EQ(events[1]["tenant"], "c");
  EXPECT_EQ(events[1]["pkey"], "0x8003");
  EXPECT_EQ(events[1]["hosts"], json::array({"h4"}));
  EXPECT_EQ(events[2]["hosts"], json::array({"h2", "h3"}));
  EXPECT_TRUE(state_events(after, after).empty());
}

TEST(StateEvents, DrainsAndResumesOfHostsLinksAndSwitches) {
  PersistedState before = at(1), after = at(2);
  before.drained = {{0x11, "comp-1", "disk", "uid 0", "t"}};
  after.drained = {{0x12, "comp-2", "fan", "uid 0", "t"}};
  after.drained_links = {{0x21, 5, "leaf-1/5", "cable", "uid 0", "t"}};
  before.drained_switches = {{0x31, 0, "spine-1", "psu", "uid 0", "t"}};
  const auto events = state_events(before, after);
  EXPECT_EQ(types(events), (std::vector<std::string>{"host.drained", "host.resumed", "link.drained",
                                                     "switch.resumed"}));
  EXPECT_EQ(events[0]["host"], "comp-2");
  EXPECT_EQ(events[0]["reason"], "fan");
  EXPECT_EQ(events[1]["host"], "comp-1");
  EXPECT_EQ(events[2]["link"], "leaf-1/5");
  EXPECT_EQ(events[3]["switch"], "spine-1");
}

TEST(EventLog, NumbersEventsFromTheGenerationAndStartsSilently) {
  EventLog log(100, fixed_time());
  log.observe(at(7, {persisted_tenant("a", 0x8001, {"h1"})}));  // the start: no event
  EXPECT_EQ(log.position(), 7999u);
  auto b = log.read(std::nullopt, 0);
  EXPECT_TRUE(b.events.empty());
  EXPECT_FALSE(b.lost);
  EXPECT_EQ(b.next, 7999u);
  log.observe(at(8, {persisted_tenant("b", 0x8002, {"h2"})}));
  b = log.read(7999, 0);
  ASSERT_EQ(b.events.size(), 2u);
  EXPECT_EQ(b.events[0]["seq"], 8000u);
  EXPECT_EQ(b.events[1]["seq"], 8001u);
  EXPECT_EQ(b.events[1]["time"], "2026-11-28T06:00:00Z");
  EXPECT_EQ(b.next, 8999u);
  EXPECT_FALSE(b.lost);
  // From the middle: only the later event.
  b = log.read(8000, 0);
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(b.events[0]["type"], "tenant.added");
  // Omitted since: from now on, the past is not replayed.
  EXPECT_TRUE(log.read(std::nullopt, 0).events.empty());
  // A generation with no event moves the position on: seq stays strictly increasing.
  log.observe(at(9, {persisted_tenant("b", 0x8002, {"h2"})}));
  EXPECT_EQ(log.position(), 9999u);
  log.observe(at(10, {}));
  b = log.read(9999, 0);
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(b.events[0]["seq"], 10000u);
}

TEST(EventLog, ABoundedRingSaysLostOnceEventsWereDropped) {
  EventLog log(2, fixed_time());
  log.observe(at(1));
  const std::uint64_t start = log.position();
  log.observe(at(2, {persisted_tenant("a", 1, {"h1"})}));
  log.observe(at(3, {persisted_tenant("a", 1, {"h1"}), persisted_tenant("b", 2, {"h2"})}));
  EXPECT_FALSE(log.read(start, 0).lost);
  log.observe(at(4, {persisted_tenant("a", 1, {"h1"}), persisted_tenant("b", 2, {"h2"}),
                     persisted_tenant("c", 3, {"h3"})}));
  auto b = log.read(start, 0);  // a's event was dropped
  EXPECT_TRUE(b.lost);
  EXPECT_EQ(b.next, 4999u);
  EXPECT_FALSE(log.read(2999, 0).lost);  // after the dropped one: complete
}

TEST(EventLog, ARestartedServiceResumesAtTheSameGenerationAndLosesOlderPositions) {
  EventLog before(100, fixed_time());
  before.observe(at(3));
  before.observe(at(4, {persisted_tenant("a", 1, {"h1"})}));
  const std::uint64_t next = before.read(2999, 0).next;
  // The restart loads generation 4: a client that saw everything goes on, one behind is told.
  EventLog after(100, fixed_time());
  after.observe(at(4, {persisted_tenant("a", 1, {"h1"})}));
  EXPECT_FALSE(after.read(next, 0).lost);
  EXPECT_TRUE(after.read(2999, 0).lost);
  EXPECT_TRUE(after.read(next + 5000, 0).lost);  // another numbering (a state restored)
}

TEST(EventLog, ALongPollReturnsWithTheEventOrAtTheTimeoutOrWhenInterrupted) {
  EventLog log(100, fixed_time());
  log.observe(at(1));
  const auto t0 = std::chrono::steady_clock::now();
  auto b = log.read(std::nullopt, 20);
  EXPECT_TRUE(b.events.empty());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(20));
  auto waiting = std::async(std::launch::async, [&log] { return log.read(1999, 30000); });
  // The poll waits for the next event: observe until it is taken (no fixed sleep).
  log.observe(at(2, {persisted_tenant("a", 1, {"h1"})}));
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(types(waiting.get().events), std::vector<std::string>{"tenant.added"});
  auto stopped = std::async(std::launch::async, [&log] { return log.read(std::nullopt, 30000); });
  log.interrupt();
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(stopped.get().events.empty());
}

namespace {

using laas::test::kAdmin;
using laas::test::kReader;

json request(const std::string& method, json params) {
  return {{"v", 1}, {"id", "t"}, {"method", method}, {"params", std::move(params)}};
}

struct Service {
  explicit Service(const std::string& dir) {
    ServiceConfig c;
    c.state_dir = dir;
    c.default_wait_ms = 100;
    service = std::make_unique<TenantService>(c, [](LogLevel, const std::string&) {});
  }
  json call(const std::string& method, json params, Caller caller = kAdmin) {
    return service->handle(request(method, std::move(params)), caller);
  }
  std::unique_ptr<TenantService> service;
};

}  // namespace

TEST(EventsMethod, AReaderFollowsTenantsAndDrainsAddedThroughTheSocket) {
  TempDir dir;
  Service s(dir.path);
  s.service->on_topology(demo_view());
  auto r = s.call("events", json::object(), kReader);
  ASSERT_TRUE(r["ok"]) << r;
  const std::uint64_t since = r["result"]["next"];
  EXPECT_FALSE(r["result"]["lost"]);
  ASSERT_TRUE(s.call("tenant.add", {{"name", "bank"}, {"hosts", 4}, {"wait", false}})["ok"]);
  ASSERT_TRUE(s.call("host.drain", {{"hosts", {"comp-32"}}, {"reason", "disk"}})["ok"]);
  r = s.call("events", {{"since", since}}, kReader);
  ASSERT_TRUE(r["ok"]) << r;
  const auto& events = r["result"]["events"];
  ASSERT_EQ(events.size(), 2u) << r;
  EXPECT_EQ(events[0]["type"], "tenant.added");
  EXPECT_EQ(events[0]["tenant"], "bank");
  EXPECT_EQ(events[0]["hosts"].size(), 4u);
  EXPECT_EQ(events[0]["pkey"],
            s.call("tenant.get", {{"name", "bank"}})["result"]["pkey"].get<std::string>());
  EXPECT_EQ(events[1]["type"], "host.drained");
  EXPECT_EQ(events[1]["host"], "comp-32");
  EXPECT_GT(events[1]["seq"].get<std::uint64_t>(), events[0]["seq"].get<std::uint64_t>());
  const std::uint64_t next = r["result"]["next"];
  ASSERT_TRUE(s.call("tenant.remove", {{"name", "bank"}, {"wait", false}})["ok"]);
  r = s.call("events", {{"since", next}});
  ASSERT_EQ(r["result"]["events"].size(), 1u) << r;
  EXPECT_EQ(r["result"]["events"][0]["type"], "tenant.removed");
}

TEST(EventsMethod, BadParametersAreRefusedNamingTheField) {
  TempDir dir;
  Service s(dir.path);
  for (const auto& [params, field] :
       std::vector<std::pair<json, std::string>>{{{{"since", -1}}, "since"},
                                                 {{{"since", "5"}}, "since"},
                                                 {{{"wait_ms", 30001}}, "wait_ms"},
                                                 {{{"wait_ms", -1}}, "wait_ms"},
                                                 {{{"wait_ms", 1.5}}, "wait_ms"}}) {
    const auto r = s.call("events", params);
    ASSERT_FALSE(r["ok"]) << params;
    EXPECT_EQ(r["error"]["code"], "bad_request");
    EXPECT_NE(r["error"]["message"].get<std::string>().find(field), std::string::npos) << r;
  }
}

// A long-poll holds no lock of the service: a change made while it waits is made at once,
// and ends the poll.
TEST(EventsMethod, ALongPollDoesNotBlockChanges) {
  TempDir dir;
  Service s(dir.path);
  s.service->on_topology(demo_view());
  const std::uint64_t since = s.call("events", json::object())["result"]["next"];
  auto poll = std::async(std::launch::async, [&s, since] {
    return s.call("events", {{"since", since}, {"wait_ms", 30000}}, kReader);
  });
  auto change = std::async(std::launch::async, [&s] {
    return s.call("tenant.add", {{"name", "bank"}, {"hosts", 2}, {"wait", false}});
  });
  ASSERT_EQ(change.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(change.get()["ok"]);
  EXPECT_TRUE(s.call("status", json::object())["ok"]);
  ASSERT_EQ(poll.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const auto r = poll.get();
  ASSERT_EQ(r["result"]["events"].size(), 1u) << r;
  // Shutting down ends a poll at once.
  auto last = std::async(std::launch::async, [&s] {
    return s.call("events", {{"wait_ms", 30000}}, kReader);
  });
  s.service->interrupt_waits();
  ASSERT_EQ(last.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(last.get()["ok"]);
}

// A standby follows the shared state: the master's changes are its events too, numbered alike.
TEST(EventsMethod, AStandbyServesTheMastersChangesAsEvents) {
  TempDir dir;
  Service master(dir.path), standby(dir.path);
  std::atomic<SmState> standby_state{SmState::kStandby};
  standby.service->set_role_provider([&standby_state] {
    SmRole r;
    r.state = standby_state.load();
    return r;
  });
  master.service->on_topology(demo_view());
  const std::uint64_t since = standby.call("events", json::object())["result"]["next"];
  ASSERT_TRUE(master.call("tenant.add", {{"name", "t1"}, {"hosts", 2}, {"wait", false}})["ok"]);
  standby.service->follow_shared_state();
  const auto on_standby = standby.call("events", {{"since", since}}, kReader);
  const auto on_master = master.call("events", {{"since", since}}, kReader);
  ASSERT_EQ(on_standby["result"]["events"].size(), 1u) << on_standby;
  EXPECT_EQ(on_standby["result"]["events"][0]["tenant"], "t1");
  EXPECT_EQ(on_standby["result"]["events"][0]["seq"], on_master["result"]["events"][0]["seq"]);
  EXPECT_EQ(on_standby["result"]["next"], on_master["result"]["next"]);
}
