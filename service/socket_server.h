// The control socket: a Unix stream socket speaking newline-delimited JSON, one request per
// line, one response per line. Peers are identified by SO_PEERCRED: root and members of the
// configured group may change state, anyone who can connect may read.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "service/tenant_service.h"

namespace laas::service {

struct SocketConfig {
  std::string path = "/run/opensm/laas.sock";
  std::string group = "laas";  // members may change state; empty: root only
  unsigned mode = 0660;
  size_t max_request_bytes = kMaxRequestBytes;
  int idle_timeout_ms = 30000;  // a client that sends nothing for this long is dropped
  int max_clients = 32;
};

class SocketServer {
 public:
  SocketServer(SocketConfig config, TenantService& service, Logger log);
  ~SocketServer();

  // Binds and starts the accept thread; throws std::runtime_error naming the path on failure.
  void start();
  void stop();

 private:
  void accept_loop();
  void serve(int fd);
  Caller identify(int fd) const;

  SocketConfig config_;
  TenantService& service_;
  Logger log_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  gid_t group_gid_ = static_cast<gid_t>(-1);
  std::atomic<bool> stopping_{false};
  std::atomic<int> clients_{0};
  std::thread acceptor_;
  std::mutex threads_mu_;
  std::condition_variable workers_done_;
};

}  // namespace laas::service
