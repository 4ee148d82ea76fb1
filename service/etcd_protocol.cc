#include "service/etcd_protocol.h"

#include <array>

namespace laas::service::etcd {

using nlohmann::json;

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// The gateway writes int64 as a string ("123"); accept a plain number too.
std::int64_t number(const json& doc, const char* name) {
  const auto it = doc.find(name);
  if (it == doc.end()) return 0;  // proto3 leaves zero values out
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_string()) {
    const std::string text = it->get<std::string>();
    std::size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == text.size() && !text.empty()) return n;
  }
  throw ReplyError(std::string("'") + name + "' is not an integer: " + it->dump());
}

std::string bytes(const json& doc, const char* name) {
  const auto it = doc.find(name);
  if (it == doc.end()) return "";
  if (!it->is_string()) throw ReplyError(std::string("'") + name + "' is not a string");
  return base64_decode(it->get<std::string>());
}

const json& object(const json& doc, const char* name) {
  const auto it = doc.find(name);
  if (it == doc.end() || !it->is_object())
    throw ReplyError(std::string("no object '") + name + "' in the reply");
  return *it;
}

// etcd's error replies: {"error": "...", "code": N, "message": "..."} (unary) or
// {"error": {"grpc_code": N, "message": "..."}} (a stream).
void throw_if_error(const json& reply) {
  if (!reply.is_object()) throw ReplyError("the reply is not a JSON object");
  const auto it = reply.find("error");
  if (it == reply.end()) return;
  std::string message = it->is_string() ? it->get<std::string>() : "";
  if (it->is_object()) message = it->value("message", it->dump());
  if (message.empty()) message = it->dump();
  const json code = it->is_object() ? it->value("grpc_code", json()) : reply.value("code", json());
  throw ReplyError("etcd: " + message + (code.is_null() ? "" : " (code " + code.dump() + ")"));
}

KeyValue key_value(const json& kv) {
  if (!kv.is_object()) throw ReplyError("a key-value is not an object");
  KeyValue out;
  out.key = bytes(kv, "key");
  out.value = bytes(kv, "value");
  out.create_revision = number(kv, "create_revision");
  out.mod_revision = number(kv, "mod_revision");
  out.version = number(kv, "version");
  out.lease = number(kv, "lease");
  return out;
}

std::int64_t header_revision(const json& reply) {
  return number(object(reply, "header"), "revision");
}

RangeReply range_body(const json& reply, bool need_header) {
  RangeReply out;
  if (need_header) out.revision = header_revision(reply);
  const auto kvs = reply.find("kvs");
  if (kvs != reply.end()) {
    if (!kvs->is_array()) throw ReplyError("'kvs' is not a list");
    for (const auto& kv : *kvs) out.kvs.push_back(key_value(kv));
  }
  return out;
}

json op_json(const Op& op) {
  json body = {{"key", base64_encode(op.key)}};
  if (op.kind == Op::Kind::kPut) {
    body["value"] = base64_encode(op.value);
    if (op.lease) body["lease"] = std::to_string(op.lease);
    return {{"request_put", body}};
  }
  if (op.prefix) body["range_end"] = base64_encode(prefix_end(op.key));
  return {{op.kind == Op::Kind::kRange ? "request_range" : "request_delete_range", body}};
}

// A member of the wrong JSON type deep inside a reply is a bad reply too, never a crash.
template <class F>
auto checked(F parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const json::exception& e) {
    throw ReplyError(std::string("a member of the wrong type (") + e.what() + ")");
  }
}

TxnReply txn_body(const json& reply) {
  throw_if_error(reply);
  TxnReply out;
  out.revision = header_revision(reply);
  const auto ok = reply.find("succeeded");
  if (ok != reply.end() && !ok->is_boolean()) throw ReplyError("'succeeded' is not a boolean");
  out.succeeded = ok != reply.end() && ok->get<bool>();
  const auto responses = reply.find("responses");
  if (responses == reply.end()) return out;
  if (!responses->is_array()) throw ReplyError("'responses' is not a list");
  for (const auto& r : *responses) {
    if (!r.is_object()) throw ReplyError("a transaction response is not an object");
    if (const auto range = r.find("response_range"); range != r.end())
      out.ranges.push_back(range_body(*range, false));
  }
  return out;
}

