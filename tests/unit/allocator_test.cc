#include <gtest/gtest.h>

#include <random>
#include <set>

#include "allocator/cluster.h"
#include "check/checker.h"
#include "cluster_views.h"

using namespace laas::allocator;
using laas::test::views;
using laas::topology::FatTree;

namespace {

std::vector<std::string> host_names(const FatTree& t, const Placement& p) {
  std::vector<std::string> out;
  for (int h : p.hosts) out.push_back(t.host_name(h));
  return out;
}

// "SW_L1_2:3" for every up-link, in order.
std::vector<std::string> link_names(const FatTree& t, const Placement& p) {
  std::vector<std::string> out;
  for (int l : p.links) {
    auto lo = t.link_lower(l);
    out.push_back(t.switch_name(lo.level, lo.index) + ":" + std::to_string(lo.port));
  }
  return out;
}

// Everything a caller can observe of the state, to prove that failures change nothing.
std::string fingerprint(const Cluster& c) {
  std::string s;
  const auto& st = c.state();
  for (int h = 0; h < c.tree().num_hosts(); ++h) s += std::to_string(st.host_owner(h)) + ",";
  for (int l = 0; l < c.tree().total_links(); ++l)
    s += std::to_string(st.link_owner(l)) + (st.link_faulty(l) ? "f," : ",");
  for (const auto& [name, t] : c.tenants()) s += name + ";";
  return s;
}

// The state's maintained per-pod capacity counts against a recount from the leaves: "" when
// they agree, else the first difference.
std::string capacity_mismatch(const LinkState& st) {
  const auto& t = st.tree();
  for (int pod = 0; pod < t.num_pods(); ++pod)
    for (int h = 0; h <= t.hosts_per_leaf() + 1; ++h) {
      int n = 0;
      for (int leaf = pod * t.leaves_per_pod(); leaf < (pod + 1) * t.leaves_per_pod(); ++leaf)
        n += st.free_hosts_on_leaf(leaf) >= h &&
             st.free_column_count(1, leaf) * t.slimming_divisor(1) >= h;
      if (n != st.leaves_with_capacity(pod, h))
        return "pod " + std::to_string(pod) + " capacity " + std::to_string(h) + ": kept " +
               std::to_string(st.leaves_with_capacity(pod, h)) + ", counted " + std::to_string(n);
    }
  return "";
}

}  // namespace

TEST(LaasWalkthrough, PaperAppendix) {
  const auto tree = FatTree::parse("xgft(2;4,8;1,4)");
  Cluster c(tree, make_placer("laas"));
  auto a = c.add("4", 10);
  ASSERT_TRUE(a.ok()) << a.message;
  const auto& t4 = c.find("4")->placement;
  EXPECT_EQ(host_names(tree, t4),
            (std::vector<std::string>{"comp-1", "comp-2", "comp-3", "comp-4", "comp-5", "comp-6",
                                      "comp-7", "comp-8", "comp-9", "comp-10"}));
  EXPECT_EQ(
      link_names(tree, t4),
      (std::vector<std::string>{"SW_L1_0:1", "SW_L1_0:2", "SW_L1_0:3", "SW_L1_0:4", "SW_L1_1:1",
                                "SW_L1_1:2", "SW_L1_1:3", "SW_L1_1:4", "SW_L1_2:1", "SW_L1_2:2"}));
  EXPECT_EQ(c.state().allocated_links(1), 10);
  auto b = c.add("1", 10);
  ASSERT_TRUE(b.ok()) << b.message;
  const auto& t1 = c.find("1")->placement;
  EXPECT_EQ(host_names(tree, t1).front(), "comp-11");
  EXPECT_EQ(host_names(tree, t1).back(), "comp-20");
  EXPECT_EQ(
      link_names(tree, t1),
      (std::vector<std::string>{"SW_L1_2:3", "SW_L1_2:4", "SW_L1_3:1", "SW_L1_3:2", "SW_L1_3:3",
                                "SW_L1_3:4", "SW_L1_4:1", "SW_L1_4:2", "SW_L1_4:3", "SW_L1_4:4"}));
  const auto before = fingerprint(c);
  auto refused = c.add("2", 13);
  EXPECT_EQ(refused.status, Status::kRefused);
  EXPECT_NE(refused.message.find("only 12 hosts are free"), std::string::npos) << refused.message;
  EXPECT_EQ(fingerprint(c), before);
  ASSERT_TRUE(c.remove("1").ok());
  auto placed = c.add("2", 13);
  ASSERT_TRUE(placed.ok()) << placed.message;
  EXPECT_EQ(c.find("2")->placement.hosts.size(), 13u);
  EXPECT_TRUE(laas::check::check_all(tree, views(c), {}).empty());
}

