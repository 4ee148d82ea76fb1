// The switch check's bookkeeping (service/switch_check.h): a pass's pace, which answers count,
// mismatches per switch, repairs asked, and the rate-limited log.
#include "service/switch_check.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace laas::service {
namespace {

using Clock = SwitchCheck::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

SwitchCheckLimits limits(int interval_s) {
  SwitchCheckLimits l;
  l.interval_s = interval_s;
  return l;
}

std::vector<CheckedSwitch> two_switches() { return {{0xa, "leaf-a", 3}, {0xb, "leaf-b", 2}}; }

// Reads until the pass has asked every block, answering each as `matches` says.
template <typename Answer>
std::vector<BlockRead> run_pass(SwitchCheck& c, Clock::time_point& now, std::uint64_t run,
                                Answer answer) {
  std::vector<BlockRead> all;
  for (int tick = 0; tick < 1000; ++tick) {
    for (const auto& r : c.next_reads(run, now)) {
      all.push_back(r);
      answer(r);
    }
    if (c.report(now)["pass"]["done"].get<bool>()) break;
    now += milliseconds(250);
  }
  return all;
}

TEST(SwitchCheck, OffWhenTheIntervalIsZero) {
  SwitchCheck c(limits(0));
  EXPECT_FALSE(c.enabled());
  EXPECT_FALSE(c.pass_due(Clock::now()));
}

TEST(SwitchCheck, APassReadsEveryBlockOnceSpreadOverTheInterval) {
  SwitchCheck c(limits(10));
  auto now = Clock::time_point{} + seconds(100);
  EXPECT_TRUE(c.pass_due(now));
  c.start_pass(two_switches(), now);
  EXPECT_FALSE(c.pass_due(now));
  const auto start = now;
  const auto reads = run_pass(c, now, 1, [&](const BlockRead& r) {
    EXPECT_EQ(c.answer(r.guid, r.block, 1, true, now), ReadOutcome::kMatch);
  });
  ASSERT_EQ(reads.size(), 5u);
  EXPECT_EQ(reads[0], (BlockRead{0xa, 0}));
  EXPECT_EQ(reads[2], (BlockRead{0xa, 2}));
  EXPECT_EQ(reads[4], (BlockRead{0xb, 1}));
  // 5 blocks over 80% of 10 s: 0.625 a second, the first at once: the last after ~6.4 s.
  const double took = std::chrono::duration<double>(now - start).count();
  EXPECT_GT(took, 5.0);
  EXPECT_LT(took, 8.0);
  EXPECT_FALSE(c.pass_due(now));  // the next one starts an interval after this one did
  EXPECT_TRUE(c.pass_due(start + seconds(10)));
  EXPECT_EQ(c.mismatches_total(), 0);
  EXPECT_FALSE(c.take_repair());
}

TEST(SwitchCheck, ThePaceNeverExceedsTheCap) {
  SwitchCheckLimits l = limits(1);
  l.max_reads_per_second = 100;
  SwitchCheck c(l);
  auto now = Clock::time_point{} + seconds(1);
  c.start_pass({{0x1, "big", 100000}}, now);
  size_t read = 0;
  for (int tick = 0; tick < 40; ++tick) {  // 10 s
    now += milliseconds(250);
    for (const auto& r : c.next_reads(1, now)) {
      ++read;
      c.answer(r.guid, r.block, 1, true, now);
    }
  }
  EXPECT_LE(read, 1001u + 1);
  EXPECT_GE(read, 990u);
  EXPECT_EQ(c.report(now)["reads_per_second"].get<double>(), 100.0);
}

TEST(SwitchCheck, AMismatchIsCountedPerSwitchLoggedAndAsksForARepair) {
  SwitchCheck c(limits(10));
  auto now = Clock::time_point{};
  c.start_pass(two_switches(), now);
  run_pass(c, now, 7, [&](const BlockRead& r) {
    const bool bad = r.guid == 0xb && r.block == 1;
    EXPECT_EQ(c.answer(r.guid, r.block, 7, !bad, now),
              bad ? ReadOutcome::kMismatch : ReadOutcome::kMatch);
  });
  EXPECT_EQ(c.mismatches_total(), 1);
  EXPECT_TRUE(c.take_repair());
  EXPECT_FALSE(c.take_repair());
  const auto j = c.report(now);
  ASSERT_EQ(j["switches"].size(), 1u);
  EXPECT_EQ(j["switches"][0]["name"], "leaf-b");
  EXPECT_EQ(j["switches"][0]["mismatches"], 1);
  EXPECT_EQ(j["switches"][0]["blocks_differing"], nlohmann::json::array({1}));
  const auto lines = c.take_log_lines(now);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("leaf-b"), std::string::npos);
  EXPECT_NE(lines[0].find("LFT block 1 (LIDs 64-127)"), std::string::npos);
  // The next pass finds the block repaired: still counted once, no longer differing.
  now += seconds(10);
  ASSERT_TRUE(c.pass_due(now));
  c.start_pass(two_switches(), now);
  run_pass(c, now, 8, [&](const BlockRead& r) { c.answer(r.guid, r.block, 8, true, now); });
  EXPECT_EQ(c.mismatches_total(), 1);
  EXPECT_TRUE(c.report(now)["switches"][0]["blocks_differing"].empty());
  EXPECT_EQ(c.passes_total(), 2);
}

