// The health of a tenant's links from OpenSM's performance manager. Readings add up
// per switch port; a link whose errors reach the threshold in K readings in a row is isolated
// as a fault (its tenant repaired onto a free column, routes around it) until it stays clean.
// Counters that went back (a reset) count no errors, and sums saturate: clearing a switch's
// counters must not isolate anyone's links.
#include "service/link_health.h"

#include <gtest/gtest.h>

#include "service/tenant_service.h"
#include "temp_files.h"
#include "topology/embedding.h"

using namespace laas::service;
using nlohmann::json;

TEST(LinkHealth, IsolatesOverTheThresholdAndReturnsWhenClean) {
  LinkHealth h(10, 2, 1);
  const PortKey p{0x42, 3};
  PortCounters noisy;
  noisy.symbol_errors = 9;
  noisy.xmit_wait = 1000;  // congestion does not count
  EXPECT_FALSE(h.add(p, noisy).changed);
  EXPECT_FALSE(h.isolated(p));
  PortCounters bad;
  bad.symbol_errors = 7;
  bad.link_downed = 3;
  const auto r = h.add(p, bad);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.errors, 10u);
  EXPECT_FALSE(r.reset);
  EXPECT_TRUE(h.isolated(p));
  EXPECT_EQ(h.totals().at(p).symbol_errors, 16u);
  EXPECT_FALSE(h.add(p, PortCounters{}).changed);  // one clean reading of two
  EXPECT_FALSE(h.add(p, bad).changed);             // errors again: the count starts over
  EXPECT_FALSE(h.add(p, PortCounters{}).changed);
  EXPECT_TRUE(h.add(p, PortCounters{}).changed);
  EXPECT_FALSE(h.isolated(p));
  LinkHealth off;  // threshold 0: counted, never isolated
  EXPECT_FALSE(off.add(p, bad).changed);
  EXPECT_FALSE(off.add(p, bad).changed);
  EXPECT_FALSE(off.isolated(p));
}

// perfmgr reports differences: a counter that went back from 5 to 0 arrives as 2^64 - 5.
TEST(LinkHealth, AResetCountsNoErrors) {
  LinkHealth h(10, 3, 1);
  const PortKey p{0x42, 3};
  PortCounters reset;
  reset.symbol_errors = ~std::uint64_t{0} - 4;
  reset.link_downed = ~std::uint64_t{0} - 4;
  reset.xmit_wait = ~std::uint64_t{0} - 4;
  for (int i = 0; i < 5; ++i) {
    const auto r = h.add(p, reset);
    EXPECT_TRUE(r.reset);
    EXPECT_EQ(r.errors, 0u);
    EXPECT_FALSE(r.changed);
  }
  EXPECT_FALSE(h.isolated(p));
  EXPECT_EQ(h.totals().at(p).errors(), 0u);
  EXPECT_EQ(h.totals().at(p).xmit_wait, 0u);
  EXPECT_EQ(h.resets(p), 5u);
  EXPECT_EQ(h.resets(), 5u);
  EXPECT_EQ(h.resets({0x42, 4}), 0u);
  // A difference just over a field's width is a reset; one at its width is a reading. The
  // other fields of a reading with a reset still count.
  PortCounters edge;
  edge.link_downed = 256;                 // 8 bits: reset
  edge.local_link_integrity_errors = 15;  // 4 bits: at most 15
  edge.excessive_buffer_overruns = 16;    // 4 bits: reset
  edge.xmit_wait = 0xFFFFFFFFull;         // 32 bits: a reading (congestion)
  const auto r = h.add(p, edge);
  EXPECT_TRUE(r.reset);
  EXPECT_EQ(r.errors, 15u);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(h.isolated(p));
  EXPECT_EQ(h.totals().at(p).xmit_wait, 0xFFFFFFFFull);
  EXPECT_EQ(h.totals().at(p).link_downed, 0u);
}