// Lemma 6: a host placement meeting Theorem 1 need not admit links meeting Theorem 2.
TEST(LaasWalkthrough, Lemma6PlacementIsNotEnough) {
  const auto tree = FatTree::parse("xgft(2;4,4;1,4)");
  Cluster c(tree, make_placer("laas"));
  auto leaf = [&](int l, std::vector<int> slots, std::vector<int> cols, Placement& p) {
    for (int s : slots) p.hosts.push_back(tree.host_at(l, s));
    for (int col : cols) p.links.push_back(tree.l1_link(l, col));
  };
  Placement a, b;  // A = 2*3+2, B = 2*2+1
  leaf(0, {0, 1, 2}, {0, 1, 2}, a);
  leaf(1, {0, 1, 2}, {0, 1, 2}, a);
  leaf(2, {0, 1}, {0, 1}, a);
  leaf(2, {2, 3}, {2, 3}, b);
  leaf(3, {0, 1}, {2, 3}, b);
  leaf(0, {3}, {3}, b);
  ASSERT_TRUE(c.add_explicit("A", 8, a).ok());
  ASSERT_TRUE(c.add_explicit("B", 5, b).ok()) << c.add_explicit("B", 5, b).message;
  // C = 1*2+1 fits the free hosts (2 on SW_L1_3, 1 on SW_L1_1) but those leaves share no spine.
  EXPECT_EQ(c.state().free_hosts(), 3);
  auto result = c.add("C", 3);
  EXPECT_EQ(result.status, Status::kRefused) << result.message;
  EXPECT_EQ(c.state().free_hosts(), 3);
}

TEST(Cluster, BadRequestsChangeNothing) {
  const auto tree = FatTree::parse("xgft(2;4,8;1,4)");
  Cluster c(tree, make_placer("laas"));
  ASSERT_TRUE(c.add("a", 5).ok());
  const auto before = fingerprint(c);
  EXPECT_EQ(c.add("b", 0).status, Status::kBadRequest);
  EXPECT_EQ(c.add("b", -3).status, Status::kBadRequest);
  auto big = c.add("b", 33);
  EXPECT_EQ(big.status, Status::kBadRequest);
  EXPECT_NE(big.message.find("only 32"), std::string::npos);
  EXPECT_EQ(c.add("a", 2).status, Status::kDuplicate);
  EXPECT_EQ(c.remove("nobody").status, Status::kNotFound);
  EXPECT_EQ(c.add("bad name", 2).status, Status::kBadRequest);
  EXPECT_EQ(c.add("quote\"", 2).status, Status::kBadRequest);
  EXPECT_EQ(c.add(std::string(65, 'x'), 2).status, Status::kBadRequest);
  EXPECT_EQ(fingerprint(c), before);
  EXPECT_THROW(make_placer("best"), std::invalid_argument);
}