TEST(SwitchCheck, AnswersThatStraddleARoutingRunOrWereNotAskedDoNotCount) {
  SwitchCheck c(limits(10));
  auto now = Clock::time_point{};
  c.start_pass(two_switches(), now);
  const auto reads = c.next_reads(3, now);
  ASSERT_EQ(reads.size(), 1u);
  // A Set's answer for a block nobody asked.
  EXPECT_EQ(c.answer(0xb, 0, 3, false, now), ReadOutcome::kNotAsked);
  // A routing run started (run 4) between the read and its answer: not compared.
  EXPECT_EQ(c.answer(reads[0].guid, reads[0].block, 4, false, now), ReadOutcome::kStale);
  // Answered once only.
  EXPECT_EQ(c.answer(reads[0].guid, reads[0].block, 3, false, now), ReadOutcome::kNotAsked);
  EXPECT_EQ(c.mismatches_total(), 0);
  EXPECT_FALSE(c.take_repair());
}

TEST(SwitchCheck, UnansweredReadsAreGivenUpAndTheCallerCanHandOneBack) {
  SwitchCheckLimits l = limits(1);
  l.answer_timeout = seconds(2);
  SwitchCheck c(l);
  auto now = Clock::time_point{};
  c.start_pass({{0x1, "s", 1}, {0x2, "t", 1}}, now);
  auto first = c.next_reads(1, now);
  ASSERT_EQ(first.size(), 1u);
  now += seconds(1);
  auto second = c.next_reads(1, now);
  ASSERT_EQ(second.size(), 1u);
  c.forget(second[0]);  // could not be sent
  EXPECT_EQ(c.reads_total(), 1);
  now += seconds(2);
  c.next_reads(1, now);  // gives the first up
  EXPECT_EQ(c.unanswered_total(), 1);
  EXPECT_TRUE(c.report(now)["pass"]["done"].get<bool>());
  EXPECT_EQ(c.answer(first[0].guid, first[0].block, 1, false, now), ReadOutcome::kNotAsked);
}

TEST(SwitchCheck, NoNewReadsWhileTooManyAreOutstanding) {
  SwitchCheckLimits l = limits(1);
  l.max_outstanding = 3;
  SwitchCheck c(l);
  auto now = Clock::time_point{};
  c.start_pass({{0x1, "s", 100}}, now);
  size_t asked = 0;
  for (int i = 0; i < 10; ++i) {
    now += milliseconds(500);
    asked += c.next_reads(1, now).size();
  }
  EXPECT_EQ(asked, 3u);
}

TEST(SwitchCheck, TheLogIsRateLimitedAndSaysHowManyItLeftOut) {
  SwitchCheckLimits l = limits(1);
  l.log_lines_per_minute = 2;
  l.max_reads_per_second = 1000;
  SwitchCheck c(l);
  auto now = Clock::time_point{};
  c.start_pass({{0x1, "s", 10}}, now);
  now += seconds(1);
  for (const auto& r : c.next_reads(1, now)) c.answer(r.guid, r.block, 1, false, now);
  EXPECT_EQ(c.mismatches_total(), 10);
  EXPECT_EQ(c.take_log_lines(now).size(), 2u);
  EXPECT_TRUE(c.take_log_lines(now + seconds(1)).empty());
  const auto later = c.take_log_lines(now + seconds(61));
  ASSERT_EQ(later.size(), 1u);
  EXPECT_NE(later[0].find("8 more LFT block(s)"), std::string::npos);
}

