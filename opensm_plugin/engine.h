// The LaaS routing engine without OpenSM: a discovered Fabric in, LID-indexed forwarding
// tables out, plus the realized tenant allocations. The OpenSM glue (plugin.cc) only turns
// the subnet into a Fabric and the tables into sw->new_lft, so everything here is testable
// without a fabric.
//
// Tenant registry: the requested tenants (tenants.yaml, later the control socket) by name,
// and their realized placements by GUID (allocations.json). Each routing run takes a
// snapshot of both; existing tenants are restored exactly (no churn), new ones placed, and
// tenants no longer requested released.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "opensm_plugin/config.h"
#include "opensm_plugin/tenants.h"
#include "topology/fabric.h"

namespace laas::plugin {

struct RouteOutcome {
  bool ok = false;
  std::string error;  // why the engine refuses to route (fabric not a fat-tree, bad state..)
  bool not_fat_tree = false;
  std::vector<std::vector<std::uint8_t>> tables;  // [fabric node] LID -> port (0xFF none)
  std::vector<std::string> info;                  // what happened, one log line each
  std::vector<std::string> warnings;
  double ms_total = 0, ms_recognize = 0, ms_place = 0, ms_compute = 0, ms_tables = 0, ms_save = 0;
};

class Engine {
 public:
  explicit Engine(Config config);

  const Config& config() const { return config_; }
  // Loads allocations.json from the state directory (startup). A corrupt file makes every
  // later route() refuse tenants (never re-allocate silently); the message says why.
  void load_state();
  std::string state_error() const;

  // Whether tenants.yaml differs from the version the last route() used.
  bool tenants_changed() const;

  RouteOutcome route(const topology::Fabric& fabric, Guid sm_port_guid);

 private:
  struct FileStamp {
    bool exists = false;
    long long mtime_ns = 0;
    long long size = 0;
    ino_t inode = 0;
    bool operator==(const FileStamp& o) const {
      return exists == o.exists && mtime_ns == o.mtime_ns && size == o.size && inode == o.inode;
    }
  };
  static FileStamp stamp(const std::string& path);

  Config config_;
  mutable std::mutex mu_;  // guards the fields below (route() vs. the watcher thread)
  Allocations allocations_;
  std::string state_error_;
  FileStamp used_stamp_;
  bool routed_once_ = false;
  std::vector<TenantRequest> requests_;
  std::string requests_error_;
};

}  // namespace laas::plugin
