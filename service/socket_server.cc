#include "service/socket_server.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace laas::service {
namespace {

std::string errno_text() { return std::strerror(errno); }

bool send_line(int fd, const std::string& line) {
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::send(fd, line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string error_line(const nlohmann::json& id, const char* code, const std::string& message) {
  return nlohmann::json({{"v", kProtocolVersion},
                         {"id", id},
                         {"ok", false},
                         {"error", {{"code", code}, {"message", message}}}})
             .dump() +
         "\n";
}

}  // namespace

SocketServer::SocketServer(SocketConfig config, TenantService& service, Logger log)
    : config_(std::move(config)), service_(service), log_(std::move(log)) {}

SocketServer::~SocketServer() { stop(); }

void SocketServer::start() {
  if (!config_.group.empty()) {
    if (const group* g = ::getgrnam(config_.group.c_str()))
      group_gid_ = g->gr_gid;
    else
      log_(LogLevel::kWarning,
           "laas: group '" + config_.group + "' does not exist: only root may change tenants");
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (config_.path.size() >= sizeof(addr.sun_path))
    throw std::runtime_error("socket path " + config_.path + " is too long");
  std::strncpy(addr.sun_path, config_.path.c_str(), sizeof(addr.sun_path) - 1);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("cannot create a Unix socket: " + errno_text());
  // A stale socket file from a previous run would make bind fail; a live one answers connect.
  {
    const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live = ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(probe);
    if (live) throw std::runtime_error("another server already listens on " + config_.path);
    ::unlink(config_.path.c_str());
  }
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("cannot bind " + config_.path + ": " + errno_text());
  if (::chmod(config_.path.c_str(), config_.mode) != 0)
    throw std::runtime_error("cannot chmod " + config_.path + ": " + errno_text());
  if (group_gid_ != static_cast<gid_t>(-1) && ::chown(config_.path.c_str(), -1, group_gid_) != 0)
    log_(LogLevel::kWarning,
         "laas: cannot give " + config_.path + " to group " + config_.group + ": " + errno_text());
  if (::listen(listen_fd_, 64) != 0)
    throw std::runtime_error("cannot listen on " + config_.path + ": " + errno_text());
  if (::pipe2(wake_pipe_, O_CLOEXEC) != 0)
    throw std::runtime_error("cannot create a pipe: " + errno_text());
  stopping_ = false;
  acceptor_ = std::thread([this] { accept_loop(); });
  log_(LogLevel::kInfo, "laas: control socket listening on " + config_.path);
}

void SocketServer::stop() {
  if (!acceptor_.joinable()) return;
  stopping_ = true;
  const char byte = 1;
  (void)!::write(wake_pipe_[1], &byte, 1);
  acceptor_.join();
  // Workers are detached (a long-running SM must not collect finished threads); they all watch
  // the wake pipe, so wait for the last one to leave before closing what they use.
  {
    std::unique_lock<std::mutex> lock(threads_mu_);
    workers_done_.wait(lock, [this] { return clients_ == 0; });
  }
  ::close(listen_fd_);
  ::close(wake_pipe_[0]);
  ::close(wake_pipe_[1]);
  ::unlink(config_.path.c_str());
  listen_fd_ = -1;
}

void SocketServer::accept_loop() {
  while (!stopping_) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      log_(LogLevel::kError, "laas: control socket poll failed: " + errno_text());
      return;
    }
    if (fds[1].revents) return;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    if (clients_ >= config_.max_clients) {
      send_line(fd, error_line(nullptr, error::kUnavailable, "too many clients; try again"));
      ::close(fd);
      continue;
    }
    ++clients_;
    std::thread([this, fd] {
      serve(fd);
      ::close(fd);
      std::lock_guard<std::mutex> lock(threads_mu_);
      --clients_;
      workers_done_.notify_all();
    }).detach();
  }
}

Caller SocketServer::identify(int fd) const {
  ucred cred{};
  socklen_t len = sizeof cred;
  Caller caller;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return caller;
  caller.uid = cred.uid;
  caller.may_write = cred.uid == 0;
  if (!caller.may_write && group_gid_ != static_cast<gid_t>(-1)) {
    if (cred.gid == group_gid_) {
      caller.may_write = true;
    } else if (const passwd* pw = ::getpwuid(cred.uid)) {
      int count = 64;
      std::vector<gid_t> groups(count);
      if (::getgrouplist(pw->pw_name, pw->pw_gid, groups.data(), &count) >= 0)
        for (int i = 0; i < count; ++i) caller.may_write |= groups[i] == group_gid_;
    }
  }
  return caller;
}

void SocketServer::serve(int fd) {
  const Caller caller = identify(fd);
  std::string buffer;
  char chunk[4096];
  while (!stopping_) {
    // Answer every complete line already buffered.
    size_t newline;
    while ((newline = buffer.find('\n')) != std::string::npos) {
      const std::string line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      nlohmann::json request;
      std::string reply;
      try {
        request = nlohmann::json::parse(line);
        reply = service_.handle(request, caller).dump() + "\n";
      } catch (const nlohmann::json::parse_error& e) {
        reply = error_line(nullptr, error::kBadRequest, std::string("malformed JSON: ") + e.what());
      }
      if (!send_line(fd, reply)) return;
    }
    if (buffer.size() > config_.max_request_bytes) {
      send_line(fd, error_line(nullptr, error::kBadRequest,
                               "request longer than " + std::to_string(config_.max_request_bytes) +
                                   " bytes; connection closed"));
      return;
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    const int ready = ::poll(fds, 2, config_.idle_timeout_ms);
    if (ready == 0) return;  // idle client
    if (ready < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace laas::service