TEST(Cluster, ExplicitPlacementIsValidated) {
  const auto tree = FatTree::parse("xgft(2;4,8;1,4)");
  Cluster c(tree, make_placer("laas"));
  Placement bad;  // 3 + 1 hosts but the remainder leaf uses a spine the others do not
  for (int s = 0; s < 3; ++s) bad.hosts.push_back(tree.host_at(0, s));
  bad.hosts.push_back(tree.host_at(1, 0));
  for (int col = 0; col < 3; ++col) bad.links.push_back(tree.l1_link(0, col));
  bad.links.push_back(tree.l1_link(1, 3));
  const auto before = fingerprint(c);
  auto r = c.add_explicit("x", 4, bad);
  EXPECT_EQ(r.status, Status::kRefused);
  EXPECT_NE(r.message.find("theorem2"), std::string::npos) << r.message;
  EXPECT_EQ(fingerprint(c), before);
  bad.links.back() = tree.l1_link(1, 2);
  EXPECT_TRUE(c.add_explicit("x", 4, bad).ok());
  EXPECT_EQ(c.add_explicit("y", 1, bad).status, Status::kRefused);  // hosts already taken
}

TEST(LinkState, FaultyLinksAreAvoidedAndNeverTakenFromATenant) {
  const auto tree = FatTree::parse("xgft(2;4,8;1,4)");
  Cluster c(tree, make_placer("laas"));
  ASSERT_TRUE(c.add("a", 8).ok());  // 2x4 on leaves 0,1
  const auto held = c.find("a")->placement;
  c.set_faulty(held.links.front(), true);  // a tenant's link fails: the tenant keeps it
  EXPECT_EQ(c.find("a")->placement.links, held.links);
  c.set_faulty(tree.l1_link(2, 0), true);  // a free link fails
  ASSERT_TRUE(c.add("b", 8).ok());
  for (int l : c.find("b")->placement.links) EXPECT_FALSE(c.state().link_faulty(l));
  ASSERT_TRUE(c.remove("a").ok());
  EXPECT_FALSE(c.state().free_columns(1, 0)[0]);  // released but still faulty: not free
}

// The per-pod capacity counts the placer's necessary conditions read follow every kind of
// change: hosts and links taken and released, links failing and repaired, hosts down and up;
// on a slimmed tree (two hosts per up-link column) too.
TEST(LinkState, CapacityCountsFollowEveryChange) {
  for (const char* spec : {"xgft(3;4,4,4;1,4,4)", "pgft(3;4,4,3;1,2,2;1,2,2)"}) {
    const auto tree = FatTree::parse(spec);
    LinkState st(tree);
    ASSERT_EQ(capacity_mismatch(st), "") << spec;
    std::mt19937 rng(7);
    std::vector<Placement> held;
    for (int op = 0; op < 3000; ++op) {
      const int roll = static_cast<int>(rng() % 10);
      if (roll < 4) {
        Placement p;
        for (int k = 0; k < 3; ++k) {
          const HostId h = static_cast<HostId>(rng() % tree.num_hosts());
          if (st.host_owner(h) == kFree &&
              std::find(p.hosts.begin(), p.hosts.end(), h) == p.hosts.end())
            p.hosts.push_back(h);
          const LinkId l = static_cast<LinkId>(rng() % tree.num_links(1));
          if (st.link_owner(l) == kFree &&
              std::find(p.links.begin(), p.links.end(), l) == p.links.end())
            p.links.push_back(l);
        }
        st.assign(static_cast<TenantIndex>(held.size()), p);
        held.push_back(p);
      } else if (roll < 7 && !held.empty()) {
        const size_t i = rng() % held.size();
        st.release(static_cast<TenantIndex>(i), held[i]);
        held[i] = Placement{};  // released: an empty placement keeps the indices stable
      } else if (roll < 9) {
        const LinkId l = static_cast<LinkId>(rng() % tree.num_links(1));
        st.set_faulty(l, !st.link_faulty(l));
      } else {
        const HostId h = static_cast<HostId>(rng() % tree.num_hosts());
        st.set_host_down(h, !st.host_down(h));
      }
      ASSERT_EQ(capacity_mismatch(st), "") << spec << " op " << op;
    }
  }
}

