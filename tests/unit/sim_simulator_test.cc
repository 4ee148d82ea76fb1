#include <gtest/gtest.h>

#include <sstream>

#include "allocator/placer.h"
#include "sim/audit.h"
#include "sim/io.h"
#include "sim/simulator.h"
#include "topology/servers.h"

using namespace laas::sim;
using laas::topology::FatTree;

namespace {

const FatTree& tree32() {
  static const FatTree t = FatTree::parse("xgft(2;4,8;1,4)");  // 32 hosts
  return t;
}

SimResult run(const Workload& w, const std::string& alg, const std::string& policy, int check = 1) {
  auto placer = laas::allocator::make_placer(alg);
  SimOptions o;
  o.policy = policy;
  o.check.every = check;
  return simulate(tree32(), *placer, w, o);
}

}  // namespace

// A (20 hosts, 10 units) runs; B (20) waits, blocking C (12) under strict FIFO until A ends.
TEST(SimSimulator, FifoHandComputed) {
  Workload w{{1, 20, 0, 10}, {2, 20, 0, 5}, {3, 12, 0, 10}};
  auto r = run(w, "unconstrained", "fifo");
  EXPECT_EQ(r.placed, 3);
  EXPECT_TRUE(r.saturated);
  EXPECT_EQ(r.tenants[1].start, 10);
  EXPECT_EQ(r.tenants[2].start, 10);
  EXPECT_EQ(r.window.t0, 0);
  EXPECT_EQ(r.window.t1, 10);
  EXPECT_DOUBLE_EQ(r.window.hosts, 20.0 / 32);
  // Whole run [0, 20]: 20 hosts for 10, 32 for 5, 12 for 5.
  EXPECT_DOUBLE_EQ(r.whole.hosts, (200.0 + 160 + 60) / (32 * 20));
  EXPECT_GE(r.checks_run, 6);
}

// EASY: C ends by the head's shadow time (10), so it starts at once.
TEST(SimSimulator, BackfillHandComputed) {
  Workload w{{1, 20, 0, 10}, {2, 20, 0, 5}, {3, 12, 0, 10}};
  auto r = run(w, "unconstrained", "backfill");
  EXPECT_EQ(r.tenants[2].start, 0);
  EXPECT_EQ(r.tenants[1].start, 10);
  EXPECT_DOUBLE_EQ(r.window.hosts, 1.0);
  EXPECT_DOUBLE_EQ(r.whole.hosts, (320.0 + 100) / (32 * 15));
}

// D would still hold 12 hosts at the shadow time, leaving 20 < 21 for the head: no backfill.
TEST(SimSimulator, BackfillKeepsReservation) {
  Workload w{{1, 20, 0, 10}, {2, 21, 0, 5}, {3, 12, 0, 100}, {4, 2, 0, 3}};
  auto r = run(w, "unconstrained", "backfill");
  EXPECT_EQ(r.tenants[3].start, 0);   // short: ends before the shadow time
  EXPECT_EQ(r.tenants[1].start, 10);  // the head starts on time
  EXPECT_EQ(r.tenants[2].start, 15);  // D waited for B
}

TEST(SimSimulator, RejectsImpossibleAndArrivesLate) {
  Workload w{{1, 40, 0, 10}, {2, 8, 5, 10}, {3, 8, 5, 1}};
  auto r = run(w, "unconstrained", "fifo");
  EXPECT_EQ(r.rejected, 1);
  EXPECT_EQ(r.placed, 2);
  EXPECT_FALSE(r.saturated);
  EXPECT_EQ(r.tenants[1].start, 5);
  EXPECT_EQ(r.whole.t0, 0);  // the first arrival, even of a rejected tenant
  EXPECT_EQ(r.whole.t1, 15);
  EXPECT_DOUBLE_EQ(r.whole.hosts, (16.0 * 1 + 8 * 9) / (32 * 15));
}

TEST(SimSimulator, LogRoundTripsThroughAudit) {
  Workload w{{1, 10, 0, 10}, {2, 13, 0, 5}, {3, 9, 1, 10}, {4, 30, 2, 3}};
  for (std::string alg : {"laas", "simple", "unconstrained"}) {
    auto placer = laas::allocator::make_placer(alg);
    std::stringstream log;
    write_log_header(log, tree32(), alg, placer->isolates());
    SimOptions o;
    o.check.every = 1;
    auto r = simulate(tree32(), *placer, w, o, log_sink(log));
    EXPECT_EQ(r.placed + r.rejected, 4) << alg;
    auto rep = audit_log(tree32(), log, "mem.log");
    EXPECT_EQ(rep.adds, r.placed) << alg;
    EXPECT_EQ(rep.removes, r.placed) << alg;
    EXPECT_TRUE(rep.problems.empty()) << alg << ": " << rep.problems.front();
  }
}

