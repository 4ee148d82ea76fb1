// Who is master, checked at every look of the plugin's and not only in routing runs: a tenant's
// SM that wins OpenSM's election is named in status, `sm list`, the metrics and every change's
// reply, and the trust returns when a trusted SM is master again.
#include <gtest/gtest.h>

#include <string>

#include "demo_views.h"
#include "service/sm_role.h"
#include "service/tenant_service.h"
#include "temp_files.h"

using namespace laas::service;
using laas::test::TempDir;
using nlohmann::json;

namespace {

using laas::test::kAdmin;

SmIdentity sm(std::uint64_t guid, const std::string& name, std::uint16_t lid, int priority) {
  SmIdentity id;
  id.port_guid = guid;
  id.name = name;
  id.lid = lid;
  id.priority = priority;
  return id;
}

SmSeen seen(const SmIdentity& id, SmState role) {
  return {id.port_guid, id.name, id.lid, role, id.priority};
}

// One SM's service with its OpenSM role set by the test, and the log it writes.
struct TrustedService {
  explicit TrustedService(std::string keys = "") {
    ServiceConfig c;
    c.state_dir = dir.path;
    c.default_wait_ms = 100;
    c.subnet_managers = {kListed.port_guid};
    service = std::make_unique<TenantService>(c, [this](LogLevel level, const std::string& line) {
      if (level == LogLevel::kError) errors += line + "\n";
    });
    service->set_role_provider([this] { return role; });
    service->set_weak_keys(keys);
    role.state = SmState::kMaster;
    role.self = kOurs;
    role.master = kOurs;
    service->take_over_if_needed(kOurs);
    service->on_topology(laas::test::demo_view());
  }
  json call(const std::string& method, json params = json::object()) {
    params["wait"] = false;
    const json r =
        service->handle({{"v", 1}, {"id", "t"}, {"method", method}, {"params", params}}, kAdmin);
    EXPECT_TRUE(r["ok"]) << method << ": " << r.dump();
    return r["result"];
  }
  // What the plugin's watcher does every second.
  void look(std::vector<SmSeen> sms) { service->note_fabric_sms(role, std::move(sms)); }
  double metric(const std::string& name) {
    const std::string text = call("metrics")["text"];
    const auto at = text.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + name.size() + 2));
  }
  json sm_entry(std::uint64_t guid) {
    for (const auto& e : call("sm.list"))
      if (e["guid"] == guid_hex(guid)) return e;
    return nullptr;
  }

  static inline const SmIdentity kOurs = sm(0x11, "sm-a", 1, 10);
  static inline const SmIdentity kListed = sm(0x22, "sm-b", 2, 5);
  static inline const SmIdentity kRogue = sm(0x99, "tenant-host", 7, 15);
  TempDir dir;
  SmRole role;
  std::string errors;
  std::unique_ptr<TenantService> service;
};

}  // namespace

TEST(MasterTrust, OursAsMasterIsTrusted) {
  TrustedService s;
  s.look({seen(TrustedService::kOurs, SmState::kMaster),
          seen(TrustedService::kListed, SmState::kStandby)});
  EXPECT_EQ(s.metric("laas_master_trusted"), 1);
  EXPECT_EQ(s.metric("laas_unaccepted_subnet_managers"), 0);
  const json status = s.call("status");
  EXPECT_TRUE(status["sm"]["master_trusted"]) << status.dump();
  EXPECT_EQ(s.sm_entry(0x22)["role"], "standby");
  EXPECT_EQ(s.sm_entry(0x22)["trusted"], true);
  EXPECT_EQ(s.sm_entry(0x11)["role"], "master");
  EXPECT_TRUE(s.errors.empty()) << s.errors;
}

