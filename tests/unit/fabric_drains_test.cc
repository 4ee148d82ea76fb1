// Links and switches drained for maintenance and resumed. A drained link is never placed; a
// tenant routing over it is moved to a free column (its links change, it stays routed, not
// degraded) and the routing avoids the link; a tenant that cannot be moved keeps it, the link
// "draining", until it leaves. Drains survive a restart; resume puts the tenants back on their
// links as placed. A drained switch drains all its links, a drained leaf its hosts.
#include <gtest/gtest.h>

#include <algorithm>

#include "demo_views.h"
#include "service/tenant_service.h"
#include "temp_files.h"
#include "topology/embedding.h"
#include "topology/layout.h"

// Named one by one: the fixture below shares its name with the service's
// laas::service::FabricDrains.
using laas::service::Caller;
using laas::service::LogLevel;
using laas::service::parse_state;
using laas::service::PersistedState;
using laas::service::serialize_state;
using laas::service::ServiceConfig;
using laas::service::TenantService;
using laas::service::TopologyView;
using nlohmann::json;

namespace {

using laas::test::kAdmin;
using laas::test::kReader;

// The demo tree (8 leaves of 4 hosts, 4 spines) with a recorded layout, so that switches can
// be named by their recorded names; comp-1 a management host when asked.
std::shared_ptr<const TopologyView> view(bool with_layout = true, bool management = false) {
  auto tree = laas::topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  laas::topology::Layout layout;
  if (with_layout) layout = laas::topology::layout_of(tree, emb, fabric);
  std::vector<laas::topology::HostId> mgmt;
  if (management) mgmt.push_back(0);
  return std::make_shared<TopologyView>(tree, fabric, emb, mgmt, layout);
}

class FabricDrains : public ::testing::Test {
 protected:
  void SetUp() override { service = make(); }
  std::unique_ptr<TenantService> make(bool with_layout = true, bool management = false) {
    ServiceConfig c;
    c.state_dir = dir.path;
    c.default_wait_ms = 100;
    auto s = std::make_unique<TenantService>(
        c, [this](LogLevel, const std::string& m) { logs.push_back(m); });
    s->on_topology(view(with_layout, management));
    return s;
  }
  json call(const std::string& method, json params = json::object(), Caller c = kAdmin) {
    params["wait"] = false;
    return service->handle({{"v", 1}, {"id", "t"}, {"method", method}, {"params", params}}, c);
  }
  json result(const std::string& method, json params = json::object()) {
    auto r = call(method, params);
    EXPECT_TRUE(r["ok"]) << method << " " << params.dump() << ": " << r.dump();
    return r["result"];
  }
  // "GUID:PORT" of a tenant link's lower or upper end.
  static std::string end(const json& link, const char* which) {
    return link[which]["guid"].get<std::string>() + ":" +
           std::to_string(link[which]["port"].get<int>());
  }
  static std::vector<std::string> link_names(const json& tenant) {
    std::vector<std::string> out;
    for (const auto& l : tenant["links"]) out.push_back(end(l, "switch"));
    return out;
  }
  json link_listed(const std::string& lower_end) {
    for (const auto& l : result("link.list"))
      if (end(l, "switch") == lower_end) return l;
    ADD_FAILURE() << "no link " << lower_end;
    return json::object();
  }
  std::vector<laas::topology::LinkId> isolated() { return service->snapshot().isolated_links; }

  laas::test::TempDir dir;
  std::vector<std::string> logs;
  std::unique_ptr<TenantService> service;
};

}  // namespace

