#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "demo_views.h"
#include "service/socket_server.h"
#include "service/tenant_service.h"
#include "temp_files.h"

using namespace laas::service;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using laas::test::demo_view;

using TempDir = laas::test::TempDir;

ServiceConfig test_config(const std::string& dir) {
  ServiceConfig c;
  c.state_dir = dir;
  c.default_wait_ms = 100;
  return c;
}

using laas::test::kAdmin;
using laas::test::kReader;

json service_request(const std::string& method, json params = json::object()) {
  return {{"v", 1}, {"id", "t"}, {"method", method}, {"params", std::move(params)}};
}

using laas::test::slurp;

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { service = make(); }
  std::unique_ptr<TenantService> make() {
    auto s = std::make_unique<TenantService>(
        test_config(dir.path), [this](LogLevel, const std::string& m) { logs.push_back(m); });
    s->on_topology(demo_view());
    return s;
  }
  json call(const std::string& method, json params = json::object(), Caller c = kAdmin) {
    params["wait"] = false;
    return service->handle(service_request(method, params), c);
  }
  // A routing run the test plays on a thread of its own (OpenSM's sweeper), joined before the
  // service it calls into is destroyed: a detached one could still be inside on_routing_done
  // (notifying the waiter it just woke) when the test ends.
  void sweep(std::function<void()> run) { sweepers.emplace_back(std::move(run)); }
  void TearDown() override {
    for (auto& t : sweepers) t.join();
  }
  TempDir dir;
  std::vector<std::string> logs;
  std::unique_ptr<TenantService> service;
  std::vector<std::thread> sweepers;
};

}  // namespace

TEST_F(ServiceTest, WalkthroughThroughRequests) {
  auto r = call("tenant.add", {{"name", "4"}, {"hosts", 10}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(r["result"]["hosts"][0]["name"], "comp-1");
  EXPECT_EQ(r["result"]["hosts"][0]["guid"], "0x0000000000100001");
  EXPECT_EQ(r["result"]["links"][8]["switch"]["name"], "SW_L1_2");
  EXPECT_EQ(r["result"]["links"][8]["switch"]["port"], 1);
  EXPECT_EQ(r["result"]["links"][8]["peer"]["name"], "SW_L2_0");
  ASSERT_TRUE(call("tenant.add", {{"name", "1"}, {"hosts", 10}})["ok"]);
  auto refused = call("tenant.add", {{"name", "2"}, {"hosts", 13}});
  EXPECT_FALSE(refused["ok"]);
  EXPECT_EQ(refused["error"]["code"], "refused");
  ASSERT_TRUE(call("tenant.remove", {{"name", "1"}})["ok"]);
  ASSERT_TRUE(call("tenant.add", {{"name", "2"}, {"hosts", 13}})["ok"]);
  auto list = call("tenant.list");
  ASSERT_EQ(list["result"].size(), 2u);
  auto topo = call("topology");
  EXPECT_EQ(topo["result"]["free_hosts"], 9);
  EXPECT_EQ(topo["result"]["leaves"][0]["up_links"][0], "4");
}

TEST_F(ServiceTest, BadRequestsAreRefusedAndChangeNothing) {
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 4}})["ok"]);
  const std::string state = slurp(dir.path + "/state.json");
  auto code = [&](const json& r) { return r["error"]["code"].get<std::string>(); };
  EXPECT_EQ(code(service->handle(json::array(), kAdmin)), "bad_request");
  EXPECT_EQ(code(service->handle({{"method", "status"}}, kAdmin)), "bad_request");  // no "v"
  EXPECT_EQ(code(service->handle({{"v", 2}, {"method", "status"}}, kAdmin)), "bad_request");
  EXPECT_EQ(code(call("tenant.frobnicate")), "bad_request");
  EXPECT_EQ(code(call("tenant.add", {{"name", "b"}, {"hosts", "ten"}})), "bad_request");
  EXPECT_EQ(code(call("tenant.add", {{"name", 7}, {"hosts", 2}})), "bad_request");
  EXPECT_EQ(code(call("tenant.add", {{"name", "b"}, {"hosts", 0}})), "bad_request");
  EXPECT_EQ(code(call("tenant.add", {{"name", "b"}, {"hosts", 29}})), "refused");
  EXPECT_EQ(code(call("tenant.add", {{"name", "a"}, {"hosts", 2}})), "duplicate");
  EXPECT_EQ(code(call("tenant.remove", {{"name", "zz"}})), "not_found");
  EXPECT_EQ(code(call("tenant.add", {{"name", "b c"}, {"hosts", 2}})), "bad_request");
  EXPECT_EQ(code(call("tenant.add", {{"name", "b"}, {"hosts", 2}}, kReader)), "permission_denied");
  EXPECT_EQ(code(call("tenant.remove", {{"name", "a"}}, kReader)), "permission_denied");
  EXPECT_TRUE(call("tenant.list", json::object(), kReader)["ok"]);  // readers may read
  EXPECT_TRUE(call("tenant.plan", {{"name", "b"}, {"hosts", 2}}, kReader)["ok"]);
  EXPECT_EQ(slurp(dir.path + "/state.json"), state);
  EXPECT_EQ(service->tenant_names(), std::vector<std::string>{"a"});
}

