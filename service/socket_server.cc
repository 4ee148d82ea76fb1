#include "service/socket_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "service/identity.h"

namespace laas::service {

using Clock = std::chrono::steady_clock;

struct SocketServer::Shared {
  SocketConfig config;
  TenantService& service;
  Logger log;
  std::optional<gid_t> group_gid;
  std::optional<gid_t> read_gid;
  int wake_pipe[2] = {-1, -1};
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::condition_variable workers_done;
  int clients = 0;               // guarded by mu
  std::map<uid_t, int> per_uid;  // guarded by mu
  // Every worker not joined yet, by number (guarded by mu). A worker that ends marks itself
  // done (nothing it could fail to allocate): the acceptor joins those at its next connection,
  // stop() joins every one.
  struct Worker {
    std::thread thread;
    bool done = false;
  };
  std::map<std::uint64_t, Worker> workers;
  std::uint64_t next_worker = 0;
  Clock::time_point last_accept_error{}, last_thread_error{};  // acceptor only

  Shared(SocketConfig c, TenantService& s, Logger l)
      : config(std::move(c)), service(s), log(std::move(l)) {}
  ~Shared() {
    if (wake_pipe[0] >= 0) ::close(wake_pipe[0]);
    if (wake_pipe[1] >= 0) ::close(wake_pipe[1]);
  }
};

namespace {

std::string errno_message() { return std::strerror(errno); }

int ms_until(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// Sends `line` before `deadline`, giving up at once when the server stops. The socket is
// never left blocked in send(): a client that does not read cannot hold a worker for longer.
bool send_line(int fd, int wake_fd, const std::string& line, Clock::time_point deadline) {
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n =
        ::send(fd, line.data() + done, line.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
    const int wait = ms_until(deadline);
    if (wait == 0) return false;
    pollfd fds[2] = {{fd, POLLOUT, 0}, {wake_fd, POLLIN, 0}};
    const int ready = ::poll(fds, 2, wait);
    if (ready < 0 && errno != EINTR) return false;
    if (ready > 0 && fds[1].revents) return false;
  }
  return true;
}

// A best-effort one-line answer on a connection about to be closed: never waits.
void send_now(int fd, const std::string& line) {
  (void)!::send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// Replies may quote the client's bytes (a parse error's "last read"): invalid UTF-8 is replaced,
// not thrown (an exception here used to escape the worker thread and end OpenSM).
std::string to_line(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string error_line(const nlohmann::json& id, const char* code, const std::string& message) {
  return to_line({{"v", kProtocolVersion},
                  {"id", id},
                  {"ok", false},
                  {"error", {{"code", code}, {"message", message}}}});
}

}  // namespace

bool json_too_deep(const std::string& text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

std::string answer_line(const std::string& line, TenantService& service, const Caller& caller) {
  if (json_too_deep(line, kMaxJsonDepth))
    return error_line(nullptr, error::kBadRequest,
                      "request nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  try {
    const nlohmann::json request = nlohmann::json::parse(line);
    return to_line(service.handle(request, caller));
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    return error_line(nullptr, error::kBadRequest, std::string("malformed JSON: ") + e.what());
  } catch (const std::exception& e) {
    return error_line(nullptr, error::kInternal, std::string("unusable request: ") + e.what());
  }
}

namespace {

// One connection, until the client leaves, breaks a bound, or the server stops.
void serve(SocketServer::Shared& s, int fd, uid_t uid, gid_t gid) {
  Caller caller;
  caller.uid = uid;
  const Access access = access_of(uid, gid, s.group_gid, s.read_gid);
  if (access == Access::kNone) {
    // Refused before reading anything: a peer in neither group learns nothing else.
    std::string allowed = "root";
    if (!s.config.group.empty()) allowed += ", group " + s.config.group + " (changes)";
    if (!s.config.read_group.empty()) allowed += ", group " + s.config.read_group + " (reads)";
    send_now(fd, error_line(nullptr, error::kPermission,
                            "permission denied: uid " + std::to_string(uid) +
                                " may not use this socket; allowed: " + allowed));
    return;
  }
  caller.may_write = access == Access::kWrite;
  caller.may_read = true;
  const auto request_window = std::chrono::milliseconds(s.config.request_timeout_ms);
  const auto send_window = std::chrono::milliseconds(s.config.send_timeout_ms);
  auto deadline = Clock::now() + request_window;
  std::string buffer;
  char chunk[4096];
  while (!s.stopping) {
    // Answer every complete line already buffered. Blank lines do not extend the deadline.
    size_t newline;
    while ((newline = buffer.find('\n')) != std::string::npos) {
      const std::string line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string reply = answer_line(line, s.service, caller);
      if (!send_line(fd, s.wake_pipe[0], reply, Clock::now() + send_window)) return;
      if (s.stopping) return;
      deadline = Clock::now() + request_window;
    }
    if (buffer.size() > s.config.max_request_bytes) {
      send_now(fd, error_line(nullptr, error::kBadRequest,
                              "request longer than " + std::to_string(s.config.max_request_bytes) +
                                  " bytes; connection closed"));
      return;
    }
    const int wait = ms_until(deadline);
    if (wait == 0) {
      if (!buffer.empty())
        send_now(fd, error_line(nullptr, error::kBadRequest,
                                "request not complete within " +
                                    std::to_string(s.config.request_timeout_ms) +
                                    " ms; connection closed"));
      return;
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {s.wake_pipe[0], POLLIN, 0}};
    const int ready = ::poll(fds, 2, wait);
    if (ready == 0) continue;  // the deadline check above closes it
    if (ready < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) return;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace

SocketServer::SocketServer(SocketConfig config, TenantService& service, Logger log)
    : shared_(std::make_unique<Shared>(std::move(config), service, std::move(log))) {}

SocketServer::~SocketServer() { stop(); }

void SocketServer::start() {
  Shared& s = *shared_;
  const SocketConfig& config = s.config;
  if (!config.group.empty()) {
    s.group_gid = lookup_group(config.group);
    if (!s.group_gid)
      s.log(LogLevel::kWarning,
            "laas: group '" + config.group + "' does not exist: only root may change tenants");
  }
  if (!config.read_group.empty()) {
    s.read_gid = lookup_group(config.read_group);
    if (!s.read_gid)
      s.log(LogLevel::kWarning,
            "laas: group '" + config.read_group + "' does not exist: nobody has read-only access");
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (config.path.size() >= sizeof(addr.sun_path))
    throw std::runtime_error("socket path " + config.path + " is too long");
  std::strncpy(addr.sun_path, config.path.c_str(), sizeof(addr.sun_path) - 1);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("cannot create a Unix socket: " + errno_message());
  // A stale socket file from a previous run would make bind fail; a live one answers connect.
  {
    const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live = ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(probe);
    if (live) throw std::runtime_error("another server already listens on " + config.path);
    ::unlink(config.path.c_str());
  }
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("cannot bind " + config.path + ": " + errno_message());
  if (::chmod(config.path.c_str(), config.mode) != 0)
    throw std::runtime_error("cannot chmod " + config.path + ": " + errno_message());
  if (s.group_gid && ::chown(config.path.c_str(), -1, *s.group_gid) != 0)
    s.log(LogLevel::kWarning, "laas: cannot give " + config.path + " to group " + config.group +
                                  ": " + errno_message());
  if (::listen(listen_fd_, 128) != 0)
    throw std::runtime_error("cannot listen on " + config.path + ": " + errno_message());
  if (::pipe2(s.wake_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("cannot create a pipe: " + errno_message());
  s.stopping = false;
  try {
    acceptor_ = std::thread([this] {
      try {
        accept_loop();
      } catch (const std::exception& e) {
        // (bad_alloc) Escaping the thread would end OpenSM: the socket stops answering instead.
        shared_->log(LogLevel::kError,
                     std::string("laas: control socket stopped accepting: ") + e.what());
      }
    });
  } catch (const std::system_error& e) {
    // Out of threads: no socket rather than a listening one nobody answers.
    ::close(listen_fd_);
    listen_fd_ = -1;
    ::unlink(config.path.c_str());
    throw std::runtime_error("cannot start the control socket's thread: " + std::string(e.what()));
  }
  s.log(LogLevel::kInfo, "laas: control socket listening on " + config.path);
}

void SocketServer::stop() {
  if (!acceptor_.joinable()) {
    if (listen_fd_ >= 0) ::close(listen_fd_);  // start() failed half-way
    listen_fd_ = -1;
    return;
  }
  Shared& s = *shared_;
  s.stopping = true;
  const char byte = 1;
  (void)!::write(s.wake_pipe[1], &byte, 1);
  acceptor_.join();
  ::close(listen_fd_);
  listen_fd_ = -1;
  ::unlink(s.config.path.c_str());
  // Requests waiting for a routing run return now (their reply is still sent if the client
  // takes it at once), a resume check is killed; every other wait of a worker also watches
  // the wake pipe. Every worker is joined: the service they use is destroyed after stop()
  // (remove_plugin), so none may be left inside it, however long it takes.
  s.service.interrupt_waits();
  std::unique_lock<std::mutex> lock(s.mu);
  if (!s.workers_done.wait_for(lock, std::chrono::milliseconds(s.config.stop_timeout_ms),
                               [&s] { return s.clients == 0; }))
    s.log(LogLevel::kError, "laas: " + std::to_string(s.clients) +
                                " control socket worker(s) still busy after " +
                                std::to_string(s.config.stop_timeout_ms) +
                                " ms; waiting for them to leave the service");
  auto workers = std::move(s.workers);
  s.workers.clear();
  lock.unlock();
  for (auto& [id, worker] : workers) worker.thread.join();
}

void SocketServer::accept_loop() {
  Shared& s = *shared_;
  const int general = std::max(0, s.config.max_clients - s.config.root_reserved);
  while (!s.stopping) {
    // Workers that ended since the last connection: joined, so no finished thread waits long.
    // (Under the lock: a worker marked done needs it no more, and only has to return.)
    {
      std::lock_guard<std::mutex> lock(s.mu);
      for (auto it = s.workers.begin(); it != s.workers.end();)
        if (it->second.done) {
          it->second.thread.join();
          it = s.workers.erase(it);
        } else {
          ++it;
        }
    }
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {s.wake_pipe[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      s.log(LogLevel::kError, "laas: control socket poll failed: " + errno_message());
      return;
    }
    if (fds[1].revents) return;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EINTR || err == EAGAIN || err == ECONNABORTED) continue;
      // Out of descriptors (EMFILE, ENFILE) or memory: the listening socket stays readable,
      // so back off instead of spinning, and say so at most once a minute.
      const auto now = Clock::now();
      if (now - s.last_accept_error > std::chrono::minutes(1)) {
        s.last_accept_error = now;
        s.log(LogLevel::kError, std::string("laas: control socket cannot accept: ") +
                                    std::strerror(err) + "; retrying every 200 ms");
      }
      pollfd wake{s.wake_pipe[0], POLLIN, 0};
      ::poll(&wake, 1, 200);
      continue;
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      ::close(fd);
      continue;
    }
    std::string refusal;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (s.clients >= s.config.max_clients)
        refusal = "too many clients (" + std::to_string(s.clients) + "); try again";
      else if (cred.uid != 0 && s.clients >= general)
        refusal = "too many clients; the remaining connections are reserved for root";
      else if (cred.uid != 0 && s.per_uid[cred.uid] >= s.config.max_clients_per_uid)
        refusal = "too many connections from uid " + std::to_string(cred.uid) + " (" +
                  std::to_string(s.config.max_clients_per_uid) + "); try again";
      if (refusal.empty()) {
        ++s.clients;
        ++s.per_uid[cred.uid];
      } else if (s.per_uid[cred.uid] == 0) {
        s.per_uid.erase(cred.uid);
      }
    }
    if (!refusal.empty()) {
      send_now(fd, error_line(nullptr, error::kBusy, refusal));
      ::close(fd);
      continue;
    }
    start_worker(fd, cred.uid, cred.gid);
  }
}

// One worker for a connection just counted in clients and per_uid. Without a thread (EAGAIN:
// the process's or the cgroup's limit), the client is told to try again and the SM goes on:
// an exception escaping here would end OpenSM.
void SocketServer::start_worker(int fd, uid_t uid, gid_t gid) {
  Shared& s = *shared_;
  std::string error;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    const std::uint64_t id = s.next_worker++;
    try {
      // The slot first: once the thread runs, nothing here may fail and leave it unowned.
      std::thread& slot = s.workers[id].thread;
      try {
        slot = std::thread([&s, fd, uid, gid, id] {
          try {
            serve(s, fd, uid, gid);
          } catch (...) {
            // Out of memory inside a request: the connection ends, the SM goes on.
          }
          ::close(fd);
          std::lock_guard<std::mutex> done(s.mu);
          if (--s.per_uid[uid] == 0) s.per_uid.erase(uid);
          --s.clients;
          // Its entry was made before it started (stop() may have taken the map by now).
          if (auto it = s.workers.find(id); it != s.workers.end()) it->second.done = true;
          s.workers_done.notify_all();
        });
      } catch (...) {
        s.workers.erase(id);
        throw;
      }
    } catch (const std::exception& e) {
      error = e.what();
      if (--s.per_uid[uid] == 0) s.per_uid.erase(uid);
      --s.clients;
    }
  }
  if (error.empty()) return;
  send_now(fd, error_line(nullptr, error::kBusy,
                          "cannot start a thread for this connection (" + error + "); try again"));
  ::close(fd);
  const auto now = Clock::now();
  if (now - s.last_thread_error > std::chrono::minutes(1)) {
    s.last_thread_error = now;
    s.log(LogLevel::kError, "laas: control socket cannot start a worker thread: " + error +
                                "; connections are refused until threads are available");
  }
}

}  // namespace laas::service