TEST_F(FabricDrains, ADrainedLinkMovesItsTenantToAFreeColumnAndResumeMovesItBack) {
  // Two hosts on each of two leaves: two of the four columns each.
  ASSERT_TRUE(call("tenant.add",
                   {{"name", "a"}, {"host_list", {"comp-1", "comp-2", "comp-5", "comp-6"}}})["ok"]);
  const json before = result("tenant.get", {{"name", "a"}});
  ASSERT_EQ(before["links"].size(), 4u) << before.dump();
  const json link = before["links"][0];
  // Named by its upper end (the spine's down-port): the same link.
  const auto r = result("link.drain", {{"link", end(link, "peer")}, {"reason", "optic swap"}});
  EXPECT_EQ(r["link"]["state"], "drained") << r.dump();
  EXPECT_EQ(r["drained"].size(), 1u);
  const json after = result("tenant.get", {{"name", "a"}});
  EXPECT_EQ(after["state"], "routed") << after.dump();
  const auto now = link_names(after);
  EXPECT_EQ(std::count(now.begin(), now.end(), end(link, "switch")), 0) << after.dump();
  EXPECT_EQ(after["health"]["repairs"].size(), 1u);
  EXPECT_EQ(after["links"].size(), 4u);
  // The routing avoids it; the status and the link list say so; no new tenant gets it.
  EXPECT_EQ(isolated().size(), 1u);
  const json status = result("status");
  EXPECT_EQ(status["maintenance"]["links"]["drained"], 1) << status.dump();
  EXPECT_EQ(status["faulty_links"], 0);
  EXPECT_EQ(status["tenants_degraded"], 0);
  EXPECT_EQ(result("link.list", {{"state", "drained"}}).size(), 1u);
  const json listed = link_listed(end(link, "switch"));
  EXPECT_EQ(listed["drain"]["reason"], "optic swap");
  EXPECT_EQ(listed["tenant"], "a");  // held idle, so that the resume can put it back
  EXPECT_TRUE(listed.value("idle", false));
  const std::string metrics = result("metrics")["text"];
  EXPECT_NE(metrics.find("laas_links{level=\"1\",state=\"drained\"} 1"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("laas_changes_total{op=\"link_drain\",result=\"ok\"} 1"),
            std::string::npos);
  for (int i = 0; i < 6; ++i) call("tenant.add", {{"name", "t" + std::to_string(i)}, {"hosts", 3}});
  for (const auto& t : result("tenant.list")) {
    const auto names = link_names(result("tenant.get", {{"name", t["name"]}}));
    EXPECT_EQ(std::count(names.begin(), names.end(), end(link, "switch")), 0) << t.dump();
  }
  for (int i = 0; i < 6; ++i) call("tenant.remove", {{"name", "t" + std::to_string(i)}});
  // A restart: still drained, the tenant still off it.
  service = make();
  EXPECT_EQ(link_listed(end(link, "switch"))["state"], "drained");
  EXPECT_EQ(link_names(result("tenant.get", {{"name", "a"}})), now);
  EXPECT_EQ(isolated().size(), 1u);
  // Resume: the tenant is back on its links as placed.
  const auto back = result("link.resume", {{"link", end(link, "switch")}});
  EXPECT_EQ(back["resumed"].size(), 1u);
  const json resumed = result("tenant.get", {{"name", "a"}});
  EXPECT_EQ(link_names(resumed), link_names(before));
  EXPECT_EQ(resumed["health"]["repairs"].size(), 0u);
  EXPECT_EQ(link_listed(end(link, "switch"))["state"], "allocated");
  EXPECT_TRUE(isolated().empty());
  EXPECT_EQ(result("status")["maintenance"]["links"]["drained"], 0);
}

TEST_F(FabricDrains, ALinkATenantCannotLeaveIsDrainingUntilTheTenantGoes) {
  // 8 hosts: two whole leaves, every column of both.
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 8}})["ok"]);
  const json link = result("tenant.get", {{"name", "a"}})["links"][0];
  const auto r = result("link.drain", {{"link", end(link, "switch")}, {"reason", "optic swap"}});
  EXPECT_EQ(r["link"]["state"], "draining") << r.dump();
  // Not degraded (the link works), still routed over it, not isolated.
  const json a = result("tenant.get", {{"name", "a"}});
  EXPECT_EQ(a["state"], "routed") << a.dump();
  const auto names = link_names(a);
  EXPECT_EQ(std::count(names.begin(), names.end(), end(link, "switch")), 1);
  EXPECT_TRUE(a["links"][0].value("drained", false)) << a.dump();
  EXPECT_FALSE(a["links"][0].value("faulty", false));
  EXPECT_TRUE(isolated().empty());
  EXPECT_EQ(result("status")["maintenance"]["links"]["draining"], 1);
  ASSERT_TRUE(call("tenant.remove", {{"name", "a"}})["ok"]);
  EXPECT_EQ(link_listed(end(link, "switch"))["state"], "drained");
  EXPECT_EQ(isolated().size(), 1u);
}

