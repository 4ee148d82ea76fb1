#include "service/etcd_state.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "service/state_io.h"

namespace laas::service {

using Clock = std::chrono::steady_clock;
using etcd::Compare;
using etcd::Op;

// What the threads and the callers share (the threads hold a reference, never `this`).
struct EtcdState::Shared {
  mutable std::mutex mu;
  std::condition_variable cv;  // stopping
  bool stopping = false;
  std::atomic<bool> stop{false};
  // What the watch brought (following: it is current as far as the member it watches knows).
  bool following = false;
  Doc cache;
  std::string leader_value;
  // This SM's hold of the leader key (leader_rev 0: none).
  std::string me;
  std::int64_t leader_rev = 0;
  std::int64_t lease = 0;
  std::int64_t written_rev = 0;  // the state's mod_revision as this SM last wrote it
  // Health: why the last call failed ("" none) and since when.
  std::string failure;
  Clock::time_point failing_since{};
  std::function<void(double)> recovered;

  void remember(const Doc& d) {  // mu held: a newer document than the cache's
    if (d.revision > cache.revision || (!d.exists && cache.exists)) cache = d;
  }
};

namespace {

EtcdState::Doc doc_of(const etcd::RangeReply& r) {
  EtcdState::Doc d;
  if (!r.kvs.empty()) {
    d.exists = true;
    d.text = r.kvs.front().value;
    d.revision = r.kvs.front().mod_revision;
  }
  return d;
}

}  // namespace

EtcdState::EtcdState(EtcdSettings settings, bool follow)
    : settings_(std::move(settings)), client_(settings_.client), s_(std::make_shared<Shared>()) {
  if (!follow) return;
  watcher_ = std::thread([this] { watch_loop(); });
  keeper_ = std::thread([this] { keep_loop(); });
}

EtcdState::~EtcdState() { stop(); }

void EtcdState::stop() {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->stopping = true;
  }
  s_->stop = true;
  s_->cv.notify_all();
  // Each call ends within timeout_ms, a watch within a second of the stop.
  if (watcher_.joinable()) watcher_.join();
  if (keeper_.joinable()) keeper_.join();
}

std::string EtcdState::where() const { return "etcd:" + state_key(); }

// Every call to etcd: its failure to answer is the store's unavailability (StoreUnavailableError,
// a NotAnsweringError: the service treats it as a state directory that does not answer), a bad
// reply an error naming the key; a success ends an unavailability and says so once.
template <class F>
auto EtcdState::guarded(F call) const -> decltype(call()) {
  try {
    auto result = call();
    std::function<void(double)> hook;
    double seconds = 0;
    {
      std::lock_guard<std::mutex> lock(s_->mu);
      if (!s_->failure.empty()) {
        seconds = std::chrono::duration<double>(Clock::now() - s_->failing_since).count();
        s_->failure.clear();
        hook = s_->recovered;
      }
    }
    if (hook) hook(seconds);
    return result;
  } catch (const etcd::UnavailableError& e) {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (s_->failure.empty()) s_->failing_since = Clock::now();
    s_->failure = e.what();
    throw StoreUnavailableError(where() + ": " + e.what());
  } catch (const etcd::ReplyError& e) {
    throw std::runtime_error(where() + ": " + e.what());
  }
}

EtcdState::Doc EtcdState::read_fresh() const {
  const Doc d = guarded([&] { return doc_of(client_.range(state_key())); });
  std::lock_guard<std::mutex> lock(s_->mu);
  s_->remember(d);
  return d;
}

EtcdState::Doc EtcdState::read() const {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (s_->following) return s_->cache;
    // No watch and no quorum: said at once, not after a deadline at every look (the keeper's
    // probe and the watch notice when it is back).
    if (!s_->failure.empty())
      throw StoreUnavailableError(where() + ": etcd not answering (" + s_->failure + ")");
  }
  return read_fresh();
}

FileStamp EtcdState::stamp() const {
  const Doc d = read();
  FileStamp s;
  s.exists = d.exists;
  s.revision = d.revision;
  s.size = static_cast<long long>(d.text.size());
  return s;
}