TEST(LinkHealth, SumsSaturate) {
  constexpr std::uint64_t kMax = ~std::uint64_t{0};
  PortCounters c;
  c.symbol_errors = kMax - 1;
  c.rcv_errors = 5;
  EXPECT_EQ(c.errors(), kMax);
  PortCounters d;
  d.symbol_errors = 10;
  d.xmit_wait = kMax;
  c.add(d);
  EXPECT_EQ(c.symbol_errors, kMax);
  EXPECT_EQ(c.xmit_wait, kMax);
  c.add(d);
  EXPECT_EQ(c.symbol_errors, kMax);
  EXPECT_EQ(saturating_add(kMax, kMax), kMax);
  EXPECT_EQ(saturating_add(2, 3), 5u);
  // Totals over many real readings stop at the top instead of wrapping to few errors.
  LinkHealth h(0, 3, 1);
  const PortKey p{1, 1};
  PortCounters wide;
  wide.xmit_wait = 0xFFFFFFFFull;
  for (int i = 0; i < 3; ++i) h.add(p, wide);
  EXPECT_EQ(h.totals().at(p).xmit_wait, 3 * 0xFFFFFFFFull);
}

TEST(LinkHealth, IsolatesOnlyAfterConsecutiveBadReadings) {
  LinkHealth h(10, 3, 2);  // the default of laas.yaml: two readings in a row
  const PortKey p{0x42, 3};
  PortCounters bad;
  bad.symbol_errors = 10;
  EXPECT_FALSE(h.add(p, bad).changed);  // one bad reading: not yet
  EXPECT_FALSE(h.isolated(p));
  EXPECT_FALSE(h.add(p, PortCounters{}).changed);  // clean: the streak starts over
  EXPECT_FALSE(h.add(p, bad).changed);             // bad, clean, bad: still not isolated
  EXPECT_FALSE(h.isolated(p));
  EXPECT_TRUE(h.add(p, bad).changed);  // two in a row
  EXPECT_TRUE(h.isolated(p));
  // Another port's readings are its own.
  EXPECT_FALSE(h.add({0x42, 4}, bad).changed);
  EXPECT_FALSE(h.isolated({0x42, 4}));
  // A reset between two bad readings is a clean reading: the streak starts over.
  LinkHealth k(10, 3, 2);
  PortCounters reset;
  reset.rcv_errors = ~std::uint64_t{0};
  EXPECT_FALSE(k.add(p, bad).changed);
  EXPECT_FALSE(k.add(p, reset).changed);
  EXPECT_FALSE(k.add(p, bad).changed);
  EXPECT_FALSE(k.isolated(p));
}

