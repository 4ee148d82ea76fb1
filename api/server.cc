#include "api/server.h"

#include <httplib.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <thread>

#include "api/events.h"
#include "api/routes.h"
#include "laasctl/client.h"

namespace laas::api {

using nlohmann::json;

bool split_listen(const std::string& listen, std::string& host, int& port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= listen.size() ||
      listen.size() - colon - 1 > 5 ||
      listen.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    return false;
  port = std::stoi(listen.substr(colon + 1));
  host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return port >= 1 && port <= 65535 && !host.empty();
}

namespace {

// Accepted connections waiting for a worker, now (BoundedQueue's count).
std::atomic<size_t> g_waiting{0};

// cpp-httplib's own pool queues every accepted connection without limit. This one runs
// `threads` workers and lets at most `max_waiting` connections wait for one; past that the
// accept loop waits (the kernel's backlog then holds, and refuses, the rest).
class BoundedQueue : public httplib::TaskQueue {
 public:
  BoundedQueue(int threads, int max_waiting) : max_waiting_(static_cast<size_t>(max_waiting)) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [this] { return jobs_.size() < max_waiting_ || stop_; });
    jobs_.push_back(std::move(fn));
    g_waiting = jobs_.size();
    ready_.notify_one();
  }
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    ready_.notify_all();
    room_.notify_all();
    for (auto& t : workers_) t.join();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_.wait(lock, [this] { return !jobs_.empty() || stop_; });
        if (jobs_.empty()) return;  // stopping, nothing left
        fn = std::move(jobs_.front());
        jobs_.pop_front();
        g_waiting = jobs_.size();
        room_.notify_one();
      }
      fn();
    }
  }
  size_t max_waiting_;
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  bool stop_ = false;
};

// Connections the kernel holds for laas-api beyond those it accepted (capped by
// net.core.somaxconn); past that, new connections are not answered until there is room.
constexpr int kListenBacklog = 1024;

// How long a TLS session may be resumed without a new certificate check.
constexpr long kSessionSeconds = 300;

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  return text;
}

// TLS 1.2 and 1.3 only; a client certificate signed by the client CA is required (OpenSSL ends
// the handshake otherwise: no HTTP is read from such a client, none is answered).
bool setup_tls(SSL_CTX& ctx, const ServerOptions& o, std::string& why) {
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate_chain_file(&ctx, o.cert.c_str()) != 1) {
    why = "cannot load the certificate " + o.cert + ": " + openssl_error();
    return false;
  }
  if (SSL_CTX_use_PrivateKey_file(&ctx, o.key.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(&ctx) != 1) {
    why = "cannot load the key " + o.key + " (or it does not match " + o.cert +
          "): " + openssl_error();
    return false;
  }
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(o.client_ca.c_str());
  if (SSL_CTX_load_verify_locations(&ctx, o.client_ca.c_str(), nullptr) != 1 || !names) {
    if (names) sk_X509_NAME_pop_free(names, X509_NAME_free);
    why = "cannot load the client CA " + o.client_ca + ": " + openssl_error();
    return false;
  }
  SSL_CTX_set_client_CA_list(&ctx, names);
  SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  // A client that opens a second connection offers the session of its first (curl does, on
  // every new connection of a run). OpenSSL resumes a session whose peer was verified only
  // within a session ID context; without one it ends the handshake with an "internal error"
  // alert instead (the failures of 200 concurrent clients). A resumed session keeps the
  // verified certificate, so its CN, for at most kSessionSeconds.
  static const unsigned char context[] = "laas-api";
  SSL_CTX_set_timeout(&ctx, kSessionSeconds);
  if (SSL_CTX_set_session_id_context(&ctx, context, sizeof context - 1) != 1) {
    why = "cannot set the TLS session context: " + openssl_error();
    return false;
  }
  return true;
}

// The peer certificate's subject CN; empty when there is none or more than one.
std::string peer_cn(const SSL* ssl) {
  if (!ssl) return "";
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) return "";
  std::string cn;
  const X509_NAME* subject = X509_get_subject_name(cert);
  const int at = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (at >= 0 && X509_NAME_get_index_by_NID(subject, NID_commonName, at) < 0) {
    unsigned char* utf8 = nullptr;
    const int n =
        ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at)));
    if (n > 0) cn.assign(reinterpret_cast<char*>(utf8), static_cast<size_t>(n));
    OPENSSL_free(utf8);
  }
  X509_free(cert);
  return cn;
}