TEST(LaasPlacer, ThreeLevelAcrossPods) {
  const auto tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  Cluster c(tree, make_placer("laas"));
  auto r = c.add("big", 22);  // 6 leaves (5 x 4 + 2): more than a pod's 4
  ASSERT_TRUE(r.ok()) << r.message;
  const auto& p = c.find("big")->placement;
  EXPECT_EQ(p.hosts.size(), 22u);
  EXPECT_GT(p.shape.pods.q, 0);
  std::set<int> leaves, pods;
  for (auto h : p.hosts) {
    leaves.insert(tree.leaf_of_host(h));
    pods.insert(tree.pod_of_leaf(tree.leaf_of_host(h)));
  }
  EXPECT_EQ(leaves.size(), 6u);
  EXPECT_GE(pods.size(), 2u);
  EXPECT_TRUE(laas::check::check_all(tree, views(c), {}).empty());
  // The two free hosts on the partly used leaf still serve a one-leaf tenant.
  ASSERT_TRUE(c.add("small", 2).ok());
}

TEST(SimplePlacer, TakesWholeSubtrees) {
  const auto tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  Cluster c(tree, make_placer("simple"));
  ASSERT_TRUE(c.add("one", 3).ok());
  ASSERT_TRUE(c.add("leaves", 6).ok());
  EXPECT_EQ(c.find("leaves")->placement.links.size(), 8u);  // 2 leaves x 4 up-links
  ASSERT_TRUE(c.add("pods", 20).ok());                      // 2 whole pods
  EXPECT_EQ(c.find("pods")->placement.links.size(), 2u * (4 * 4 + 4 * 4));
  // Rounded up to whole pods: the 12 hosts beyond the 20 asked for go to nobody else, so one-host
  // tenants filling the rest of the tree never enter those pods.
  EXPECT_EQ(c.find("pods")->placement.hosts.size(), 32u);
  for (int i = 0; c.add("fill" + std::to_string(i), 1).ok(); ++i) {
  }
  EXPECT_EQ(c.state().free_hosts(), 0);
  EXPECT_TRUE(laas::check::check_all(tree, views(c), {}).empty());
}

// Random add/remove sequences with the independent checker after every operation.
struct PropertyCase {
  const char* spec;
  const char* algorithm;
  int operations;
};

class AllocatorProperty : public ::testing::TestWithParam<PropertyCase> {};