TEST_F(ServiceTest, StateSurvivesARestartWithTheSamePlacement) {
  ASSERT_TRUE(call("tenant.add", {{"name", "x"}, {"hosts", 6}})["ok"]);
  ASSERT_TRUE(call("tenant.add", {{"name", "y"}, {"hosts", 9}})["ok"]);
  const auto before = call("tenant.get", {{"name", "y"}})["result"];
  service = make();  // a new process reading the same directory
  const auto after = call("tenant.get", {{"name", "y"}})["result"];
  EXPECT_EQ(before["hosts"], after["hosts"]);
  EXPECT_EQ(before["links"], after["links"]);
  EXPECT_EQ(service->snapshot().generation, 2u);
}

TEST_F(ServiceTest, CorruptStateBlocksTenantRoutingAndSaysWhy) {
  ASSERT_TRUE(call("tenant.add", {{"name", "x"}, {"hosts", 6}})["ok"]);
  std::ofstream(dir.path + "/state.json")
      << "{\"format\": \"laas-state\", \"version\": 1, \"tenants\": [";
  service = make();
  const auto snap = service->snapshot();
  EXPECT_NE(snap.blocked.find("invalid JSON"), std::string::npos) << snap.blocked;
  EXPECT_TRUE(snap.tenants.empty());
  auto r = call("tenant.add", {{"name", "z"}, {"hosts", 2}});
  EXPECT_EQ(r["error"]["code"], "unavailable");
  EXPECT_NE(call("status")["result"]["blocked"].get<std::string>().find("state.json"),
            std::string::npos);
}

// Hosts are identified by their slot (leaf switch GUID, port). A host replaced on its
// slot keeps the slot for its tenant; the new port GUID is quarantined (logged, the
// tenant degraded) and the state keeps the recorded one until `host accept`.
TEST_F(ServiceTest, ReplacedHostKeepsItsSlot) {
  ASSERT_TRUE(call("tenant.add", {{"name", "x"}, {"hosts", 6}})["ok"]);
  ASSERT_TRUE(call("tenant.add", {{"name", "y"}, {"hosts", 3}})["ok"]);
  auto tree = laas::topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  fabric.nodes[emb.host_node[0]].port_guid = 0xdead;  // comp-1 was replaced
  std::vector<std::string> seen;
  auto fresh = std::make_unique<TenantService>(
      test_config(dir.path), [&](LogLevel, const std::string& m) { seen.push_back(m); });
  fresh->on_topology(std::make_shared<TopologyView>(tree, fabric, emb));
  auto list = fresh->handle(service_request("tenant.list"), kAdmin)["result"];
  ASSERT_EQ(list.size(), 2u);
  for (const auto& t : list)
    EXPECT_EQ(t["state"], t["name"] == "x" ? "degraded" : "routed") << list.dump();
  EXPECT_EQ(slurp(dir.path + "/state.json").find("0x000000000000dead"), std::string::npos);
  EXPECT_EQ(fresh->snapshot().unaccepted.size(), 1u);
  bool logged = false;
  for (const auto& m : seen) logged = logged || m.find("holds 0x000000000000dead") != m.npos;
  EXPECT_TRUE(logged);
}