void send(httplib::Response& res, const HttpReply& r) {
  res.status = r.status;
  if (!r.location.empty()) res.set_header("Location", r.location);
  if (!r.allow.empty()) res.set_header("Allow", r.allow);
  if (r.status == 503) res.set_header("Retry-After", "5");
  res.set_content(r.body.dump(2) + "\n", "application/json");
}

// Set when laas-api stops: event streams end at their next long-poll.
std::atomic<bool> g_stopping{false};
// Event streams open: each holds a worker, so at most half of them stream.
std::atomic<int> g_streams{0};

// One SSE chunk: a long-poll of the socket's events from `since` (none: from now), written.
bool stream_chunk(const ServerOptions& o, json& params, httplib::DataSink& sink) {
  if (g_stopping) {
    sink.done();
    return true;
  }
  params["wait_ms"] = kEventsWaitMs;
  std::string text;
  try {
    const json reply = ctl::call(o.socket, service::method::kEvents, params, kEventsWaitMs + 5000);
    if (!reply.value("ok", false)) {
      text = "event: error\ndata: " + map_reply({}, reply).body.dump() + "\n\n";
    } else {
      text = sse_frames(reply["result"]);
      if (const auto next = next_position(reply["result"])) params["since"] = *next;
    }
  } catch (const ctl::ClientError& e) {
    text = "event: error\ndata: " + socket_failure(e.exit_code(), e.what()).body.dump() + "\n\n";
  }
  if (!sink.write(text.data(), text.size())) return false;  // the client is gone
  if (text.rfind("event: error", 0) == 0) sink.done();      // it reconnects (Last-Event-ID)
  return true;
}

void stream_events(const ServerOptions& o, const Mapped& m, httplib::Response& res) {
  if (++g_streams > std::max(1, o.threads / 2)) {
    --g_streams;
    return send(res, error_reply(503, service::error::kBusy,
                                 "too many event streams open: try again later"));
  }
  auto params = std::make_shared<json>(m.params);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [&o, params](size_t, httplib::DataSink& sink) { return stream_chunk(o, *params, sink); },
      [](bool) { --g_streams; });
}

// One request: mapped, asked of the control socket, answered.
void handle(const ServerOptions& o, const httplib::Request& req, httplib::Response& res) {
  const Role role = role_for(peer_cn(req.ssl), o.writers, o.readers);
  MapOptions mo;
  mo.wait_ms = o.wait_ms;
  auto query = req.params;
  // An SSE client reconnecting says where it was.
  if (req.path == "/v1/events" && req.has_header("Last-Event-ID") && !query.count("since"))
    query.emplace("since", req.get_header_value("Last-Event-ID"));
  // A kept-alive connection holds its worker between requests (up to the keep-alive timeout
  // once its client has nothing more to ask). While other connections wait for a worker, this
  // client is asked to close after the answer: its next request queues behind theirs. Without
  // it, 200 clients on 8 workers waited up to 30 s at the end of a run (8 answered a second).
  if (g_waiting > 0) res.set_header("Connection", "close");
  const Mapped m = map_request(req.method, req.path, query, req.body, role, mo);
  if (m.error) return send(res, *m.error);
  if (m.method.empty()) return res.set_content(o.openapi, "application/json");
  if (m.method == service::method::kEvents) return stream_events(o, m, res);
  try {
    // The socket's own wait plus a margin for its reply.
    const json reply = ctl::call(o.socket, m.method, m.params, o.wait_ms + 5000);
    send(res, map_reply(m, reply));
  } catch (const ctl::ClientError& e) {
    send(res, socket_failure(e.exit_code(), e.what()));
  }
}

