// laas-hostile: misbehaving clients of the control socket, for the integration tests.
//   laas-hostile slow SOCKET N INTERVAL_MS SECONDS   N connections, one byte each per interval
//   laas-hostile flood SOCKET N SECONDS              N connections at once, held open
//   laas-hostile noread SOCKET SECONDS               pipelines requests, never reads a reply
// Each prints one summary line (what the server did to it) when done.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

int connect_to(const char* path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

// Whatever the server has sent so far (without blocking for more than `ms`).
std::string pending(int fd, int ms) {
  std::string got;
  char buf[4096];
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, ms) > 0) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
    ms = 0;
  }
  return got;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int slow(const char* path, int n, int interval_ms, int seconds) {
  std::vector<int> fds;
  int refused = 0, cut = 0;
  for (int i = 0; i < n; ++i) fds.push_back(connect_to(path));
  const auto start = Clock::now();
  ::usleep(500000);  // the refusals are on their way
  double first_cut = -1;
  while (seconds_since(start) < seconds) {
    for (int& fd : fds) {
      if (fd < 0) continue;
      const std::string got = pending(fd, 0);
      if (got.find("\"busy\"") != std::string::npos) {
        ++refused;
      } else if (::send(fd, "{", 1, MSG_NOSIGNAL) == 1 && got.empty()) {
        continue;
      } else {
        ++cut;
        if (first_cut < 0) first_cut = seconds_since(start);
      }
      ::close(fd);
      fd = -1;
    }
    ::usleep(static_cast<useconds_t>(interval_ms) * 1000);
  }
  int held = 0;
  for (int fd : fds) held += fd >= 0;
  std::printf("slow: %d connections, %d refused busy, %d cut (first after %.1f s), %d held\n", n,
              refused, cut, first_cut, held);
  return 0;
}

int flood(const char* path, int n, int seconds) {
  std::vector<int> fds;
  int failed = 0, busy = 0;
  for (int i = 0; i < n; ++i) {
    const int fd = connect_to(path);
    if (fd < 0)
      ++failed;
    else
      fds.push_back(fd);
  }
  for (int fd : fds) busy += pending(fd, 20).find("\"busy\"") != std::string::npos;
  std::printf("flood: %d connections, %d refused busy, %d could not connect\n", n, busy, failed);
  std::fflush(stdout);
  ::sleep(static_cast<unsigned>(seconds));
  return 0;
}

int noread(const char* path, int seconds) {
  const int fd = connect_to(path);
  if (fd < 0) return std::printf("noread: cannot connect\n"), 1;
  const std::string request = "{\"v\":1,\"id\":1,\"method\":\"topology\"}\n";
  std::string burst;
  for (int i = 0; i < 100; ++i) burst += request;
  size_t sent = 0;
  const auto start = Clock::now();
  // Until neither direction's buffers take more: the server is then stuck on its reply.
  while (seconds_since(start) < 5) {
    const ssize_t n = ::send(fd, burst.data(), burst.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0)
      sent += static_cast<size_t>(n);
    else
      ::usleep(100000);
  }
  std::printf("noread: %zu bytes of requests sent, no reply read\n", sent);
  std::fflush(stdout);
  ::sleep(static_cast<unsigned>(seconds));
  ::close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "slow" && argc == 6)
    return slow(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]));
  if (mode == "flood" && argc == 5) return flood(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  if (mode == "noread" && argc == 4) return noread(argv[2], std::atoi(argv[3]));
  std::fprintf(stderr,
               "usage: laas-hostile slow SOCKET N INTERVAL_MS SECONDS | flood SOCKET N SECONDS | "
               "noread SOCKET SECONDS\n");
  return 2;
}