TEST_F(ServiceTest, NoFatTreeRefusesWithTheReason) {
  service->on_topology_error("switch S1 has hosts at two levels");
  auto r = call("tenant.add", {{"name", "a"}, {"hosts", 2}});
  EXPECT_EQ(r["error"]["code"], "unavailable");
  EXPECT_NE(r["error"]["message"].get<std::string>().find("two levels"), std::string::npos);
}

TEST_F(ServiceTest, WaitReturnsOnceRoutingIsDone) {
  service->set_reroute_hook(
      [this] { sweep([this] { service->on_routing_done(service->snapshot().generation); }); });
  auto r = service->handle(
      service_request("tenant.add", {{"name", "w"}, {"hosts", 3}, {"timeout_ms", 5000}}), kAdmin);
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_TRUE(r["result"]["routed"].get<bool>());
}

// "Routed" only after the tables and P_Keys were applied without error: a change whose
// application failed (and was not retried in time) is an error that names what failed and
// says the state holds the change; a failure followed by a success in time is a success.
TEST_F(ServiceTest, AFailedApplicationIsNotReportedRouted) {
  service->set_reroute_hook([this] {
    sweep([this] {
      service->on_routing_done(service->snapshot().generation, "P_Key tables not answered");
    });
  });
  auto r = service->handle(
      service_request("tenant.add", {{"name", "f"}, {"hosts", 3}, {"timeout_ms", 300}}), kAdmin);
  ASSERT_FALSE(r["ok"]) << r.dump();
  EXPECT_EQ(r["error"]["code"], "internal");
  const std::string message = r["error"]["message"];
  EXPECT_NE(message.find("P_Key tables not answered"), std::string::npos) << message;
  EXPECT_NE(message.find("IS"), std::string::npos) << message;  // the state holds it
  service->set_reroute_hook([this] {
    sweep([this] {
      const auto generation = service->snapshot().generation;
      service->on_routing_done(generation, "a transient error");
      service->on_routing_done(generation);
    });
  });
  r = service->handle(
      service_request("tenant.add", {{"name", "g"}, {"hosts", 2}, {"timeout_ms", 5000}}), kAdmin);
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_TRUE(r["result"]["routed"].get<bool>());
}

// The socket server: real Unix socket, several clients at once.
namespace {

std::string roundtrip(const std::string& path, const std::string& payload) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "";
  }
  (void)!::send(fd, payload.data(), payload.size(), MSG_NOSIGNAL);
  std::string reply;
  char buf[4096];
  while (reply.find('\n') == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return reply;
}

}  // namespace