TEST(SwitchCheck, PortTablesAreReadAfterTheLftBlocksAndAskForAHeavySweep) {
  SwitchCheckLimits l = limits(1);
  l.max_reads_per_second = 1000;
  SwitchCheck c(l);
  auto now = Clock::time_point{};
  c.start_pass({{0xa, "leaf-a", 2, {{TableKind::kSl2Vl, 3, 5}, {TableKind::kPortInfo, 0, 0}}},
                {0xc, "host-c", 0, {{TableKind::kPKey, 1, 0}}}},
               now);
  now += seconds(1);
  const auto reads = c.next_reads(1, now);
  ASSERT_EQ(reads.size(), 5u);
  EXPECT_EQ(reads[1], (BlockRead{0xa, 1}));
  EXPECT_EQ(reads[2], (BlockRead{0xa, 5, TableKind::kSl2Vl, 3}));
  EXPECT_EQ(reads[3], (BlockRead{0xa, 0, TableKind::kPortInfo, 0}));
  EXPECT_EQ(reads[4], (BlockRead{0xc, 0, TableKind::kPKey, 1}));
  // The same index of another table is another read: an LFT answer does not settle it.
  EXPECT_EQ(c.answer(0xa, 0, 1, true, now), ReadOutcome::kMatch);
  EXPECT_EQ(c.answer(0xa, 0, 1, true, now), ReadOutcome::kNotAsked);
  EXPECT_EQ(c.answer(reads[3], 1, true, now), ReadOutcome::kMatch);
  EXPECT_EQ(c.answer(reads[4], 1, false, now), ReadOutcome::kMismatch);
  auto repair = c.take_repairs();
  EXPECT_TRUE(repair.ports);
  EXPECT_FALSE(repair.lft);
  EXPECT_FALSE(c.take_repair());
  EXPECT_EQ(c.answer(reads[1], 1, false, now), ReadOutcome::kMismatch);
  EXPECT_EQ(c.answer(reads[2], 1, false, now), ReadOutcome::kMismatch);
  repair = c.take_repairs();
  EXPECT_TRUE(repair.lft && repair.ports);
  EXPECT_EQ(c.mismatches_total(), 3);
  EXPECT_EQ(c.mismatches_total(TableKind::kPKey), 1);
  EXPECT_EQ(c.mismatches_total(TableKind::kLft), 1);
  const auto report = c.report(now);
  EXPECT_EQ(report["mismatches_by_table"]["sl2vl"], 1);
  EXPECT_EQ(report["mismatches_by_table"]["port_info"], 0);
  ASSERT_EQ(report["switches"].size(), 2u);
  EXPECT_EQ(report["switches"][0]["ports_differing"][0]["table"], "sl2vl");
  EXPECT_EQ(report["switches"][0]["ports_differing"][0]["port"], 3);
  EXPECT_EQ(report["switches"][0]["ports_differing"][0]["index"], 5);
  EXPECT_EQ(report["switches"][1]["name"], "host-c");
  EXPECT_EQ(report["switches"][1]["ports_differing"][0]["table"], "pkey");
  const auto lines = c.take_log_lines(now);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("node 0x000000000000000c (host-c): port 1's P_Key block 0 differs"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[2].find("SL2VL table from port 5 to port 3"), std::string::npos) << lines[2];
}