std::int64_t EtcdState::grant_lease() {
  return guarded([&] { return client_.lease_grant(settings_.lease_ttl_s).first; });
}

EtcdState::Doc EtcdState::take_over(
    const std::string& me,
    const std::function<std::string(const std::optional<std::string>&)>& raise) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const Doc before = read_fresh();
    Doc after;
    after.exists = true;
    after.text = raise(before.exists ? std::optional<std::string>(before.text) : std::nullopt);
    const std::int64_t lease = grant_lease();
    // Only if nobody wrote the state since it was read: a concurrent take-over raised the same
    // term from the same document.
    const etcd::TxnReply r = guarded([&] {
      return client_.txn({{state_key(), Compare::Target::kModRevision, before.revision, ""}},
                         {{Op::Kind::kPut, state_key(), after.text, 0, false},
                          {Op::Kind::kPut, leader_key(), me, lease, false}});
    });
    if (!r.succeeded) continue;
    after.revision = r.revision;
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->me = me;
    s_->leader_rev = r.revision;
    s_->lease = lease;
    s_->written_rev = r.revision;
    s_->leader_value = me;
    s_->remember(after);
    return after;
  }
  throw std::runtime_error(where() + " changed under three take-overs in a row; nothing taken");
}

FileStamp EtcdState::write(const std::string& text) {
  std::string me;
  std::int64_t leader_rev, written_rev;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    me = s_->me;
    leader_rev = s_->leader_rev;
    written_rev = s_->written_rev;
  }
  if (leader_rev == 0)
    throw FencedError(where() + ": this SM has not taken the state over; nothing was written");
  const std::vector<Compare> held = {{leader_key(), Compare::Target::kModRevision, leader_rev, ""},
                                     {leader_key(), Compare::Target::kValue, 0, me}};
  etcd::TxnReply r = guarded([&] {
    return client_.txn(held, {{Op::Kind::kPut, state_key(), text, 0, false}},
                       {{Op::Kind::kRange, leader_key(), "", 0, false},
                        {Op::Kind::kRange, state_key(), "", 0, false}});
  });
  std::optional<etcd::KeyValue> leader;
  if (!r.succeeded && r.ranges.size() == 2 && !r.ranges[0].kvs.empty())
    leader = r.ranges[0].kvs.front();
  const std::int64_t state_rev =
      r.ranges.size() == 2 && !r.ranges[1].kvs.empty() ? r.ranges[1].kvs.front().mod_revision : -1;
  if (!r.succeeded && !leader && state_rev == written_rev) {
    // The lease ran out (etcd was out of reach longer than its TTL) and nobody wrote since:
    // this SM's take-over still stands; hold the key again, in the same transaction.
    const std::int64_t lease = grant_lease();
    r = guarded([&] {
      return client_.txn({{leader_key(), Compare::Target::kCreateRevision, 0, ""},
                          {state_key(), Compare::Target::kModRevision, written_rev, ""}},
                         {{Op::Kind::kPut, leader_key(), me, lease, false},
                          {Op::Kind::kPut, state_key(), text, 0, false}});
    });
    if (r.succeeded) {
      std::lock_guard<std::mutex> lock(s_->mu);
      s_->leader_rev = r.revision;
      s_->lease = lease;
    }
  }
  if (!r.succeeded) {
    const std::string holder = leader ? "is held by " + leader->value + " since revision " +
                                            std::to_string(leader->mod_revision)
                                      : std::string("is gone");
    throw FencedError(where() + ": the leader key " + leader_key() + " " + holder +
                      ", not as this SM's take-over left it (revision " +
                      std::to_string(leader_rev) +
                      "): another SM took the state over; nothing was written");
  }
  std::lock_guard<std::mutex> lock(s_->mu);
  s_->written_rev = r.revision;
  s_->remember({true, text, r.revision});
  FileStamp s;
  s.exists = true;
  s.revision = r.revision;
  s.size = static_cast<long long>(text.size());
  return s;
}

bool EtcdState::create(const std::string& text) {
  return guarded([&] {
    return client_
        .txn({{state_key(), Compare::Target::kCreateRevision, 0, ""}},
             {{Op::Kind::kPut, state_key(), text, 0, false}})
        .succeeded;
  });
}

