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
  // The text of this SM's last write of the state whose answer may have been lost (a deadline
  // passed): if the state holds it, the write landed and the state is still this SM's.
  std::string attempted;
  // The lease ran out (a keep-alive found it gone): the keeper takes the key back, or finds
  // that another SM took the state over (`deposed`, said once).
  bool lease_lost = false;
  bool deposed = false;
  // The parts as the watch brought them, by key; `parts_synced`: the watch read them once.
  std::map<std::string, Doc> parts;
  bool parts_synced = false;
  std::function<void(bool, const std::string&)> log;
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

std::map<std::string, EtcdState::Doc> EtcdState::read_parts(const std::vector<std::string>& names,
                                                            bool or_followed) const {
  std::vector<Op> ranges;
  for (const auto& name : names) ranges.push_back({Op::Kind::kRange, part_key(name), "", 0, false});
  std::map<std::string, Doc> out;
  try {
    {
      // No quorum known already: what the watch brought, at once (not after a deadline).
      std::lock_guard<std::mutex> lock(s_->mu);
      if (or_followed && s_->parts_synced && !s_->failure.empty())
        throw StoreUnavailableError(where() + ": etcd not answering (" + s_->failure + ")");
    }
    const etcd::TxnReply r = guarded([&] { return client_.txn({}, ranges); });
    for (std::size_t i = 0; i < names.size() && i < r.ranges.size(); ++i)
      out[names[i]] = doc_of(r.ranges[i]);
    return out;
  } catch (const StoreUnavailableError&) {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (!or_followed || !s_->parts_synced) throw;
    for (const auto& name : names) {
      const auto it = s_->parts.find(part_key(name));
      out[name] = it == s_->parts.end() ? Doc{} : it->second;
    }
    return out;
  }
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
    s_->attempted.clear();
    s_->lease_lost = false;
    s_->deposed = false;
    s_->leader_value = me;
    s_->remember(after);
    return after;
  }
  throw std::runtime_error(where() + " changed under three take-overs in a row; nothing taken");
}

FileStamp EtcdState::write(const std::string& text) {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->attempted = text;
  }
  const std::int64_t revision = fenced_put(state_key(), text);
  std::lock_guard<std::mutex> lock(s_->mu);
  s_->written_rev = revision;
  s_->remember({true, text, revision});
  FileStamp s;
  s.exists = true;
  s.revision = revision;
  s.size = static_cast<long long>(text.size());
  return s;
}

void EtcdState::write_part(const std::string& name, const std::string& text) {
  const std::int64_t revision = fenced_put(part_key(name), text);
  std::lock_guard<std::mutex> lock(s_->mu);
  Doc& cached = s_->parts[part_key(name)];
  if (revision > cached.revision) cached = {true, text, revision};
}

std::int64_t EtcdState::fenced_put(const std::string& key, const std::string& text) {
  std::string me;
  std::int64_t leader_rev;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    me = s_->me;
    leader_rev = s_->leader_rev;
  }
  if (leader_rev == 0)
    throw FencedError("etcd:" + key +
                      ": this SM has not taken the state over; nothing was written");
  const auto put = [&](std::int64_t rev) {
    return guarded([&] {
      return client_.txn({{leader_key(), Compare::Target::kModRevision, rev, ""},
                          {leader_key(), Compare::Target::kValue, 0, me}},
                         {{Op::Kind::kPut, key, text, 0, false}},
                         {{Op::Kind::kRange, leader_key(), "", 0, false}});
    });
  };
  etcd::TxnReply r = put(leader_rev);
  std::optional<etcd::KeyValue> leader;
  if (!r.succeeded && !r.ranges.empty() && !r.ranges[0].kvs.empty())
    leader = r.ranges[0].kvs.front();
  // The lease ran out (etcd was out of reach longer than its TTL): this SM's take-over still
  // stands if nobody wrote the state since; then hold the key again and write.
  if (!r.succeeded && !leader && retake()) {
    {
      std::lock_guard<std::mutex> lock(s_->mu);
      leader_rev = s_->leader_rev;
      s_->lease_lost = false;
    }
    note(false, "laas: " + where() + ": the leader key " + leader_key() +
                    " had expired (its lease ran out while etcd was out of reach); this SM holds "
                    "it again, nobody took the state over meanwhile");
    r = put(leader_rev);
  }
  if (!r.succeeded) {
    const std::string holder = leader ? "is held by " + leader->value + " since revision " +
                                            std::to_string(leader->mod_revision)
                                      : std::string("is gone");
    throw FencedError("etcd:" + key + ": the leader key " + leader_key() + " " + holder +
                      ", not as this SM's take-over left it: another SM took the state over; "
                      "nothing was written");
  }
  return r.revision;
}

