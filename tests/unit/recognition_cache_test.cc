#include "topology/recognition_cache.h"

#include <gtest/gtest.h>

#include <memory>

#include "topology/embedding.h"
#include "topology/fat_tree.h"

using namespace laas::topology;

namespace {

Fabric demo_fabric() { return build_model_fabric(FatTree::parse("xgft(2;4,8;1,4)")).first; }

// The host cabled to a leaf's first port, unplugged: another fabric of the same size.
Fabric without_a_host(Fabric f) {
  for (auto& node : f.nodes) {
    if (node.is_switch) continue;
    for (auto& port : node.ports) {
      if (port.peer_node < 0) continue;
      f.nodes[port.peer_node].ports[port.peer_port] = FabricPort{};
      port = FabricPort{};
      return f;
    }
  }
  return f;
}

void expect_same(const Recognition& a, const Recognition& b) {
  ASSERT_EQ(a.ok(), b.ok());
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.embedding.host_node, b.embedding.host_node);
  EXPECT_EQ(a.embedding.switch_node, b.embedding.switch_node);
  EXPECT_EQ(a.embedding.missing_hosts, b.embedding.missing_hosts);
  EXPECT_EQ(a.source_note, b.source_note);
}

}  // namespace

TEST(RecognitionCache, TheSameInputsTakeTheLastRecognitionBack) {
  RecognitionCache cache;
  const Fabric fabric = demo_fabric();
  bool reused = true;
  const Recognition first = cache.recognize(fabric, {}, nullptr, &reused);
  EXPECT_FALSE(reused);
  ASSERT_TRUE(first.ok()) << first.error;
  const Recognition again = cache.recognize(Fabric(fabric), {}, nullptr, &reused);
  EXPECT_TRUE(reused);
  expect_same(first, again);
  expect_same(recognize(fabric, RecognizeOptions{}), again);
}

TEST(RecognitionCache, AnyChangedInputRecognizesAgain) {
  RecognitionCache cache;
  const Fabric fabric = demo_fabric();
  bool reused = false;
  cache.recognize(fabric, {}, nullptr, &reused);

  // A host unplugged: recognized afresh, and the result is the fresh one.
  const Fabric fewer = without_a_host(fabric);
  ASSERT_NE(fewer, fabric);
  const Recognition r = cache.recognize(fewer, {}, nullptr, &reused);
  EXPECT_FALSE(reused);
  expect_same(recognize(fewer, RecognizeOptions{}), r);
  EXPECT_EQ(r.embedding.missing_hosts.size(), 1u);

  // A name, a LID, the SM's port, the declared spec, set-aside loops, another layout object.
  Fabric renamed = fewer;
  renamed.nodes[0].name += "x";
  cache.recognize(renamed, {}, nullptr, &reused);
  EXPECT_FALSE(reused);
  Fabric relid = renamed;
  for (auto& node : relid.nodes)
    if (node.is_switch) {
      node.ports[0].lid += 1;
      break;
    }
  cache.recognize(relid, {}, nullptr, &reused);
  EXPECT_FALSE(reused);
  RecognizeOptions options;
  options.sm_port_guid = relid.nodes[0].port_guid;
  cache.recognize(relid, options, nullptr, &reused);
  EXPECT_FALSE(reused);
  cache.recognize(relid, options, nullptr, &reused);
  EXPECT_TRUE(reused);
  options.declared = "xgft(2;4,8;1,4)";
  cache.recognize(relid, options, nullptr, &reused);
  EXPECT_FALSE(reused);
  options.set_aside_loops = true;
  cache.recognize(relid, options, nullptr, &reused);
  EXPECT_FALSE(reused);
  auto layout = std::make_shared<const Layout>();
  cache.recognize(relid, options, layout, &reused);
  EXPECT_FALSE(reused);
  cache.recognize(relid, options, layout, &reused);
  EXPECT_TRUE(reused);
  cache.recognize(relid, options, std::make_shared<const Layout>(*layout), &reused);
  EXPECT_FALSE(reused);
}

TEST(FabricEquality, EveryFieldCounts) {
  const Fabric a = demo_fabric();
  EXPECT_EQ(a, Fabric(a));
  auto changed = [&](auto&& change) {
    Fabric b = a;
    change(b);
    return b != a;
  };
  EXPECT_TRUE(changed([](Fabric& f) { f.nodes[1].guid ^= 1; }));
  EXPECT_TRUE(changed([](Fabric& f) { f.nodes[1].port_guid ^= 1; }));
  EXPECT_TRUE(changed([](Fabric& f) { f.nodes[1].ca_guid ^= 1; }));
  EXPECT_TRUE(changed([](Fabric& f) { f.nodes[1].is_switch = !f.nodes[1].is_switch; }));
  EXPECT_TRUE(changed([](Fabric& f) { f.nodes[1].name = "other"; }));
  EXPECT_TRUE(changed([](Fabric& f) { f.nodes[1].ports.emplace_back(); }));
  EXPECT_TRUE(changed([](Fabric& f) { f.nodes[1].ports[1].peer_port += 1; }));
  EXPECT_TRUE(changed([](Fabric& f) { f.nodes[1].ports[1].peer_node += 1; }));
  EXPECT_TRUE(changed([](Fabric& f) { f.nodes[1].ports[1].lid += 1; }));
  EXPECT_TRUE(changed([](Fabric& f) { f.nodes[1].ports[1].guid += 1; }));
  EXPECT_TRUE(changed([](Fabric& f) { f.nodes.pop_back(); }));
}
