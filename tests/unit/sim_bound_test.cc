// The bound for link-isolating allocators (sim/bound.h): the model builder, the packing
// oracle with the real glpsol, FIFO with free repacking, and the check that an allocator
// breaking the placement rules beats it.
#include <gtest/gtest.h>

#include "allocator/placer.h"
#include "sim/bound.h"
#include "sim/generator.h"
#include "sim/io.h"
#include "sim/simulator.h"

using namespace laas::sim;
using laas::topology::FatTree;

namespace {

// Three leaves of two hosts, one up-link column each: a tenant on two or three leaves holds
// the column of every leaf it uses.
const FatTree& thin() {
  static const FatTree t = FatTree::parse("xgft(2;2,3;1,1)");
  return t;
}

bool has_var(const std::string& lp, const std::string& var) {
  return lp.find(" " + var + "\n") != std::string::npos;
}

// Bare metal that claims dedicated links: what an allocator ignoring Theorems 1-2 would do.
class RuleBreaker : public laas::allocator::Placer {
 public:
  std::string name() const override { return "rule-breaker"; }
  bool isolates() const override { return true; }
  laas::allocator::PlaceResult place(const laas::allocator::LinkState& s,
                                     int hosts) const override {
    return inner_->place(s, hosts);
  }

 private:
  std::unique_ptr<laas::allocator::Placer> inner_ = laas::allocator::make_placer("unconstrained");
};

}  // namespace

TEST(SimBound, FabricOfATree) {
  auto f = packing_fabric(thin(), 1);
  EXPECT_EQ(f.units, 3);
  EXPECT_EQ(f.slots, 2);
  EXPECT_EQ(f.columns, 1);
  ASSERT_EQ(f.needed.size(), 3u);
  auto rails = packing_fabric(FatTree::parse("xgft(2;4,8;1,4)"), 4);
  EXPECT_EQ(rails.units, 2);
  EXPECT_EQ(rails.rails, 4);
  EXPECT_THROW(packing_fabric(thin(), 2), std::invalid_argument);
}

// A tenant of 3 on leaves of 2: no one-leaf shape; 2+1 (D=2) and 1+1+1 (D=1).
TEST(SimBound, ModelHasTheShapesOfTheorem1) {
  PackingFabric f{3, 1, 2, 2, {0, 1, 2}};
  const std::string lp = packing_lp(f, {3, 1});
  EXPECT_FALSE(has_var(lp, "o_0"));  // 3 > 2 slots: never on one leaf
  EXPECT_TRUE(has_var(lp, "s_0_1"));
  EXPECT_TRUE(has_var(lp, "s_0_2"));
  EXPECT_TRUE(has_var(lp, "b_0_2_2"));   // remainder of 2+1 may be any leaf
  EXPECT_FALSE(has_var(lp, "b_0_1_0"));  // 1+1+1 has no remainder
  EXPECT_TRUE(has_var(lp, "o_1"));       // the 1 fits a leaf, no links
  EXPECT_FALSE(has_var(lp, "s_1_1"));    // ... and nothing else
  // D=2 needs both columns.
  EXPECT_NE(lp.find("  - 2 s_0_2\n  = 0"), std::string::npos);
  // Each leaf's column is held once at most; each leaf holds 2 hosts at most.
  EXPECT_NE(lp.find("  <= 2\n"), std::string::npos);
}

TEST(SimBound, ModelOfAShapeNothingFits) {
  PackingFabric f{2, 1, 2, 2, {0, 1, 2}};
  const std::string lp = packing_lp(f, {5});  // 5 hosts on two leaves of 2
  EXPECT_NE(lp.find(" never: + 1 zero_ >= 1\n"), std::string::npos);
}

TEST(SimBound, GlpsolDecidesPackings) {
  auto solve = glpsol_solver(10);
  const auto f = packing_fabric(thin(), 1);
  // 3+2+1: the 3 on two leaves (2+1) with their columns, the 2 on the third leaf, the 1 beside
  // the remainder.
  EXPECT_EQ(solve(packing_lp(f, {3, 2, 1})), Solved::kFeasible);
  // Two tenants of 3 each need the columns of at least two of the three leaves.
  EXPECT_EQ(solve(packing_lp(f, {3, 3})), Solved::kInfeasible);
  // 2+2+1 on the three leaves, each leaf's one column enough for two hosts (slimmed 2:1).
  EXPECT_EQ(solve(packing_lp(f, {5})), Solved::kFeasible);
  EXPECT_EQ(solve(packing_lp(f, {7})), Solved::kInfeasible);  // no shape at all
}

TEST(SimBound, OracleAsksTheSolverOnlyWhatTheAllocatorCannotShow) {
  int asked = 0;
  auto solver = glpsol_solver(10);
  PackingOracle oracle(thin(), 1, [&](const std::string& lp) {
    ++asked;
    return solver(lp);
  });
  EXPECT_TRUE(oracle.feasible({1, 2}));
  EXPECT_FALSE(oracle.feasible({4, 4}));  // 8 hosts > 6
  EXPECT_FALSE(oracle.feasible({3, 3}));
  EXPECT_FALSE(oracle.feasible({3, 3}));  // remembered
  EXPECT_EQ(oracle.counts().too_large, 1);
  EXPECT_EQ(oracle.counts().remembered, 1);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(oracle.counts().solved, 1);
  EXPECT_EQ(oracle.counts().by_allocator, 1);
}