bool EtcdState::retake() {
  std::string me, attempted;
  std::int64_t written_rev;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    me = s_->me;
    attempted = s_->attempted;
    written_rev = s_->written_rev;
  }
  if (me.empty()) return false;
  const etcd::TxnReply now = guarded([&] {
    return client_.txn({}, {{Op::Kind::kRange, leader_key(), "", 0, false},
                            {Op::Kind::kRange, state_key(), "", 0, false}});
  });
  if (now.ranges.size() != 2) throw std::runtime_error(where() + ": a transaction lost its reads");
  const auto& leader = now.ranges[0].kvs;
  const auto& state = now.ranges[1].kvs;
  if (!leader.empty()) {
    // Held by this SM already (a take-back whose answer was lost): adopt it.
    if (leader.front().value != me || leader.front().lease == 0) return false;
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->leader_rev = leader.front().mod_revision;
    s_->lease = leader.front().lease;
    return true;
  }
  // Nobody wrote the state since this SM did (or what it wrote last landed, unanswered).
  if (state.empty() ||
      (state.front().mod_revision != written_rev && state.front().value != attempted))
    return false;
  const std::int64_t state_rev = state.front().mod_revision;
  const std::int64_t lease = grant_lease();
  const etcd::TxnReply r = guarded([&] {
    return client_.txn({{leader_key(), Compare::Target::kCreateRevision, 0, ""},
                        {state_key(), Compare::Target::kModRevision, state_rev, ""}},
                       {{Op::Kind::kPut, leader_key(), me, lease, false}});
  });
  if (!r.succeeded) return false;  // another SM moved in between
  std::lock_guard<std::mutex> lock(s_->mu);
  s_->leader_rev = r.revision;
  s_->lease = lease;
  s_->written_rev = state_rev;
  s_->leader_value = me;
  return true;
}

bool EtcdState::create(const std::string& text, const std::map<std::string, std::string>& parts,
                       const std::vector<std::string>& stale) {
  std::vector<Op> ops = {{Op::Kind::kPut, state_key(), text, 0, false}};
  for (const auto& [name, part] : parts)
    ops.push_back({Op::Kind::kPut, part_key(name), part, 0, false});
  for (const auto& name : stale) ops.push_back({Op::Kind::kDelete, part_key(name), "", 0, false});
  return guarded([&] {
    return client_.txn({{state_key(), Compare::Target::kCreateRevision, 0, ""}}, ops).succeeded;
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
    else if (deleted)
      s_->parts.erase(kv.key);
    else
      s_->parts[kv.key] = Doc{true, kv.value, kv.mod_revision};
  };
  while (!s_->stop) {
    try {
      if (!synced) {
        // The whole prefix once, then every change after it.
        const etcd::RangeReply r = client_.range(settings_.prefix, true);
        {
          std::lock_guard<std::mutex> lock(s_->mu);
          s_->parts.clear();  // those deleted while the watch was down go too
          s_->parts_synced = true;
        }
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

void EtcdState::note(bool error, const std::string& line) const {
  std::function<void(bool, const std::string&)> log;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    log = s_->log;
  }
  if (log) log(error, line);
}

void EtcdState::set_log_hook(std::function<void(bool, const std::string&)> hook) {
  std::lock_guard<std::mutex> lock(s_->mu);
  s_->log = std::move(hook);
}

// A master whose lease ran out must not wait for its next write (there may be none for hours,
// and meanwhile the leader key names nobody): it takes the key back as soon as etcd answers,
// or learns that another SM took the state over. Tried every second until one of the two.
void EtcdState::keep_leadership() {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (!s_->lease_lost || s_->deposed || s_->leader_rev == 0) return;
  }
  const bool held = retake();  // throws while etcd does not answer: tried again in a second
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->lease_lost = false;
    s_->deposed = !held;
  }
  const std::string line =
      held ? "laas: " + where() + ": the leader key " + leader_key() +
                 " had expired (its lease ran out while etcd was out of reach); this SM holds "
                 "it again, nobody took the state over meanwhile"
           : "laas: " + where() + ": the leader key " + leader_key() +
                 " expired while etcd was out of reach and another SM took the state over "
                 "meanwhile: this SM writes nothing until it takes the state over again";
  note(!held, line);
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
          if (s_->lease == lease) {
            s_->lease = 0;
            s_->lease_lost = true;
          }
        }
      } else {
        guarded([&] { return client_.range(leader_key()); });
      }
      keep_leadership();
    } catch (const std::exception&) {
      // Recorded by guarded(): status and the metrics say so.
    }
    lock.lock();
  }
}

}  // namespace laas::service