TEST_F(FabricDrains, ADrainedSpineTakesAllItsLinksOutOfService) {
  ASSERT_TRUE(call("tenant.add",
                   {{"name", "a"}, {"host_list", {"comp-1", "comp-2", "comp-5", "comp-6"}}})["ok"]);
  const json link = result("tenant.get", {{"name", "a"}})["links"][0];
  const std::string spine = link["peer"]["guid"];
  const auto r = result("switch.drain", {{"switch", spine}, {"reason", "PSU replacement"}});
  EXPECT_EQ(r["switch"]["state"], "drained") << r.dump();
  EXPECT_EQ(r["switch"]["level"], 2);
  // Every leaf's link to it: 8 drained, the tenant on the other three columns.
  EXPECT_EQ(result("link.list", {{"state", "drained"}}).size(), 8u);
  EXPECT_EQ(isolated().size(), 8u);
  const json a = result("tenant.get", {{"name", "a"}});
  EXPECT_EQ(a["state"], "routed");
  for (const auto& l : a["links"]) EXPECT_NE(l["peer"]["guid"], spine) << a.dump();
  EXPECT_EQ(result("switch.list", {{"state", "drained"}}).size(), 1u);
  const std::string metrics = result("metrics")["text"];
  EXPECT_NE(metrics.find("laas_switches_drained{state=\"drained\"} 1"), std::string::npos)
      << metrics;
  // A link of it is resumed with the switch only.
  const auto one = call("link.resume", {{"link", end(link, "switch")}});
  EXPECT_EQ(one["error"]["code"], "bad_request");
  EXPECT_NE(one["error"]["message"].get<std::string>().find("switch resume"), std::string::npos);
  service = make();  // kept across a restart
  EXPECT_EQ(result("switch.list", {{"state", "drained"}}).size(), 1u);
  ASSERT_TRUE(call("switch.resume", {{"switch", spine}})["ok"]);
  EXPECT_TRUE(isolated().empty());
  EXPECT_EQ(result("switch.list", {{"state", "in_service"}}).size(), 12u);
}

TEST_F(FabricDrains, ADrainedLeafKeepsItsHostsOutOfPlacements) {
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 3}})["ok"]);
  const json a = result("tenant.get", {{"name", "a"}});
  const std::string leaf = a["hosts"][0]["leaf"]["guid"];
  // By its recorded name.
  std::string name;
  for (const auto& s : result("switch.list"))
    if (s["guid"] == leaf) name = s["name"];
  const auto r = result("switch.drain", {{"switch", name}, {"reason", "firmware"}});
  EXPECT_EQ(r["switch"]["state"], "draining") << r.dump();  // tenant a is on it
  const std::string host = a["hosts"][0]["name"];
  EXPECT_EQ(result("host.get", {{"name", host}})["state"], "draining");
  // Its free host: drained, never placed, resumed with the switch only.
  std::string free_host;
  for (const auto& h : result("host.list"))
    if (h["leaf"] == name && !h.contains("tenant")) free_host = h["name"];
  ASSERT_FALSE(free_host.empty());
  EXPECT_EQ(result("host.get", {{"name", free_host}})["state"], "drained");
  EXPECT_EQ(result("host.get", {{"name", free_host}})["drain"]["switch"], name);
  const auto named = call("tenant.add", {{"name", "n"}, {"host_list", {free_host}}});
  EXPECT_EQ(named["error"]["code"], "refused") << named.dump();
  EXPECT_EQ(call("host.resume", {{"hosts", {free_host}}})["error"]["code"], "bad_request");
  EXPECT_FALSE(call("tenant.add", {{"name", "big"}, {"hosts", 29}})["ok"]);
  ASSERT_TRUE(call("tenant.remove", {{"name", "a"}})["ok"]);
  EXPECT_EQ(result("switch.list", {{"state", "drained"}}).size(), 1u);
  ASSERT_TRUE(call("switch.resume", {{"switch", leaf}})["ok"]);
  EXPECT_EQ(result("host.get", {{"name", free_host}})["state"], "free");
  EXPECT_TRUE(call("tenant.add", {{"name", "big"}, {"hosts", 29}})["ok"]);
}