void EtcdState::put(const std::string& text) {
  guarded([&] { return client_.txn({}, {{Op::Kind::kPut, state_key(), text, 0, false}}); });
}

std::string EtcdState::unavailable() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  if (s_->failure.empty()) return "";
  char n[32];
  std::snprintf(n, sizeof n, "%.0f",
                std::chrono::duration<double>(Clock::now() - s_->failing_since).count());
  return "etcd not answering for " + std::string(n) + " s (" + s_->failure + ")";
}

double EtcdState::unavailable_seconds() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  if (s_->failure.empty()) return 0;
  return std::max(1e-3, std::chrono::duration<double>(Clock::now() - s_->failing_since).count());
}

void EtcdState::set_recovery_hook(std::function<void(double)> hook) {
  std::lock_guard<std::mutex> lock(s_->mu);
  s_->recovered = std::move(hook);
}

std::string EtcdState::leader() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->leader_value;
}

void EtcdState::watch_loop() {
  std::int64_t revision = 0;
  bool synced = false;
  const auto apply = [this](const etcd::KeyValue& kv, bool deleted) {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (kv.key == state_key())
      s_->remember(deleted ? Doc{} : Doc{true, kv.value, kv.mod_revision});
    else if (kv.key == leader_key())
      s_->leader_value = deleted ? "" : kv.value;
  };
  while (!s_->stop) {
    try {
      if (!synced) {
        // The whole prefix once, then every change after it.
        const etcd::RangeReply r = client_.range(settings_.prefix, true);
        bool has_state = false, has_leader = false;
        for (const auto& kv : r.kvs) {
          has_state |= kv.key == state_key();
          has_leader |= kv.key == leader_key();
          apply(kv, false);
        }
        if (!has_state) apply({state_key(), "", 0, 0, 0, 0}, true);
        if (!has_leader) apply({leader_key(), "", 0, 0, 0, 0}, true);
        revision = r.revision;
        synced = true;
      }
      client_.watch(settings_.prefix, true, revision + 1, std::chrono::seconds(30), s_->stop,
                    [&](const etcd::WatchMessage& m) {
                      if (m.compact_revision > 0 || m.canceled)
                        throw etcd::ReplyError("watch canceled: " + m.cancel_reason);
                      for (const auto& e : m.events) {
                        apply(e.kv, e.deleted);
                        revision = std::max(revision, e.kv.mod_revision);
                      }
                      if (m.created) {
                        std::lock_guard<std::mutex> lock(s_->mu);
                        s_->following = true;
                      }
                    });
    } catch (const std::exception&) {
      synced = false;
      {
        std::lock_guard<std::mutex> lock(s_->mu);
        s_->following = false;
      }
      std::unique_lock<std::mutex> lock(s_->mu);
      s_->cv.wait_for(lock, std::chrono::seconds(1), [this] { return s_->stopping; });
    }
  }
}

void EtcdState::keep_loop() {
  auto last_keepalive = Clock::now();
  const auto every = std::chrono::seconds(std::max(1, settings_.lease_ttl_s / 3));
  std::unique_lock<std::mutex> lock(s_->mu);
  while (!s_->stopping) {
    s_->cv.wait_for(lock, std::chrono::seconds(1), [this] { return s_->stopping; });
    if (s_->stopping) break;
    const std::int64_t lease = s_->lease;
    const bool due = lease && Clock::now() - last_keepalive >= every;
    lock.unlock();
    try {
      // The master keeps its lease; everyone probes the quorum (a linearizable read of one
      // key), so that status says within a second when it is lost and when it is back.
      if (due) {
        last_keepalive = Clock::now();
        if (guarded([&] { return client_.lease_keepalive(lease); }) == 0) {
          std::lock_guard<std::mutex> relock(s_->mu);
          if (s_->lease == lease) s_->lease = 0;  // gone: the next write holds the key again
        }
      } else {
        guarded([&] { return client_.range(leader_key()); });
      }
    } catch (const std::exception&) {
      // Recorded by guarded(): status and the metrics say so.
    }
    lock.lock();
  }
}

}  // namespace laas::service