TEST(SimSimulator, AuditCatchesSharedHost) {
  std::istringstream log(
      "# laas-sim log topology=xgft(2;4,8;1,4) algorithm=unconstrained isolated=0\n"
      "ADD 0 1 2 hosts 2 0 1 links 0\n"
      "ADD 0 2 2 hosts 2 1 2 links 0\n"
      "REM 4 1 2 hosts 2 0 1 links 0\n"
      "REM 5 9 1 hosts 1 0 links 0\n"
      "ADD x\n");
  auto rep = audit_log(tree32(), log, "bad.log");
  ASSERT_GE(rep.problems.size(), 3u);
  EXPECT_NE(rep.problems[0].find("bad.log:3: "), std::string::npos) << rep.problems[0];
  bool unknown = false, malformed = false;
  for (auto& p : rep.problems) {
    unknown |= p == "bad.log:5: REM of an unknown tenant";
    malformed |= p == "bad.log:6: malformed log line";
  }
  EXPECT_TRUE(unknown);
  EXPECT_TRUE(malformed);
}

// The header the simulator writes is read back by one reader, for the audit and for the tree
// the audit builds; a bad rails value is named, not taken.
TEST(SimSimulator, LogHeaderReadsWhatTheWriterWrote) {
  std::stringstream written;
  write_log_header(written, tree32(), "laas", true, 4);
  std::string line;
  std::getline(written, line);
  auto header = parse_log_header(line);
  ASSERT_TRUE(header.has_value()) << line;
  EXPECT_EQ(header->topology, tree32().spec().text());
  EXPECT_TRUE(header->isolated);
  EXPECT_EQ(header->rails, 4);
  EXPECT_TRUE(header->rails_error.empty());
  EXPECT_FALSE(parse_log_header("ADD 0 1 2 hosts 2 0 1 links 0").has_value());
  auto bad = parse_log_header("# laas-sim log topology=t isolated=0 rails=8x");
  ASSERT_TRUE(bad.has_value());
  EXPECT_FALSE(bad->isolated);
  EXPECT_EQ(bad->rails, 1);
  EXPECT_EQ(bad->rails_error, "rails=8x is not a positive whole number");
  std::istringstream log("# comment\n# laas-sim log algorithm=laas topology=xgft(2;4,8;1,4)\n");
  EXPECT_EQ(logged_topology(log), "xgft(2;4,8;1,4)");
}

TEST(SimSimulator, UnknownPolicy) {
  EXPECT_THROW(make_policy("lifo"), std::invalid_argument);
  EXPECT_THROW(laas::allocator::make_placer("best"), std::invalid_argument);
}

// On a 4-rail tree (2 groups of 4 servers, 4 ports each) tenants of 2 servers take 8
// ports, whole servers on all 4 rails, checked by the independent checker after every change.
TEST(SimSimulator, RailsPlaceWholeServersChecked) {
  const auto servers = laas::topology::rail_servers(tree32(), 4);
  ASSERT_EQ(servers.count(), 8);
  for (const auto& s : servers.ports) ASSERT_EQ(s.size(), 4u);
  EXPECT_THROW(laas::topology::rail_servers(tree32(), 3), laas::topology::SpecError);
  Workload w{{1, 8, 0, 10}, {2, 8, 0, 10}, {3, 8, 0, 10}, {4, 8, 0, 10}, {5, 8, 0, 10}};
  SimOptions o;
  o.check.every = 1;
  auto laas = laas::allocator::make_server_placer("laas", servers.ports);
  auto r = simulate(tree32(), *laas, w, o);
  EXPECT_EQ(r.placed, 5);
  EXPECT_DOUBLE_EQ(r.window.hosts, 1.0);  // 4 tenants of 2 servers fill the tree, then the 5th
  for (const auto& t : r.tenants) EXPECT_EQ(t.hosts_held, 8);
  auto free = laas::allocator::make_server_placer("unconstrained", servers.ports);
  EXPECT_EQ(simulate(tree32(), *free, w, o).placed, 5);
  EXPECT_THROW(laas::allocator::make_server_placer("simple", servers.ports), std::invalid_argument);
}
