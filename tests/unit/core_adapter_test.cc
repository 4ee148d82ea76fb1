// core/adapter.h: what an adapter gives the core (a FabricSnapshot), what it gets back (a
// RouteOutcome), and the hooks it connects for the service (Controller::connect).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/adapter.h"
#include "core/controller.h"
#include "core/controller_testing.h"
#include "temp_files.h"
#include "topology/embedding.h"

using namespace laas;
using laas::core::Controller;

namespace {

core::Config adapter_config_in(const test::TempDir& dir) {
  core::Config c;
  c.state_dir = dir.path;
  c.managed_partitions_file = dir.path + "/partitions.conf";
  return c;
}

service::Logger quiet_logger() {
  return [](service::LogLevel, const std::string&) {};
}

// The demo tree as an adapter would hand it over: the SM on the first spine.
core::FabricSnapshot demo_snapshot() {
  const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
  auto model = topology::build_model_fabric(tree);
  core::FabricSnapshot snap;
  snap.fabric = std::move(model.first);
  snap.sm_port_guid = snap.fabric.nodes[model.second.switch_node[1][0]].port_guid;
  snap.sm_ports = {snap.sm_port_guid};
  return snap;
}

const service::Caller kAdapterRoot{0, true};

}  // namespace

// The snapshot's fields reach the run: the same tables as the plain call, and SL2VL drops only
// for an SM that programs them (laas-sdn's `file` engine does not).
TEST(Adapter, ASnapshotIsRoutedLikeTheFabricItCarries) {
  test::TempDir dir("laas-adapter");
  Controller controller(adapter_config_in(dir), quiet_logger());
  auto snap = demo_snapshot();
  const auto plain = core::routed(controller, snap.fabric, snap.sm_port_guid);
  ASSERT_TRUE(plain.ok) << plain.error;
  const auto with = core::routed(controller, snap);
  ASSERT_TRUE(with.ok) << with.error;
  EXPECT_EQ(with.tables, plain.tables);
  EXPECT_EQ(with.sl2vl.drops, plain.sl2vl.drops);
  EXPECT_FALSE(with.sl2vl.drops.empty());
  snap.with_sl2vl = false;
  const auto without = core::routed(controller, snap);
  ASSERT_TRUE(without.ok) << without.error;
  EXPECT_EQ(without.tables, plain.tables);
  EXPECT_TRUE(without.sl2vl.drops.empty());
}

// What the service asks of the fabric side goes to the hooks the adapter connected: a tenant
// change rewrites the partitions file (partitions_changed) and asks for a run (reroute), an
// audit runs the adapter's, and a role that is not master refuses changes.
TEST(Adapter, TheServiceCallsTheHooksTheAdapterConnected) {
  test::TempDir dir("laas-adapter");
  Controller controller(adapter_config_in(dir), quiet_logger());
  int reroutes = 0, partitions = 0, audits = 0;
  service::SmRole role;
  core::AdapterHooks hooks;
  hooks.reroute = [&] { ++reroutes; };
  hooks.role = [&] { return role; };
  hooks.partitions_changed = [&] { ++partitions; };
  hooks.audit_live = [&] {
    ++audits;
    return nlohmann::json{{"from", "the adapter"}};
  };
  controller.connect(std::move(hooks));
  ASSERT_TRUE(core::routed(controller, demo_snapshot()).ok);
  const int before = partitions;  // the first view writes the file (the members beyond tenants)
  const auto added = controller.service().add_tenant("A", 4, {}, kAdapterRoot);
  ASSERT_TRUE(added.ok) << added.message;
  EXPECT_EQ(partitions, before + 1);
  EXPECT_EQ(reroutes, 1);
  const auto reply = controller.service().handle(
      {{"v", 1}, {"id", "t"}, {"method", "audit"}, {"params", nlohmann::json::object()}},
      kAdapterRoot);
  EXPECT_EQ(audits, 1);
  EXPECT_EQ(reply["result"]["from"], "the adapter") << reply.dump();
  role.state = service::SmState::kStandby;
  const auto refused = controller.service().add_tenant("B", 4, {}, kAdapterRoot);
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(partitions, before + 1);
}
