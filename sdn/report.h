// What laas-sdn's runs did, as `laasctl status` (its "adapter" section) and the metrics say it:
// its role, the files, the reloads and whether the switches hold what it wrote.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "sdn/readback.h"
#include "service/metrics.h"
#include "topology/fabric.h"

namespace laas::sdn {

// What the runs did, for status and the metrics (guarded by SdnDaemon's mutex).
struct SdnReport {
  long runs = 0, run_failures = 0, reloads = 0, reload_failures = 0, files_written = 0;
  // Times the MAD port was opened: 1 for the daemon's life unless it stopped answering.
  long mad_port_opens = 0;
  std::string last_error;   // the last run's failure ("" when it succeeded)
  std::string last_reload;  // ReloadResult::summary of the last reload
  double last_run_seconds = 0;
  long last_run_unix = 0;
  bool lfts_changed = false, partitions_changed = false;  // by the last run
  topology::Guid sm_port_guid = 0;
  int fabric_nodes = 0;
  std::string fail_closed;             // the last run kept the files as they were: why
  std::optional<BlockCheck> readback;  // after the last reload (none yet: nullopt)
  double readback_seconds = 0;
  std::string readback_error;  // the read-back itself failed (no answer)
};

// status's "adapter" section and the metric families, from a report (pure: unit-tested).
nlohmann::json report_json(const core::Config& config, const SdnReport& r);
std::vector<service::MetricFamily> report_metrics(const core::Config& config, const SdnReport& r);
// The warning said at start and in status when whole_leaves is off ("" when it is on).
std::string shared_leaf_warning(const core::Config& config);

}  // namespace laas::sdn
