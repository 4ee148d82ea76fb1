#include "laasctl/slurm_follower.h"

#include <sstream>
#include <stdexcept>

#include "laasctl/client.h"
#include "service/protocol.h"

namespace laas::ctl {

using nlohmann::json;

namespace {

// A reply that says no: why, for the log.
struct ServiceRefusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace

std::vector<std::string> split_argv(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

SlurmFollower::SlurmFollower(FollowerConfig config, Call call, Read read, Write write, Run run,
                             Log log)
    : config_(std::move(config)),
      call_(std::move(call)),
      read_(std::move(read)),
      write_(std::move(write)),
      run_(std::move(run)),
      log_(std::move(log)) {}

json SlurmFollower::result_of(const std::string& method, const json& params) {
  const json reply = call_(method, params);
  if (!reply.value("ok", false)) {
    const json err = reply.value("error", json::object());
    throw ServiceRefusal(method + ": " + err.value("message", "refused") + " (" +
                         err.value("code", "?") + ")");
  }
  return reply.value("result", json::object());
}

bool SlurmFollower::write_if_changed(const std::string& path, const std::string& content) {
  const auto now = read_(path);
  if (now && *now == content) return false;
  write_(path, content);
  log_("laas-slurm: wrote " + path);
  return true;
}

bool SlurmFollower::refresh() {
  try {
    const json topology = result_of(service::method::kExport, {{"format", "slurm-topology"}});
    const json partitions = result_of(service::method::kExport, {{"format", "slurm-partitions"}});
    // Partitions name nodes the topology places: the topology first.
    if (write_if_changed(config_.topology_file, topology.value("content", "")))
      reconfigure_pending_ = true;
    if (write_if_changed(config_.partitions_file, partitions.value("content", "")))
      reconfigure_pending_ = true;
  } catch (const std::exception& e) {  // ServiceRefusal, ClientError, a write that failed
    log_(std::string("laas-slurm: ") + e.what());
    return false;
  }
  ++refreshes_;
  if (!reconfigure_pending_ || config_.reconfigure.empty()) {
    reconfigure_pending_ = false;
    return true;
  }
  const std::string failure = run_(config_.reconfigure);
  std::string command;
  for (const auto& w : config_.reconfigure) command += (command.empty() ? "" : " ") + w;
  if (!failure.empty()) {
    log_("laas-slurm: " + command + " failed: " + failure + "; trying again");
    return false;
  }
  reconfigure_pending_ = false;
  ++reconfigures_;
  log_("laas-slurm: " + command + ": slurmctld re-read topology.conf and the partitions");
  return true;
}

bool SlurmFollower::step() {
  try {
    if (!since_) {
      // The position before the files are read: a change made in between comes as an event.
      since_ = result_of(service::method::kEvents, json::object()).value("next", 0ULL);
      stale_ = true;
    }
    if (stale_ || reconfigure_pending_) {
      if (!refresh()) return false;
      stale_ = false;
    }
    const json r =
        result_of(service::method::kEvents, {{"since", *since_}, {"wait_ms", config_.wait_ms}});
    if (r.value("lost", false))
      log_("laas-slurm: events after " + std::to_string(*since_) +
           " were lost (the service restarted, failed over or dropped them): re-reading "
           "everything");
    if (r.value("lost", false) || !r.value("events", json::array()).empty()) stale_ = true;
    since_ = r.value("next", *since_);
    return true;
  } catch (const std::exception& e) {  // ServiceRefusal, ClientError
    log_(std::string("laas-slurm: ") + e.what());
    return false;
  }
}

}  // namespace laas::ctl
