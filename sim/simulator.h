// The event-driven scheduling simulation: workload in, metrics out. No files, no printing.
#pragma once

#include <string>
#include <vector>

#include "sim/machine.h"
#include "sim/metrics.h"
#include "sim/policy.h"
#include "sim/workload.h"

namespace laas::sim {

struct SimOptions {
  std::string policy = "fifo";
  PolicyOptions policy_options;
  CheckOptions check;
  bool keep_timeline = true;
};

struct SimResult {
  std::vector<TenantRecord> tenants;  // parallel to the workload
  std::vector<Sample> timeline;       // one sample per event time (empty if not kept)
  // The paper's window: from the first time a tenant had to wait (the queue head could not be
  // placed) until the last placement. If no tenant ever waited, it starts at the first arrival
  // and `saturated` is false.
  bool saturated = false;
  Utilization window;
  Utilization whole;  // from the first arrival until the last tenant ends
  int placed = 0;
  int rejected = 0;
  Percentiles search_us;      // every call into the placer, successful or not (wall clock)
  Percentiles search_cpu_us;  // the same calls, thread CPU time
  double cpu_s = 0;           // thread CPU time of the whole run
  long checks_run = 0;
  long budget_cuts = 0;  // refused calls whose search stopped on a bound (not proven)
  double wall_s = 0;
};

// Throws CheckFailure if checking is on and the checker objects; invalid_argument for a
// request larger than the tree (it is rejected, not thrown, if merely unplaceable).
SimResult simulate(const FatTree& tree, const Placer& placer, const Workload& work,
                   const SimOptions& opts, const TransactionSink& sink = nullptr);

}  // namespace laas::sim
