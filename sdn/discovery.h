// laas-sdn's discovery of the fabric: infiniband-diags' `ibnetdiscover` (libibnetdisc's own
// front end) run as a child process, its output read by the project's ibnetdiscover reader
// (topology::read_ibnetdiscover, the one for offline files). A child, not libibnetdisc in the
// daemon: ibnd_discover_fabric opens a MAD port of its own at every call, and under ibsim's
// umad2sim a port closed leaks one of its two agents (32 per device), so a daemon calling it
// could open no port after some eight routing runs. What a child leaks dies with it. The
// daemon's own MAD port (sdn/mad_port.h) is kept for the master SM's LID and the read-back; the
// directed routes the read-back takes are computed here from the fabric read.
#pragma once

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/fabric.h"

namespace laas::sdn {

// ibnetdiscover failed, timed out, or printed what the reader refuses; what() names the
// command, its exit status (or the timeout) and the last line of its standard error.
class DiscoveryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DiscoverOptions {
  std::string program;  // "": ibnetdiscover, looked up in PATH, then in /usr/sbin
  std::string ca;       // -C (""): libibnetdisc's default, the first adapter
  int port = 0;         // -P (0): the first active port
  std::chrono::milliseconds timeout{60000};
};

// The argv: the program (resolved as said above), -C and -P when set.
std::vector<std::string> ibnetdiscover_argv(const DiscoverOptions& options);

// `name` when it has a '/', else the first executable `dir/name` in `path_env` (a PATH value),
// then in /usr/sbin (where infiniband-diags install it); `name` when none is.
std::string find_program(const std::string& name, const std::string& path_env);

// laas-sdn --check: the ibnetdiscover discovery would run (`program`, "": ibnetdiscover, found
// as find_program does in `path_env`) started with --version, which reads no fabric, within
// `timeout`. "" when it ran, with `*found` the path and `*said` what it printed (its version);
// else why not, one line naming the path it tried (or where it looked).
std::string ibnetdiscover_problem(const std::string& program, const std::string& path_env,
                                  std::chrono::milliseconds timeout, std::string* found,
                                  std::string* said);

// Runs the command, at most options.timeout, and reads its output. Throws DiscoveryError.
topology::Fabric discover_fabric(const DiscoverOptions& options);
topology::Fabric discover_fabric(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout);

// Where this host's port is in the fabric: its NodeInfo as the local port answers it.
struct LocalPort {
  bool is_switch = false;
  topology::Guid node_guid = 0;
  topology::Guid port_guid = 0;
  int number = 0;  // the port the SMP entered by (a switch: 0)
};

// The fabric node of the local port (-1: not in the fabric).
int local_node(const topology::Fabric& fabric, const LocalPort& local);

// A directed route ("0", "0,1,4": libibmad's str2drpath format) from the local port to every
// switch it reaches, by GUID: the fewest hops, the lowest port first. How the read-back reaches
// a switch whatever the tables being checked say. At most 63 hops (what a route carries).
std::map<topology::Guid, std::string> switch_routes(const topology::Fabric& fabric,
                                                    const LocalPort& local);

}  // namespace laas::sdn