TEST_F(ServiceTest, SocketServesConcurrentClientsAndSurvivesGarbage) {
  SocketConfig sc;
  sc.path = dir.path + "/laas.sock";
  sc.group = "";
  sc.max_request_bytes = 1024;
  SocketServer server(sc, *service, [](LogLevel, const std::string&) {});
  server.start();
  EXPECT_NE(roundtrip(sc.path, "{not json\n").find("malformed JSON"), std::string::npos);
  EXPECT_NE(roundtrip(sc.path, std::string(5000, 'x')).find("longer than 1024"), std::string::npos);
  std::vector<std::thread> clients;
  std::atomic<int> added{0};
  for (int c = 0; c < 8; ++c)
    clients.emplace_back([&, c] {
      for (int i = 0; i < 25; ++i) {
        const std::string name = "c" + std::to_string(c) + "-" + std::to_string(i % 5);
        const bool adding = i % 2 == 0;
        json r = json::parse(roundtrip(
            sc.path, service_request(adding ? "tenant.add" : "tenant.remove",
                                     adding ? json{{"name", name}, {"hosts", 1}, {"wait", false}}
                                            : json{{"name", name}, {"wait", false}})
                             .dump() +
                         "\n"));
        if (adding && r["ok"]) ++added;
        if (!adding && r["ok"]) --added;
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(static_cast<int>(service->tenant_names().size()), added.load());
  EXPECT_NE(roundtrip(sc.path, service_request("status").dump() + "\n").find("\"ok\":true"),
            std::string::npos);
  server.stop();
}

TEST_F(ServiceTest, ExplicitHostListIsValidatedAgainstTheConditions) {
  auto ok = call("tenant.add", {{"name", "e"},
                                {"host_list", {"comp-5", "comp-6", "comp-7", "comp-8", "comp-9"}}});
  ASSERT_TRUE(ok["ok"]) << ok.dump();
  EXPECT_EQ(ok["result"]["links"].size(), 5u);
  auto bad =
      call("tenant.add",
           {{"name", "f"}, {"host_list", {"comp-13", "comp-14", "comp-15", "comp-17", "comp-21"}}});
  EXPECT_EQ(bad["error"]["code"], "refused");
  EXPECT_NE(bad["error"]["message"].get<std::string>().find("Theorem 1"), std::string::npos);
  auto unknown = call("tenant.add", {{"name", "g"}, {"host_list", {"comp-99"}}});
  EXPECT_EQ(unknown["error"]["code"], "bad_request");
}

TEST_F(ServiceTest, PKeysAreStableAndExportsServeEveryFormat) {
  ASSERT_TRUE(call("tenant.add", {{"name", "4"}, {"hosts", 10}})["ok"]);
  ASSERT_TRUE(call("tenant.add", {{"name", "1"}, {"hosts", 10}})["ok"]);
  const auto pkey = call("tenant.get", {{"name", "1"}})["result"]["pkey"];
  ASSERT_TRUE(pkey.is_string());
  ASSERT_TRUE(call("tenant.remove", {{"name", "4"}})["ok"]);
  service = make();  // restart: the P_Key survives and does not move
  EXPECT_EQ(call("tenant.get", {{"name", "1"}})["result"]["pkey"], pkey);
  auto parts = call("export", {{"format", "partitions"}});
  ASSERT_TRUE(parts["ok"]) << parts.dump();
  const std::string text = parts["result"]["content"];
  EXPECT_NE(text.find("laas_1=" + pkey.get<std::string>()), std::string::npos) << text;
  EXPECT_NE(text.find("0x0000000000100015"), std::string::npos);  // comp-11's port GUID
  for (const char* format : {"routing-chains", "slurm", "slurm-topology", "openstack"}) {
    auto r = call("export", {{"format", format}});
    EXPECT_TRUE(r["ok"]) << format << ": " << r.dump();
    EXPECT_FALSE(r["result"]["content"].get<std::string>().empty()) << format;
  }
  auto removal = call("export", {{"format", "openstack"}, {"tenant", "1"}, {"remove", true}});
  EXPECT_NE(removal["result"]["content"].get<std::string>().find("aggregate delete"),
            std::string::npos);
  EXPECT_EQ(call("export", {{"format", "ldif"}})["error"]["code"], "bad_request");
  EXPECT_EQ(call("export", {{"format", "slurm"}, {"tenant", "zz"}})["error"]["code"], "not_found");
}

TEST_F(ServiceTest, ManagedPartitionsFileFollowsTenants) {
  ServiceConfig c = test_config(dir.path);
  c.exports.managed_partitions_file = dir.path + "/partitions.conf";
  int heavy_sweeps = 0;
  service = std::make_unique<TenantService>(c, [](LogLevel, const std::string&) {});
  service->set_partitions_hook([&] { ++heavy_sweeps; });
  service->on_topology(demo_view());
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 3}})["ok"]);
  const std::string with_a = slurp(c.exports.managed_partitions_file);
  EXPECT_NE(with_a.find("laas_a="), std::string::npos);
  EXPECT_NE(with_a.find("Default=0x7fff"), std::string::npos);
  ASSERT_TRUE(call("tenant.remove", {{"name", "a"}})["ok"]);
  EXPECT_EQ(slurp(c.exports.managed_partitions_file).find("laas_a="), std::string::npos);
  EXPECT_GE(heavy_sweeps, 2);
}

