// Issue 23: the health of a tenant's links from OpenSM's performance manager. Readings add up
// per switch port; a link whose errors in one reading reach the threshold is isolated as a
// fault (its tenant repaired onto a free column, routes around it) until it stays clean.
#include "service/link_health.h"

#include <gtest/gtest.h>

#include "service/tenant_service.h"
#include "temp_files.h"
#include "topology/embedding.h"

using namespace laas::service;
using nlohmann::json;

TEST(LinkHealth, IsolatesOverTheThresholdAndReturnsWhenClean) {
  LinkHealth h(10, 2);
  const PortKey p{0x42, 3};
  PortCounters noisy;
  noisy.symbol_errors = 9;
  noisy.xmit_wait = 1000;  // congestion does not count
  EXPECT_FALSE(h.add(p, noisy));
  EXPECT_FALSE(h.isolated(p));
  PortCounters bad;
  bad.symbol_errors = 7;
  bad.link_downed = 3;
  EXPECT_TRUE(h.add(p, bad));
  EXPECT_TRUE(h.isolated(p));
  EXPECT_EQ(h.totals().at(p).symbol_errors, 16u);
  EXPECT_FALSE(h.add(p, PortCounters{}));  // one clean reading of two
  EXPECT_FALSE(h.add(p, bad));             // errors again: the count starts over
  EXPECT_FALSE(h.add(p, PortCounters{}));
  EXPECT_TRUE(h.add(p, PortCounters{}));
  EXPECT_FALSE(h.isolated(p));
  LinkHealth off;  // threshold 0: counted, never isolated
  EXPECT_FALSE(off.add(p, bad));
  EXPECT_FALSE(off.isolated(p));
}

TEST(LinkHealth, AServiceRepairsATenantAroundAnIsolatedLink) {
  laas::test::TempDir dir;
  ServiceConfig c;
  c.state_dir = dir.path;
  c.default_wait_ms = 100;
  c.link_error_threshold = 5;
  c.link_error_clean_readings = 1;
  std::vector<std::string> logs;
  TenantService s(c, [&](LogLevel, const std::string& m) { logs.push_back(m); });
  auto tree = laas::topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  s.on_topology(std::make_shared<TopologyView>(tree, fabric, emb));
  auto call = [&](const std::string& method, json params) {
    params["wait"] = false;
    return s.handle({{"v", 1}, {"method", method}, {"params", params}}, {0, true});
  };
  // 2 + 2 hosts on two leaves over 2 of their 4 up-links: free columns to repair onto.
  ASSERT_TRUE(call("tenant.add",
                   {{"name", "a"}, {"host_list", {"comp-1", "comp-2", "comp-5", "comp-6"}}})["ok"]);
  const json link = call("tenant.get", {{"name", "a"}})["result"]["links"][0];
  const auto guid = parse_guid(link["switch"]["guid"].get<std::string>());
  const int port = link["switch"]["port"];
  PortCounters bad;
  bad.symbol_errors = 50;
  s.on_port_counters(guid, port, bad);
  auto a = call("tenant.get", {{"name", "a"}})["result"];
  EXPECT_EQ(a["link_health"]["errors"], 50) << a.dump();
  EXPECT_EQ(a["link_health"]["ports_with_errors"][0]["isolated"], true);
  ASSERT_EQ(s.snapshot().isolated_links.size(), 1u);
  EXPECT_EQ(call("status", json::object())["result"]["repairs"], 1) << "not repaired";
  for (const auto& l : a["links"])
    EXPECT_FALSE(l["switch"]["guid"] == link["switch"]["guid"] && l["switch"]["port"] == port)
        << "the tenant still routes over the isolated link";
  // Clean again: back in service, the repair undone.
  s.on_port_counters(guid, port, PortCounters{});
  EXPECT_TRUE(s.snapshot().isolated_links.empty());
  EXPECT_EQ(call("status", json::object())["result"]["repairs"], 0);
  const std::string text = call("metrics", json::object())["result"]["text"];
  EXPECT_NE(text.find("laas_tenant_port_errors_total{tenant=\"a\"} 50"), std::string::npos) << text;
}