TEST_P(AllocatorProperty, CheckerFindsNothingAfterAnyOperation) {
  const auto param = GetParam();
  const auto tree = FatTree::parse(param.spec);
  Cluster c(tree, make_placer(param.algorithm));
  std::mt19937 rng(12345);
  const auto empty = fingerprint(c);
  std::vector<laas::topology::LinkId> faulty;
  std::exponential_distribution<double> size(1.0 / std::max(2, tree.num_hosts() / 12));
  int next = 0, placed = 0, refused = 0, across_pods = 0;
  for (int op = 0; op < param.operations; ++op) {
    const int roll = static_cast<int>(rng() % 100);
    if (roll < 2 && tree.total_links() > 0) {
      const int l = static_cast<int>(rng() % tree.total_links());
      if (c.state().link_owner(l) == kFree && !c.state().link_faulty(l)) {
        c.set_faulty(l, true);
        faulty.push_back(l);
      }
    } else if (roll < 55 || c.tenants().empty()) {
      const int n = std::min(tree.num_hosts(), 1 + static_cast<int>(size(rng)));
      auto r = c.add("t" + std::to_string(next++), n);
      (r.ok() ? placed : refused)++;
      // A refusal from remembered failures must be one a placer without memory agrees with.
      if (r.status == Status::kRefused && n <= c.state().free_hosts()) {
        ASSERT_FALSE(make_placer(param.algorithm)->place(c.state(), n).placement)
            << "op " << op << ": " << r.message;
      }
      if (r.ok() && r.tenant->placement.shape.pods.q > 0) ++across_pods;
      ASSERT_TRUE(r.ok() || r.status == Status::kRefused) << r.message;
    } else {
      auto it = c.tenants().begin();
      std::advance(it, rng() % c.tenants().size());
      ASSERT_TRUE(c.remove(std::string(it->first)).ok());
    }
    const auto v = laas::check::check_all(tree, views(c), faulty);
    ASSERT_TRUE(v.empty()) << "op " << op << ": " << laas::check::to_string(v.front());
    const auto totals = laas::check::check_totals(
        tree, views(c),
        {tree.num_hosts() - c.state().free_hosts(), c.state().allocated_links(1),
         tree.height() == 3 ? c.state().allocated_links(2) : 0});
    ASSERT_TRUE(totals.empty()) << laas::check::to_string(totals.front());
    ASSERT_EQ(capacity_mismatch(c.state()), "") << "op " << op;
  }
  EXPECT_GT(placed, param.operations / 10);
  EXPECT_GT(refused, 0) << "the sequence never filled the tree";
  if (tree.height() == 3 && c.placer().name() == "laas") {
    EXPECT_GT(across_pods, 0) << "no tenant spanned pods";
  }
  while (!c.tenants().empty()) ASSERT_TRUE(c.remove(std::string(c.tenants().begin()->first)).ok());
  for (auto l : faulty) c.set_faulty(l, false);
  EXPECT_EQ(fingerprint(c), empty) << "releasing everything did not restore the state";
}

// 102,000 operations per algorithm over 2- and 3-level, parallel-link and slimmed trees.
#define LAAS_CASES(algo)                                                                          \
  PropertyCase{"xgft(2;4,8;1,4)", algo, 20000}, PropertyCase{"pgft(2;8,4;1,4;1,2)", algo, 20000}, \
      PropertyCase{"xgft(2;8,8;1,4)", algo, 12000},                                               \
      PropertyCase{"xgft(3;4,4,4;1,4,4)", algo, 20000},                                           \
      PropertyCase{"pgft(3;4,4,3;1,2,2;1,2,2)", algo, 15000}, PropertyCase {                      \
    "xgft(3;6,6,6;1,3,6)", algo, 15000                                                            \
  }

// Test names such as "pgft_2_8_4_1_4_1_2", from the spec.
std::string case_name(const ::testing::TestParamInfo<PropertyCase>& info) {
  std::string name;
  for (const char* c = info.param.spec; *c; ++c)
    if (std::isalnum(static_cast<unsigned char>(*c)))
      name += *c;
    else if (!name.empty() && name.back() != '_')
      name += '_';
  while (!name.empty() && name.back() == '_') name.pop_back();
  return name;
}

INSTANTIATE_TEST_SUITE_P(Laas, AllocatorProperty, ::testing::Values(LAAS_CASES("laas")), case_name);
INSTANTIATE_TEST_SUITE_P(Simple, AllocatorProperty, ::testing::Values(LAAS_CASES("simple")),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Unconstrained, AllocatorProperty,
                         ::testing::Values(LAAS_CASES("unconstrained")), case_name);

TEST(ExplicitHosts, LinksAreChosenOrTheConditionIsNamed) {
  const auto tree = FatTree::parse("xgft(2;4,8;1,4)");
  Cluster c(tree, make_placer("laas"));
  // 4 + 4 + 2 hosts on leaves 1, 2 and 5: Theorem 1 holds, links are chosen.
  std::vector<int> hosts = {4, 5, 6, 7, 8, 9, 10, 11, 20, 21};
  auto ok = c.add_on_hosts("t", hosts, false, nullptr);
  ASSERT_TRUE(ok.ok()) << ok.message;
  EXPECT_EQ(c.find("t")->placement.links.size(), 10u);
  // 3 + 1 + 1 hosts: two leaves smaller than the largest.
  auto bad = c.add_on_hosts("u", {0, 1, 2, 12, 16}, false, nullptr);
  EXPECT_EQ(bad.status, Status::kRefused);
  EXPECT_NE(bad.message.find("Theorem 1"), std::string::npos) << bad.message;
  EXPECT_EQ(c.add_on_hosts("u", {4, 28}, false, nullptr).status, Status::kRefused);  // taken
  EXPECT_EQ(c.tenants().size(), 1u);
}

