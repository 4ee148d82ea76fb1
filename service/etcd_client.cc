#include "service/etcd_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <mutex>

namespace laas::service::etcd {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Easy {
  CURL* h = curl_easy_init();
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  ~Easy() {
    curl_slist_free_all(headers);
    if (h) curl_easy_cleanup(h);
  }
};

size_t append_body(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// The options every request shares: the URL, the body, TLS, no signals (OpenSM's threads),
// never a proxy from the environment (the members are on the management network).
void prepare(Easy& e, const ClientConfig& c, const std::string& url, const std::string& body,
             long timeout_ms) {
  curl_easy_setopt(e.h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e.h, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(e.h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(e.h, CURLOPT_HTTPHEADER, e.headers);
  curl_easy_setopt(e.h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e.h, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(e.h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(e.h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  if (!c.cacert.empty()) curl_easy_setopt(e.h, CURLOPT_CAINFO, c.cacert.c_str());
  if (!c.cert.empty()) curl_easy_setopt(e.h, CURLOPT_SSLCERT, c.cert.c_str());
  if (!c.key.empty()) curl_easy_setopt(e.h, CURLOPT_SSLKEY, c.key.c_str());
}

// A member that cannot serve the request now (no leader, shutting down, timed out inside
// etcd): gRPC's Unavailable (14) or DeadlineExceeded (4), or an HTTP 5xx.
bool member_unavailable(long http, const json& reply) {
  if (http >= 500) return true;
  if (!reply.is_object()) return false;
  const json code = reply.value("code", json());
  return code == 14 || code == 4;
}

struct Attempt {
  bool answered = false;  // a reply to give back (success or etcd's own error)
  json reply;
  std::string why;  // not answered: what went wrong at this member
};

Attempt post_once(const ClientConfig& c, const std::string& endpoint, const std::string& path,
                  const std::string& body, long timeout_ms) {
  Attempt a;
  Easy e;
  if (!e.h || !e.headers) {
    a.why = "cannot set up a request (libcurl)";
    return a;
  }
  std::string text;
  prepare(e, c, endpoint + path, body, timeout_ms);
  curl_easy_setopt(e.h, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(e.h, CURLOPT_WRITEDATA, &text);
  const CURLcode rc = curl_easy_perform(e.h);
  if (rc != CURLE_OK) {
    a.why = curl_easy_strerror(rc);
    return a;
  }
  long http = 0;
  curl_easy_getinfo(e.h, CURLINFO_RESPONSE_CODE, &http);
  json reply = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (member_unavailable(http, reply)) {
    a.why = "HTTP " + std::to_string(http) +
            (reply.is_object() ? " " + reply.value("message", std::string()) : "");
    return a;
  }
  if (reply.is_discarded())
    throw ReplyError("etcd " + endpoint + path + ": HTTP " + std::to_string(http) +
                     ", not JSON: '" + text.substr(0, 200) + "'");
  a.answered = true;
  a.reply = std::move(reply);
  return a;
}

struct WatchStream {
  std::string buffer;
  const std::function<void(const WatchMessage&)>* on_message;
  const std::atomic<bool>* stop;
  std::string error;  // a bad message: the stream is cut there
  bool got_any = false;
};

size_t watch_bytes(char* data, size_t size, size_t n, void* p) {
  auto* w = static_cast<WatchStream*>(p);
  w->buffer.append(data, size * n);
  // The gateway ends every message with a newline.
  for (std::size_t end; (end = w->buffer.find('\n')) != std::string::npos;) {
    const std::string line = w->buffer.substr(0, end);
    w->buffer.erase(0, end + 1);
    if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
    try {
      const json doc = json::parse(line);
      const WatchMessage m = parse_watch(doc);
      w->got_any = true;
      (*w->on_message)(m);
    } catch (const std::exception& e) {
      w->error = e.what();
      return 0;  // aborts the transfer
    }
  }
  return size * n;
}

int watch_progress(void* p, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<WatchStream*>(p)->stop->load() ? 1 : 0;
}

}  // namespace

std::string endpoint_url(const std::string& endpoint) {
  std::string url = endpoint;
  if (url.empty()) throw std::invalid_argument("an empty endpoint");
  if (url.find("://") == std::string::npos) url = "http://" + url;
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    throw std::invalid_argument("'" + endpoint + "': only http:// and https:// are etcd URLs");
  while (url.back() == '/') url.pop_back();
  const auto host = url.substr(url.find("://") + 3);
  if (host.empty() || host.find('/') != std::string::npos)
    throw std::invalid_argument("'" + endpoint + "' is not host:port");
  return url;
}

Client::Client(ClientConfig config) : config_(std::move(config)) {
  init_curl_once();
  for (auto& e : config_.endpoints) e = endpoint_url(e);
  if (config_.endpoints.empty()) throw std::invalid_argument("no etcd endpoint");
}

json Client::call(const std::string& path, const json& body) const {
  const std::string text = body.dump();
  const auto deadline = Clock::now() + std::chrono::milliseconds(config_.timeout_ms);
  const std::size_t n = config_.endpoints.size();
  const std::size_t first = preferred_->load() % n;
  std::string failures;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = (first + i) % n;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    // An even share of what is left, so a member that hangs leaves time for the others.
    const long share = std::max<long>(1, static_cast<long>(left / static_cast<long>(n - i)));
    Attempt a = post_once(config_, config_.endpoints[at], path, text, share);
    if (a.answered) {
      preferred_->store(at);
      return a.reply;
    }
    failures += (failures.empty() ? "" : "; ") + config_.endpoints[at] + ": " + a.why;
  }
  throw UnavailableError("etcd did not answer " + path + " within " +
                         std::to_string(config_.timeout_ms) + " ms (" +
                         (failures.empty() ? std::string("no member tried") : failures) +
                         "): no quorum, or no member reachable");
}

RangeReply Client::range(const std::string& key, bool prefix) const {
  return parse_range(call("/v3/kv/range", range_request(key, prefix)));
}

TxnReply Client::txn(const std::vector<Compare>& compares, const std::vector<Op>& success,
                     const std::vector<Op>& failure) const {
  return parse_txn(call("/v3/kv/txn", txn_request(compares, success, failure)));
}

std::pair<std::int64_t, std::int64_t> Client::lease_grant(int ttl_seconds) const {
  return parse_lease_grant(call("/v3/lease/grant", lease_grant_request(ttl_seconds)));
}

std::int64_t Client::lease_keepalive(std::int64_t id) const {
  // The gateway answers one keep-alive per request body, then ends the stream.
  return parse_keepalive(call("/v3/lease/keepalive", lease_keepalive_request(id)));
}

void Client::watch(const std::string& key, bool prefix, std::int64_t start_revision,
                   std::chrono::milliseconds duration, const std::atomic<bool>& stop,
                   const std::function<void(const WatchMessage&)>& on_message) const {
  const std::string body = watch_request(key, prefix, start_revision).dump();
  const std::size_t n = config_.endpoints.size();
  const std::size_t first = preferred_->load() % n;
  std::string failures;
  for (std::size_t i = 0; i < n && !stop.load(); ++i) {
    const std::string& endpoint = config_.endpoints[(first + i) % n];
    Easy e;
    if (!e.h || !e.headers) throw UnavailableError("cannot set up a watch (libcurl)");
    WatchStream w;
    w.on_message = &on_message;
    w.stop = &stop;
    prepare(e, config_, endpoint + "/v3/watch", body, static_cast<long>(duration.count()));
    curl_easy_setopt(e.h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config_.timeout_ms));
    curl_easy_setopt(e.h, CURLOPT_WRITEFUNCTION, watch_bytes);
    curl_easy_setopt(e.h, CURLOPT_WRITEDATA, &w);
    curl_easy_setopt(e.h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e.h, CURLOPT_XFERINFOFUNCTION, watch_progress);
    curl_easy_setopt(e.h, CURLOPT_XFERINFODATA, &w);
    const CURLcode rc = curl_easy_perform(e.h);
    if (!w.error.empty()) throw ReplyError("etcd watch at " + endpoint + ": " + w.error);
    // The deadline, a stop, or a stream that ran and ended: the caller watches again.
    if (w.got_any || stop.load() || rc == CURLE_OK) return;
    failures += (failures.empty() ? "" : "; ") + endpoint + ": " + curl_easy_strerror(rc);
  }
  if (stop.load()) return;
  throw UnavailableError("no etcd member took the watch (" + failures + ")");
}

std::string lease_ttl_problem(int ttl_s, int timeout_ms) {
  if (ttl_s < kMinLeaseTtlS || ttl_s > kMaxLeaseTtlS)
    return "must be between " + std::to_string(kMinLeaseTtlS) + " and " +
           std::to_string(kMaxLeaseTtlS);
  if (ttl_s * 1000LL < 2LL * timeout_ms)
    return "must be at least twice etcd.timeout_ms (" + std::to_string(timeout_ms) +
           " ms): a keep-alive waiting its whole deadline would let the lease run out";
  return "";
}

}  // namespace laas::service::etcd
