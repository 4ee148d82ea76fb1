// The etcd client and state store against a real three-member etcd: run by
// tests/integration/etcd_client.sh, which starts the cluster in its own network namespace and
// sets LAAS_ETCD_ENDPOINTS (and LAAS_ETCD_CTL, a FIFO to stop and start members). Skipped
// without it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "service/etcd_client.h"
#include "service/etcd_state.h"
#include "service/state_io.h"
#include "service/state_store.h"

namespace laas::service {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> endpoints() {
  std::vector<std::string> out;
  const char* env = std::getenv("LAAS_ETCD_ENDPOINTS");
  if (!env) return out;
  std::stringstream in(env);
  for (std::string one; std::getline(in, one, ',');) out.push_back(one);
  return out;
}

// A prefix of its own per test: the tests share one cluster.
EtcdSettings settings(const std::string& test, int timeout_ms = 1500) {
  EtcdSettings s;
  s.client.endpoints = endpoints();
  s.client.timeout_ms = timeout_ms;
  s.prefix = "/t/" + test + "/";
  s.lease_ttl_s = 5;
  return s;
}

// "stop 1", "start 1", "healthy": done by the script that owns the members.
void ctl(const std::string& command) {
  const char* fifo = std::getenv("LAAS_ETCD_CTL");
  ASSERT_NE(fifo, nullptr);
  { std::ofstream(fifo) << command << "\n"; }
  std::string done;
  std::ifstream(std::string(fifo) + "-done") >> done;
}

#define REQUIRE_ETCD() \
  if (endpoints().empty()) GTEST_SKIP() << "LAAS_ETCD_ENDPOINTS not set (etcd_client.sh)"

PersistedState with_tenant(const std::string& name, std::uint64_t generation) {
  PersistedState s;
  s.topology = "xgft(2;4,8;1,4)";
  s.generation = generation;
  PersistedTenant t;
  t.name = name;
  t.requested = 1;
  t.hosts.push_back({0x100, 1, 0x200, "h1"});
  s.tenants.push_back(t);
  return s;
}

TEST(EtcdLive, ClientRangeTxnLeaseAndWatch) {
  REQUIRE_ETCD();
  const etcd::Client client({endpoints(), "", "", "", 1500});
  const std::string key = "/t/client/k";
  const auto put = client.txn({{key, etcd::Compare::Target::kCreateRevision, 0, ""}},
                              {{etcd::Op::Kind::kPut, key, "one", 0, false}});
  ASSERT_TRUE(put.succeeded);
  const auto read = client.range(key);
  ASSERT_EQ(read.kvs.size(), 1u);
  EXPECT_EQ(read.kvs[0].value, "one");
  EXPECT_EQ(read.kvs[0].mod_revision, put.revision);
  // A compare on an older mod_revision fails and brings the failure branch's range back.
  const auto stale = client.txn({{key, etcd::Compare::Target::kModRevision, put.revision - 1, ""}},
                                {{etcd::Op::Kind::kPut, key, "two", 0, false}},
                                {{etcd::Op::Kind::kRange, key, "", 0, false}});
  EXPECT_FALSE(stale.succeeded);
  ASSERT_EQ(stale.ranges.size(), 1u);
  EXPECT_EQ(stale.ranges[0].kvs[0].value, "one");

  const auto lease = client.lease_grant(5);
  EXPECT_GT(lease.first, 0);
  EXPECT_GT(client.lease_keepalive(lease.first), 0);
  EXPECT_EQ(client.lease_keepalive(lease.first + 12345), 0);  // no such lease

  std::atomic<bool> stop{false};
  std::vector<std::string> seen;
  std::thread watcher([&] {
    client.watch("/t/client/", true, put.revision + 1, std::chrono::seconds(5), stop,
                 [&](const etcd::WatchMessage& m) {
                   for (const auto& e : m.events) seen.push_back(e.kv.value);
                   if (seen.size() >= 2) stop = true;
                 });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  client.txn({}, {{etcd::Op::Kind::kPut, key, "three", 0, false}});
  client.txn({}, {{etcd::Op::Kind::kPut, key, "four", 0, false}});
  const auto t0 = Clock::now();
  watcher.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(3));  // the stop, not the deadline
  EXPECT_EQ(seen, (std::vector<std::string>{"three", "four"}));
}

// The heart of the fencing: SM A took the state over, SM B took it over after it (A was
// deposed but still believes it is master); A's write is refused by etcd and B's state stands.
TEST(EtcdLive, ADeposedMastersWriteIsRefusedNeverApplied) {
  REQUIRE_ETCD();
  const StateStore a("/nonexistent", std::make_shared<EtcdState>(settings("fence"), false));
  const StateStore b("/nonexistent", std::make_shared<EtcdState>(settings("fence"), false));
  ASSERT_EQ(a.take_over("sm-a", 0xa).term, 1u);
  PersistedState first = with_tenant("alpha", 1);
  first.term = 1;
  first.master = "sm-a";
  a.save(first);
  const PersistedState taken = b.take_over("sm-b", 0xb);
  EXPECT_EQ(taken.term, 2u);
  ASSERT_EQ(taken.tenants.size(), 1u);  // B took A's tenants over
  PersistedState stale = with_tenant("from-deposed-a", 2);
  stale.term = 1;
  try {
    a.save(stale);
    FAIL() << "a deposed master's write was applied";
  } catch (const FencedError& e) {
    EXPECT_NE(std::string(e.what()).find("held by sm-b"), std::string::npos) << e.what();
  }
  const PersistedState now = b.load();
  EXPECT_EQ(now.term, 2u);
  EXPECT_EQ(now.master, "sm-b");
  ASSERT_EQ(now.tenants.size(), 1u);
  EXPECT_EQ(now.tenants[0].name, "alpha");
  // B, the master now, writes.
  PersistedState next = now;
  next.generation = 2;
  EXPECT_NO_THROW(b.save(next));
}

TEST(EtcdLive, AStandbyFollowsTheWatchAndAMissingStateIsRefusedWhenItMustExist) {
  REQUIRE_ETCD();
  const StateStore master("/nonexistent", std::make_shared<EtcdState>(settings("follow"), false));
  EXPECT_THROW(master.take_over("sm-a", 0xa, nullptr, "must exist"), std::runtime_error);
  EXPECT_NE(master.init("").find("wrote etcd:/t/follow/state"), std::string::npos);
  EXPECT_THROW(master.init(""), std::runtime_error);  // exists now
  const StateStore standby("/nonexistent", std::make_shared<EtcdState>(settings("follow"), true));
  master.take_over("sm-a", 0xa, nullptr, "must exist");
  master.save(with_tenant("beta", 5));
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (standby.load().generation != 5 && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(standby.load().tenants.at(0).name, "beta");
  EXPECT_EQ(standby.stamp(), master.stamp());
  EXPECT_EQ(standby.etcd()->leader(), "sm-a");
}

TEST(EtcdLive, OneMemberDownChangesNothingNoQuorumIsRefusedWithinTheDeadline) {
  REQUIRE_ETCD();
  const StateStore store("/nonexistent",
                         std::make_shared<EtcdState>(settings("quorum", 1000), true));
  store.take_over("sm-a", 0xa);
  ctl("stop 1");
  // When member 1 led, the other two elect a leader first (election timeout 500 ms; longer on
  // a loaded machine): a write in that gap is refused busy, as etcd itself refuses it.
  ctl("healthy");
  EXPECT_NO_THROW(store.save(with_tenant("gamma", 1)));
  EXPECT_EQ(store.unavailable(), "");
  ctl("stop 2");
  const auto t0 = Clock::now();
  EXPECT_THROW(store.save(with_tenant("gamma", 2)), StoreUnavailableError);
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_LT(waited, 1.5);  // timeout_ms, every member included
  EXPECT_NE(store.unavailable().find("etcd not answering"), std::string::npos);
  ctl("start 1");
  ctl("start 2");
  ctl("healthy");
  // The keeper probes every second: available again without a write.
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (!store.unavailable().empty() && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(store.unavailable(), "");
  EXPECT_NO_THROW(store.save(with_tenant("gamma", 3)));
  EXPECT_EQ(store.load().generation, 3u);
}

// The other parts of the shared state: fenced as the state is (a deposed master's write of the
// tenants last routed is refused), read together, and followed by the watch (answered from it
// while etcd has no quorum).
TEST(EtcdLive, PartsAreFencedAndFollowed) {
  REQUIRE_ETCD();
  const StateStore a("/nonexistent",
                     std::make_shared<EtcdState>(settings("parts", 1000), /*follow=*/true));
  const StateStore b("/nonexistent", std::make_shared<EtcdState>(settings("parts", 1000), false));
  EXPECT_THROW(a.write_part("allocations", "{}"), FencedError);  // not taken over yet
  a.take_over("sm-a", 0xa);
  a.write_part("allocations", "alloc-a");
  a.write_part("layout", "layout-a");
  a.write_part("tenants_applied", "applied-a");
  EXPECT_EQ(a.part_path("layout"), "etcd:/t/parts/layout");
  EXPECT_EQ(b.read_parts(), (SharedParts{{"allocations", "alloc-a"},
                                         {"layout", "layout-a"},
                                         {"tenants_applied", "applied-a"}}));
  EXPECT_THROW(a.write_part("nonsense", "x"), std::invalid_argument);
  b.take_over("sm-b", 0xb);
  EXPECT_THROW(a.write_part("allocations", "from-deposed-a"), FencedError);
  b.write_part("allocations", "alloc-b");
  EXPECT_EQ(b.read_parts().at("allocations"), "alloc-b");
  // A's watch brought B's write; without a quorum A answers from it.
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (a.read_parts().at("allocations") == "alloc-b") break;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the watch's event too
  ctl("stop 1");
  ctl("stop 2");
  EXPECT_THROW(a.read_parts(), StoreUnavailableError);
  const SharedParts followed = a.read_parts(/*or_followed=*/true);
  EXPECT_EQ(followed.at("allocations"), "alloc-b");
  EXPECT_EQ(followed.at("layout"), "layout-a");
  ctl("start 1");
  ctl("start 2");
  ctl("healthy");
}

// `laasctl state init` in etcd: a state lost while the tenants last routed are still recorded
// is refused, as in a directory.
TEST(EtcdLive, InitRefusesWhereTenantsWereRouted) {
  REQUIRE_ETCD();
  const StateStore a("/nonexistent", std::make_shared<EtcdState>(settings("lostinit"), false));
  a.take_over("sm-a", 0xa);
  a.write_part("allocations", "{}");
  const etcd::Client client({endpoints(), "", "", "", 1500});
  client.txn({}, {{etcd::Op::Kind::kDelete, "/t/lostinit/state", "", 0, false}});
  try {
    a.init("");
    FAIL() << "init over a lost state";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("records tenants routed"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(client.range("/t/lostinit/state").kvs.empty());
}

// A master cut off from etcd (its only member down) longer than its lease loses the leader key;
// when etcd answers again it holds the key again by itself -- no write needed -- if nobody took
// the state over meanwhile, and says so; if somebody did, it says it is deposed and writes
// nothing.
struct Cutoff {
  std::vector<std::string> lines;
  std::mutex mu;
  std::shared_ptr<EtcdState> state;
  explicit Cutoff(const std::string& test) {
    EtcdSettings s = settings(test, 1000);
    s.client.endpoints = {endpoints().at(2)};  // member 3 only
    s.lease_ttl_s = 2;
    state = std::make_shared<EtcdState>(s, /*follow=*/true);
    state->set_log_hook([this](bool, const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(line);
    });
  }
  bool said(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& l : lines)
      if (l.find(what) != std::string::npos) return true;
    return false;
  }
};

// Who holds the test's leader key ("?" while the cluster elects a leader: it may have been the
// member just stopped).
std::string leader_of(const std::string& test) {
  const etcd::Client client({endpoints(), "", "", "", 1500});
  try {
    const auto r = client.range("/t/" + test + "/leader");
    return r.kvs.empty() ? "" : r.kvs[0].value;
  } catch (const etcd::UnavailableError&) {
    return "?";
  }
}

template <class F>
bool within(std::chrono::seconds limit, F done) {
  const auto until = Clock::now() + limit;
  while (Clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

TEST(EtcdLive, ALostLeaseIsTakenBackWhenEtcdAnswersAgain) {
  REQUIRE_ETCD();
  Cutoff a("retake");
  const StateStore store("/nonexistent", a.state);
  store.take_over("sm-a", 0xa);
  store.save(with_tenant("kept", 1));
  EXPECT_EQ(leader_of("retake"), "sm-a");
  ctl("stop 3");
  EXPECT_TRUE(within(std::chrono::seconds(15), [] { return leader_of("retake").empty(); }))
      << "the lease did not run out";
  ctl("start 3");
  EXPECT_TRUE(within(std::chrono::seconds(20), [] { return leader_of("retake") == "sm-a"; }))
      << "the leader key was not taken back";
  EXPECT_TRUE(a.said("holds it again, nobody took the state over meanwhile"));
  EXPECT_NO_THROW(store.save(with_tenant("kept", 2)));
  ctl("healthy");
}

TEST(EtcdLive, ALostLeaseIsNotTakenBackFromAnotherMaster) {
  REQUIRE_ETCD();
  Cutoff a("deposed");
  const StateStore store("/nonexistent", a.state);
  store.take_over("sm-a", 0xa);
  ctl("stop 3");
  EXPECT_TRUE(within(std::chrono::seconds(15), [] { return leader_of("deposed").empty(); }));
  // Meanwhile B, which reaches the other two members, takes the state over.
  EtcdSettings sb = settings("deposed", 1000);
  sb.client.endpoints = {endpoints().at(0), endpoints().at(1)};
  const StateStore b("/nonexistent", std::make_shared<EtcdState>(sb, false));
  b.take_over("sm-b", 0xb);
  ctl("start 3");
  EXPECT_TRUE(within(std::chrono::seconds(20),
                     [&] { return a.said("another SM took the state over meanwhile"); }));
  EXPECT_EQ(leader_of("deposed"), "sm-b");
  EXPECT_THROW(store.save(with_tenant("from-deposed-a", 9)), FencedError);
  EXPECT_EQ(b.load().term, 2u);
  ctl("healthy");
}

}  // namespace
}  // namespace laas::service
