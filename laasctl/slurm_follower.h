// laas-slurm's logic: follow the tenant service's change events and keep Slurm's topology.conf
// and the per-tenant partitions (a slurm.conf include file) what the service exports, then
// have slurmctld re-read them. The service, the files and the reconfigure command are given as
// functions, so the loop is unit-tested without a socket, a disk or Slurm.
//
// Positions: the follower keeps the events' `next` in memory. When the service restarts or
// fails over, the next poll says whether events were lost (service/events.h); when they were,
// or when the follower itself starts, it re-reads everything (both exports) rather than trust
// a position -- two exports are cheap, and a file changed by hand is put back. A file is
// rewritten (atomically) only when its content changes, and slurmctld reconfigured only then,
// or while an earlier reconfigure has not succeeded.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace laas::ctl {

struct FollowerConfig {
  std::string topology_file = "/etc/slurm/topology.conf";
  std::string partitions_file = "/etc/slurm/laas-partitions.conf";
  // Run without a shell; empty: none (the administrator reconfigures).
  std::vector<std::string> reconfigure = {"scontrol", "reconfigure"};
  int wait_ms = 25000;  // each long-poll (the service allows up to 30000)
};

class SlurmFollower {
 public:
  // A request to the service: the reply object ({"ok", "result"|"error"}); throws ClientError
  // when the socket cannot be used.
  using Call =
      std::function<nlohmann::json(const std::string& method, const nlohmann::json& params)>;
  using Read = std::function<std::optional<std::string>(const std::string& path)>;
  using Write = std::function<void(const std::string& path, const std::string& content)>;
  // Runs the argv; "" when it succeeded, else why not (one line).
  using Run = std::function<std::string(const std::vector<std::string>& argv)>;
  using Log = std::function<void(const std::string& line)>;

  SlurmFollower(FollowerConfig config, Call call, Read read, Write write, Run run, Log log);

  // One round: a position when there is none, the files brought up to date when something may
  // have changed, then one long-poll. False when the service or Slurm could not be used (the
  // caller waits a little and calls again; nothing is lost meanwhile).
  bool step();
  // Both exports written where they differ, and slurmctld reconfigured when one did (or an
  // earlier reconfigure failed). False (and logged) when an export or a write or the
  // reconfigure failed.
  bool refresh();

  std::optional<std::uint64_t> position() const { return since_; }
  long refreshes() const { return refreshes_; }
  long reconfigures() const { return reconfigures_; }

 private:
  nlohmann::json result_of(const std::string& method, const nlohmann::json& params);  // throws
  bool write_if_changed(const std::string& path, const std::string& content);

  FollowerConfig config_;
  Call call_;
  Read read_;
  Write write_;
  Run run_;
  Log log_;
  std::optional<std::uint64_t> since_;
  bool stale_ = true;                 // the files may not be what the service says
  bool reconfigure_pending_ = false;  // a file changed and slurmctld has not read it yet
  long refreshes_ = 0, reconfigures_ = 0;
};

// "scontrol reconfigure" -> {"scontrol", "reconfigure"}: split at spaces, nothing expanded.
std::vector<std::string> split_argv(const std::string& command);

}  // namespace laas::ctl