// No leaf is wholly free, so the paper's whole-leaf scheme cannot place 24 hosts across pods;
// partly used leaves with a common column set can.
TEST(LaasPlacer, PartialLeavesAcrossPodsWhenNoLeafIsWhole) {
  const auto tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  Cluster c(tree, make_placer("laas"));
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf)
    ASSERT_TRUE(
        c.add_on_hosts("one" + std::to_string(leaf), {tree.host_at(leaf, 0)}, false, nullptr).ok());
  auto r = c.add("wide", 24);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto& p = c.find("wide")->placement;
  EXPECT_EQ(p.shape.leaves.d, 3);
  EXPECT_EQ(p.shape.pods.q * p.shape.pods.d + p.shape.pods.r, 8);
  std::vector<laas::check::TenantView> all;
  for (const auto& [name, t] : c.tenants())
    all.push_back({name, t.placement.hosts, t.placement.links, true});
  EXPECT_TRUE(laas::check::check_all(tree, all, {}).empty());
}

// First refused-yet-feasible case: each level-2 switch position is its own FBG_2,
// so its columns need not be the same as the other positions'. u and v leave column 1 free on
// the first level-2 switch of each pod and column 0 on the second; the paper release's common
// set for all switches is empty, yet z fits on leaves 0 and 2 with different columns per
// switch.
TEST(LaasPlacer, IndependentColumnsPerLevel2Switch) {
  const auto tree = FatTree::parse("xgft(3;2,2,2;1,2,2)");
  Cluster c(tree, make_placer("laas"));
  Placement u, v;
  u.hosts = {2, 6};
  u.links = {2, 6, 8, 12};
  v.hosts = {3, 7};
  v.links = {3, 7, 11, 15};
  ASSERT_TRUE(c.add_explicit("u", 2, u).ok());
  ASSERT_TRUE(c.add_explicit("v", 2, v).ok());
  const auto quick = c.placer().for_candidates();  // backfill candidates' placer places it too
  ASSERT_TRUE(quick);
  EXPECT_TRUE(quick->place(c.state(), 4).placement);
  auto r = c.add("z", 4);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(c.find("z")->placement.hosts, (std::vector<int>{0, 1, 4, 5}));
  EXPECT_EQ(c.find("z")->placement.links, (std::vector<int>{0, 1, 4, 5, 9, 10, 13, 14}));
  EXPECT_TRUE(laas::check::check_all(tree, views(c), {}).empty());
}

