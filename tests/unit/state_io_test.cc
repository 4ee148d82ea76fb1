// StateIo: the state directory's worker. A fake "file system" operation that blocks until the
// test lets it go stands for a hung NFS server: callers wait at most their deadline, later
// calls are refused at once while it hangs, posts replace queued ones of the same key, and the
// first operation to return after the hang calls the recovery hook.
#include "service/state_io.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "service/tenant_service.h"
#include "temp_files.h"

using namespace laas::service;
using namespace std::chrono_literals;

namespace {

// A gate the blocked operation waits on; shared, since the operation may outlive the test.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      open = true;
    }
    cv.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return open; });
  }
};

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST(StateIo, ReturnsResultsAndRethrowsErrors) {
  StateIo io("/state", 200ms);
  EXPECT_EQ(io.call([] { return 41 + 1; }, 1000ms), 42);
  EXPECT_THROW(io.call([]() -> int { throw std::runtime_error("disk full"); }, 1000ms),
               std::runtime_error);
  EXPECT_EQ(io.not_answering(), "");
  EXPECT_EQ(io.not_answering_seconds(), 0.0);
}

TEST(StateIo, AHungDirectoryCostsOneDeadlineThenRefusesAtOnceAndRecoversByItself) {
  auto gate = std::make_shared<Gate>();
  std::atomic<int> recovered{0};
  StateIo io("/srv/laas", 200ms);
  io.set_recovery_hook([&](double) { ++recovered; });
  // The first caller meets the hang: it waits its deadline, no longer.
  const auto t0 = std::chrono::steady_clock::now();
  try {
    io.call(
        [gate] {
          gate->wait();
          return 0;
        },
        300ms);
    ADD_FAILURE() << "a hung operation returned";
  } catch (const NotAnsweringError& e) {
    EXPECT_NE(std::string(e.what()).find("state directory /srv/laas not answering for"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(since(t0), 1.0);
  // Past hang_after it is not answering: calls are refused without waiting or queueing.
  EXPECT_NE(io.not_answering().find("/srv/laas not answering for"), std::string::npos);
  EXPECT_GT(io.not_answering_seconds(), 0.2);
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_THROW(io.call([] { return 1; }, 5000ms), NotAnsweringError);
  EXPECT_LT(since(t1), 0.1);
  // Posts queue (the latest of a key replaces the one before it) and run after the hang.
  std::vector<int> ran;
  std::mutex ran_mu;
  for (int i = 0; i < 5; ++i)
    io.post("metrics", [&, i] {
      std::lock_guard<std::mutex> lock(ran_mu);
      ran.push_back(i);
    });
  io.post("layout", [&] {
    std::lock_guard<std::mutex> lock(ran_mu);
    ran.push_back(100);
  });
  EXPECT_EQ(recovered, 0);
  gate->release();
  ASSERT_TRUE(io.idle(5000ms));
  EXPECT_EQ(ran, (std::vector<int>{4, 100}));
  EXPECT_EQ(recovered, 1);
  EXPECT_EQ(io.not_answering(), "");
  EXPECT_EQ(io.call([] { return 7; }, 1000ms), 7);
}

TEST(StateIo, ASlowButAnsweringOperationIsNoHang) {
  StateIo io("/state", 500ms);
  std::atomic<int> recovered{0};
  io.set_recovery_hook([&](double) { ++recovered; });
  EXPECT_EQ(io.call(
                [] {
                  std::this_thread::sleep_for(50ms);
                  return 3;
                },
                1000ms),
            3);
  EXPECT_EQ(recovered, 0);
}

TEST(StateIo, ShutdownLeavesAHungWorkerBehindWithoutWaitingForIt) {
  auto gate = std::make_shared<Gate>();
  const auto t0 = std::chrono::steady_clock::now();
  {
    StateIo io("/state", 100ms);
    io.post("stuck", [gate] { gate->wait(); });
  }  // waits at most 2 s for the queue, then detaches the worker
  EXPECT_LT(since(t0), 3.0);
  gate->release();  // the worker finishes with what it owns and exits
  std::this_thread::sleep_for(50ms);
}

// The service over a directory whose worker hangs: changes are refused naming the directory,
// status and the metrics say so, reads still answer; after the hang, changes work again.
TEST(StateIo, TheServiceRefusesChangesWhileTheDirectoryHangs) {
  laas::test::TempDir dir;
  ServiceConfig c;
  c.state_dir = dir.path;
  TenantService service(c, [](LogLevel, const std::string&) {});
  auto gate = std::make_shared<Gate>();
  service.io().post("stuck", [gate] { gate->wait(); });
  std::this_thread::sleep_for(2200ms);  // kIoDeadline's hang_after (2 s) passes
  const Caller root{0, true};
  auto request = [](const std::string& method, nlohmann::json params) {
    return nlohmann::json{{"v", 1}, {"method", method}, {"params", std::move(params)}};
  };
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = service.handle(request("tenant.add", {{"name", "x"}, {"hosts", 1}}), root);
  EXPECT_LT(since(t0), 0.5);
  ASSERT_FALSE(r.value("ok", true)) << r.dump();
  EXPECT_EQ(r["error"]["code"], error::kBusy);  // exit 75: try again
  EXPECT_NE(r["error"]["message"].get<std::string>().find("state directory " + dir.path +
                                                          " not answering for"),
            std::string::npos)
      << r.dump();
  const auto s = service.handle(request("status", nlohmann::json::object()), root);
  ASSERT_TRUE(s.value("ok", false)) << s.dump();
  EXPECT_NE(s["result"].value("state_dir_not_answering", "").find("not answering"),
            std::string::npos)
      << s.dump();
  const auto m = service.handle(request("metrics", nlohmann::json::object()), root);
  EXPECT_NE(m["result"]["text"].get<std::string>().find("laas_state_dir_not_answering_seconds 2"),
            std::string::npos);
  gate->release();
  ASSERT_TRUE(service.io().idle(5000ms));
  const auto after = service.handle(request("status", nlohmann::json::object()), root);
  EXPECT_FALSE(after["result"].contains("state_dir_not_answering")) << after.dump();
}