TEST(SimBound, UnsolvedCountsAsPlaceable) {
  PackingOracle oracle(thin(), 1, [](const std::string&) { return Solved::kUnknown; });
  EXPECT_TRUE(oracle.feasible({3, 3}));
  EXPECT_EQ(oracle.counts().unknown, 1);
}

// Without a solver only the allocator's own placements count (laas-repack): what it cannot
// place is a no, and counted so.
TEST(SimBound, WithoutASolverOnlyTheAllocatorSaysYes) {
  PackingOracle oracle(thin(), 1, LpSolver{});
  EXPECT_TRUE(oracle.feasible({1, 2}));
  EXPECT_FALSE(oracle.feasible({3, 3}));
  EXPECT_EQ(oracle.counts().by_allocator, 1);
  EXPECT_EQ(oracle.counts().not_by_allocator, 1);
  EXPECT_EQ(oracle.counts().solved, 0);
}

// The allocator re-placing every running tenant is a link-isolating allocator that moves
// tenants: never above the bound, which the check confirms tenant by tenant.
TEST(SimBound, RepackingByTheAllocatorStaysBelowTheBound) {
  const FatTree tree = FatTree::parse("xgft(2;4,4;1,4)");
  GenSpec g;
  g.size.kind = parse_size_kind("exp");
  g.size.mean = 4;
  g.size.max_size = tree.num_hosts();
  g.tenants = 80;
  g.runtime_min = 20;
  g.runtime_max = 300;
  g.seed = 3;
  const Workload w = generate(g);
  PackingOracle with_solver(tree, 1, glpsol_solver(10));
  const BoundResult bound = fifo_bound(tree, 1, w, with_solver);
  PackingOracle allocator_only(tree, 1, LpSolver{});
  const BoundResult repack = fifo_bound(tree, 1, w, allocator_only);
  EXPECT_GT(allocator_only.counts().by_allocator, 0);
  EXPECT_LE(repack.whole.hosts, bound.whole.hosts + 1e-9);
  EXPECT_TRUE(check_against_bound(bound, repack.start, repack.whole.hosts).empty());
}

// Two tenants of 3 arrive together: any link-isolating allocator starts the second when the
// first ends; bare metal starts both at once.
TEST(SimBound, FifoWithRepackingHandComputed) {
  Workload w{{1, 3, 0, 100}, {2, 3, 0, 50}, {3, 1, 0, 10}};
  PackingOracle oracle(thin(), 1, glpsol_solver(10));
  auto b = fifo_bound(thin(), 1, w, oracle);
  EXPECT_EQ(b.placed, 3);
  EXPECT_EQ(b.start[0], 0);
  EXPECT_EQ(b.start[1], 100);  // FIFO: the 1 waits behind it
  EXPECT_EQ(b.start[2], 100);
  // Busy 3 of 6 hosts over [0, 100), 4 over [100, 110), 3 over [110, 150).
  EXPECT_NEAR(b.whole.hosts, (3 * 100.0 + 4 * 10 + 3 * 40) / (6 * 150.0), 1e-9);
}

// The check catches an allocator that breaks the rules, and passes the LaaS allocator.
TEST(SimBound, CheckCatchesAnAllocatorAboveTheBound) {
  Workload w{{1, 3, 0, 100}, {2, 3, 0, 50}, {3, 1, 0, 10}};
  PackingOracle oracle(thin(), 1, glpsol_solver(10));
  auto b = fifo_bound(thin(), 1, w, oracle);
  auto starts = [](const SimResult& r) {
    std::vector<double> s;
    for (auto& t : r.tenants) s.push_back(t.start);
    return s;
  };
  SimOptions o;
  RuleBreaker breaker;
  auto broken = simulate(thin(), breaker, w, o);
  auto found = check_against_bound(b, starts(broken), broken.whole.hosts);
  ASSERT_FALSE(found.empty());
  EXPECT_NE(found[0].find("tenant 1 started at 0, before the earliest start"), std::string::npos)
      << found[0];
  EXPECT_NE(found.back().find("above the bound"), std::string::npos) << found.back();

  auto laas = laas::allocator::make_placer("laas");
  o.check.every = 1;
  auto legal = simulate(thin(), *laas, w, o);
  EXPECT_TRUE(check_against_bound(b, starts(legal), legal.whole.hosts).empty());
}

// A tenant placed although no placement of it exists.
TEST(SimBound, CheckCatchesAnImpossiblePlacement) {
  BoundResult b;
  b.start = {0, -1};
  auto found = check_against_bound(b, {0, 5}, 0);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("no placement of it exists"), std::string::npos);
}