TEST_F(ServiceTest, ANewViewOfTheSameFabricKeepsTenantsAndShapes) {
  ASSERT_TRUE(call("tenant.add", {{"name", "s"}, {"hosts", 10}})["ok"]);
  for (int i = 0; i < 3; ++i) service->on_topology(demo_view());  // earlier views are released
  auto status = call("status")["result"];
  EXPECT_EQ(status["hosts"], 32);
  EXPECT_EQ(status["free_hosts"], 22);
  ASSERT_TRUE(call("tenant.add", {{"name", "t"}, {"hosts", 4}})["ok"]);
  service = make();  // restored from state.json: the shape is described again
  EXPECT_EQ(call("tenant.get", {{"name", "s"}})["result"]["shape"]["text"], "2x4+2 hosts per leaf");
}

// A tenant change succeeds only when partitions.conf was rewritten and validates;
// otherwise the request fails and nothing changes (state, file, other tenants).
TEST_F(ServiceTest, PartitionsAreTransactionalWithTenantChanges) {
  ServiceConfig c = test_config(dir.path);
  const std::string pdir = dir.path + "/opensm";
  fs::create_directories(pdir);
  c.exports.managed_partitions_file = pdir + "/partitions.conf";
  c.exports.partitions_base_file = dir.path + "/base.conf";
  std::ofstream(c.exports.partitions_base_file) << "Site=0x0010 : SELF=full ;\nAuto : SELF ;\n";
  service = std::make_unique<TenantService>(c, [](LogLevel, const std::string&) {});
  service->on_topology(demo_view());
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 3}})["ok"]);
  const std::string with_a = slurp(c.exports.managed_partitions_file);
  const auto gen = service->snapshot().generation;

  // A write that fails (the file's directory is gone): add refused, nothing changed.
  fs::rename(pdir, dir.path + "/moved");
  auto r = call("tenant.add", {{"name", "b"}, {"hosts", 3}});
  EXPECT_FALSE(r["ok"]) << r.dump();
  EXPECT_NE(r["error"]["message"].get<std::string>().find("partitions.conf not written"),
            std::string::npos)
      << r.dump();
  EXPECT_EQ(service->snapshot().generation, gen);
  EXPECT_EQ(service->tenant_names(), std::vector<std::string>{"a"});
  r = call("tenant.remove", {{"name", "a"}});
  EXPECT_FALSE(r["ok"]) << r.dump();
  EXPECT_EQ(service->tenant_names(), std::vector<std::string>{"a"});
  fs::rename(dir.path + "/moved", pdir);
  EXPECT_EQ(slurp(c.exports.managed_partitions_file), with_a);

  // A base file that no longer parses: refused, the file is left as it was.
  std::ofstream(c.exports.partitions_base_file) << "Site=0x0010,\n ipoib : SELF=full ;\n";
  r = call("tenant.add", {{"name", "b"}, {"hosts", 3}});
  EXPECT_FALSE(r["ok"]);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("base.conf:1"), std::string::npos)
      << r.dump();
  EXPECT_EQ(slurp(c.exports.managed_partitions_file), with_a);
  EXPECT_EQ(service->snapshot().generation, gen);

  // A base file that cannot be read: refused with its name, nothing changed (and a restart
  // with it still starts).
  fs::rename(c.exports.partitions_base_file, dir.path + "/base.moved");
  r = call("tenant.add", {{"name", "b"}, {"hosts", 3}});
  EXPECT_FALSE(r["ok"]);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("base.conf"), std::string::npos)
      << r.dump();
  EXPECT_EQ(service->tenant_names(), std::vector<std::string>{"a"});
  EXPECT_NO_THROW(TenantService(c, [](LogLevel, const std::string&) {}));
  fs::rename(dir.path + "/base.moved", c.exports.partitions_base_file);

  // Base fixed; the new tenant's key avoids the base file's explicit and auto-numbered keys.
  std::ofstream(c.exports.partitions_base_file) << "Site=0x0010 : SELF=full ;\nAuto : SELF ;\n";
  ASSERT_TRUE(call("tenant.add", {{"name", "b"}, {"hosts", 3}})["ok"]);
  for (const char* t : {"a", "b"}) {
    const auto pk = call("tenant.get", {{"name", t}})["result"]["pkey"].get<std::string>();
    EXPECT_NE(pk, "0x0010");
    EXPECT_NE(pk, "0x0001");
  }
  ASSERT_TRUE(call("tenant.remove", {{"name", "a"}})["ok"]);
  const std::string after = slurp(c.exports.managed_partitions_file);
  EXPECT_EQ(after.find("laas_a="), std::string::npos);
  EXPECT_NE(after.find("laas_b="), std::string::npos);
  EXPECT_NE(after.find("Site=0x0010"), std::string::npos);
}

