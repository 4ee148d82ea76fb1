// Scheduling policies: which waiting tenants to start now.
#pragma once

#include <deque>
#include <memory>
#include <string>

#include "sim/machine.h"

namespace laas::sim {

// The waiting queue holds tenant indices in arrival order.
using Queue = std::deque<int>;

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // Starts what it can at time `now`. Returns true if the head of the queue could not be
  // placed (the cluster is "full" for the paper's metric).
  virtual bool schedule(double now, Queue& queue, Machine& m) = 0;
};

struct PolicyOptions {
  // EASY backfilling: how many tenants behind the head are examined per scheduling pass
  // (schedulers cap this too, e.g. Slurm's bf_max_job_test).
  int backfill_depth = 200;
  // After a size finds no placement in a pass, skip larger sizes for the rest of the pass
  // (false: search every candidate; slower, for measuring what the shortcut costs).
  bool skip_larger_after_failure = true;
};

// "fifo": strict FIFO, a tenant that cannot be placed blocks the queue (the paper's policy).
// "backfill": EASY backfilling. "firstfit": any waiting tenant that fits starts, no
// reservation (can starve large tenants; an upper bound for queue reordering). Throws
// invalid_argument naming the known policies.
std::unique_ptr<Policy> make_policy(const std::string& name, PolicyOptions opts = {});

}  // namespace laas::sim