// Second case: the partial-leaf search must try more than one column set per seed
// pod. Free columns are {0,1}, {2,3} in pod 0 and {4,5}, {2,3} in pod 1 (the others faulty),
// two hosts free per leaf: 4 hosts fit only as 2 + 2 on leaves 1 and 3, columns {2,3}.
TEST(LaasPlacer, PartialLeafSearchTriesEveryColumnSet) {
  const auto tree = FatTree::parse("xgft(3;4,2,2;1,6,2)");
  Cluster c(tree, make_placer("laas"));
  const std::vector<std::vector<int>> free_cols = {{0, 1}, {2, 3}, {4, 5}, {2, 3}};
  std::vector<laas::topology::LinkId> faulty;
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    for (int col = 0; col < tree.up_columns(1); ++col) {
      const auto& f = free_cols[leaf];
      if (std::find(f.begin(), f.end(), col) != f.end()) continue;
      c.set_faulty(tree.l1_link(leaf, col), true);
      faulty.push_back(tree.l1_link(leaf, col));
    }
    const std::string name = "b" + std::to_string(leaf);
    ASSERT_TRUE(
        c.add_on_hosts(name, {tree.host_at(leaf, 0), tree.host_at(leaf, 1)}, false, nullptr).ok());
  }
  const auto quick = c.placer().for_candidates();  // backfill candidates' placer places it too
  ASSERT_TRUE(quick);
  EXPECT_TRUE(quick->place(c.state(), 4).placement);
  auto r = c.add("w", 4);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto& p = c.find("w")->placement;
  EXPECT_EQ(p.hosts, (std::vector<int>{6, 7, 14, 15}));  // leaves 1 and 3
  for (int l : p.links) {
    if (tree.link_level(l) == 1) {
      EXPECT_TRUE(tree.link_column(l) == 2 || tree.link_column(l) == 3);
    }
  }
  EXPECT_TRUE(laas::check::check_all(tree, views(c), faulty).empty());
}

// Remembered failures: a refused size is refused again at once while nothing is freed, and a
// repair (or a release) lets the search find what it made possible.
TEST(LaasPlacer, RememberedFailureEndsWithARepair) {
  const auto tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  Cluster c(tree, make_placer("laas"));
  for (int l = 0; l < tree.num_links(1); ++l) c.set_faulty(l, true);
  const auto first = c.add("x", 8);
  EXPECT_EQ(first.status, Status::kRefused);
  EXPECT_EQ(first.message.find("nothing released"), std::string::npos) << first.message;
  const auto again = c.add("x", 8);
  EXPECT_EQ(again.status, Status::kRefused);
  EXPECT_NE(again.message.find("nothing released"), std::string::npos) << again.message;
  for (int l = 0; l < tree.num_links(1); ++l) c.set_faulty(l, false);
  EXPECT_TRUE(c.add("x", 8).ok());
  EXPECT_TRUE(laas::check::check_all(tree, views(c), {}).empty());
}

// Refusals of several sizes are remembered side by side (a backfill pass asks for many sizes
// between two releases); a release still ends each of them.
TEST(LaasPlacer, RefusalsOfSeveralSizesAreRememberedApart) {
  const auto tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  Cluster c(tree, make_placer("laas"));
  for (int l = 0; l < tree.num_links(1); ++l) c.set_faulty(l, true);
  for (int n : {8, 12, 6}) {
    const auto first = c.add("x", n);
    EXPECT_EQ(first.status, Status::kRefused);
    EXPECT_EQ(first.message.find("nothing released"), std::string::npos) << first.message;
  }
  for (int n : {8, 12, 6}) {
    const auto again = c.add("x", n);
    EXPECT_EQ(again.status, Status::kRefused);
    EXPECT_NE(again.message.find("nothing released"), std::string::npos)
        << n << ": " << again.message;
  }
  // A what-if copy is another state: nothing remembered about the original applies to it.
  LinkState copy = c.state();
  const auto on_copy = c.placer().place(copy, 8);
  EXPECT_EQ(on_copy.reason.find("nothing released"), std::string::npos) << on_copy.reason;
  // Pod 0's up-links back: the sizes it allows are searched again and placed.
  for (int leaf = 0; leaf < tree.leaves_per_pod(); ++leaf)
    for (int col = 0; col < tree.up_columns(1); ++col) c.set_faulty(tree.l1_link(leaf, col), false);
  const auto six = c.add("x", 6);
  EXPECT_TRUE(six.ok()) << six.message;  // 4 + 2
  const auto eight = c.add("y", 8);
  EXPECT_TRUE(eight.ok()) << eight.message;  // 4 + 4 on the two leaves left
  EXPECT_TRUE(laas::check::check_all(tree, views(c), {}).empty());
}
