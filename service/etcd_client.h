// A client of etcd's v3 JSON gateway over libcurl: one request at a time per call, tried on the
// members in turn within one deadline, so a caller never waits longer than `timeout_ms` for an
// answer whatever the members do (down, partitioned, without a quorum). The requests and
// replies themselves are service/etcd_protocol.h's.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "service/etcd_protocol.h"

namespace laas::service::etcd {

struct ClientConfig {
  std::vector<std::string> endpoints;  // "http://127.0.0.1:2379", "https://sm-a:2379"
  std::string cacert, cert, key;       // TLS files (empty: none)
  int timeout_ms = 1500;               // for one call, every member tried included
};

// No member answered within the deadline, or none could commit (no quorum): the change may or
// may not be made by a request that timed out. The message names each member's failure.
class UnavailableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Client {
 public:
  explicit Client(ClientConfig config);
  const ClientConfig& config() const { return config_; }

  // POSTs `body` to `path` ("/v3/kv/range") and returns the parsed reply. Throws
  // UnavailableError (every member failed or the deadline passed) or ReplyError (a reply that is
  // no JSON, or an error etcd gave for the request itself).
  nlohmann::json call(const std::string& path, const nlohmann::json& body) const;

  // Linearizable: answered only by a member that has a quorum.
  RangeReply range(const std::string& key, bool prefix = false) const;
  TxnReply txn(const std::vector<Compare>& compares, const std::vector<Op>& success,
               const std::vector<Op>& failure = {}) const;
  std::pair<std::int64_t, std::int64_t> lease_grant(int ttl_seconds) const;  // ID, TTL
  std::int64_t lease_keepalive(std::int64_t id) const;  // the TTL left (0: lease gone)

  // Streams the changes of `key` (every key under it with `prefix`) from `start_revision` to
  // `on_message`, until `duration` has passed, `stop` is set (looked at least every second) or
  // the stream ends; then returns. Throws UnavailableError when no member takes the watch,
  // ReplyError on a message that is not etcd's (after the messages before it were given).
  void watch(const std::string& key, bool prefix, std::int64_t start_revision,
             std::chrono::milliseconds duration, const std::atomic<bool>& stop,
             const std::function<void(const WatchMessage&)>& on_message) const;

 private:
  ClientConfig config_;
  // The member that answered last: tried first next time.
  std::shared_ptr<std::atomic<std::size_t>> preferred_ =
      std::make_shared<std::atomic<std::size_t>>(0);
};

// etcd.lease_ttl_s's bounds (laas.yaml; service/etcd_state.h holds the lease): at least
// kMinLeaseTtlS, at most kMaxLeaseTtlS, and at least two deadlines (timeout_ms) so that a
// keep-alive (every third of it) that waits its whole deadline still lands in time.
constexpr int kMinLeaseTtlS = 2;
constexpr int kMaxLeaseTtlS = 3600;
// "" when `ttl_s` fits `timeout_ms`; else why not.
std::string lease_ttl_problem(int ttl_s, int timeout_ms);

// "host:port" is http://host:port; a URL must be http:// or https://. Throws
// std::invalid_argument saying what is wrong.
std::string endpoint_url(const std::string& endpoint);

}  // namespace laas::service::etcd
