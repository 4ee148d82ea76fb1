// etcd's v3 API as its JSON gateway speaks it (POST /v3/kv/range, /v3/kv/txn, /v3/lease/grant,
// /v3/lease/keepalive, /v3/watch): the request bodies and the parsing of the replies, without
// I/O, so that every malformed reply is tested without an etcd (service/etcd_client.h sends
// them). Keys and values travel base64-encoded; 64-bit numbers as decimal strings.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace laas::service::etcd {

// A reply that is not what the API promises (or an error etcd reported): the message says what.
class ReplyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string base64_encode(const std::string& bytes);
// Throws ReplyError on a character outside the alphabet or a bad length.
std::string base64_decode(const std::string& text);
// The end of the range of every key starting with `prefix` (etcd's range_end).
std::string prefix_end(const std::string& prefix);

struct KeyValue {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t version = 0;
  std::int64_t lease = 0;
};

// A condition of a transaction: the key's mod_revision or create_revision equal to `number`
// (0: the key does not exist), or its value equal to `value`.
struct Compare {
  enum class Target { kModRevision, kCreateRevision, kValue };
  std::string key;
  Target target = Target::kModRevision;
  std::int64_t number = 0;
  std::string value;
};

struct Op {
  enum class Kind { kPut, kRange, kDelete };
  Kind kind = Kind::kRange;
  std::string key;
  std::string value;       // kPut
  std::int64_t lease = 0;  // kPut: 0, none
  bool prefix = false;     // kRange, kDelete: every key starting with `key`
};

struct RangeReply {
  std::int64_t revision = 0;  // the store's revision when it was read
  std::vector<KeyValue> kvs;
};

struct TxnReply {
  bool succeeded = false;
  std::int64_t revision = 0;       // after the transaction (its puts' mod_revision)
  std::vector<RangeReply> ranges;  // the range ops of the branch taken, in order
};

struct WatchEvent {
  bool deleted = false;
  KeyValue kv;
};

// One message of a watch stream.
struct WatchMessage {
  std::int64_t revision = 0;
  bool created = false;
  bool canceled = false;
  std::int64_t compact_revision = 0;  // > 0: the start revision was compacted away
  std::string cancel_reason;
  std::vector<WatchEvent> events;
};

nlohmann::json range_request(const std::string& key, bool prefix);
nlohmann::json txn_request(const std::vector<Compare>& compares, const std::vector<Op>& success,
                           const std::vector<Op>& failure);
nlohmann::json lease_grant_request(int ttl_seconds);
nlohmann::json lease_keepalive_request(std::int64_t id);
nlohmann::json watch_request(const std::string& key, bool prefix, std::int64_t start_revision);

// Each throws ReplyError naming what is wrong (an "error" member: etcd's message and code).
RangeReply parse_range(const nlohmann::json& reply);
TxnReply parse_txn(const nlohmann::json& reply);
// The lease's ID and granted TTL.
std::pair<std::int64_t, std::int64_t> parse_lease_grant(const nlohmann::json& reply);
// The remaining TTL (0: the lease is gone, expired or revoked).
std::int64_t parse_keepalive(const nlohmann::json& reply);
WatchMessage parse_watch(const nlohmann::json& reply);

}  // namespace laas::service::etcd
