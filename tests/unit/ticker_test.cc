// util::Ticker, the thread of the plugin's switch check and of laas-sdn's loop: it ticks at its
// beat and at once on wake(), and no tick runs after stop() has returned, even one under way.
#include "util/ticker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using laas::util::Ticker;
using namespace std::chrono_literals;

namespace {

// Polls `done` for up to 10 s (a loaded machine stretches every beat).
template <class Done>
bool eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

}  // namespace

TEST(Ticker, TicksAtItsBeat) {
  std::atomic<int> ticks{0};
  Ticker ticker;
  ticker.start(5ms, [&] { ++ticks; });
  EXPECT_TRUE(eventually([&] { return ticks >= 3; }));
}

TEST(Ticker, AWakeTicksLongBeforeTheBeat) {
  std::atomic<int> ticks{0};
  Ticker ticker;
  ticker.start(std::chrono::hours(1), [&] { ++ticks; });
  EXPECT_EQ(ticks, 0);
  ticker.wake();
  EXPECT_TRUE(eventually([&] { return ticks == 1; }));
}

TEST(Ticker, ATickKnowsItsThreadAndMayAskForAnother) {
  std::atomic<int> ticks{0};
  std::atomic<bool> on_thread{false};
  Ticker ticker;
  ticker.start(std::chrono::hours(1), [&] {
    on_thread = ticker.on_ticker_thread();
    if (++ticks == 1) ticker.wake();  // as laas-sdn's tick asks for a run
  });
  EXPECT_FALSE(ticker.on_ticker_thread());
  ticker.wake();
  EXPECT_TRUE(eventually([&] { return ticks == 2; }));
  EXPECT_TRUE(on_thread);
}

TEST(Ticker, StopWaitsForATickUnderWayAndNoneFollows) {
  std::atomic<bool> in_tick{false};
  std::atomic<bool> release{false};
  std::atomic<int> ticks{0};
  Ticker ticker;
  ticker.start(1ms, [&] {
    in_tick = true;
    while (!release) std::this_thread::sleep_for(1ms);
    ++ticks;
    in_tick = false;
  });
  ASSERT_TRUE(eventually([&] { return in_tick.load(); }));
  std::thread releaser([&] {
    std::this_thread::sleep_for(50ms);
    release = true;
  });
  ticker.stop();
  EXPECT_FALSE(in_tick);  // stop() returned after the tick ended
  const int after_stop = ticks;
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(ticks, after_stop);
  releaser.join();
  ticker.stop();  // idempotent
}

TEST(Ticker, ATickerNeverStartedStopsAtOnce) {
  Ticker ticker;
  ticker.wake();
  ticker.stop();
  EXPECT_FALSE(ticker.on_ticker_thread());
}