WatchMessage watch_body(const json& reply) {
  throw_if_error(reply);
  const json& result = object(reply, "result");
  WatchMessage out;
  out.revision = header_revision(result);
  out.created = result.value("created", false);
  out.canceled = result.value("canceled", false);
  out.compact_revision = number(result, "compact_revision");
  out.cancel_reason = result.value("cancel_reason", "");
  if (const auto events = result.find("events"); events != result.end()) {
    if (!events->is_array()) throw ReplyError("'events' is not a list");
    for (const auto& e : *events) {
      if (!e.is_object()) throw ReplyError("an event is not an object");
      WatchEvent event;
      const std::string type = e.value("type", "PUT");
      if (type != "PUT" && type != "DELETE") throw ReplyError("event type '" + type + "'");
      event.deleted = type == "DELETE";
      event.kv = key_value(object(e, "kv"));
      out.events.push_back(std::move(event));
    }
  }
  return out;
}

}  // namespace

std::string base64_encode(const std::string& in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned n = static_cast<unsigned char>(in[i]) << 16 |
                       static_cast<unsigned char>(in[i + 1]) << 8 |
                       static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(n >> s) & 63];
  }
  if (i < in.size()) {
    unsigned n = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string base64_decode(const std::string& text) {
  if (text.size() % 4 != 0)
    throw ReplyError("base64 text of length " + std::to_string(text.size()));
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    // '=' only at the end: "xx==" or "xxx=".
    const int pad = last && text[i + 3] == '=' ? (text[i + 2] == '=' ? 2 : 1) : 0;
    unsigned n = 0;
    for (int j = 0; j < 4; ++j) {
      const int v = j >= 4 - pad ? 0 : sextet(text[i + j]);
      if (v < 0) throw ReplyError("not base64: '" + text.substr(0, 40) + "'");
      n = n << 6 | static_cast<unsigned>(v);
    }
    out += static_cast<char>(n >> 16 & 255);
    if (pad < 2) out += static_cast<char>(n >> 8 & 255);
    if (pad < 1) out += static_cast<char>(n & 255);
  }
  return out;
}

std::string prefix_end(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

json range_request(const std::string& key, bool prefix) {
  json body = {{"key", base64_encode(key)}};
  if (prefix) body["range_end"] = base64_encode(prefix_end(key));
  return body;
}

json txn_request(const std::vector<Compare>& compares, const std::vector<Op>& success,
                 const std::vector<Op>& failure) {
  json body = {{"compare", json::array()}, {"success", json::array()}, {"failure", json::array()}};
  for (const auto& c : compares) {
    json one = {{"key", base64_encode(c.key)}, {"result", "EQUAL"}};
    switch (c.target) {
      case Compare::Target::kModRevision:
        one["target"] = "MOD";
        one["mod_revision"] = std::to_string(c.number);
        break;
      case Compare::Target::kCreateRevision:
        one["target"] = "CREATE";
        one["create_revision"] = std::to_string(c.number);
        break;
      case Compare::Target::kValue:
        one["target"] = "VALUE";
        one["value"] = base64_encode(c.value);
        break;
    }
    body["compare"].push_back(std::move(one));
  }
  for (const auto& op : success) body["success"].push_back(op_json(op));
  for (const auto& op : failure) body["failure"].push_back(op_json(op));
  return body;
}

json lease_grant_request(int ttl_seconds) { return {{"TTL", std::to_string(ttl_seconds)}}; }

json lease_keepalive_request(std::int64_t id) { return {{"ID", std::to_string(id)}}; }

json watch_request(const std::string& key, bool prefix, std::int64_t start_revision) {
  json create = {{"key", base64_encode(key)}};
  if (prefix) create["range_end"] = base64_encode(prefix_end(key));
  if (start_revision > 0) create["start_revision"] = std::to_string(start_revision);
  return {{"create_request", create}};
}

RangeReply parse_range(const json& reply) {
  return checked([&] {
    throw_if_error(reply);
    return range_body(reply, true);
  });
}

TxnReply parse_txn(const json& reply) {
  return checked([&] { return txn_body(reply); });
}

std::pair<std::int64_t, std::int64_t> parse_lease_grant(const json& reply) {
  return checked([&] {
    throw_if_error(reply);
    const std::int64_t id = number(reply, "ID");
    const std::int64_t ttl = number(reply, "TTL");
    if (id == 0 || ttl <= 0) throw ReplyError("lease grant without an ID or TTL: " + reply.dump());
    return std::make_pair(id, ttl);
  });
}

std::int64_t parse_keepalive(const json& reply) {
  return checked([&] {
    throw_if_error(reply);
    return number(object(reply, "result"), "TTL");
  });
}

WatchMessage parse_watch(const json& reply) {
  return checked([&] { return watch_body(reply); });
}

}  // namespace laas::service::etcd