// Errors cpp-httplib answers itself (413 over the body limit, 400 for a request it cannot
// parse) get the same JSON body as the API's own.
void json_error(const httplib::Request&, httplib::Response& res) {
  if (!res.body.empty()) return;
  const std::string code = res.status == 413   ? "too_large"
                           : res.status == 404 ? "not_found"
                                               : "bad_request";
  const std::string message =
      res.status == 413
          ? "the body is larger than " + std::to_string(kMaxBodyBytes) + " bytes"
          : "the request could not be read as HTTP (status " + std::to_string(res.status) + ")";
  send(res, error_reply(res.status, code, message));
}

void log_request(const httplib::Request& req, const httplib::Response& res) {
  std::cerr << "laas-api: " << req.remote_addr << " CN=" << peer_cn(req.ssl) << " " << req.method
            << " " << req.path << " " << res.status << "\n";
}

// The listening socket cpp-httplib makes: remembered when it is made (before bind), so that its
// backlog can be set after (Debian's libcpp-httplib is built with a backlog of 5).
int g_listen_fd = -1;

void configure(httplib::SSLServer& svr, const ServerOptions& o) {
  // SO_REUSEADDR (a restart binds at once) but not cpp-httplib's SO_REUSEPORT, with which a
  // second laas-api on the same port would share the connections instead of failing to start.
  svr.set_socket_options([](socket_t fd) {
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    g_listen_fd = fd;
  });
  svr.new_task_queue = [&o] { return new BoundedQueue(o.threads, o.max_connections); };
  svr.set_read_timeout(o.read_timeout_s, 0);
  svr.set_write_timeout(o.write_timeout_s, 0);
  // A kept-alive connection holds its worker while idle: give it back soon, so that idle
  // clients do not starve the connections waiting for a worker.
  svr.set_keep_alive_timeout(std::min(o.read_timeout_s, 1));
  svr.set_keep_alive_max_count(100);
  svr.set_payload_max_length(kMaxBodyBytes);
  const auto h = [&o](const httplib::Request& req, httplib::Response& res) { handle(o, req, res); };
  svr.Get(".*", h);
  svr.Post(".*", h);
  svr.Delete(".*", h);
  svr.Put(".*", h);
  svr.Patch(".*", h);
  svr.set_error_handler(json_error);
  svr.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        send(res, error_reply(500, "internal", "laas-api failed on this request"));
      });
  svr.set_logger(log_request);
}

}  // namespace

int serve(const ServerOptions& o) {
  // SIGTERM and SIGINT are taken by one thread, which stops the server; every other thread
  // (cpp-httplib's workers included) inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);  // a client gone mid-reply is an error return, not a signal
  std::string why;
  httplib::SSLServer svr([&](SSL_CTX& ctx) { return setup_tls(ctx, o, why); });
  if (!svr.is_valid()) {
    std::cerr << "laas-api: " << (why.empty() ? "cannot set up TLS: " + openssl_error() : why)
              << "\n";
    return 1;
  }
  configure(svr, o);
  if (!svr.bind_to_port(o.host, o.port)) {
    std::cerr << "laas-api: cannot listen on " << o.host << ":" << o.port << "\n";
    return 1;
  }
  // Connections past the workers and the waiting ones queue in the kernel until accepted.
  // With cpp-httplib's 5, the kernel dropped the SYNs of the 6th and later: those clients
  // waited for TCP's retransmissions (1, 3, 7 s: the p99 of 8 s). Listening again on the
  // bound socket only changes its backlog.
  if (g_listen_fd < 0 || ::listen(g_listen_fd, kListenBacklog) != 0) {
    std::cerr << "laas-api: cannot set the listen backlog on " << o.host << ":" << o.port << "\n";
    return 1;
  }
  std::atomic<bool> signalled{false};
  std::thread stopper([&svr, &signalled, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    signalled = true;
    g_stopping = true;
    svr.stop();
  });
  std::cerr << "laas-api: listening on " << o.host << ":" << o.port << " (socket " << o.socket
            << ", " << o.writers.size() << " writer CN(s), " << o.readers.size()
            << " reader CN(s))\n";
  const bool ok = svr.listen_after_bind();
  if (!signalled) pthread_kill(stopper.native_handle(), SIGTERM);  // ends its sigwait
  stopper.join();
  std::cerr << "laas-api: " << (ok ? "stopped" : "the listening socket failed") << "\n";
  return ok ? 0 : 1;
}

}  // namespace laas::api