TEST_F(ServiceTest, OneNameRuleAndExportFieldsPersistWithTheTenant) {
  for (const std::string& bad :
       {std::string(30, 'x'), std::string(".hidden"), std::string("-rf")}) {
    const auto r = call("tenant.add", {{"name", bad}, {"hosts", 2}});
    EXPECT_EQ(r["error"]["code"], "bad_request") << bad;
    EXPECT_NE(r["error"]["message"].get<std::string>().find("tenant '" + bad + "'"),
              std::string::npos)
        << r.dump();
  }
  EXPECT_EQ(call("tenant.add",
                 {{"name", "t"}, {"hosts", 2}, {"slurm_accounts", {"a b"}}})["error"]["code"],
            "bad_request");
  ASSERT_TRUE(call("tenant.add", {{"name", "t"},
                                  {"hosts", 2},
                                  {"slurm_accounts", {"physics"}},
                                  {"slurm_users", {"alice"}},
                                  {"openstack_project", "8c1f0a4e6b2d4f39"}})["ok"]);
  service = make();  // restart: the fields come back from state.json
  const auto t = call("tenant.get", {{"name", "t"}})["result"];
  EXPECT_EQ(t["slurm_accounts"], json::array({"physics"})) << t.dump();
  const std::string slurm = call("export", {{"format", "slurm"}})["result"]["content"];
  EXPECT_NE(slurm.find("Accounts=physics Users=alice"), std::string::npos) << slurm;
  EXPECT_NE(slurm.find("keep=' laas-t '"), std::string::npos) << slurm;
  const std::string os = call("export", {{"format", "openstack"}})["result"]["content"];
  EXPECT_NE(os.find("laas_aggregate laas-t 8c1f0a4e6b2d4f39 "), std::string::npos) << os;
  const auto rc = call("export", {{"format", "routing-chains"}})["result"]["files"];
  EXPECT_TRUE(rc.contains("port_groups.conf") && rc.contains("topologies.conf") &&
              rc.contains("routing_chains.conf"))
      << rc.dump();
}