TEST_F(FabricDrains, BadRequestsChangeNothing) {
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 6}})["ok"]);
  const json link = result("tenant.get", {{"name", "a"}})["links"][0];
  const std::string leaf = link["switch"]["guid"];
  const std::string before = laas::test::slurp(dir.path + "/state.json");
  auto code = [&](const std::string& method, json params, Caller c = kAdmin) {
    const auto r = call(method, params, c);
    return r["ok"].get<bool>() ? std::string("ok") : r["error"]["code"].get<std::string>();
  };
  EXPECT_EQ(code("link.drain", {{"link", end(link, "switch")}}), "bad_request");  // no reason
  EXPECT_EQ(code("link.drain", {{"link", end(link, "switch")}, {"reason", " "}}), "bad_request");
  EXPECT_EQ(code("link.drain", {{"link", leaf}, {"reason", "x"}}), "bad_request");  // no port
  EXPECT_EQ(code("link.drain", {{"link", leaf + ":x"}, {"reason", "x"}}), "bad_request");
  // Port 5 of a leaf is a host's (up-links are ports 1-4 in the model fabric).
  EXPECT_EQ(code("link.drain", {{"link", leaf + ":5"}, {"reason", "x"}}), "bad_request");
  EXPECT_EQ(code("link.drain", {{"link", "0x1234:1"}, {"reason", "x"}}), "bad_request");
  EXPECT_EQ(code("link.drain", {{"link", end(link, "switch")}, {"reason", "x"}}, kReader),
            "permission_denied");
  EXPECT_EQ(code("link.resume", {{"link", end(link, "switch")}}), "bad_request");  // not drained
  EXPECT_EQ(code("switch.drain", {{"switch", "nope"}, {"reason", "x"}}), "bad_request");
  EXPECT_EQ(code("switch.resume", {{"switch", leaf}}), "bad_request");
  EXPECT_EQ(code("link.list", {{"state", "broken"}}), "bad_request");
  EXPECT_EQ(laas::test::slurp(dir.path + "/state.json"), before);
  EXPECT_TRUE(isolated().empty());
}

TEST_F(FabricDrains, NamesAreRecordedOnesAndAManagementLeafIsNotDrained) {
  // Without a recorded layout a switch is named by node GUID only.
  service = make(false, true);
  std::string leaf_name, leaf_guid;
  for (const auto& h : result("host.list"))
    if (h["state"] == "management") leaf_name = h["leaf"];
  for (const auto& s : result("switch.list"))
    if (s["name"] == leaf_name) leaf_guid = s["guid"];
  ASSERT_FALSE(leaf_guid.empty());
  const auto by_name = call("switch.drain", {{"switch", leaf_name}, {"reason", "x"}});
  EXPECT_EQ(by_name["error"]["code"], "bad_request");
  EXPECT_NE(by_name["error"]["message"].get<std::string>().find("no layout is recorded"),
            std::string::npos)
      << by_name.dump();
  const auto mgmt = call("switch.drain", {{"switch", leaf_guid}, {"reason", "x"}});
  EXPECT_EQ(mgmt["error"]["code"], "refused") << mgmt.dump();
  EXPECT_NE(mgmt["error"]["message"].get<std::string>().find("management host"), std::string::npos);
}

TEST_F(FabricDrains, AStateFileDrainingALinkTwiceIsNotTrusted) {
  PersistedState s;
  s.topology = "xgft(2;4,8;1,4)";
  s.drained_links.push_back({0x10, 5, "leaf port 5", "optics", "uid 0", "2026-01-01T00:00:00Z"});
  s.drained_switches.push_back({0x20, 0, "spine", "PSU", "uid 0", "2026-01-01T00:00:00Z"});
  const auto text = serialize_state(s);
  EXPECT_EQ(parse_state(text, "state.json"), s);
  auto doc = json::parse(text);
  doc["drained_links"].push_back(doc["drained_links"][0]);
  try {
    parse_state(doc.dump(), "state.json");
    ADD_FAILURE() << "a link drained twice was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("drained twice"), std::string::npos) << e.what();
  }
  doc = json::parse(text);
  doc["drained_links"][0]["port"] = 0;
  EXPECT_THROW(parse_state(doc.dump(), "state.json"), std::runtime_error);
}