TEST(LinkHealth, AServiceRepairsATenantAroundAnIsolatedLink) {
  laas::test::TempDir dir;
  ServiceConfig c;
  c.state_dir = dir.path;
  c.default_wait_ms = 100;
  c.link_error_threshold = 5;
  c.link_error_consecutive_readings = 1;
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

// A tenant's root may clear its leaf's counters (a PMA Set), or a switch reboots: perfmgr then
// reports differences near 2^64 on every port of the switch. No link of anyone is isolated,
// nothing is routed around, the reset shows in the metrics.
TEST(LinkHealth, AServiceIsolatesNothingOnACounterReset) {
  laas::test::TempDir dir;
  ServiceConfig c;
  c.state_dir = dir.path;
  c.default_wait_ms = 100;
  c.link_error_threshold = 1;
  c.link_error_consecutive_readings = 1;
  std::vector<std::string> logs;
  TenantService s(c, [&](LogLevel, const std::string& m) { logs.push_back(m); });
  auto tree = laas::topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  s.on_topology(std::make_shared<TopologyView>(tree, fabric, emb));
  auto call = [&](const std::string& method, json params) {
    params["wait"] = false;
    return s.handle({{"v", 1}, {"method", method}, {"params", params}}, {0, true});
  };
  ASSERT_TRUE(call("tenant.add",
                   {{"name", "a"}, {"host_list", {"comp-1", "comp-2", "comp-5", "comp-6"}}})["ok"]);
  const json a = call("tenant.get", {{"name", "a"}})["result"];
  PortCounters reset;
  reset.symbol_errors = ~std::uint64_t{0} - 4;
  reset.rcv_errors = ~std::uint64_t{0} - 4;
  reset.link_downed = ~std::uint64_t{0} - 4;
  for (const auto& link : a["links"])
    for (int i = 0; i < 3; ++i)
      s.on_port_counters(parse_guid(link["switch"]["guid"].get<std::string>()),
                         link["switch"]["port"], reset);
  EXPECT_TRUE(s.snapshot().isolated_links.empty());
  const json after = call("tenant.get", {{"name", "a"}})["result"];
  EXPECT_EQ(after["links"], a["links"]) << "the tenant moved";
  EXPECT_EQ(after["link_health"]["errors"], 0) << after.dump();
  EXPECT_EQ(after["link_health"]["counter_resets"], 3 * a["links"].size()) << after.dump();
  const std::string text = call("metrics", json::object())["result"]["text"];
  EXPECT_NE(text.find("laas_isolated_links 0"), std::string::npos) << text;
  EXPECT_NE(text.find("laas_port_counter_resets_total " + std::to_string(3 * a["links"].size())),
            std::string::npos)
      << text;
  bool noted = false;
  for (const auto& l : logs) noted = noted || l.find("went back") != std::string::npos;
  EXPECT_TRUE(noted);
}

// perfmgr's thread calls on_port_counters for every port at each sweep: the repairs an
// isolation makes are written to state.json by the routing run it asks for, not there.
TEST(LinkHealth, AnIsolationIsSavedByTheNextRoutingRun) {
  laas::test::TempDir dir;
  ServiceConfig c;
  c.state_dir = dir.path;
  c.default_wait_ms = 100;
  c.link_error_threshold = 5;
  TenantService s(c, [](LogLevel, const std::string&) {});
  int reroutes = 0;
  s.set_reroute_hook([&] { ++reroutes; });
  auto tree = laas::topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  auto view = std::make_shared<TopologyView>(tree, fabric, emb);
  s.on_topology(view);
  auto call = [&](const std::string& method, json params) {
    params["wait"] = false;
    return s.handle({{"v", 1}, {"method", method}, {"params", params}}, {0, true});
  };
  ASSERT_TRUE(call("tenant.add",
                   {{"name", "a"}, {"host_list", {"comp-1", "comp-2", "comp-5", "comp-6"}}})["ok"]);
  reroutes = 0;
  const json link = call("tenant.get", {{"name", "a"}})["result"]["links"][0];
  const auto guid = parse_guid(link["switch"]["guid"].get<std::string>());
  const int port = link["switch"]["port"];
  const std::string state = dir.path + "/state.json";
  const std::string before = laas::test::slurp(state);
  PortCounters bad;
  bad.symbol_errors = 50;
  s.on_port_counters(guid, port, bad);  // one reading of the default two
  EXPECT_TRUE(s.snapshot().isolated_links.empty());
  EXPECT_EQ(reroutes, 0);
  s.on_port_counters(guid, port, bad);
  ASSERT_EQ(s.snapshot().isolated_links.size(), 1u);
  EXPECT_EQ(reroutes, 1);
  EXPECT_EQ(call("status", json::object())["result"]["repairs"], 1) << "not repaired";
  EXPECT_EQ(laas::test::slurp(state), before) << "state.json written on perfmgr's thread";
  s.on_topology(view);  // the routing run the isolation asked for
  const std::string after = laas::test::slurp(state);
  EXPECT_NE(after, before) << "the repairs were never saved";
  s.on_topology(view);  // nothing more to write
  EXPECT_EQ(laas::test::slurp(state), after);
}