// A host made management after a tenant took it stays the tenant's on disk, but the tenant
// is not routed, and the administrator is told which host and why.
TEST_F(ServiceTest, ATenantHoldingANewManagementHostIsNotRoutedAndSaysWhichHost) {
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 2}})["ok"]);
  ASSERT_TRUE(call("tenant.add", {{"name", "b"}, {"hosts", 2}})["ok"]);
  const std::string guid = call("tenant.get", {{"name", "a"}})["result"]["hosts"][1]["guid"];
  auto tree = laas::topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  auto probe = std::make_shared<TopologyView>(tree, fabric, emb);
  const auto host = probe->host_by_guid(parse_guid(guid));
  ASSERT_TRUE(host);
  logs.clear();
  service->on_topology(std::make_shared<TopologyView>(tree, fabric, emb,
                                                      std::vector<laas::topology::HostId>{*host}));
  const auto a = call("tenant.get", {{"name", "a"}})["result"];
  EXPECT_EQ(a["state"], "not placed") << a.dump();
  const std::string reason = a["reason"];
  EXPECT_NE(reason.find("it holds host"), std::string::npos) << reason;
  EXPECT_NE(reason.find(guid + "), now a management host"), std::string::npos) << reason;
  bool logged = false;
  for (const auto& line : logs)
    logged = logged || line.find("tenant 'a' is not routed: it holds host") != std::string::npos;
  EXPECT_TRUE(logged);
  EXPECT_EQ(call("tenant.get", {{"name", "b"}})["result"]["state"], "routed");
}

// Management hosts (laas.yaml `management`) are full members of every tenant
// partition, in a second statement without indx0; tenant hosts carry indx0.
TEST_F(ServiceTest, ManagementHostsAreFullMembersOfEveryTenantPartition) {
  ServiceConfig c = test_config(dir.path);
  c.exports.managed_partitions_file = dir.path + "/partitions.conf";
  service = std::make_unique<TenantService>(c, [](LogLevel, const std::string&) {});
  auto tree = laas::topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  const laas::topology::HostId storage = tree.num_hosts() - 1;
  auto view = std::make_shared<TopologyView>(tree, fabric, emb,
                                             std::vector<laas::topology::HostId>{storage});
  const std::string guid = guid_hex(view->host_guid(storage));
  service->on_topology(view);
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 3}})["ok"]);
  ASSERT_TRUE(call("tenant.add", {{"name", "b"}, {"hosts", 3}})["ok"]);
  const std::string text = slurp(c.exports.managed_partitions_file);
  for (const char* t : {"a", "b"}) {
    const std::string pk = call("tenant.get", {{"name", t}})["result"]["pkey"];
    EXPECT_NE(text.find("laas_" + std::string(t) + "=" + pk + ", ipoib, indx0 :"),
              std::string::npos)
        << text;
    EXPECT_NE(
        text.find("laas_" + std::string(t) + "=" + pk + " :\n\tSELF=full,\n\t" + guid + "=full ;"),
        std::string::npos)
        << text;
  }
}

// `laasctl reroute`: the adapter is asked for a routing run, by root and the socket group only;
// an adapter's own report is status's "adapter" section and part of the metrics.
TEST_F(ServiceTest, RerouteAndTheAdapterReport) {
  int asked = 0;
  service->set_reroute_hook([&asked] { ++asked; });
  auto r = call("reroute");
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(asked, 1);
  r = call("reroute", json::object(), kReader);
  EXPECT_EQ(r["error"]["code"], "permission_denied") << r.dump();
  EXPECT_EQ(asked, 1);
  EXPECT_FALSE(call("status")["result"].contains("adapter"));
  service->set_adapter_report(
      [] {
        return json{{"adapter", "laas-sdn"}};
      },
      [] {
        return std::vector<MetricFamily>{{"laas_sdn_runs_total", "runs", "counter", {{{}, 3}}}};
      });
  EXPECT_EQ(call("status")["result"]["adapter"]["adapter"], "laas-sdn");
  const std::string text = call("metrics")["result"]["text"];
  EXPECT_NE(text.find("laas_sdn_runs_total 3"), std::string::npos) << text;
}
