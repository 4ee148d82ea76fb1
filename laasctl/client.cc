#include "laasctl/client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace laas::ctl {

int exit_code_for(const std::string& code) { return service::exit_status_for(code); }

std::string exit_status_help() {
  std::string out = "Exit status:";
  for (const auto& e : kExitStatuses) {
    std::string code = std::to_string(e.code);
    out += "\n  " + std::string(4 - code.size(), ' ') + code + "  " + e.meaning;
  }
  return out;
}

int server_wait_ms(int client_timeout_ms) {
  constexpr int kMargin = 1000;
  return std::max(0, std::min(client_timeout_ms - kMargin, kMaxWaitMs));
}

namespace {

int connect_to(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path))
    throw ClientError(kExitUsage, "socket path " + path + " is too long");
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw ClientError(kExitUnreachable, std::string("socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    // A full listen backlog: the same condition as the service's own "busy" reply.
    if (err == EAGAIN)
      throw ClientError(kExitBusy, "the LaaS service at " + path + " is busy; try again");
    if (err == EACCES || err == EPERM)
      throw ClientError(
          kExitPermission,
          "permission denied on " + path +
              ": run as root or as a member of group laas (changes) or laas-read (reads)");
    throw ClientError(kExitUnreachable,
                      "cannot reach the LaaS service at " + path + ": " + std::strerror(err) +
                          " (is OpenSM running with 'event_plugin_name osmlaas'?)");
  }
  return fd;
}

struct Closer {
  int fd;
  ~Closer() { ::close(fd); }
};

void send_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw ClientError(kExitUnreachable, "the LaaS service closed the connection");
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::string call_raw(const std::string& path, const std::string& lines, int timeout_ms) {
  const int fd = connect_to(path);
  Closer closer{fd};
  try {
    send_all(fd, lines);
  } catch (const ClientError&) {
    // The service may close early (an oversize request): still read what it answered.
  }
  ::shutdown(fd, SHUT_WR);
  std::string replies;
  char chunk[8192];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    replies.append(chunk, static_cast<size_t>(n));
  }
  return replies;
}

nlohmann::json call(const std::string& path, const std::string& method,
                    const nlohmann::json& params, int timeout_ms) {
  const int fd = connect_to(path);
  Closer closer{fd};
  const std::string line =
      nlohmann::json(
          {{"v", 1}, {"id", static_cast<long>(::getpid())}, {"method", method}, {"params", params}})
          .dump() +
      "\n";
  bool sent = true;
  try {
    send_all(fd, line);
  } catch (const ClientError&) {
    // A service that refuses the connection (busy) answers and hangs up before reading:
    // its answer is the one to report.
    sent = false;
  }
  std::string reply;
  char chunk[8192];
  while (reply.find('\n') == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, sent ? timeout_ms : 0);
    if (!sent && ready <= 0)
      throw ClientError(kExitUnreachable, "the LaaS service closed the connection");
    if (ready == 0)
      throw ClientError(kExitTimeout, "no reply from the LaaS service within " +
                                          std::to_string(timeout_ms / 1000) +
                                          " s (--timeout); a change may or may not have been "
                                          "made: see laasctl status");
    if (ready < 0 && errno == EINTR) continue;
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) throw ClientError(kExitUnreachable, "the LaaS service closed the connection");
    reply.append(chunk, static_cast<size_t>(n));
  }
  try {
    return nlohmann::json::parse(reply.substr(0, reply.find('\n')));
  } catch (const nlohmann::json::parse_error& e) {
    throw ClientError(kExitUnreachable, std::string("unreadable reply: ") + e.what());
  }
}

}  // namespace laas::ctl