// The election hands the fabric to a tenant's SM at priority 15: this SM is standby and
// follows it. Nothing routes, yet every view says so at the next look.
TEST(MasterTrust, ATenantsSmThatWinsTheElectionIsNamedEverywhere) {
  TrustedService s;
  s.look({seen(TrustedService::kOurs, SmState::kMaster)});
  s.role.state = SmState::kStandby;
  s.role.master = TrustedService::kRogue;
  s.look({seen(TrustedService::kOurs, SmState::kStandby),
          seen(TrustedService::kRogue, SmState::kMaster)});
  EXPECT_EQ(s.metric("laas_master_trusted"), 0);
  EXPECT_EQ(s.metric("laas_unaccepted_subnet_managers"), 1);
  const json status = s.call("status");
  EXPECT_FALSE(status["sm"]["master_trusted"]) << status.dump();
  EXPECT_EQ(status["sm"]["master"]["guid"], guid_hex(0x99)) << status.dump();
  const json rogue = s.sm_entry(0x99);
  EXPECT_EQ(rogue["role"], "master") << rogue.dump();
  EXPECT_EQ(rogue["trusted"], false) << rogue.dump();
  EXPECT_EQ(rogue["priority"], 15) << rogue.dump();
  EXPECT_EQ(s.sm_entry(0x11)["role"], "standby");
  EXPECT_NE(s.errors.find("NOBODY TRUSTS"), std::string::npos) << s.errors;
  EXPECT_NE(s.errors.find("tenant-host"), std::string::npos) << s.errors;

  // It leaves; ours is master again: trusted, said once.
  s.role.state = SmState::kMaster;
  s.role.master = TrustedService::kOurs;
  s.look({seen(TrustedService::kOurs, SmState::kMaster)});
  EXPECT_EQ(s.metric("laas_master_trusted"), 1);
  EXPECT_EQ(s.metric("laas_unaccepted_subnet_managers"), 0);
  EXPECT_EQ(s.sm_entry(0x99), nullptr);
}

// A standby that polls a master it cannot name the trust of (none known) is not trusted either.
TEST(MasterTrust, NoMasterKnownIsNotATrustedMaster) {
  TrustedService s;
  s.role.state = SmState::kStandby;
  s.role.master.reset();
  s.look({seen(TrustedService::kOurs, SmState::kStandby)});
  EXPECT_EQ(s.metric("laas_master_trusted"), 0);
  EXPECT_FALSE(s.call("status")["sm"]["master_trusted"]);
}

// A listed SM or one accepted with `sm accept` that is master is trusted.
TEST(MasterTrust, AnAcceptedMasterIsTrusted) {
  TrustedService s;
  const SmIdentity other = sm(0x55, "sm-c", 9, 15);
  s.role.state = SmState::kStandby;
  s.role.master = other;
  s.look({seen(TrustedService::kOurs, SmState::kStandby), seen(other, SmState::kMaster)});
  EXPECT_EQ(s.metric("laas_master_trusted"), 0);
  s.role.state = SmState::kMaster;  // sm accept is a change: only a master makes it
  s.call("sm.accept", {{"guid", guid_hex(0x55)}});
  s.role.state = SmState::kStandby;
  s.look({seen(TrustedService::kOurs, SmState::kStandby), seen(other, SmState::kMaster)});
  EXPECT_EQ(s.metric("laas_master_trusted"), 1);
  EXPECT_EQ(s.sm_entry(0x55)["trusted"], true);
}

TEST(WeakKeys, StatusMetricsAndEveryChangeSayIt) {
  TrustedService weak("sm_key 1, OpenSM's default,");
  EXPECT_EQ(weak.metric("laas_weak_keys"), 1);
  EXPECT_EQ(weak.call("status")["weak_keys"], "sm_key 1, OpenSM's default,");
  const json added = weak.call("tenant.add", {{"name", "bank"}, {"hosts", 4}});
  ASSERT_TRUE(added.contains("warnings")) << added.dump();
  EXPECT_NE(added["warnings"][0].get<std::string>().find("sm_key 1"), std::string::npos);
  const json removed = weak.call("tenant.remove", {{"name", "bank"}});
  EXPECT_TRUE(removed.contains("warnings")) << removed.dump();

  TrustedService strong;
  EXPECT_EQ(strong.metric("laas_weak_keys"), 0);
  EXPECT_FALSE(strong.call("status").contains("weak_keys"));
  EXPECT_FALSE(strong.call("tenant.add", {{"name", "bank"}, {"hosts", 4}}).contains("warnings"));
}
