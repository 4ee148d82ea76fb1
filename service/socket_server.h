// The control socket: a Unix stream socket speaking newline-delimited JSON, one request per
// line, one response per line. Peers are identified by SO_PEERCRED, and that is what grants
// access: root and members of `group` may change tenants and hosts, members of `read_group`
// may only read, anyone else is refused at once (permission_denied). The socket file itself is
// mode 0666: one file has one group, and two groups must connect; who reaches it is the
// directory's business (/run/opensm, see conf/tmpfiles.d-laas.conf), not the file's.
//
// Hostile or broken clients cannot stall it: a whole request must arrive within
// request_timeout_ms (the bound does not restart with every byte), a reply must be taken
// within send_timeout_ms, one uid holds at most max_clients_per_uid connections, and the last
// root_reserved connections are root's.
//
// Each connection has a worker thread. stop() wakes every one (and the service's waits and
// resume checks, interrupt_waits) and joins them all before it returns, so the TenantService
// they use may be destroyed right after; every wait of a worker watches the wake, so that
// is quick. A thread that cannot be created refuses its connection (busy), never more.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>

#include "service/tenant_service.h"

namespace laas::service {

struct SocketConfig {
  std::string path = kDefaultSocketPath;
  std::string group = "laas";            // members may change state; empty: root only
  std::string read_group = "laas-read";  // members may read; empty: nobody but the above
  unsigned mode = 0666;
  size_t max_request_bytes = kMaxRequestBytes;
  // From the connection (or the previous reply) to the end of the next request line.
  int request_timeout_ms = 10000;
  int send_timeout_ms = 5000;  // a client that does not take its reply for this long is dropped
  int max_clients = 32;
  int max_clients_per_uid = 8;  // root excepted
  int root_reserved = 2;        // connections only root may open
  int stop_timeout_ms = 5000;   // stop() says so in the log when workers take longer to leave
};

constexpr int kMaxJsonDepth = 32;  // nesting deeper than this is refused before parsing

// True when `text` nests arrays/objects deeper than `max_depth` (strings are skipped).
bool json_too_deep(const std::string& text, int max_depth);

// One request line in, one reply line (with its newline) out: what a connection does with
// each line it receives. Never throws.
std::string answer_line(const std::string& line, TenantService& service, const Caller& caller);

class SocketServer {
 public:
  SocketServer(SocketConfig config, TenantService& service, Logger log);
  ~SocketServer();

  // Binds and starts the accept thread; throws std::runtime_error naming the path on failure.
  void start();
  void stop();

  struct Shared;  // what worker threads share with the server (never outlives them)

 private:
  void accept_loop();
  void start_worker(int fd, uid_t uid, gid_t gid);

  std::unique_ptr<Shared> shared_;
  int listen_fd_ = -1;
  std::thread acceptor_;
};

}  // namespace laas::service