TEST(SwitchCheck, APortTableReadBackEqualAgainIsNoLongerListed) {
  SwitchCheckLimits l = limits(1);
  l.max_reads_per_second = 1000;
  SwitchCheck c(l);
  auto now = Clock::time_point{};
  c.start_pass({{0xc, "host-c", 0, {{TableKind::kPKey, 1, 0}}}}, now);
  now += seconds(1);
  auto reads = c.next_reads(1, now);
  ASSERT_EQ(reads.size(), 1u);
  c.answer(reads[0], 1, false, now);
  EXPECT_EQ(c.report(now)["switches"][0]["ports_differing"].size(), 1u);
  now += seconds(2);
  ASSERT_TRUE(c.pass_due(now));
  c.start_pass({{0xc, "host-c", 0, {{TableKind::kPKey, 1, 0}}}}, now);
  reads = c.next_reads(1, now);
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(c.answer(reads[0], 1, true, now), ReadOutcome::kMatch);
  EXPECT_TRUE(c.report(now)["switches"][0]["ports_differing"].empty());
  EXPECT_EQ(c.report(now)["switches"][0]["mismatches"], 1);
}

TEST(SwitchCheck, APassAskedForStartsAtOnceAtTheCapEvenWithThePeriodicCheckOff) {
  SwitchCheckLimits l = limits(0);
  l.max_reads_per_second = 4;
  SwitchCheck c(l);
  auto now = Clock::time_point{} + seconds(5);
  EXPECT_FALSE(c.pass_due(now));
  const long pass = c.request_pass_now();
  EXPECT_TRUE(c.pass_due(now));
  EXPECT_FALSE(c.pass_finished(pass));
  c.start_pass(two_switches(), now);
  EXPECT_FALSE(c.pass_due(now));  // asked once, started once
  EXPECT_TRUE(c.pass_under_way());
  const auto reads = run_pass(c, now, 1, [&](const BlockRead& r) {
    c.answer(r.guid, r.block, 1, !(r.guid == 0xb && r.block == 1), now);
  });
  EXPECT_EQ(reads.size(), 5u);
  EXPECT_TRUE(c.pass_finished(pass));
  EXPECT_FALSE(c.pass_under_way());
  EXPECT_EQ(c.report(now)["pass"]["mismatches"], 1);
  EXPECT_EQ(c.report(now)["pass"]["number"], pass);
  EXPECT_FALSE(c.pass_due(now + seconds(3600)));  // no periodic pass follows
}

TEST(SwitchCheck, APassAskedForStartsAPassUnderWayOver) {
  SwitchCheck c(limits(100));
  auto now = Clock::time_point{};
  c.start_pass(two_switches(), now);
  now += seconds(1);
  c.next_reads(1, now);
  const long pass = c.request_pass_now();
  EXPECT_TRUE(c.pass_due(now));
  c.start_pass(two_switches(), now);
  EXPECT_FALSE(c.pass_finished(pass));
  EXPECT_EQ(c.report(now)["reads_per_second"], 2000);  // the cap, not 5 reads over 80 s
}

TEST(SwitchCheck, AWaitForAPassWakesOnItsLastAnswerAndTimesOutWithout) {
  SwitchCheck c(limits(100));
  const auto now = Clock::time_point{};
  const long pass = c.request_pass_now();
  EXPECT_FALSE(c.wait_pass_finished(pass, std::chrono::milliseconds(20)));  // not started
  c.start_pass(two_switches(), now);
  const auto reads = c.next_reads(1, now + seconds(1));
  ASSERT_EQ(reads.size(), 5u);  // asked for: the cap, every read at once
  std::thread answers([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (const auto& r : reads) c.answer(r, 1, true, now + seconds(1));
  });
  // Woken by the last answer, long before the timeout.
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.wait_pass_finished(pass, std::chrono::seconds(60)));
  answers.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_TRUE(c.pass_finished(pass));
}

TEST(SwitchCheck, AnAnswerNobodyAskedForIsNotCountedWhileNothingIsOutstanding) {
  SwitchCheck c(limits(100));
  const auto now = Clock::time_point{};
  EXPECT_EQ(c.answer(0xa, 0, 1, false, now), ReadOutcome::kNotAsked);
  c.start_pass(two_switches(), now);
  const auto reads = c.next_reads(1, now + seconds(1));
  ASSERT_FALSE(reads.empty());
  EXPECT_EQ(c.answer(reads[0], 1, false, now + seconds(1)), ReadOutcome::kMismatch);
  EXPECT_EQ(c.answer(reads[0], 1, false, now + seconds(1)), ReadOutcome::kNotAsked);
  EXPECT_EQ(c.mismatches_total(), 1);
}

}  // namespace
}  // namespace laas::service
